"""The seam between the bank and the answer checker (:mod:`grader.answers`).

- :func:`prepare` turns a bank :class:`~grader.bank.model.Problem` (as one learner sees it,
  variant included) into an :class:`grader.answers.AnswerSpec`: its mistakes given as
  ``formula`` are derived from the spec at the problem's sizes; what it measures
  (:func:`measures_of`) and the common mistakes derived from its ``derive`` formula
  (:func:`derived_mistakes`, by :mod:`grader.answers.derive`) go with it.
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
    measures, derived = None, ()
    if problem.kind in ("number", "quantity", "expression", "shape", "relation"):
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


# What a problem measures, from its measured quantity (grader.spec.measure's names) or its
# formula's name in the spec: (prefix, measure), first match wins.
_BY_QUANTITY = (("flops", "flops"), ("attention.bytes", "bytes"), ("attention.count", "count"), ("params", "params"))
_BY_FORMULA = (("flops", "flops"), ("attn_params", "params"), ("params", "params"), ("attention_bytes", "bytes"),
               ("attention_count", "count"))


def _prefixed(name: str, table) -> str | None:
    for prefix, what in table:
        if name == prefix or name.startswith((prefix + ".", prefix + "_")):
            return what
    return None


def measures_of(problem: Problem, subject) -> str | None:
    """What ``problem``'s answer counts: flops, bytes, params, count, dim (one axis, a width:
    d_k), shape; None when neither its ``measure`` quantity nor its ``derive`` formula says.
    Only the derived factor messages that fit it are offered (no "multiply-adds" on a d_k)."""
    if problem.kind == "shape":
        return "shape"
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


_FORMULAS: dict = {}


def _formulas(subject) -> tuple:
    """The spec's named formulas as ((name, expr), ...), hashable (keys the derivation cache)."""
    got = _FORMULAS.get(id(subject))
    if got is None or got[0] is not subject:
        got = _FORMULAS[id(subject)] = (subject, tuple(subject.formulas.items()))
    return got[1]


def derived_mistakes(problem: Problem, subject, measures: str | None = None) -> tuple:
    """The common mistakes of ``problem`` derived from the spec (:mod:`grader.answers.derive`):
    its ``derive`` formula's variants, at the problem's sizes for a number, a quantity (in the
    reference's unit, the formula's) or a shape. () when it has no ``derive`` or nothing can be
    derived: a failure here never stops grading (the author's mistakes and the plain messages
    still apply)."""
    from grader.answers import Mistake
    from grader.answers import derive as dv
    d = problem.derive
    if d is None or problem.kind not in ("number", "quantity", "expression", "shape", "relation"):
        return ()
    try:
        formulas, table = _formulas(subject), subject.table
        at = {subject.canonical(str(k)): v for k, v in d.at.items()}
        if problem.kind == "relation":
            if not d.op or not isinstance(d.formula, tuple) or len(d.formula) != 2:
                return ()
            found = dv.relation_variants(str(d.formula[0]), d.op, str(d.formula[1]), formulas, table)
        elif problem.kind == "shape":
            if not isinstance(d.formula, tuple):
                return ()
            found = dv.shape_variants(tuple(str(f) for f in d.formula), formulas, table, at)
        elif not isinstance(d.formula, str):
            return ()
        elif problem.kind == "expression":
            found = dv.formula_variants(d.formula.strip(), formulas, table, measures)
        else:
            found = dv.number_variants(d.formula.strip(), formulas, table, at, measures)
        return tuple(Mistake(value, message) for value, message in found)
    except Exception:       # an author's formula the derivation cannot handle: no derived mistakes
        return ()


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
    if not path.exists():
        return (0.0, False, f"invalid answer: no such solution file: {answer.raw}", None, "invalid")
    try:
        from grader.code import grade_code
    except ImportError:
        return (0.0, None, "cannot grade code exercises here (grader.code is not available); "
                           "a person must look at it", None, "needs_person")
    from grader.errors import GraderError
    try:
        result = grade_code(problem, path)
    except GraderError as e:  # a directory, a FIFO, too large, not UTF-8: this answer only
        return (0.0, False, f"invalid answer: {answer.raw}: {e.message}", None, "invalid")
    if result.refused:  # no safe sandbox here: not graded, a person (or a better machine) must
        return (0.0, None, result.message, None, "error")
    failed = [t for t in result.tests if not t.passed]
    frac = (result.score / result.max_score) if result.max_score else 0.0
    if failed:
        lines = [f"{len(result.tests) - len(failed)}/{len(result.tests)} tests passed"]
        lines += [f"{t.name}: {t.message}" for t in failed[:5]]
        if len(failed) > 5:
            lines.append(f"… and {len(failed) - 5} more")
        return (frac, False, "; ".join(lines) + f" [sandbox: {result.sandbox}]", None, "partial" if frac else "wrong")
    return (1.0, True, f"all {len(result.tests)} tests passed [sandbox: {result.sandbox}]", None, "correct")
