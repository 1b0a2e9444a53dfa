"""`grader check-spec --format html`: one standalone HTML file (no server, no script, no
network): every claim with its verdict, filters by verdict and source (CSS only), the quote in
its place in the source text where that file is at hand, the evidence and the corrected
statement, and the FLOPs crossover plot (matplotlib SVG)."""
from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from grader.claims.model import VERDICTS, Subject

from .claims import Results, claim_dict, summary, summary_line

if TYPE_CHECKING:
    from jinja2 import Environment

HERE = Path(__file__).parent
# the pages' style sheet, shared with the service's pages (read as a file: no import of the web shell)
CSS = HERE.parent / "web" / "static" / "grader.css"

CONTEXT = 320          # characters of source text after a quote (before it: CONTEXT_BEFORE)
CONTEXT_BEFORE = 160   # fewer, so that the mark shows near the top of its scrolled box
MAX_SOURCE = 4 << 20   # a source file larger than this is not read


def source_candidates(subject: Subject, rel: str) -> list[Path]:
    """Where a source document's ``path:`` may be: as written if absolute; else beside the spec
    file and up to three folders above it (a spec in ``spec/`` of a repository whose sources
    lie in ``../shared/`` beside the repository), then the working folder and its parent."""
    rel_path = Path(rel)
    if rel_path.is_absolute():
        return [rel_path]
    base = Path(subject.file).resolve().parent if subject.file else Path.cwd()
    bases = [base, *list(base.parents)[:3], Path.cwd(), Path.cwd().parent]
    out: list[Path] = []
    for b in bases:
        if b / rel_path not in out:
            out.append(b / rel_path)
    return out


def _source_text(subject: Subject, key: str) -> tuple[str | None, str]:
    """The text of a source document, or None and why not."""
    doc = subject.documents.get(key)
    if doc is None or not getattr(doc, "path", ""):
        return None, "The source text is not available (the spec gives no path for it)."
    for path in source_candidates(subject, doc.path):
        try:
            if path.is_file() and path.stat().st_size <= MAX_SOURCE:
                return path.read_text(encoding="utf-8", errors="replace"), ""
        except OSError:
            continue
    return None, f"The source text is not available ({doc.path} was not found beside the spec)."


GAP = re.compile(r"\s*(?:…|\.\.\.)\s*")      # a quote's " … " between fragments of the text
MAX_GAP = 4000                                    # characters a gap may skip


def _words(fragment: str) -> str:
    return r"\s+".join(re.escape(w) for w in fragment.split())


def _find(text: str, quote: str) -> list[tuple[int, int]]:
    """Spans of the quote in the text (whitespace-insensitive): the quote as it is, else its
    fragments between " … " gaps, in order, each gap at most MAX_GAP characters."""
    m = re.search(_words(quote), text) if quote.split() else None
    if m:
        return [m.span()]
    fragments = [f for f in GAP.split(quote) if f.split()]
    if len(fragments) < 2:
        return []
    for first in re.finditer(_words(fragments[0]), text):
        spans, at = [first.span()], first.end()
        for f in fragments[1:]:
            nxt = re.compile(_words(f)).search(text, at, at + MAX_GAP + len(f) * 2)
            if nxt is None:
                break
            spans.append(nxt.span())
            at = nxt.end()
        else:
            return spans
    return []


def in_place(text: str | None, quote: str) -> Markup | None:
    """The quote marked (<mark>) in its surrounding source text, or None where it is not found."""
    if not text or not quote:
        return None
    text_nfc = unicodedata.normalize("NFC", text)
    spans = _find(text_nfc, unicodedata.normalize("NFC", quote))
    if not spans:
        return None
    a, b = max(0, spans[0][0] - CONTEXT_BEFORE), min(len(text_nfc), spans[-1][1] + CONTEXT)
    out, at = ["…" if a else ""], a
    for s0, s1 in spans:
        out += [str(escape(text_nfc[at:s0])), "<mark>", str(escape(text_nfc[s0:s1])), "</mark>"]
        at = s1
    out += [str(escape(text_nfc[at:b])), "…" if b < len(text_nfc) else ""]
    return Markup("".join(out))


def crossover_plot(subject: Subject) -> Markup | None:
    """Projections' FLOPs (8nd²) and attention's (4n²d) against n at the subject's d, the exact
    crossover (solved by SymPy from the spec's own formulas) and the text's n = d."""
    f = subject.formulas
    if "flops_projections" not in f or "flops_attention" not in f:
        return None
    import sympy
    n, d = sympy.Symbol("n", positive=True), sympy.Symbol("d", positive=True)
    proj = f["flops_projections"].subs({s: {"n": n, "d": d}.get(s.name, s) for s in f["flops_projections"].free_symbols})
    attn = f["flops_attention"].subs({s: {"n": n, "d": d}.get(s.name, s) for s in f["flops_attention"].free_symbols})
    if (proj.free_symbols | attn.free_symbols) - {n, d}:
        return None
    roots = sympy.solve(sympy.Eq(proj, attn), n)
    if len(roots) != 1:
        return None
    d_value = _subject_d(subject)
    exact = int(roots[0].subs(d, d_value))
    from .plots import crossover
    pf = sympy.lambdify(n, proj.subs(d, d_value))
    af = sympy.lambdify(n, attn.subs(d, d_value))
    title = f"FLOPs against n at d = {d_value}: crossover n = {sympy.sstr(roots[0])} = {exact}"
    return Markup(crossover(d_value, pf, af, exact, d_value, title))


def _subject_d(subject: Subject) -> int:
    """The d of the subject's own dominance example (the text's d_model), else 512."""
    for c in subject.claims:
        for ch in c.checks:
            at = ch.get("at") if hasattr(ch, "get") else None
            if at and "flops" in str(ch.get("left", "")) and "d" in at:
                return int(at["d"])
    return 512


@lru_cache(maxsize=1)
def env() -> Environment:
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    return Environment(loader=FileSystemLoader(HERE), autoescape=select_autoescape(default=True),
                       trim_blocks=True, lstrip_blocks=True)


def render_html(subject_results: Results) -> str:
    claims: list[dict[str, Any]] = []
    sources: Counter[str] = Counter()
    plots: list[tuple[Subject, Markup]] = []
    cwd = str(Path.cwd()) + os.sep
    for sr in subject_results:
        texts: dict[str, tuple[str | None, str]] = {}
        plot = crossover_plot(sr.subject)
        if plot:
            plots.append((sr.subject, plot))
        for r in sr.results:
            c = claim_dict(r)
            key = r.claim.source.document
            if key not in texts:
                texts[key] = _source_text(sr.subject, key)
            text, why = texts[key]
            c["in_place"] = in_place(text, r.claim.quote)
            c["no_source"] = "" if c["in_place"] else (why or "The quote was not found in the source text.")
            doc = sr.subject.documents.get(key)
            c["source_title"] = doc.title if doc else key
            c["note"] = r.claim.note
            if isinstance(c.get("location"), str) and c["location"].startswith(cwd):
                c["location"] = c["location"][len(cwd):]      # relative to where it was run: shorter
            sources[key] += 1
            claims.append(c)
    s = summary(subject_results)
    verdicts = sorted({str(c["verdict"]) for c in claims} | {str(v) for v in VERDICTS})
    css = CSS.read_text(encoding="utf-8")
    return env().get_template("spec_report.html").render(
        subjects=[sr.subject for sr in subject_results], claims=claims, summary=s, line=summary_line(s),
        verdicts=verdicts, counts=Counter(c["verdict"] for c in claims), sources=sorted(sources.items()),
        plots=plots, css=Markup(css))
