"""How an answer is read, without grading it: what a live preview shows on every keystroke.

:func:`read` takes a prepared :class:`grader.answers.AnswerSpec` and a raw answer and gives a
:class:`Reading`: the answer as the checker reads it (``read_as``, the same text the grade's
"read as" shows), its math as LaTeX and presentation MathML (SymPy's printers) where there is
math, or the reader's error with the 1-based column it points at in the raw text. It reads
with the checker's own readers (:mod:`grader.answers`), after the same screening, so what it
shows is what grading will read; nothing is compared and nothing is graded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reading:
    """How an answer is read: ``ok`` with ``read_as`` (and ``latex``/``mathml`` where there is
    math), or not ``ok`` with the ``error`` (and its 1-based ``column`` in the raw text, where
    the reader can point at one)."""

    ok: bool
    read_as: str | None = None
    latex: str | None = None
    mathml: str | None = None
    error: str | None = None
    column: int | None = None


def failed(error: str, column: int | None = None) -> Reading:
    return Reading(False, error=error, column=column)


def read(spec: Any, raw: Any) -> Reading:
    """How ``raw`` is read as an answer to ``spec`` (see the module doc); never raises for an
    answer (an internal failure is an error Reading)."""
    from grader.answers.guard import screen
    from grader.answers.model import Unreadable
    why = screen(raw, spec.kind)
    if why:
        return failed(why)
    text = " ".join(raw.split()) if isinstance(raw, str) and spec.kind != "free_text" else raw
    try:
        return _READERS[spec.kind](spec, text, raw)
    except Unreadable as e:
        return failed(str(e), _column(spec, raw))
    except (RecursionError, MemoryError, OverflowError):
        return failed("too complex to read")
    except Exception as e:  # noqa: BLE001 - the reader's bug: said, never raised at a preview
        return failed(f"cannot read this answer ({type(e).__name__})")


def _column(spec: Any, raw: Any) -> int | None:
    """Where the parser stops in the raw text (expressions, relations, arithmetic), if it does."""
    if not isinstance(raw, str) or spec.kind not in ("expression", "relation", "number"):
        return None
    from grader.expr import ExprError, SymbolTable, parse
    try:
        if spec.kind == "number":         # arithmetic on numbers: no symbols
            parse(raw, SymbolTable.build(symbols={}))
        else:
            parse(raw, spec.table, relations=spec.kind == "relation")
    except ExprError as e:
        return e.location.column if e.location is not None else None
    except (RecursionError, MemoryError, OverflowError, ValueError):
        return None
    return None


_BARE_OPERATOR = {"<mo><</mo>": "<mo>&lt;</mo>", "<mo>></mo>": "<mo>&gt;</mo>"}


def _math(expr: Any) -> tuple[str | None, str | None]:
    """(LaTeX, presentation MathML) of a SymPy object, by SymPy's printers. SymPy writes the
    operators of n < 2d and n > 2d bare (``<mo><</mo>``), which is not well-formed XML: they
    are escaped, so that the MathML parses."""
    import sympy
    from sympy.printing.mathml import mathml
    text = mathml(expr, printer="presentation")
    for bare, escaped in _BARE_OPERATOR.items():
        text = text.replace(bare, escaped)
    return sympy.latex(expr), text


def _rational(value: Any) -> Any:
    import sympy
    return sympy.Rational(value.numerator, value.denominator)


def _number(spec: Any, text: Any, raw: Any) -> Reading:
    from grader.answers.numbers import read_number
    r = read_number(text)
    return Reading(True, r.read_as, *_math(_rational(r.value)))


def _quantity(spec: Any, text: Any, raw: Any) -> Reading:
    from grader.answers.check import prepare
    from grader.answers.units import plural, read_quantity
    q = read_quantity(text, prepare(spec).unit)
    latex, mathml = _math(_rational(q.number.value))
    if q.unit is not None and latex is not None:
        latex += r"\ \text{" + plural(q.unit, q.number.value) + "}"
        mathml = None       # a number with a unit is not one SymPy object: LaTeX only
    return Reading(True, q.read_as, latex, mathml)


def _shape(spec: Any, text: Any, raw: Any) -> Reading:
    import sympy
    from grader.answers.shapes import format_shape, read_shape
    shape = read_shape(text)
    return Reading(True, format_shape(shape), *_math(sympy.Tuple(*shape)))


def _choice(spec: Any, text: Any, raw: Any) -> Reading:
    from grader.answers.choices import read_choice
    from grader.answers.guard import shorten
    key = read_choice(text, spec.choices)
    return Reading(True, f"{key}: {shorten(dict(spec.choices)[key], 60)}")


def _expression(spec: Any, text: Any, raw: Any) -> Reading:
    from grader.answers.symbolic import read_formula
    parsed = read_formula(text, spec.table)
    return Reading(True, parsed.read_as, *_math(parsed.expr))


def _relation(spec: Any, text: Any, raw: Any) -> Reading:
    from grader.answers.symbolic import read_relation
    rel, shown = read_relation(text, spec.table)
    return Reading(True, shown, *_math(rel))


def _free_text(spec: Any, text: Any, raw: Any) -> Reading:
    return Reading(True)        # recorded as written, for a person


_READERS = {"number": _number, "quantity": _quantity, "shape": _shape, "choice": _choice,
            "expression": _expression, "relation": _relation, "free_text": _free_text}
