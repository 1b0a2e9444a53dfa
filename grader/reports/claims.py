"""Reports of a check-spec run: text (rich tables; colour only on a terminal), json, junit
(the formats: :data:`grader.reports.FORMATS` ``["claims"]``; html: :mod:`grader.reports.html`)."""
from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from grader.claims.model import ALL_VERDICTS, DEMONSTRATION_VERDICTS, ClaimResult, Verdict

from . import junit

if TYPE_CHECKING:
    from grader.claims.run import SubjectResult

Results = Sequence["SubjectResult"]

V = Verdict
COLOURS = {V.HOLDS: "green", V.REFUTED: "yellow", V.ERROR: "red", V.UNVERIFIABLE: "cyan",
           V.DEMONSTRATED: "green", V.NOT_DEMONSTRATED: "yellow", V.INCONCLUSIVE: "magenta", V.SKIPPED: "dim"}


def summary(subject_results: Results) -> dict[str, int]:
    """Counts by verdict, how many met their expectation, and how many did not."""
    results = [r for s in subject_results for r in s.results]
    counts = Counter(r.verdict for r in results)
    return {"claims": len(results), **{v: counts.get(v, 0) for v in ALL_VERDICTS},
            "ok": sum(r.ok for r in results), "unexpected": sum(not r.ok for r in results)}


def claim_dict(r: ClaimResult) -> dict[str, Any]:
    c = r.claim
    evidence: dict[str, Any] = {"summary": r.evidence,
                "checks": [{"kind": x.kind, "verdict": x.verdict, "method": x.method, "summary": x.summary,
                            "details": _plain(_reported(x.details))} for x in r.checks]}
    if c.corrected:
        evidence["corrected"] = c.corrected
    if r.disagreement:
        evidence["disagreement"] = r.disagreement
    return {"id": c.id, "subject": c.subject, "quote": c.quote,
            "source": {"document": c.source.document, "section": c.source.section},
            "verdict": r.verdict, "expected": c.expect, "ok": r.ok, "evidence": evidence,
            "location": str(c.location) if c.location else None, "seconds": round(r.seconds, 4)}


def _reported(details: Any) -> dict[str, Any]:
    """A check's details as reports show them: a demonstration's attention maps (the data of
    `--figures`, kept in the result for the API) by figure name only."""
    d = dict(details)
    if d.get("figures"):
        d["figures"] = [f["name"] for f in d["figures"]]
    return d


def _plain(x: Any) -> Any:
    if isinstance(x, dict) or hasattr(x, "items"):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    return str(x)


def to_json(subject_results: Results) -> str:
    return json.dumps({"subjects": [{"id": s.subject.id, "title": s.subject.title, "file": s.subject.file}
                                    for s in subject_results],
                       "claims": [claim_dict(r) for s in subject_results for r in s.results],
                       "summary": summary(subject_results)}, ensure_ascii=False, indent=2) + "\n"


def to_junit(subject_results: Results) -> str:
    """JUnit XML: a testsuite per subject, a testcase per claim (failure: verdict ≠ expected;
    error: the claim could not be checked; skipped: unverifiable as expected)."""
    s = summary(subject_results)
    suites = []
    for sr in subject_results:
        suite = junit.Suite({"name": f"{sr.subject.id} {sr.subject.title}", "tests": str(len(sr.results)),
                             "failures": str(sum(1 for r in sr.results if not r.ok and r.verdict != V.ERROR)),
                             "errors": str(sum(1 for r in sr.results if r.verdict == V.ERROR)),
                             "time": f"{sum(r.seconds for r in sr.results):.3f}"})
        for r in sr.results:
            case = junit.Case({"classname": f"{sr.subject.id}.{r.claim.source.document}", "name": r.claim.id,
                               "time": f"{r.seconds:.3f}"})
            text = _detail(r)
            if r.verdict == V.ERROR:
                case.add("error", text, message=r.evidence[:500])
            elif not r.ok:
                case.add("failure", text, message=f"verdict {r.verdict}, expected {r.claim.expect}")
            elif r.verdict in (V.UNVERIFIABLE, V.SKIPPED):
                case.add("skipped", message=r.evidence[:500])
            case.add("system-out", text)
            suite.cases.append(case)
        suites.append(suite)
    failures = sum(1 for x in subject_results for r in x.results if not r.ok and r.verdict != V.ERROR)
    return junit.write({"name": "grader check-spec", "tests": str(s["claims"]), "failures": str(failures),
                        "errors": str(s[V.ERROR])}, suites, declaration=junit.CLAIMS_DECLARATION)


