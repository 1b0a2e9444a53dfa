"""Write a grading :class:`~grader.grade.results.Report` as text, json, junit or gradescope
(the formats: :data:`grader.reports.FORMATS` ``["grades"]``).

json (fields other tools rely on)::

    {"submissions": [{"learner", "file", "score", "max_score", "pending_points", "unanswered",
                      "results": [{"id", "answer", "score", "max_score", "pending_points", "correct",
                                   "feedback", "status", "read_as", "variant", "location"}]}],
     "errors": [{"location", "message"}],
     "summary": {"submissions", "answers", "errors"}}

An answer a person must grade (``correct`` null) scores 0 until a person rules: ``score`` 0,
``max_score`` its points, and the same points in ``pending_points``; a submission's
``max_score`` keeps them (so an answer nobody has graded never raises a percentage) and its
``pending_points`` adds them up.

gradescope: Gradescope's autograder ``results.json``: ``score`` and ``tests``, each with
``name``, ``score``, ``max_score``, ``status`` (passed/failed) and ``output``; one submission
per file, as Gradescope runs one. A code answer is one test per code test (its share of the
points, its own message; a hidden test's ``visibility`` is ``after_published``); an
unanswered problem is a failed test worth 0 of its points. results.json has no "pending" status: an answer a person
must grade is a test worth 0 of its points, status "passed" (nothing is wrong with it yet; a
"failed" test would tell the learner the answer is wrong), named and explained as waiting
for a person: "needs a person to grade it (N points, counted 0 until then)".

Every format is written from escaped strings (:func:`safe_text`): a lone surrogate in an
answer, a key or a learner's name (a file read by the pure-Python YAML reader may hold one) is
written as ``\\udXXX``, so that one bad string never costs the report.
"""
from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from typing import Any

from grader.grade.pool import gc_paused
from grader.grade.results import AnswerResult, CodeTestResult, Report, Status, error_json, submission_json
from grader.values import json_number

from . import junit, plural
from .summary import ClassSummary, summary_json, summary_text

Points = Mapping[str, float] | None


def to_dict(report: Report) -> dict[str, Any]:
    subs = [submission_json(s) for s in report.submissions]
    errors = [error_json(e) for e in report.errors]
    return {"submissions": subs, "errors": errors,
            "summary": {"submissions": len(subs), "answers": sum(len(s.results) for s in report.submissions),
                        "errors": len(errors)}}


def safe_text(text: str) -> str:
    """``text`` with every character UTF-8 cannot encode (a lone surrogate) written as \\udXXX."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _safe(value: Any) -> Any:
    """A report's data with :func:`safe_text` applied to every string (keys included)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {_safe(k): _safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    return value


def _dumps(data: Any, indent: int | None) -> str:
    """JSON text that UTF-8 can encode: the data as it is (the common case, checked at C speed),
    else with its strings made safe."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(_safe(data), indent=indent, ensure_ascii=False, default=lambda x: safe_text(str(x)))
    return text


def as_json(report: Report, summary: ClassSummary | None = None) -> str:
    with gc_paused():               # a class is hundreds of thousands of small dicts, no cycles
        data = to_dict(report)
    if summary is not None:         # --summary: the class summary (grader.reports.summary)
        data["class"] = summary_json(summary)
    # indented for people; a big report compact (C encoder, several times faster): its size is
    # its results and the unanswered problems it lists
    size = sum(len(s["results"]) + len(s["unanswered"]) for s in data["submissions"])
    indent = 2 if size <= 2000 else None
    return _dumps(data, indent) + "\n"


MARK = {Status.CORRECT: "✓", Status.PARTIAL: "~", Status.WRONG: "✗", Status.INVALID: "✗", Status.UNKNOWN: "?",
        Status.NEEDS_PERSON: "…", Status.ERROR: "!", "unanswered": "-"}
WIDTH = 100         # text reports: a code answer's test messages are wrapped to this width


def printable(text: str) -> str:
    """Text safe for a terminal: control and format characters escaped (\\u001b, \\u202e)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)


