"""The seam between the bank and the answer checker (:mod:`grader.answers`).

- :func:`prepare` turns a bank :class:`~grader.bank.model.Problem` (as one learner sees it,
  variant included) into an :class:`grader.answers.AnswerSpec`: its mistakes given as
  ``formula`` are derived from the spec at the problem's sizes.
- :func:`install` / :func:`check_one` run in the workers: the specs are installed before the
  workers fork, so a task carries only ``(spec index, raw answer)``.
- :func:`interpret` turns an :class:`grader.answers.Outcome` into the grade's fields.
- :func:`grade_code_answer` grades a code exercise's solution file with :mod:`grader.code`.
"""
from __future__ import annotations

from pathlib import Path

from grader.bank.model import Problem, as_fraction

_SPECS: list = []


def screen(raw, kind: str) -> str | None:
    """Why ``raw`` cannot be an answer at all (None: it goes on to the checker)."""
    from grader.answers.guard import screen as _screen
    return _screen(raw, "free_text" if kind == "code" else kind)


def _answer_value(value):
    """A derived number as an answer would be written (int, or "p/q")."""
    if isinstance(value, tuple):
        return tuple(int(v) for v in value)
    try:
        f = as_fraction(value)
    except (ValueError, TypeError):
        return str(value)
    return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def prepare(problem: Problem, bank):
    """The :class:`AnswerSpec` of ``problem``."""
    from grader.answers import AnswerSpec, Mistake
    table = bank.subject.table if problem.kind in ("expression", "relation") else None
    mistakes = []
    for m in problem.mistakes:
        if m.formula is not None:
            from grader.spec import evaluate
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
    spec = AnswerSpec(
        kind=problem.kind, reference=problem.reference, tolerance=problem.tolerance, sig_figs=problem.sig_figs,
        unit=problem.unit, choices=problem.choices or None, mistakes=tuple(mistakes),
        feedback=problem.feedback.get("wrong"), table=table,
    )
    from grader.answers import prepare as read_reference
    read_reference(spec)        # read once here: the forked workers inherit it (SpecError if unreadable)
    return spec


def install(specs: list) -> None:
    """Make ``specs`` the table the workers (forked next) check against."""
    global _SPECS
    _SPECS = list(specs)


def check_one(payload):
    """In a worker: check one answer. ``payload`` is ``(spec index, raw answer)``."""
    from grader.answers import check_answer
    index, raw = payload
    return check_answer(_SPECS[index], raw)


def interpret(outcome, problem: Problem) -> tuple:
    """(fraction of the points, correct, feedback, read as, status) of an Outcome."""
    status = outcome.status
    credit = float(outcome.credit or 0.0)
    if status == "wrong" and credit > 0:
        status = "partial"
    if status == "undecided":
        status = "needs_person"
    feedback = outcome.feedback or status
    if outcome.read_as and "read as" not in feedback:
        feedback = f"{feedback} (read as {outcome.read_as})"
    return (credit, outcome.correct, feedback, outcome.read_as or None, status)


def grade_code_answer(problem: Problem, answer) -> tuple:
    """A code exercise: the answer names the learner's solution file, relative to the answers
    file and inside its folder; :func:`grader.code.grade_code` runs its tests in the sandbox."""
    if not isinstance(answer.raw, str):
        return (0.0, False, "invalid answer: name your solution file (a path)", None, "invalid")
    base = Path(answer.location.file or ".").resolve().parent
    path = (base / answer.raw).resolve()
    if base not in path.parents:
        return (0.0, False, "invalid answer: the solution file must be inside the folder of the answers file",
                None, "invalid")
    if not path.is_file():
        return (0.0, False, f"invalid answer: no such solution file: {answer.raw}", None, "invalid")
    try:
        from grader.code import grade_code
    except ImportError:
        return (0.0, None, "cannot grade code exercises here (grader.code is not available); "
                           "a person must look at it", None, "needs_person")
    result = grade_code(problem, path)
    failed = [t for t in result.tests if not t.passed]
    frac = (result.score / result.max_score) if result.max_score else 0.0
    if failed:
        lines = [f"{len(result.tests) - len(failed)}/{len(result.tests)} tests passed"]
        lines += [f"{t.name}: {t.message}" for t in failed[:5]]
        if len(failed) > 5:
            lines.append(f"… and {len(failed) - 5} more")
        return (frac, False, "; ".join(lines) + f" [sandbox: {result.sandbox}]", None, "partial" if frac else "wrong")
    return (1.0, True, f"all {len(result.tests)} tests passed [sandbox: {result.sandbox}]", None, "correct")
