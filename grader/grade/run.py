"""Grade submissions: plan every answer, dedupe, check the unique ones in workers, score.

Real classes repeat themselves: most learners give the same few answers. Each answer is
keyed by (problem, variant, answer as given); only unique keys are checked, in the worker
pool (:mod:`grader.grade.pool`), and every copy shares the outcome. Answers that need no
checking are settled here: unknown problem ids (0 points, with their file:line), answers the
reader refused (given twice, a tag that is not data), free text (recorded for a person), values
of the wrong type, over-long text, control characters.

Every answer given comes back exactly once, in the order given. An answer a person must grade
(``correct`` None: free text, an undecided equivalence, an answer the engine could not check)
scores 0 until a person rules: its points stay in ``max_score`` and are also counted in
``pending_points``, so that an answer nobody has graded can never raise a percentage.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from grader.errors import Location

from . import check
from .pool import Failure, Limits, run_tasks
from .submissions import Loaded, gc_paused
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
    status: str                 # correct|partial|wrong|invalid|unknown|needs_person|error
    read_as: str | None = None
    variant: str | None = None
    location: Location | None = None
    pending_points: float = 0.0  # a person must grade it: its points (in max_score, counted 0 in score)


@dataclass(frozen=True)
class SubmissionResult:
    learner: str
    file: str
    location: Location | None
    results: tuple
    score: float
    max_score: float            # the bank's points (pending_points included: counted 0 until graded)
    unanswered: tuple = ()
    pending_points: float = 0.0  # points of the answers a person must grade


@dataclass(frozen=True)
class Report:
    submissions: tuple
    errors: tuple               # GraderError: unreadable files, malformed submissions
    unreadable: bool
    stats: dict = field(default_factory=dict)


def invalid(message: str) -> tuple:
    return (0.0, False, f"invalid answer: {message}", None, "invalid")


_NONFINITE = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}


def echo(raw):
    """The answer as it goes into reports (a megabyte string is cut, saying so; NaN and the
    infinities as YAML writes them, which JSON can hold)."""
    if isinstance(raw, str) and len(raw) > 200:
        return raw[:200] + f"… ({len(raw):,} characters)"
    if isinstance(raw, float) and repr(raw) in _NONFINITE:
        return _NONFINITE[repr(raw)]
    return raw


def _key(raw):
    """A hashable key of an answer as given (lists, mappings and anything else unhashable by
    their repr: unambiguous)."""
    if isinstance(raw, (list, dict)):
        return (type(raw).__name__, repr(raw))
    try:
        hash(raw)
    except TypeError:
        return (type(raw).__name__, repr(raw))
    return (type(raw).__name__, raw)


def grade(bank, loaded: Loaded, *, jobs: int = 2, limits: Limits = Limits(), progress=None) -> Report:
    """Grade every submission of ``loaded`` against ``bank``."""
    t0 = time.perf_counter()
    planner = _Planner(bank)
    with gc_paused():
        plans = [(sub, [planner.plan(ans, sub.learner) for ans in sub.answers]) for sub in loaded.submissions]
    check.install(planner.specs)
    t1 = time.perf_counter()
    payloads = planner.payloads
    if progress:
        progress(0, len(payloads))
    outcomes = run_tasks(list(enumerate(payloads)), check.check_one, jobs=jobs, limits=limits,
                         on_result=(lambda k: progress(k, None)) if progress else None)
    t2 = time.perf_counter()
    with gc_paused():
        subs = _score(bank, plans, outcomes, limits)
    t3 = time.perf_counter()
    stats = {"answers": sum(len(sub.answers) for sub in loaded.submissions), "unique": len(payloads),
             "prepare_s": t1 - t0, "check_s": t2 - t1, "score_s": t3 - t2}
    return Report(tuple(subs), tuple(loaded.errors), loaded.unreadable, stats)


def _score(bank, plans, outcomes: dict, limits: Limits) -> list:
    """The SubmissionResults: every answer's grade, from its plan and the workers' outcomes."""
    subs = []
    total = sum(float(p.points) for p in bank.problems)
    interpreted: dict = {}          # task id -> settled fields: every copy of an answer shares them
    for sub, plan in plans:
        results = []
        for ans, problem, variant, settled in plan:
            if isinstance(settled, int):
                task = settled
                settled = interpreted.get(task)
                if settled is None:
                    out = outcomes.get(task, Failure("error", "no result"))
                    settled = _too_complex(out, limits) if isinstance(out, Failure) else check.interpret(out, problem)
                    interpreted[task] = settled
            results.append(_result(ans, problem, variant, settled))
        answered = {r.id for r in results}
        unanswered = tuple(p.id for p in bank.problems if p.id not in answered)
        pending = sum(r.pending_points for r in results)
        subs.append(SubmissionResult(sub.learner, sub.file, sub.location, tuple(results),
                                     round(sum(r.score for r in results), 6), total, unanswered, pending))
    return subs


def _result(ans, problem, variant, settled) -> Result:
    frac, correct, feedback, read_as, status = settled
    points = float(problem.points) if problem is not None else 0.0
    pending = points if correct is None else 0.0
    if variant:
        feedback = f"{feedback} ({variant})"
    return Result(id=str(ans.problem_id), answer=echo(ans.raw), score=0.0 if pending else round(frac * points, 6),
                  max_score=points, correct=correct, feedback=feedback, status=status, read_as=read_as,
                  variant=variant, location=ans.location, pending_points=pending)


class _Planner:
    """Decides, answer by answer, what each needs: a settled grade, or a task (a unique
    (problem, variant, answer) to check in the workers). What does not depend on the learner
    or the file is remembered per (problem id, answer), so a class's repeats cost one lookup."""

    def __init__(self, bank):
        self.bank = bank
        self.specs: list = []       # spec index -> prepared answer spec (inherited by the workers)
        self.spec_index: dict = {}  # (problem id, variant name) -> spec index, or a settled error
        self.tasks: dict = {}       # (spec index, answer key) -> task id
        self.payloads: list = []    # task id -> (spec index, raw answer)
        self.memo: dict = {}        # (problem id, answer key) -> (problem, variant, settled or task id)

    def plan(self, ans, learner: str) -> tuple:
        """(answer, problem as the learner sees it, variant name, settled fields or task id)."""
        if ans.refused:
            problem = self.bank.get(ans.problem_id) if isinstance(ans.problem_id, str) else None
            return (ans, problem, None, invalid(ans.refused) if problem else _unknown(ans))
        akey = _key(ans.raw)
        mk = (ans.problem_id, akey)
        hit = self.memo.get(mk)
        if hit is not None:
            return (ans, *hit)
        problem = self.bank.get(ans.problem_id) if isinstance(ans.problem_id, str) else None
        if problem is None:
            return (ans, None, None, _unknown(ans))        # names its location: not shared
        why = check.screen(ans.raw, problem.kind)
        if why:
            return self._remember(mk, ans, problem, None, invalid(why))
        if problem.kind == "free_text":
            return self._remember(mk, ans, problem, None, (0.0, None, "recorded: a person must grade this answer",
                                                            None, "needs_person"))
        if problem.kind == "code":                          # the path is relative to the answers file
            return (ans, problem, None, check.grade_code_answer(problem, ans))
        if problem.variant:                                 # drawn per learner: not shared
            try:
                seen, variant = for_learner(problem, learner, self.bank.subject)
            except Exception as e:  # a variant the spec cannot derive: a bank bug, reported on the answer
                return (ans, problem, None, (0.0, None, f"cannot grade: the variant cannot be derived ({e})",
                                             None, "error"))
            return (ans, seen, variant, self._task(seen, variant, ans.raw, akey))
        return self._remember(mk, ans, problem, None, self._task(problem, None, ans.raw, akey))

    def _remember(self, mk, ans, problem, variant, settled) -> tuple:
        self.memo[mk] = (problem, variant, settled)
        return (ans, problem, variant, settled)

    def _task(self, seen, variant, raw, akey):
        """The task id checking ``raw`` against ``seen`` (or the settled error if the problem
        cannot be prepared: the bank's fault, not the learner's)."""
        sk = (seen.id, variant)
        index = self.spec_index.get(sk)
        if index is None:
            try:
                self.specs.append(check.prepare(seen, self.bank))
                index = len(self.specs) - 1
            except Exception as e:
                index = (0.0, None, f"cannot grade: the problem cannot be prepared ({e}); a person must look at it",
                         None, "error")
            self.spec_index[sk] = index
        if isinstance(index, tuple):
            return index
        key = (index, akey)
        task = self.tasks.get(key)
        if task is None:
            task = self.tasks[key] = len(self.payloads)
            self.payloads.append((index, raw))
        return task


def _unknown(ans) -> tuple:
    return (0.0, False, f"unknown problem id {ans.problem_id!r} at {ans.location}", None, "unknown")


def _too_complex(failure: Failure, limits: Limits) -> tuple:
    if failure.reason in ("timeout", "memory", "died"):
        why = {"timeout": f"too complex to grade within {limits.timeout_s:g} s",
               "memory": f"too complex to grade within {limits.memory_mb} MiB of memory",
               "died": "too complex to grade (the checker process died)"}[failure.reason]
        return invalid(why)
    return (0.0, None, f"cannot grade this answer (internal error: {failure.detail}); a person must look at it",
            None, "error")
