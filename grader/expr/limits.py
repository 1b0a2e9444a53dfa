"""The parser's error and its bounds.

Every failure of :mod:`grader.expr` is an :class:`ExprError` whose ``location.column`` points
into the text (1-based; ``location.line`` too when the text has several lines). The bounds in
:class:`ParseLimits` are checked while parsing, *before* SymPy is asked to build anything that
could be large: numbers are bounded by their estimated size in decimal digits, computed bottom-up
(``((9^999)^999)^999``, ``10^10^10`` and ``2^(2^100)`` are refused without being evaluated).
"""
from __future__ import annotations

from dataclasses import dataclass

from grader.errors import GraderError, Location


class ExprError(GraderError):
    """Text that is not a well-formed, bounded expression in the table's symbols."""


def location_of(text: str, offset: int) -> Location:
    """The 1-based line and column of ``offset`` (a character index) in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return Location(None, line, offset - start + 1)


def fail(text: str, offset: int, message: str) -> ExprError:
    return ExprError(message, location_of(text, offset))


@dataclass(frozen=True)
class ParseLimits:
    """Bounds on what :func:`grader.expr.parse` accepts.

    - ``max_length``: characters of text.
    - ``max_tokens``: tokens of text (numbers, names, operators, brackets).
    - ``max_depth``: nesting of brackets, function calls, powers and unary signs.
    - ``max_digits``: digits of one integer literal (thousands separators not counted).
    - ``max_magnitude``: estimated decimal digits of any number built while parsing (numerator
      or denominator), e.g. ``9^999`` is about 954 digits, ``(9^999)^999`` about 953,000.
    - ``max_exponent``: absolute value of a numeric exponent (``d^5000`` is refused).
    - ``max_degree``: estimated total degree of a polynomial part (``(d^100)^100`` is refused).
    - ``max_terms``: estimated number of terms once expanded (``(a + b + c)^50``).

    ``max_magnitude`` stays under Python's own limit for turning an integer into text (4,300
    digits), so that every number the parser accepts can also be shown in a message.
    """

    max_length: int = 1000
    max_tokens: int = 400
    max_depth: int = 40
    max_digits: int = 100
    max_magnitude: float = 4_000.0
    max_exponent: int = 1000
    max_degree: int = 1000
    max_terms: int = 100_000

    @property
    def terms_log10(self) -> float:
        import math
        return math.log10(max(self.max_terms, 1))
