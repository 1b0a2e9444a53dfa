"""Read a tensor shape: ``(128, 64)``, ``[128,64]``, ``128×64``, ``128 x 64``, ``128 by 64``,
``128*64`` as text, or a YAML list ``[128, 64]``; a single axis ``(128,)`` or ``128``.

Axes are non-negative integers (thousands separators allowed: ``(1,024, 64)`` is not — a
comma separates axes — but ``1 024`` or ``1_024`` are). Brackets must match.
"""
from __future__ import annotations

import operator
import re

from .guard import MAX_ITEMS, shorten
from .model import Unreadable

_AXIS = re.compile(r"[0-9]{1,3}(?:_[0-9]{3})+|[0-9]{1,12}")
_OPEN_CLOSE = {"(": ")", "[": "]", "{": "}", "⟨": "⟩"}
_SEPARATORS = re.compile(r"\s*(?:,|×|✕|⨯|\*|·|⋅|\bx\b|(?<=[0-9])x(?=\s*[0-9])|\bX\b|(?<=[0-9])X(?=\s*[0-9])|\bby\b)\s*")


def read_shape(raw: object) -> tuple[int, ...]:
    """A shape as a tuple of ints; :class:`Unreadable` says why not."""
    if isinstance(raw, bool):
        raise Unreadable("true/false is not a shape")
    if isinstance(raw, int):
        return (_axis_int(raw),)
    if isinstance(raw, (list, tuple)):
        if len(raw) > MAX_ITEMS:
            raise Unreadable(f"a shape has at most {MAX_ITEMS} axes")
        return tuple(_axis(x) for x in raw)
    if not isinstance(raw, str):
        raise Unreadable(f"expected a shape like (128, 64), not {type(raw).__name__}")
    text = raw.strip()
    if text[:1] in _OPEN_CLOSE:
        close = _OPEN_CLOSE[text[0]]
        if not text.endswith(close):
            raise Unreadable(f"unbalanced brackets in {shorten(text, 40)!r}")
        text = text[1:-1].strip()
    if text.endswith(","):          # (128,): a one-axis tuple
        text = text[:-1].rstrip()
    if not text:
        return ()
    parts = _SEPARATORS.split(text)
    if len(parts) > MAX_ITEMS:
        raise Unreadable(f"a shape has at most {MAX_ITEMS} axes")
    return tuple(_axis(p) for p in parts)


def _axis(x: object) -> int:
    if isinstance(x, bool):
        raise Unreadable("true/false is not an axis length")
    if isinstance(x, int):
        return _axis_int(x)
    if hasattr(x, "__index__") and not isinstance(x, (str, float)):    # a SymPy Integer in a reference
        return _axis_int(operator.index(x))
    if isinstance(x, str):
        s = x.strip()
        if _AXIS.fullmatch(s):
            return int(s)
        s2 = re.sub(r"(?<=[0-9])[ \u00a0\u202f\u2009](?=[0-9]{3}\b)", "", s)
        if re.fullmatch(r"[0-9]{1,12}", s2):
            return int(s2)
    raise Unreadable(f"an axis length is a non-negative integer, not {shorten(str(x), 30)!r}")


def _axis_int(n: int) -> int:
    if n < 0:
        raise Unreadable(f"an axis length cannot be negative ({n})")
    if n >= 10**12:
        raise Unreadable(f"axis length {n} is too large")
    return n


def format_shape(shape: tuple[int, ...]) -> str:
    """(128, 64); a one-axis shape as (128,)."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(n) for n in shape) + ")"
