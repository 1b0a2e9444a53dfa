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
    answer (an internal failure is an error Reading). The reading is the kind's own
    (``read`` of its module in :mod:`grader.answers.kinds`)."""
    from grader.answers.guard import screen
    from grader.answers.kinds import KINDS
    from grader.answers.model import Unreadable
    kind = KINDS[spec.kind]
    why = screen(raw, kind.screening)
    if why:
        return failed(why)
    text = " ".join(raw.split()) if isinstance(raw, str) and kind.graded != "person" else raw
    try:
        shown = kind.read(spec, text) if kind.read is not None else None
    except Unreadable as e:
        return failed(str(e), kind.column(spec, raw) if kind.column is not None else None)
    except (RecursionError, MemoryError, OverflowError):
        return failed("too complex to read")
    except Exception as e:  # noqa: BLE001 - the reader's bug: said, never raised at a preview
        return failed(f"cannot read this answer ({type(e).__name__})")
    if shown is None or shown.read_as is None:
        return Reading(True)            # recorded as written (free text)
    latex, mathml = _math(shown.math) if shown.math is not None else (None, None)
    if shown.unit is not None and latex is not None:
        latex += r"\ \text{" + shown.unit + "}"
        mathml = None       # a number with a unit is not one SymPy object: LaTeX only
    return Reading(True, shown.read_as, latex, mathml)


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