def _points(r: AnswerResult) -> str:
    """'2/3', or '–/2' for an answer a person must grade."""
    if r.pending_points:
        return f"–/{json_number(r.pending_points)}"
    return f"{json_number(r.score)}/{json_number(r.max_score)}"


def _pending_note(r: AnswerResult) -> str:
    return f"needs a person to grade it ({json_number(r.pending_points)} points, counted 0 until then)"


def as_text(report: Report, errors: bool = True) -> str:
    """The report for people; ``errors``: with the input errors at the top (the command writes
    them to stderr instead)."""
    lines: list[str] = []
    for e in (report.errors if errors else ()):
        lines.append(f"error: {e}")
    for s in report.submissions:
        lines.append(f"{s.learner} ({s.file}): {json_number(s.score)}/{json_number(s.max_score)}"
                     + (f", {json_number(s.pending_points)} points wait for a person (counted 0 until graded)"
                        if s.pending_points else "")
                     + (f", {len(s.unanswered)} unanswered" if s.unanswered else ""))
        for r in s.results:
            answer = printable(r.answer if isinstance(r.answer, str) else json.dumps(r.answer, default=str))
            first, *more = r.feedback.split("\n")
            lines.append(f"  {MARK.get(r.status, ' ')} {r.id}  {_points(r)}  "
                         f"{answer!s}  — {first}" + (f" [read as {r.read_as}]" if r.read_as and r.read_as not in r.feedback else ""))
            for extra in more:          # a code answer: each failed test, wrapped under the answer
                lines += textwrap.wrap(extra, WIDTH, initial_indent="      ", subsequent_indent="          ",
                                       break_on_hyphens=False) or [""]
        for pid in s.unanswered:
            lines.append(f"  {MARK['unanswered']} {pid}  not answered")
    n = sum(len(s.results) for s in report.submissions)
    lines.append(f"{plural(len(report.submissions), 'submission')}, {plural(n, 'answer')} graded"
                 + (f", {plural(len(report.errors), 'input error')}" if report.errors else ""))
    return "\n".join(printable(line) for line in lines) + "\n"


def _share(r: AnswerResult, t: CodeTestResult) -> float:
    """A code test's share of its answer's points (the tests count alike)."""
    return r.max_score / len(r.tests) if r.tests else r.max_score


def as_junit(report: Report, points: Points = None) -> str:
    """One testsuite per submission: a testcase per answer; a code answer's tests each a
    testcase of their own (``id::test``), with their own message; an unanswered problem a
    failing testcase."""
    suites = []
    for s in report.submissions:
        cases: list[junit.Case] = []
        failures = skipped = 0

        def case(name: str, file: str | None = None, line: str = "") -> junit.Case:
            c = junit.Case({"classname": s.learner, "name": name, "file": file or s.file, "line": line})
            cases.append(c)
            return c

        for r in s.results:
            file = r.location.file if r.location else s.file
            line = str(r.location.line) if r.location and r.location.line else ""
            if r.tests:
                for t in r.tests:
                    c = case(f"{r.id}::{t.name}", file, line)
                    c.add("system-out", f"score {json_number(round(_share(r, t) if t.passed else 0, 6))}/"
                                        f"{json_number(round(_share(r, t), 6))}")
                    if not t.passed:
                        failures += 1
                        c.add("failure", t.message, message=t.message, type="failed")
                continue
            c = case(r.id, file, line)
            c.add("system-out", f"score {_points(r)}: {r.feedback}")
            if r.correct is False:
                failures += 1
                c.add("failure", f"answer: {r.answer}", message=r.feedback, type=r.status)
            elif r.correct is None:
                skipped += 1
                c.add("skipped", message=r.feedback)
        for pid in s.unanswered:
            c = case(pid)
            failures += 1
            worth = (points or {}).get(pid)
            c.add("failure", "not answered" + (f" (0/{json_number(worth)})" if worth is not None else ""),
                  message="not answered", type="unanswered")
        suites.append(junit.Suite({"name": s.learner, "file": s.file, "tests": str(len(cases)),
                                   "failures": str(failures), "skipped": str(skipped), "errors": "0"}, cases))
    if report.errors:
        inputs = junit.Suite({"name": "input", "tests": str(len(report.errors)), "failures": "0",
                              "errors": str(len(report.errors)), "skipped": "0"})
        for e in report.errors:
            c = junit.Case({"classname": "input", "name": str(e.location or "input")})
            c.add("error", message=e.message)
            inputs.cases.append(c)
        suites.append(inputs)
    return junit.write({"name": "grader grade"}, suites, declaration=junit.GRADES_DECLARATION)


