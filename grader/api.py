"""The engine API — SCAFFOLD on the `grader serve` branch, to be replaced by the engine API.

This file implements, over today's engine (``grader.grade``, ``grader.answers``), only the
names of the engine-API contract that ``grader serve`` calls: :func:`load_bank`,
:func:`grade_answer`, :func:`validate_answer`, :func:`grade_submission`, :func:`grade_class`,
:class:`AnswerLimits`, :class:`AnswerResult`, :class:`Reading`, :class:`SubmissionResult`,
:class:`Report`, :class:`Executor`, :class:`LocalPoolExecutor`, :class:`SerialExecutor`,
:func:`result_json` and :func:`submission_json`. The engine-API issue replaces this whole file
with the real one (same names, same meaning); nothing else should be built on what is
private here.

Scaffold limits, which the real API lifts: :class:`SerialExecutor` enforces the per-answer
time limit with SIGALRM, so only in a process's main thread (the service runs it in its own
single-threaded worker processes, which a watchdog kills past a deadline); the batch
planner's module state (``grade.check._SPECS``) makes a call not thread-safe.
"""
from __future__ import annotations

import re
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from grader.bank import load_bank
from grader.errors import Location
from grader.grade.run import Report, Result as _Result, SubmissionResult

__all__ = ["load_bank", "grade_answer", "validate_answer", "grade_submission", "grade_class", "AnswerLimits",
           "AnswerResult", "Reading", "SubmissionResult", "Report", "Executor", "LocalPoolExecutor",
           "SerialExecutor", "result_json", "submission_json"]


@dataclass(frozen=True)
class AnswerLimits:
    """Per-answer check limits (today's ``grade.pool.Limits``)."""

    timeout_s: float = 2.0
    memory_mb: int = 1024

    def _pool(self):
        from grader.grade.pool import Limits
        return Limits(timeout_s=self.timeout_s, memory_mb=self.memory_mb)


@dataclass(frozen=True)
class AnswerResult(_Result):
    """One answer's grade: today's ``grade.run.Result`` and the reading as LaTeX."""

    latex: str | None = None


@dataclass(frozen=True)
class Reading:
    """How an answer is read (nothing graded), or the parse error and its 1-based column."""

    ok: bool
    read_as: str | None = None
    latex: str | None = None
    mathml: str | None = None
    error: str | None = None
    column: int | None = None


class Executor(Protocol):
    def run(self, tasks: Sequence[tuple[int, object]], handler, *, limits: AnswerLimits,
            on_result: Callable[[int], None] | None = None) -> dict: ...


class LocalPoolExecutor:
    """Worker processes with memory and time limits (today's ``grade.pool.run_tasks``)."""

    def __init__(self, jobs: int = 2):
        self.jobs = jobs

    def run(self, tasks, handler, *, limits: AnswerLimits, on_result=None) -> dict:
        from grader.grade.pool import run_tasks
        return run_tasks(tasks, handler, jobs=self.jobs, limits=limits._pool(), on_result=on_result)


class _Deadline(Exception):
    pass


def _raise_deadline(signum, frame):
    raise _Deadline()


class SerialExecutor:
    """In this process, one task after another, each under the time limit (SIGALRM: only in the
    main thread; elsewhere without one — a scaffold limit)."""

    def run(self, tasks, handler, *, limits: AnswerLimits, on_result=None) -> dict:
        from grader.grade.pool import Failure
        main = threading.current_thread() is threading.main_thread()
        out = {}
        for tid, payload in tasks:
            old = signal.signal(signal.SIGALRM, _raise_deadline) if main else None
            if main:
                signal.setitimer(signal.ITIMER_REAL, limits.timeout_s)
            try:
                out[tid] = handler(payload)
            except _Deadline:
                out[tid] = Failure("timeout", "time")
            except MemoryError:
                out[tid] = Failure("memory")
            except RecursionError:
                out[tid] = Failure("timeout", "recursion")
            except Exception as e:  # the handler's bug: this answer's error only
                out[tid] = Failure("error", f"{type(e).__name__}: {e}"[:300])
            finally:
                if main:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, old)
            if on_result:
                on_result(1)
        return out


def _loaded(learner: str, answers: Mapping[str, object], base_dir: Path | None, bank):
    from grader.grade.submissions import Answer, Loaded, Submission
    file = str(Path(base_dir) / "answers") if base_dir is not None else "answers"
    items = []
    for pid, raw in answers.items():
        problem = bank.get(pid) if isinstance(pid, str) else None
        refused = ("a code answer names a file, and this submission has no folder to find it in"
                   if problem is not None and problem.kind == "code" and base_dir is None else None)
        items.append(Answer(pid, raw, Location(file if base_dir is not None else f"answers.{pid}"), refused))
    return Loaded((Submission(str(learner), tuple(items), Location(file), file),), (), False)


def _prepared(bank, check) -> tuple:
    """The bank's prepared answer specs, kept on the bank between calls: (specs, index), the
    planner's own tables, which it only appends to."""
    got = bank.__dict__.get("_api_prepared")
    if got is None:
        got = ([], {})
        object.__setattr__(bank, "_api_prepared", got)
    return got