def _detail(r: ClaimResult) -> str:
    lines = [f"quote: {r.claim.quote}", f"source: {r.claim.source}", f"verdict: {r.verdict} (expected {r.claim.expect})"]
    lines += [f"- {x.kind} [{x.verdict}]: {x.summary}" for x in r.checks]
    if r.disagreement:
        lines.append(r.disagreement)
    if r.claim.corrected:
        lines.append(f"corrected: {r.claim.corrected}")
    return "\n".join(lines)


def to_text(subject_results: Results, *, verbose: bool = False, colour: bool | None = None,
            width: int | None = None) -> str:
    """Per subject a table (claim, verdict, expected, evidence) and a summary line.

    ``width``: the terminal's columns (None: 160, for files, pipes and CI logs). The table fits
    in it: long claim ids wrap, the evidence is cut with "…" (folded onto more lines with
    ``verbose``)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = max(40, width or 160)
    console = Console(record=True, force_terminal=bool(colour), no_color=not colour, width=width,
                      file=_Null(), highlight=False)
    for sr in subject_results:
        table = Table(title=Text(f"{sr.subject.id} — {sr.subject.title}"), show_lines=verbose, expand=False)
        id_width = max([len(r.claim.id) for r in sr.results] + [5])
        claim_width = min(id_width, max(10, width // 4))
        # 4 columns: 5 borders and 2 spaces of padding each (and one spare); verdict ("unverifiable ✗") 14, expected 12;
        # on a narrow terminal those two wrap too, so that the evidence keeps a third of the width
        # (demonstrations: "not demonstrated ✗" 18, expected 16)
        longest = max([len(v) + 2 for r in sr.results for v in (r.verdict, r.claim.expect)] + [14])
        verdict_width, expected_width = (longest, longest - 2) if width - claim_width - 2 * longest - 11 >= width // 3 \
            else (7, 7)
        evidence_width = max(8, width - claim_width - verdict_width - expected_width - 14)
        table.add_column("claim", overflow="fold", min_width=claim_width, max_width=claim_width)
        table.add_column("verdict", overflow="fold", min_width=verdict_width, max_width=verdict_width)
        table.add_column("expected", overflow="fold", min_width=expected_width, max_width=expected_width)
        table.add_column("evidence", overflow="fold" if verbose else "ellipsis", no_wrap=not verbose,
                         max_width=evidence_width)
        for r in sr.results:
            mark = "" if r.ok else " ✗"
            evidence = _detail(r) if verbose else r.evidence
            table.add_row(Text(r.claim.id), Text(r.verdict + mark, style=COLOURS[r.verdict] if colour else ""),
                          Text(r.claim.expect), Text(evidence))   # Text: no rich markup in spec strings
        console.print(table)
    console.print(Text(summary_line(summary(subject_results)),
                       style=("green" if not summary(subject_results)["unexpected"] else "red") if colour else ""))
    return console.export_text(styles=bool(colour))


def summary_line(s: dict[str, int]) -> str:
    """"3 claims: 2 hold, 1 refuted, 0 unverifiable, 1 error; 1 not as expected"."""
    def n(count: int, word: str, plural: str | None = None) -> str:
        return f"{count} {word if count == 1 else (plural or word + 's')}"
    shown = [v for v in DEMONSTRATION_VERDICTS if s.get(v)]    # only when a spec has demonstrations
    demonstrations = "".join(f", {s[v]} {v}" for v in shown)
    return (f"{n(s['claims'], 'claim')}: {s['holds']} hold, {s['refuted']} refuted, {s['unverifiable']} unverifiable"
            f"{demonstrations}, {n(s['error'], 'error')}; {s['unexpected']} not as expected")


class _Null(io.StringIO):
    """A file that keeps nothing (the console records what it prints)."""

    def write(self, s: str) -> int:
        return len(s)

    def flush(self) -> None:
        pass


def render(subject_results: Results, fmt: str, *, verbose: bool = False, colour: bool | None = None,
           width: int | None = None) -> str:
    if fmt == "json":
        return to_json(subject_results)
    if fmt == "junit":
        return to_junit(subject_results)
    return to_text(subject_results, verbose=verbose, colour=colour, width=width)