def as_gradescope(report: Report, points: Points = None) -> str:
    """Gradescope's results.json: a test per answer; a code answer's tests each a test of their
    own (its share of the points, its own message; hidden tests ``visibility:
    after_published``); an unanswered problem a failed test worth 0 of its points."""
    if len(report.submissions) != 1:
        from grader.errors import InputError
        raise InputError(f"gradescope's results.json holds one submission; got {len(report.submissions)}")
    s = report.submissions[0]
    tests: list[dict[str, Any]] = []
    for r in s.results:
        if r.tests:
            for t in r.tests:
                share = _share(r, t)
                test: dict[str, Any] = {"name": f"{r.id}: {t.name}", "score": json_number(share if t.passed else 0),
                                        "max_score": json_number(share), "status": "passed" if t.passed else "failed",
                                        "output": t.message or "passed"}
                if t.hidden:
                    test["visibility"] = "after_published"
                tests.append(test)
            continue
        test = {"name": r.id, "score": json_number(r.score), "max_score": json_number(r.max_score),
                "status": "passed" if r.correct else "failed", "output": f"Your answer: {r.answer}\n{r.feedback}"}
        if r.pending_points:
            test.update(name=f"{r.id} (needs a person to grade it)", status="passed",
                        output=f"Your answer: {r.answer}\n{r.feedback}\n{_pending_note(r).capitalize()}.")
        tests.append(test)
    for pid in s.unanswered:
        test = {"name": pid, "score": 0, "status": "failed", "output": "Not answered."}
        if points and pid in points:
            test["max_score"] = json_number(points[pid])
        tests.append(test)
    out: dict[str, Any] = {"score": json_number(s.score), "max_score": json_number(s.max_score), "tests": tests}
    notes = [str(e) for e in report.errors]
    if s.pending_points:
        notes.append(f"{json_number(s.pending_points)} points wait for a person to grade them: counted 0 until then.")
    if notes:
        out["output"] = "\n".join(notes)
    return _dumps(out, 2) + "\n"


def render(report: Report, fmt: str, *, points: Points = None, summary: ClassSummary | None = None,
           text_errors: bool = True) -> str:
    """The report in ``fmt``, as text that UTF-8 can always encode (every writer escapes what it
    writes; a last pass makes sure of it, so that the report is never lost to one string).
    ``points``: problem id -> points (the bank's), for the unanswered problems' worth;
    ``summary``: a :class:`grader.reports.summary.ClassSummary` to add (text and json)."""
    if fmt == "junit":
        text = as_junit(report, points)
    elif fmt == "gradescope":
        text = as_gradescope(report, points)
    elif fmt == "json":
        text = as_json(report, summary)
    else:
        text = as_text(report, errors=text_errors)
        if summary is not None:
            text += "\n" + "\n".join(printable(line) for line in summary_text(summary).splitlines()) + "\n"
    return text if fmt in ("json", "gradescope") else safe_text(text)     # (JSON: made safe as it is dumped)
