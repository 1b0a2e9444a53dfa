"""The seam between the bank and the answer checker (:mod:`grader.answers`).

- :func:`prepare` turns a bank :class:`~grader.bank.model.Problem` (as one learner sees it,
  variant included) into an :class:`grader.answers.AnswerSpec`: its mistakes given as
  ``formula`` are derived from the spec at the problem's sizes; what it measures
  (:func:`measures_of`) and the common mistakes derived from its ``derive`` formula
  (:func:`derived_mistakes`, by :mod:`grader.answers.derive`) go with it.
- :class:`Checker` is the handler the executors run in their workers: it holds the prepared
  specs (and the code problems), so a task carries only ``(spec index, raw answer)`` or a
  :class:`CodeTask`; it returns an :class:`~grader.grade.results.AnswerGrade`.
- :func:`interpret` turns an :class:`grader.answers.Outcome` into an ``AnswerGrade``.
- :func:`code_target` (in the parent: where a code answer's file is) and :func:`grade_code_task`
  (in a worker: its tests in the sandbox, :mod:`grader.code.grade`).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.bank.model import Problem, as_fraction

from .pool import AnswerLimits
from .results import AnswerGrade, Status, invalid


def screen(raw: Any, kind: str) -> str | None:
    """Why ``raw`` cannot be an answer at all (None: it goes on to the checker)."""
    from grader.answers.guard import screen as _screen
    return _screen(raw, kind)       # the kind's own rule (grader.answers.kinds)


def _answer_value(value: Any) -> Any:
    """A derived number as an answer would be written (int, or "p/q")."""
    if isinstance(value, tuple):
        return tuple(int(v) for v in value)
    try:
        f = as_fraction(value)
    except (ValueError, TypeError):
        return str(value)
    return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def prepare(problem: Problem, bank: Any) -> Any:
    """The :class:`AnswerSpec` of ``problem``."""
    from grader.answers import AnswerSpec, Mistake
    from grader.answers.kinds import KINDS
    kind = KINDS[problem.kind]
    table = bank.subject.table if kind.table else None
    mistakes = []
    for m in problem.mistakes:
        if m.formula is not None:
            from grader.claims import evaluate
            at = dict(problem.derive.at) if problem.derive else {}
            at.update(m.at)
            if at:
                value = _answer_value(evaluate(bank.subject, m.formula, at))
            else:
                value = m.formula
        else:
            value = m.answer
        mistakes.append(Mistake(value, m.feedback))
    for credit, answer in problem.partial:
        mistakes.append(Mistake(answer, "partly right", credit))
    measures, derived = None, ()
    if kind.variants is not None:     # a kind with mistakes derived from the spec
        try:
            subject = bank.subject
        except Exception:       # no spec to derive from: the author's mistakes and plain messages only
            subject = None
        if subject is not None:
            measures = measures_of(problem, subject)
            derived = derived_mistakes(problem, subject, measures)
    spec = AnswerSpec(
        kind=problem.kind, reference=problem.reference, tolerance=problem.tolerance, sig_figs=problem.sig_figs,
        unit=problem.unit, choices=problem.choices or None, mistakes=tuple(mistakes),
        feedback=problem.feedback.get("wrong"), table=table,
        measures=measures, derived=derived,
    )
    from grader.answers import prepare as read_reference
    read_reference(spec)        # read once here: the forked workers inherit it (SpecError if unreadable)
    return spec


# What a problem measures, from its measured quantity (grader.claims.measure's names) or its
# formula's name in the spec: (prefix, measure), first match wins.
_BY_QUANTITY = (("flops", "flops"), ("attention.bytes", "bytes"), ("attention.count", "count"), ("params", "params"))
_BY_FORMULA = (("flops", "flops"), ("attn_params", "params"), ("params", "params"), ("attention_bytes", "bytes"),
               ("attention_count", "count"))


def _prefixed(name: str, table: tuple[tuple[str, str], ...]) -> str | None:
    for prefix, what in table:
        if name == prefix or name.startswith((prefix + ".", prefix + "_")):
            return str(what)
    return None


def measures_of(problem: Problem, subject: Any) -> str | None:
    """What ``problem``'s answer counts: flops, bytes, params, count, dim (one axis, a width:
    d_k), shape; None when neither its ``measure`` quantity nor its ``derive`` formula says.
    Only the derived factor messages that fit it are offered (no "multiply-adds" on a d_k)."""
    from grader.answers.kinds import KINDS
    kind = KINDS.get(problem.kind)
    if kind is not None and kind.measures is not None:     # what the kind always counts (a shape)
        return kind.measures
    m = problem.measure
    if m is not None and m.quantity:
        if m.quantity.startswith("shape."):
            return "dim" if m.axis is not None else "shape"
        found = _prefixed(m.quantity, _BY_QUANTITY)
        if found:
            return found
    d = problem.derive
    if d is not None and isinstance(d.formula, str):
        name = d.formula.strip()
        if name in subject.formulas:
            return _prefixed(name, _BY_FORMULA)
        if name in dict(subject.table.definitions):
            return "dim"
    return None


def derived_mistakes(problem: Problem, subject: Any, measures: str | None = None) -> tuple[Any, ...]:
    """The common mistakes of ``problem`` derived from the spec (:mod:`grader.answers.derive`):
    its ``derive`` formula's variants, at the problem's sizes for a number, a quantity (in the
    reference's unit, the formula's) or a shape. () when it has no ``derive`` or nothing can be
    derived: a failure here never stops grading (the author's mistakes and the plain messages
    still apply)."""
    from grader.answers import Mistake
    from grader.answers.kinds import KINDS
    d = problem.derive
    kind = KINDS.get(problem.kind)
    if d is None or kind is None or kind.variants is None:
        return ()
    try:
        # the spec's named formulas, hashable: they key the derivation's caches (by value)
        formulas, table = tuple(subject.formulas.items()), subject.table
        at = {subject.canonical(str(k)): v for k, v in d.at.items()}
        found = kind.variants(d, formulas, table, at, measures)
        return tuple(Mistake(value, message) for value, message in found)
    except Exception:       # an author's formula the derivation cannot handle: no derived mistakes
        return ()


def interpret(outcome: Any, latex: str | None = None) -> AnswerGrade:
    """The :class:`AnswerGrade` of a :class:`grader.answers.Outcome`."""
    status = outcome.status
    credit = float(outcome.credit or 0.0)
    if status == "wrong" and credit > 0:
        status = "partial"
    if status == "undecided":
        status = "needs_person"
    feedback = outcome.feedback or status
    if outcome.read_as and "read as" not in feedback:
        feedback = f"{feedback} (read as {outcome.read_as})"
    return AnswerGrade(credit, outcome.correct, feedback, outcome.read_as or None, Status(status), latex)


# ------------------------------------------------------------------ the workers' handler

@dataclass(frozen=True)
class CodeTask:
    """A code answer to grade in a worker: the index of its problem in the Checker's
    ``code`` and the solution file (resolved, checked to lie inside the answers' folder)."""

    problem: int
    path: str


class Checker:
    """The handler the executors run: ``checker(payload) -> AnswerGrade``, where ``payload`` is
    ``(spec index, raw answer)`` or a :class:`CodeTask`. It holds what the tasks refer to, so
    that a task is small: forked workers inherit it; other workers get it pickled once.
    ``with_latex``: an answer's reading as LaTeX too (what :func:`grader.api.grade_answer` gives)."""

    def __init__(self, specs: tuple[Any, ...] = (), code: tuple[Problem, ...] = (), *,
                 with_latex: bool = False) -> None:
        self.specs = tuple(specs)
        self.code = tuple(code)
        self.with_latex = with_latex
        self.token = uuid.uuid4().hex   # a worker that keeps this handler knows it by this

    def __call__(self, payload: Any) -> AnswerGrade:
        if isinstance(payload, CodeTask):
            return grade_code_task(self.code[payload.problem], Path(payload.path))
        return self.check(payload)

    def check(self, payload: tuple[int, Any]) -> AnswerGrade:
        """One answer against its prepared spec."""
        from grader.answers import check_answer
        index, raw = payload
        spec = self.specs[index]
        outcome = check_answer(spec, raw)
        latex = None
        if self.with_latex and outcome.read_as:
            from .reading import read
            latex = read(spec, raw).latex
        return interpret(outcome, latex)

    def limits_for(self, payload: Any, limits: AnswerLimits) -> AnswerLimits:
        """A code answer runs under the sandbox's own limits (its tests take longer than a
        check, in a process of their own); every other task under ``limits``."""
        if not isinstance(payload, CodeTask):
            return limits
        from grader.code.grade import LIMITS
        return AnswerLimits(timeout_s=float(LIMITS.wall_s) + 60.0, cpu_s=60, memory_mb=0, grace_s=limits.grace_s)


def code_target(problem: Problem, raw: Any, base: Path) -> Path | AnswerGrade:
    """A code exercise's answer names the learner's solution file, relative to ``base`` (the
    answers file's folder) and inside it: its path, or why it cannot be graded."""
    if not isinstance(raw, str):
        return invalid("name your solution file (a path)")
    base = base.resolve()
    try:
        path = (base / raw).resolve()
    except (OSError, RuntimeError, ValueError):
        return invalid(f"no such solution file: {raw}")
    if base not in path.parents:
        return invalid("the solution file must be inside the folder of the answers file")
    if not path.exists():       # a folder, a FIFO, a device: grade_code says what it is, for this answer
        return invalid(f"no such solution file: {raw}")
    return path


def grade_code_task(problem: Problem, path: Path) -> AnswerGrade:
    """Run a code exercise's tests on the learner's file in the sandbox (:func:`grader.code.grade.grade_code`).
    A file that cannot be read (not UTF-8 text, too large) is an invalid answer; missing tests
    are the bank's fault: a person must look at it."""
    try:
        from grader.code.grade import grade_code, tests_of
    except ImportError:
        return AnswerGrade(0.0, None, "cannot grade code exercises here (grader.code.grade is not available); "
                                      "a person must look at it", None, Status.NEEDS_PERSON)
    from grader.errors import GraderError
    if not tests_of(problem).exists():
        return AnswerGrade(0.0, None, f"cannot grade: the tests of {problem.id} are missing; "
                                      "a person must look at it", None, Status.ERROR)
    try:
        result = grade_code(problem, path)
    except GraderError as e:    # a directory, a FIFO, too large, not UTF-8: this answer only
        return invalid(e.message)
    if getattr(result, "refused", False):   # no safe sandbox here: not graded; a person (or a better machine) must
        return AnswerGrade(0.0, None, result.message, None, Status.ERROR)
    from .results import CodeTestResult
    tests = tuple(CodeTestResult(t.name, t.passed, t.message, getattr(t, "hidden", False)) for t in result.tests)
    failed = [t for t in tests if not t.passed]
    frac = (result.score / result.max_score) if result.max_score else 0.0
    if failed:      # every failed test on a line of its own, with its own message
        lines = [f"{len(tests) - len(failed)}/{len(tests)} tests passed [sandbox: {result.sandbox}]"]
        lines += [f"✗ {t.name}: {t.message}" for t in failed]
        return AnswerGrade(frac, False, "\n".join(lines), None, Status.PARTIAL if frac else Status.WRONG, tests=tests)
    return AnswerGrade(1.0, True, f"all {len(tests)} tests passed [sandbox: {result.sandbox}]", None, Status.CORRECT,
                       tests=tests)