def _grade(bank, loaded, executor, limits: AnswerLimits, progress=None) -> Report:
    """``grade.run.grade`` with the executor as its pool."""
    from grader.grade import check, run
    planner = run._Planner(bank)
    planner.specs, planner.spec_index = _prepared(bank, check)
    plans = [(sub, [planner.plan(ans, sub.learner) for ans in sub.answers]) for sub in loaded.submissions]
    check.install(planner.specs)
    tasks = list(enumerate(planner.payloads))
    if progress:
        progress(0, len(tasks))
    outcomes = (executor or SerialExecutor()).run(tasks, check.check_one, limits=limits,
                                                  on_result=(lambda k: progress(k, None)) if progress else None)
    subs = run._score(bank, plans, outcomes, limits._pool())
    return Report(tuple(subs), tuple(loaded.errors), loaded.unreadable, {})


def grade_submission(bank, learner: str, answers: Mapping[str, object], *, limits: AnswerLimits = AnswerLimits(),
                     executor: Executor | None = None, base_dir: Path | None = None) -> SubmissionResult:
    """One learner's answers, graded as ``grader grade`` grades them (the same policy)."""
    return _grade(bank, _loaded(learner, answers, base_dir, bank), executor, limits).submissions[0]


def grade_answer(bank, problem_id: str, raw: object, *, learner: str | None = None,
                 limits: AnswerLimits = AnswerLimits(), base_dir: Path | None = None) -> AnswerResult:
    r = grade_submission(bank, learner or "", {problem_id: raw}, limits=limits, base_dir=base_dir).results[0]
    return AnswerResult(**{f: getattr(r, f) for f in r.__dataclass_fields__})


def grade_class(bank, submissions, *, executor: Executor | None = None, limits: AnswerLimits = AnswerLimits(),
                progress=None) -> Report:
    """Every submission of ``submissions`` (answer files or folders, or a ``grade.submissions.Loaded``)."""
    from grader.grade.submissions import Loaded, load_submissions
    loaded = submissions if isinstance(submissions, Loaded) else load_submissions(list(submissions))
    return _grade(bank, loaded, executor or LocalPoolExecutor(), limits, progress)


def validate_answer(bank, problem_id: str, raw: object) -> Reading:
    """How ``raw`` is read as an answer to ``problem_id``; nothing is graded."""
    from grader.answers.guard import screen
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    if problem is None:
        return Reading(False, error=f"unknown problem id {problem_id!r}")
    why = screen(raw, "free_text" if problem.kind == "code" else problem.kind)
    if why:
        return Reading(False, error=why)
    try:
        return _read(bank, problem, raw)
    except (RecursionError, MemoryError, OverflowError):
        return Reading(False, error="too complex to read")


def _read(bank, problem, raw) -> Reading:
    from grader.answers.model import Unreadable
    from grader.answers.guard import shorten
    kind = problem.kind
    try:
        if kind in ("expression", "relation"):
            return _read_math(bank, kind, raw)
        if kind == "number":
            from grader.answers.numbers import read_number
            return Reading(True, read_number(raw).read_as)
        if kind == "quantity":
            from grader.answers.units import UNITS, read_quantity
            unit = problem.unit or "byte"
            return Reading(True, read_quantity(raw, UNITS[unit][0] if unit in UNITS else unit).read_as)
        if kind == "shape":
            from grader.answers.shapes import format_shape, read_shape
            return Reading(True, format_shape(read_shape(raw)))
        if kind == "choice":
            from grader.answers.choices import read_choice
            key = read_choice(raw, problem.choices)
            return Reading(True, f"{key}: {shorten(dict(problem.choices)[key], 60)}")
        return Reading(True, shorten(str(raw), 200))
    except Unreadable as e:
        m = _COLUMN.search(str(e))
        return Reading(False, error=str(e), column=int(m.group(1)) if m else None)


def _read_math(bank, kind: str, raw) -> Reading:
    import sympy
    from grader.expr import ExprError, parse
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return Reading(False, error="expected a formula")
    text = raw if isinstance(raw, str) else str(raw)
    table = bank.subject.table
    try:
        parsed = parse(text, table, relations=kind == "relation")
        expr, shown = parsed.expr, parsed.read_as
    except ExprError as e:
        if kind != "relation":
            return Reading(False, error=e.message, column=e.location.column if e.location else None)
        from grader.answers.symbolic import read_relation
        try:                        # the set forms: {n : n > 2d}, n ∈ (2d, ∞)
            expr, shown = read_relation(text, table)
        except ValueError:
            return Reading(False, error=e.message, column=e.location.column if e.location else None)
    mathml = sympy.mathml(expr, printer="presentation")
    # SymPy's printer leaves a relation's < and > bare in <mo>: not well-formed XML
    mathml = mathml.replace("<mo><</mo>", "<mo>&lt;</mo>").replace("<mo>></mo>", "<mo>&gt;</mo>")
    return Reading(True, shown, sympy.latex(expr), mathml)


_COLUMN = re.compile(r"\(column (\d+)\)")


def result_json(r) -> dict:
    """The per-answer object of ``grader grade --format json``."""
    return submission_json(SubmissionResult("", "", None, (r,), 0.0, 0.0))["results"][0]


def submission_json(s: SubmissionResult) -> dict:
    """The per-submission object of ``grader grade --format json``."""
    from grader.grade.formats import to_dict
    return to_dict(Report((s,), (), False))["submissions"][0]
