"""Every report the engine writes, and the one registry of their formats.

A report kind is what is reported: ``grades`` (a graded class, :mod:`.grades`), ``claims``
(a check-spec run, :mod:`.claims`, and its standalone HTML page, :mod:`.html`), ``summary``
(a class summary, :mod:`.summary`, added to the grades' text and json), ``text-check`` (``grader
check-text``, :mod:`.text_check`, with ``grader draft``'s summary). :data:`FORMATS` lists
each kind's formats, in the order the CLI shows them (its ``--format`` choices read it, and the
API's :func:`grader.api.report_formats`); :func:`render` writes one. JUnit XML has one writer,
:mod:`.junit`, shared by grades and claims.

Light: this module imports nothing of the engine; each writer is imported when it runs.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.claims.run import SubjectResult
    from grader.draft.model import TextCheck
    from grader.grade.results import Report

    from .summary import ClassSummary

FORMATS: Mapping[str, tuple[str, ...]] = {
    "grades": ("text", "json", "junit", "gradescope"),
    "claims": ("text", "json", "junit", "html"),
    "summary": ("text", "json"),
    "text-check": ("text", "json", "junit"),        # grader check-text
}


def formats(kind: str) -> tuple[str, ...]:
    """The formats of a report kind (``grades``, ``claims``, ``summary``)."""
    return FORMATS[kind]


def _check(kind: str, fmt: str) -> None:
    if fmt not in FORMATS[kind]:
        raise ValueError(f"no {fmt!r} format for {kind}: {', '.join(FORMATS[kind])}")


def render_grades(report: Report, fmt: str, *, points: Mapping[str, float] | None = None,
                  summary: ClassSummary | None = None, text_errors: bool = True) -> str:
    """A graded class in ``fmt`` (:data:`FORMATS` ``["grades"]``); ``summary``: added to text and json."""
    _check("grades", fmt)
    from .grades import render
    return render(report, fmt, points=points, summary=summary, text_errors=text_errors)


def render_claims(results: Sequence[SubjectResult], fmt: str, *, verbose: bool = False,
                  colour: bool | None = None, width: int | None = None) -> str:
    """A check-spec run in ``fmt`` (:data:`FORMATS` ``["claims"]``)."""
    _check("claims", fmt)
    if fmt == "html":       # a standalone page: the options of a terminal's table do not apply
        from .html import render_html
        return render_html(results)
    from .claims import render
    return render(results, fmt, verbose=verbose, colour=colour, width=width)


def render_summary(summary: ClassSummary, fmt: str) -> str:
    """A class summary alone in ``fmt`` (:data:`FORMATS` ``["summary"]``)."""
    _check("summary", fmt)
    from .summary import summary_json, summary_text
    if fmt == "json":
        import json
        return json.dumps(summary_json(summary), indent=2, ensure_ascii=False) + "\n"
    return summary_text(summary)


def render_text_check(result: TextCheck, fmt: str) -> str:
    """A check-text run in ``fmt`` (:data:`FORMATS` ``["text-check"]``)."""
    _check("text-check", fmt)
    from .text_check import render
    return render(result, fmt)


def plural(n: int, word: str) -> str:
    """'1 submission', '2 submissions' (as the reports count)."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def summarize(report: Report, points: Mapping[str, float] | None = None) -> ClassSummary:
    """The class summary of a graded class (per problem its mean, success rate and the common
    wrong answers); ``points``: problem id -> points (the bank's)."""
    from .summary import summarize as _summarize
    return _summarize(report, points)


def write_plots(summary: ClassSummary, folder: str | Path, formats: Iterable[str] = ("png",)) -> list[Path]:
    """A score histogram per problem and the class overview (``class.<fmt>``) in ``folder``."""
    from .summary import write_plots as _write
    return _write(summary, folder, formats=formats)


def render(kind: str, data: Any, fmt: str, **options: Any) -> str:
    """The report of ``kind`` on ``data`` in ``fmt``: :func:`render_grades`, :func:`render_claims`
    or :func:`render_summary` with ``options``."""
    writers: dict[str, Any] = {"grades": render_grades, "claims": render_claims, "summary": render_summary,
                               "text-check": render_text_check}
    if kind not in writers:
        raise ValueError(f"no report kind {kind!r}: {', '.join(FORMATS)}")
    out: str = writers[kind](data, fmt, **options)
    return out
