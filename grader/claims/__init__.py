"""The spec engine: load a subject's spec (YAML), check every claim, report.

    from grader.claims import load_subject, evaluate, measure, run_subject
    subject = load_subject()                       # the bundled spec/ (ErrorList if invalid)
    evaluate(subject, "flops", {"n": 2048, "d": 4096})
    measure("params", {"d": 512, "h": 8})          # on the real mha, meta device
    run_subject(subject).results                   # ClaimResult per claim

Stages, one module each: model (value objects), figures (stated numbers), files (which
files; a cheap look into them), load (YAML -> model, every error at once; with loader,
sections and fields), checks/ (one module per check kind, and their registry), measure (the
adapter over mha), worker (the measuring process: torch lives there, never in the checking
process) and measurer (its client), run (time limits, verdicts), report (text, json, junit). Nothing here imports torch or sympy at
import time; ``run_subject`` never imports torch in the calling process.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

if TYPE_CHECKING:
    from mha.conversions import Layout

    from .model import Subject
    from .run import SubjectResult


class RunOptions(TypedDict, total=False):
    """The keyword options of :func:`run_subject` and :func:`run_subjects` (see grader.claims.run)."""

    only: str | None
    device: str
    seed: int
    timeout: float | None
    measurer: Any           # a grader.claims.measurer.Measurer, or a stand-in with its methods (tests)
    train: bool


class MeasureOptions(TypedDict, total=False):
    """The keyword options of :func:`measure` (see grader.claims.measure)."""

    layout: Layout
    bias: bool
    model: dict[str, Any] | None


def load_subject(path: str | Path | None = None) -> Subject:
    """The subject of a spec file or folder (None: the bundled spec/); raises ErrorList if invalid."""
    from .load import load_subject as _load
    return _load(path)


def load_subjects(paths: Iterable[str | Path] | None = None) -> list[Subject]:
    """Every subject under the given files/folders (None: the bundled spec/)."""
    from .load import load_subjects as _load
    return _load(paths)


def evaluate(subject: Subject, formula: str, values: Mapping[str, Any]) -> Any:
    """A named formula of the subject (or an expression in its symbols) at exact values."""
    from .checks.common import evaluate_exact

    if formula in subject.formulas:
        expr = subject.formulas[formula]
    else:
        from grader.expr import parse
        expr = parse(str(formula), subject.spec_table or subject.table).expr
    return evaluate_exact(expr, {subject.canonical(k): v for k, v in values.items()})


def measure(quantity: str, values: Mapping[str, Any], device: str = "meta", **kw: Unpack[MeasureOptions]) -> Any:
    """A quantity of the real mha at the given sizes (see grader.claims.measure)."""
    from .measure import measure as _measure
    return _measure(quantity, values, device=device, **kw)


def run_subject(subject: Subject, **kw: Unpack[RunOptions]) -> SubjectResult:
    """Check the subject's claims (see grader.claims.run.run_subject)."""
    from .run import run_subject as _run
    return _run(subject, **kw)


def run_subjects(subjects: Sequence[Subject], **kw: Unpack[RunOptions]) -> list[SubjectResult]:
    """Check the claims of several subjects with one measuring process (see grader.claims.run)."""
    from .run import run_subjects as _run
    return _run(subjects, **kw)
