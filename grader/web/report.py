"""`grader check-spec --format html`: one standalone HTML file (no server, no script, no
network): every claim with its verdict, filters by verdict and source (CSS only), the quote in
its place in the source text where that file is at hand, the evidence and the corrected
statement, and the FLOPs crossover plot (matplotlib SVG)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from markupsafe import Markup, escape

from grader.spec.report import claim_dict, summary, summary_line

CONTEXT = 320          # characters of source text either side of a quote
MAX_SOURCE = 4 << 20   # a source file larger than this is not read


def _source_text(subject, key: str) -> str | None:
    doc = subject.documents.get(key)
    if doc is None or not getattr(doc, "path", ""):
        return None
    base = Path(subject.file).parent if subject.file else Path.cwd()
    for path in (base / doc.path, base.parent / doc.path, Path.cwd() / doc.path):
        try:
            if path.is_file() and path.stat().st_size <= MAX_SOURCE:
                return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def in_place(text: str | None, quote: str) -> Markup | None:
    """The quote marked in its surrounding source text (whitespace-insensitive), or None."""
    if not text or not quote:
        return None
    words = [re.escape(w) for w in quote.split()]
    if not words:
        return None
    m = re.search(r"\s+".join(words), text)
    if m is None:
        return None
    a, b = max(0, m.start() - CONTEXT), min(len(text), m.end() + CONTEXT)
    return Markup(("…" if a else "") + str(escape(text[a:m.start()])) + "<mark>" + str(escape(m.group(0)))
                  + "</mark>" + str(escape(text[m.end():b])) + ("…" if b < len(text) else ""))


def crossover_plot(subject) -> Markup | None:
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


def _subject_d(subject) -> int:
    """The d of the subject's own dominance example (the text's d_model), else 512."""
    for c in subject.claims:
        for ch in c.checks:
            at = ch.get("at") if hasattr(ch, "get") else None
            if at and "flops" in str(ch.get("left", "")) and "d" in at:
                return int(at["d"])
    return 512


def render_html(subject_results) -> str:
    from .render import env
    claims, sources, plots = [], Counter(), []
    for sr in subject_results:
        texts = {}
        plot = crossover_plot(sr.subject)
        if plot:
            plots.append((sr.subject, plot))
        for r in sr.results:
            c = claim_dict(r)
            key = r.claim.source.document
            if key not in texts:
                texts[key] = _source_text(sr.subject, key)
            c["in_place"] = in_place(texts[key], r.claim.quote)
            doc = sr.subject.documents.get(key)
            c["source_title"] = doc.title if doc else key
            c["note"] = r.claim.note
            sources[key] += 1
            claims.append(c)
    s = summary(subject_results)
    verdicts = sorted({c["verdict"] for c in claims} | {"holds", "refuted", "unverifiable", "error"})
    css = (Path(__file__).parent / "static" / "grader.css").read_text(encoding="utf-8")
    return env().get_template("spec_report.html").render(
        subjects=[sr.subject for sr in subject_results], claims=claims, summary=s, line=summary_line(s),
        verdicts=verdicts, counts=Counter(c["verdict"] for c in claims), sources=sorted(sources.items()),
        plots=plots, css=Markup(css))
