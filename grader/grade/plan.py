"""The grading policy: what one answer needs, decided once, for one answer or a class.

:func:`decide` is the policy, the one place it is written: an answer to an unknown problem
(0 points, with its file:line), an answer the reader refused (given twice, a tag that is not
data), one the screen refuses (wrong type, over-long text, control characters), free text
(recorded for a person), a code answer (its file, checked to lie inside the answers' folder,
graded in the sandbox), a variant problem (the learner's own numbers), and the rest: a check
of the answer against the problem's prepared spec. :func:`grader.api.grade_answer` applies it
to one answer; :class:`Planner` applies it to a class, remembering what does not depend on the
learner or the file (a class's repeats cost one lookup) and collecting the unique checks as
tasks for an executor.

The prepared specs are cached on the bank (:meth:`grader.bank.model.Bank.memo`), shared by both.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from grader.bank.model import Bank, Problem
from grader.bank.variants import for_learner

from .check import CodeTask, Checker, code_target, prepare, screen
from .pool import AnswerLimits, Failure
from .results import AnswerGrade, AnswerResult, Status, echo, invalid


@dataclass(frozen=True)
class SpecCheck:
    """Check the answer against a prepared spec (``key``: the problem's id and variant)."""

    key: tuple[str, str | None]
    spec: Any


@dataclass(frozen=True)
class CodeCheck:
    """Run a code exercise's tests on the learner's file."""

    problem: Problem
    path: Path


class Decision(NamedTuple):
    """What an answer needs: ``action`` is a settled :class:`AnswerGrade`, a :class:`SpecCheck`
    or a :class:`CodeCheck`; ``problem`` as the learner sees it (None: unknown), its
    ``variant``'s name; ``shared``: the same for every learner and file giving this answer.
    (A named tuple: a class's planning makes one per distinct answer.)"""

    problem: Problem | None
    variant: str | None
    action: AnswerGrade | SpecCheck | CodeCheck
    shared: bool = False


class Planned(NamedTuple):
    """One answer of a class, planned: the answer, the problem as its learner sees it, the
    variant's name, and its grade (settled) or the id of the task that checks it."""

    answer: Any
    problem: Problem | None
    variant: str | None
    grade: AnswerGrade | int


def unknown(problem_id: Any, location: Any) -> AnswerGrade:
    at = f" at {location}" if location is not None else ""
    return AnswerGrade(0.0, False, f"unknown problem id {problem_id!r}{at}", None, Status.UNKNOWN)


def spec_of(bank: Bank, seen: Problem, variant: str | None) -> SpecCheck | AnswerGrade:
    """The prepared spec of ``seen`` (cached on the bank), or the error grade if the problem
    cannot be prepared: the bank's fault, not the learner's."""
    return bank.memo(("answer-spec", seen.id, variant), _prepared, bank, seen, variant)


def _prepared(bank: Bank, seen: Problem, variant: str | None) -> SpecCheck | AnswerGrade:
    try:
        return SpecCheck((seen.id, variant), prepare(seen, bank))
    except Exception as e:
        return AnswerGrade(0.0, None, f"cannot grade: the problem cannot be prepared ({e}); "
                                      "a person must look at it", None, Status.ERROR)


def decide(bank: Bank, problem_id: Any, raw: Any, *, learner: str, location: Any = None,
           refused: str | None = None, base: Path | None = None) -> Decision:
    """What the answer ``raw`` to ``problem_id`` needs (see the module doc). ``base``: the
    folder a code answer's path is relative to (None: the folder of the answers file at
    ``location``)."""
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    if refused:
        return Decision(problem, None, invalid(refused) if problem else unknown(problem_id, location))
    if problem is None:
        return Decision(None, None, unknown(problem_id, location))        # names its location: not shared
    why = screen(raw, problem.kind)
    if why:
        return Decision(problem, None, invalid(why), True)
    graded = _graded(problem.kind)
    if graded == "person":                              # free text: recorded for a person
        return Decision(problem, None, AnswerGrade(0.0, None, "recorded: a person must grade this answer", None,
                                                   Status.NEEDS_PERSON), True)
    if graded == "tests":                               # code: the path is relative to the answers file
        if base is None:
            base = Path(getattr(location, "file", None) or ".").parent
        target = code_target(problem, raw, base)
        return Decision(problem, None, target if isinstance(target, AnswerGrade) else CodeCheck(problem, target))
    if problem.variant:                                 # drawn per learner: not shared
        try:
            seen, variant = for_learner(problem, learner, bank)
        except Exception as e:  # a variant the spec cannot derive: a bank bug, reported on the answer
            return Decision(problem, None, AnswerGrade(0.0, None, f"cannot grade: the variant cannot be derived ({e})",
                                                       None, Status.ERROR))
        return Decision(seen, variant, spec_of(bank, seen, variant))
    return Decision(problem, None, spec_of(bank, problem, None), True)


def _graded(kind: str) -> str:
    """How a kind is graded: by a checker, by a person, by its tests (the kind's registry entry)."""
    from grader.answers.kinds import KINDS
    entry = KINDS.get(kind)
    return entry.graded if entry is not None else "check"


def too_complex(failure: Failure, limits: AnswerLimits) -> AnswerGrade:
    """The grade of an answer whose check failed (past its limits, or a bug)."""
    if failure.reason in ("timeout", "memory", "died"):
        why = {"timeout": f"too complex to grade within {limits.timeout_s:g} s",
               "memory": f"too complex to grade within {limits.memory_mb} MiB of memory",
               "died": "too complex to grade (the checker process died)"}[failure.reason]
        return invalid(why)
    return AnswerGrade(0.0, None, f"cannot grade this answer (internal error: {failure.detail}); "
                                  "a person must look at it", None, Status.ERROR)


def settle(out: Any, limits: AnswerLimits) -> AnswerGrade:
    """The grade from an executor's result for a task."""
    return too_complex(out, limits) if isinstance(out, Failure) else out


def result(problem_id: Any, raw: Any, problem: Problem | None, variant: str | None, grade: AnswerGrade,
           location: Any) -> AnswerResult:
    """One answer's :class:`AnswerResult`: the grade with the problem's points (a person's to
    grade: its points pending, in max_score and counted 0 in score)."""
    points = float(problem.points) if problem is not None else 0.0
    pending = points if grade.correct is None else 0.0
    feedback = f"{grade.feedback} ({variant})" if variant else grade.feedback
    return AnswerResult(id=str(problem_id), answer=echo(raw), score=0.0 if pending else round(grade.credit * points, 6),
                        max_score=points, correct=grade.correct, feedback=feedback, status=Status(grade.status),
                        read_as=grade.read_as, variant=variant, location=location, pending_points=pending,
                        latex=grade.latex, tests=grade.tests)


def key_of(raw: Any) -> tuple[str, Any]:
    """A hashable key of an answer as given (lists, mappings and anything else unhashable by
    their repr: unambiguous)."""
    if isinstance(raw, (list, dict)):
        return (type(raw).__name__, repr(raw))
    try:
        hash(raw)
    except TypeError:
        return (type(raw).__name__, repr(raw))
    return (type(raw).__name__, raw)


class Planner:
    """:func:`decide` for every answer of a class: each answer becomes a settled grade or a
    task id; a task is a unique (spec, answer) check or a code answer. What does not depend on
    the learner or the file is remembered per (problem id, answer)."""

    def __init__(self, bank: Bank, *, with_latex: bool = False, base: Path | None = None) -> None:
        self.bank = bank
        self.with_latex = with_latex
        self.base = base            # where code answers' paths start (None: each answers file's folder)
        self.specs: list[Any] = []                  # local spec index -> prepared answer spec
        self.spec_index: dict[tuple[str, str | None], int] = {}    # SpecCheck.key -> local spec index
        self.code: list[Problem] = []               # local code index -> code problem
        self.code_index: dict[str, int] = {}        # problem id -> local code index
        self.tasks: dict[tuple[int, Any], int] = {}  # (spec index, answer key) -> task id
        self.payloads: list[Any] = []               # task id -> (spec index, raw answer) or CodeTask
        self.memo: dict[tuple[Any, Any], tuple[Any, ...]] = {}  # (problem id, answer key) -> (problem, variant, grade or task id)

    def plan(self, ans: Any, learner: str) -> Planned:
        """The answer :class:`Planned`: settled, or a task to run."""
        if ans.refused:
            d = decide(self.bank, ans.problem_id, ans.raw, learner=learner, location=ans.location, refused=ans.refused)
            assert isinstance(d.action, AnswerGrade)
            return Planned(ans, d.problem, d.variant, d.action)
        akey = key_of(ans.raw)
        mk = (ans.problem_id, akey)
        hit = self.memo.get(mk)
        if hit is not None:
            return Planned(ans, *hit)
        d = decide(self.bank, ans.problem_id, ans.raw, learner=learner, location=ans.location, base=self.base)
        action = d.action
        if isinstance(action, SpecCheck):
            settled: AnswerGrade | int = self._check(action, ans.raw, akey)
        elif isinstance(action, CodeCheck):
            settled = self._code(action)
        else:
            settled = action
        if d.shared:
            self.memo[mk] = (d.problem, d.variant, settled)
        return Planned(ans, d.problem, d.variant, settled)

    def _check(self, check: SpecCheck, raw: Any, akey: tuple[str, Any]) -> int:
        index = self.spec_index.get(check.key)
        if index is None:
            self.specs.append(check.spec)
            index = self.spec_index[check.key] = len(self.specs) - 1
        key = (index, akey)
        task = self.tasks.get(key)
        if task is None:
            task = self.tasks[key] = len(self.payloads)
            self.payloads.append((index, raw))
        return task

    def _code(self, check: CodeCheck) -> int:
        index = self.code_index.get(check.problem.id)
        if index is None:
            self.code.append(check.problem)
            index = self.code_index[check.problem.id] = len(self.code) - 1
        self.payloads.append(CodeTask(index, str(check.path)))
        return len(self.payloads) - 1

    def checker(self) -> Checker:
        """The handler for this plan's tasks."""
        return Checker(tuple(self.specs), tuple(self.code), with_latex=self.with_latex)
