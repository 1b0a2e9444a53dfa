"""Grade submissions: plan every answer, dedupe, check the unique ones in an executor, score.

Real classes repeat themselves: most learners give the same few answers. Each answer is
decided by the grading policy (:func:`grader.grade.plan.decide`, the same that grades one
answer); the checks are keyed by (problem, variant, answer as given), only unique keys are
checked, by the executor (a worker pool: :mod:`grader.grade.executors`), and every copy shares
the outcome. Code answers are tasks of the executor like any other.

Every answer given comes back exactly once, in the order given. An answer a person must grade
(``correct`` None: free text, an undecided equivalence, an answer the engine could not check)
scores 0 until a person rules: its points stay in ``max_score`` and are also counted in
``pending_points``, so that an answer nobody has graded can never raise a percentage.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from grader.bank.model import Bank

from .executors import Executor, LocalPoolExecutor
from .plan import Planned, Planner, result, settle
from .pool import AnswerLimits, Failure, limits_for, maybe_gc_paused
from .results import AnswerGrade, AnswerResult, Report, Result, SubmissionResult, echo, invalid
from .submissions import Loaded

Progress = Callable[[int, "int | None"], None]


def grade(bank: Bank, loaded: Loaded, *, jobs: int = 2, limits: AnswerLimits = AnswerLimits(),
          progress: Progress | None = None) -> Report:
    """Grade every submission of ``loaded`` against ``bank`` in ``jobs`` forked workers, the
    cycle collector tuned for the bulk phases: what ``grader grade`` does (it owns its process)."""
    return grade_all(bank, loaded.submissions, errors=loaded.errors, unreadable=loaded.unreadable,
                     executor=LocalPoolExecutor(jobs), limits=limits, progress=progress, tune_gc=True)


def grade_all(bank: Bank, submissions: Iterable[Any], *, executor: Executor, limits: AnswerLimits = AnswerLimits(),
              errors: tuple[Any, ...] = (), unreadable: bool = False, progress: Progress | None = None,
              tune_gc: bool = False, with_latex: bool = False, base: Path | None = None) -> Report:
    """Grade ``submissions`` (:class:`grader.grade.submissions.Submission`) with ``executor``.
    ``tune_gc``: pause the cycle collector in the bulk phases (it is the whole process's: only
    for a caller that owns the process). ``with_latex``: each reading's LaTeX too. ``base``: where
    code answers' paths start (None: each answers file's folder)."""
    t0 = time.perf_counter()
    subs = tuple(submissions)
    planner = Planner(bank, with_latex=with_latex, base=base)
    with maybe_gc_paused(tune_gc):
        plans = [(sub, [planner.plan(ans, sub.learner) for ans in sub.answers]) for sub in subs]
    t1 = time.perf_counter()
    payloads = planner.payloads
    if progress:
        progress(0, len(payloads))
    outcomes = executor.run(list(enumerate(payloads)), planner.checker(), limits=limits,
                            on_result=(lambda k: progress(k, None)) if progress else None)
    t2 = time.perf_counter()
    checker = planner.checker()
    with maybe_gc_paused(tune_gc):
        scored = score(bank, plans, outcomes, lambda task: limits_for(checker, payloads[task], limits))
    t3 = time.perf_counter()
    stats = {"answers": sum(len(sub.answers) for sub in subs), "unique": len(payloads),
             "prepare_s": t1 - t0, "check_s": t2 - t1, "score_s": t3 - t2}
    return Report(tuple(scored), tuple(errors), unreadable, stats)


def score(bank: Bank, plans: list[tuple[Any, list[Planned]]], outcomes: dict[Any, Any],
          limits_of: Callable[[int], AnswerLimits]) -> list[SubmissionResult]:
    """The SubmissionResults: every answer's grade, from its plan and the executor's outcomes
    (``limits_of(task)``: the limits a task ran under, named when it went past them)."""
    subs = []
    total = sum(float(p.points) for p in bank.problems)
    settled_of: dict[int, AnswerGrade] = {}     # task id -> AnswerGrade: every copy of an answer shares it
    for sub, plan in plans:
        results = []
        for ans, problem, variant, settled in plan:
            if isinstance(settled, int):
                task = settled
                got = settled_of.get(task)
                if got is None:
                    got = settled_of[task] = settle(outcomes.get(task, Failure("error", "no result")), limits_of(task))
                settled = got
            results.append(result(ans.problem_id, ans.raw, problem, variant, settled, ans.location))
        t = totals(bank, [(r.id, r.score, r.pending_points) for r in results], total)
        subs.append(SubmissionResult(sub.learner, sub.file, sub.location, tuple(results),
                                     t.score, t.max_score, t.unanswered, t.pending_points))
    return subs


class Totals(NamedTuple):
    """A submission's totals: its score (rounded to 6 places), the bank's points, the problems
    it leaves unanswered (in bank order) and the points a person must still grade."""

    score: float
    max_score: float
    unanswered: tuple[str, ...]
    pending_points: float


def totals(bank: Bank, results: Iterable[tuple[str, float, float]], max_score: float | None = None) -> Totals:
    """The totals of a submission from its answers' ``(problem id, score, pending points)``
    (``max_score``: the bank's points, when the caller has summed them already)."""
    rows = list(results)
    answered = {pid for pid, _, _ in rows}
    if max_score is None:
        max_score = sum(float(p.points) for p in bank.problems)
    return Totals(round(sum(score for _, score, _ in rows), 6), max_score,
                  tuple(p.id for p in bank.problems if p.id not in answered),
                  sum(pending for _, _, pending in rows))


__all__ = ["AnswerGrade", "AnswerResult", "Report", "Result", "SubmissionResult", "Totals", "echo", "grade",
           "grade_all", "invalid", "score", "totals"]
