"""Grade submissions: plan every answer, dedupe, check the unique ones in workers, score.

Real classes repeat themselves: most learners give the same few answers. Each answer is
keyed by (problem, variant, answer as given); only unique keys are checked, in the worker
pool (:mod:`grader.grade.pool`), and every copy shares the outcome. Answers that need no
checking are settled here: unknown problem ids (0 points, with their file:line), free text
(recorded for a person), values of the wrong type, over-long text, control characters.

Every answer given comes back exactly once, in the order given.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from grader.errors import Location

from . import check
from .pool import Failure, Limits, run_tasks
from .submissions import Loaded
from .variants import for_learner

@dataclass(frozen=True)
class Result:
    """One answer's grade. ``correct`` is None where a person must grade it."""

    id: str
    answer: object
    score: float
    max_score: float
    correct: bool | None
    feedback: str
    status: str                 # correct|partial|wrong|invalid|unknown|needs_person
    read_as: str | None = None
    variant: str | None = None
    location: Location | None = None


@dataclass(frozen=True)
class SubmissionResult:
    learner: str
    file: str
    location: Location | None
    results: tuple
    score: float
    max_score: float
    unanswered: tuple = ()


@dataclass(frozen=True)
class Report:
    submissions: tuple
    errors: tuple               # GraderError: unreadable files, malformed submissions
    unreadable: bool
    stats: dict = field(default_factory=dict)


def invalid(message: str) -> tuple:
    return (0.0, False, f"invalid answer: {message}", None, "invalid")


def echo(raw):
    """The answer as it goes into reports (a megabyte string is cut, saying so)."""
    if isinstance(raw, str) and len(raw) > 200:
        return raw[:200] + f"… ({len(raw):,} characters)"
    return raw


def _key(raw):
    """A hashable key of an answer as given (lists and mappings by their repr: unambiguous)."""
    return (type(raw).__name__, repr(raw) if isinstance(raw, (list, dict)) else raw)


def grade(bank, loaded: Loaded, *, jobs: int = 2, limits: Limits = Limits(), progress=None) -> Report:
    """Grade every submission of ``loaded`` against ``bank``."""
    t0 = time.perf_counter()
    specs: list = []                # spec index -> prepared answer spec (inherited by the workers)
    spec_index: dict = {}           # (problem id, variant name) -> spec index
    tasks: dict = {}                # (spec index, answer key) -> task id
    payloads: list = []
    plans = []                      # per submission: list of (answer, problem, variant, settled or task id)
    prechecked: dict = {}           # (kind, answer key) -> why it is invalid, or None
    n_answers = 0
    for sub in loaded.submissions:
        plan = []
        for ans in sub.answers:
            n_answers += 1
            problem = bank.get(ans.problem_id) if isinstance(ans.problem_id, str) else None
            if problem is None:
                plan.append((ans, None, None, (0.0, False, f"unknown problem id {ans.problem_id!r} at {ans.location}",
                                              None, "unknown")))
                continue
            akey = _key(ans.raw)
            pk = (problem.kind, akey)
            why = prechecked[pk] if pk in prechecked else prechecked.setdefault(pk, check.screen(ans.raw, problem.kind))
            if why:
                plan.append((ans, problem, None, invalid(why)))
                continue
            if problem.kind == "free_text":
                plan.append((ans, problem, None, (0.0, None, "recorded: a person must grade this answer", None,
                                                  "needs_person")))
                continue
            if problem.kind == "code":
                plan.append((ans, problem, None, check.grade_code_answer(problem, ans)))
                continue
            try:
                seen, variant = for_learner(problem, sub.learner, bank.subject) if problem.variant else (problem, None)
            except Exception as e:  # a variant the spec cannot derive: a bank bug, reported on the answer
                plan.append((ans, problem, None, (0.0, None, f"cannot grade: the variant cannot be derived ({e})",
                                                  None, "error")))
                continue
            sk = (problem.id, variant)
            if sk not in spec_index:
                try:
                    specs.append(check.prepare(seen, bank))
                    spec_index[sk] = len(specs) - 1
                except Exception as e:  # the bank's problem (a reference that cannot be read), not the learner's
                    spec_index[sk] = (0.0, None, f"cannot grade: the problem cannot be prepared ({e}); "
                                                 "a person must look at it", None, "error")
            if isinstance(spec_index[sk], tuple):
                plan.append((ans, seen, variant, spec_index[sk]))
                continue
            key = (spec_index[sk], akey)
            if key not in tasks:
                tasks[key] = len(payloads)
                payloads.append((spec_index[sk], ans.raw))
            plan.append((ans, seen, variant, tasks[key]))
        plans.append((sub, plan))
    check.install(specs)
    t1 = time.perf_counter()
    if progress:
        progress(0, len(payloads))
    outcomes = run_tasks(list(enumerate(payloads)), check.check_one, jobs=jobs, limits=limits,
                         on_result=(lambda k: progress(k, None)) if progress else None)
    t2 = time.perf_counter()
    subs = []
    for sub, plan in plans:
        results = []
        for ans, problem, variant, settled in plan:
            if isinstance(settled, int):
                out = outcomes.get(settled, Failure("error", "no result"))
                settled = _too_complex(out, limits) if isinstance(out, Failure) else check.interpret(out, problem)
            frac, correct, feedback, read_as, status = settled
            points = float(problem.points) if problem is not None else 0.0
            if variant:
                feedback = f"{feedback} ({variant})"
            results.append(Result(
                id=str(ans.problem_id), answer=echo(ans.raw), score=round(frac * points, 6), max_score=points,
                correct=correct, feedback=feedback, status=status, read_as=read_as, variant=variant,
                location=ans.location))
        answered = {r.id for r in results}
        unanswered = tuple(p.id for p in bank.problems if p.id not in answered)
        max_score = sum(float(p.points) for p in bank.problems)
        subs.append(SubmissionResult(sub.learner, sub.file, sub.location, tuple(results),
                                     round(sum(r.score for r in results), 6), max_score, unanswered))
    t3 = time.perf_counter()
    stats = {"answers": n_answers, "unique": len(payloads), "prepare_s": t1 - t0, "check_s": t2 - t1,
             "score_s": t3 - t2}
    return Report(tuple(subs), tuple(loaded.errors), loaded.unreadable, stats)


def _too_complex(failure: Failure, limits: Limits) -> tuple:
    if failure.reason in ("timeout", "memory", "died"):
        why = {"timeout": f"too complex to grade within {limits.timeout_s:g} s",
               "memory": f"too complex to grade within {limits.memory_mb} MiB of memory",
               "died": "too complex to grade (the checker process died)"}[failure.reason]
        return invalid(why)
    return (0.0, None, f"cannot grade this answer (internal error: {failure.detail}); a person must look at it",
            None, "error")
