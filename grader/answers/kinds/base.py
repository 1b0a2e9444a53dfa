"""What an answer kind's module may leave out: the defaults, and the helpers the kinds share.

A kind that declares nothing of one part gets the default here: text and numbers screened
by the common rule, no fields of its own, ``derive: {formula, at}``, a reference required,
graded by its checker, its reference verified by evaluating the ``derive`` formula.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.errors import SpecError

from ..guard import TEXT

if TYPE_CHECKING:
    from grader.expr import SymbolTable

    from ..model import AnswerSpec

GRADED = "check"
SCREENING = TEXT
FIELDS: dict[str, Callable[[BankSite], Any]] = {}
DERIVE_KEYS = frozenset({"formula", "at"})
MEASURE_POINTS = False
REFERENCE = True
TABLE = False
MEASURES = None
DRAWN = True            # a 'variant' may draw its numbers per learner
FORMULA_ERROR = "'derive.formula' must be a spec formula name or an expression in the spec's symbols"


@dataclass(frozen=True)
class Shown:
    """How an answer is read, for a preview: ``read_as`` (the grade's "read as"), ``math`` (a
    SymPy object, printed as LaTeX and MathML) and ``unit`` (a unit written after the math, in
    LaTeX only)."""

    read_as: str | None = None
    math: Any = None
    unit: str | None = None


class BankSite:
    """What a bank field's reader sees: the problem's mapping (``item``, positioned YAML), the
    folder of its file (``base``) and ``error(message, key)`` to report at the key's position."""

    def __init__(self, item: Any, error: Any, base: Any) -> None:
        self.item, self.error, self.base = item, error, base


def read_derive(raw: Any, site: BankSite) -> tuple[Any, str | None] | None:
    """``derive: {formula, at}``: (formula, None), or None after an error."""
    formula = raw.get("formula")
    if not isinstance(formula, str):
        site.error(FORMULA_ERROR, "derive")
        return None
    return formula, None


def derived(problem: Any, spec: Any, values: dict[str, Any]) -> Any:
    """What the spec gives for ``problem.derive`` at ``values`` (``spec``: the verifier's view of
    the spec subject, with ``evaluate(formula, values)`` and ``symbolic(formula)``); the
    formula itself, symbolically, when there are no values."""
    formula = problem.derive.formula
    if not values:
        return spec.symbolic(formula)
    return spec.evaluate(formula, values)


def same(problem: Any, reference: Any, value: Any, spec: Any) -> bool:
    raise ValueError(f"kind {problem.kind!r} has nothing to derive")


def describe(value: Any) -> str:
    return str(value)


# ---------------------------------------------------------------- shared by the kinds' checkers

def distinct(variants: list[tuple[Any, str]], ref: Any) -> tuple[tuple[Any, str], ...]:
    """The variants without the reference and without repeats (the first message wins)."""
    seen, out = {ref}, []
    for value, message in variants:
        if value not in seen:
            seen.add(value)
            out.append((value, message))
    return tuple(out)


def table_of(spec: AnswerSpec) -> SymbolTable:
    if spec.table is None:
        raise SpecError("an expression problem needs a symbol table (grader.expr.SymbolTable)")
    return spec.table


def sympy_or_text(value: Any, read: Any) -> Any:
    """A derived value given as SymPy (from :mod:`grader.answers.derive`) as it is; text read with ``read``."""
    import sympy
    return value if isinstance(value, sympy.Basic) else read(value)


def expr_column(raw: Any, table: SymbolTable | None, relations: bool = False) -> int | None:
    """Where :func:`grader.expr.parse` stops in the raw text (None: it does not, or no text)."""
    if not isinstance(raw, str) or table is None:
        return None
    from grader.expr import ExprError, parse
    try:
        parse(raw, table, relations=relations)
    except ExprError as e:
        return e.location.column if e.location is not None else None
    except (RecursionError, MemoryError, OverflowError, ValueError):
        return None
    return None
