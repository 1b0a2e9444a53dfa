"""``read_as``: a stable, readable rendering of what the parser understood.

``4*d**2 + 4*d`` is shown ``4·d² + 4·d``; ``n >= 2*d`` is ``n ≥ 2·d``; a chain ``0 < n < 2d``
is ``0 < n < 2·d``. The order of terms is SymPy's (stable for equal expressions).
"""
from __future__ import annotations

import re

from typing import Any

import sympy

SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_POW_INT = re.compile(r"\*\*(\d+)|\*\*\((-\d+)\)")
RELOPS = {"<": "<", ">": ">", "<=": "≤", ">=": "≥", "==": "=", "=": "=", "!=": "≠"}


def _expr(expr: sympy.Basic) -> str:
    s = sympy.sstr(expr)
    s = _POW_INT.sub(lambda m: (m.group(1) or m.group(2)).translate(SUP), s)
    return s.replace("**", "^").replace("*", "·")


def render(expr: sympy.Basic) -> str:
    """The unicode rendering of an expression, relation or chain of relations."""
    if isinstance(expr, sympy.And):
        parts = list(expr.args)
        # a chain a < b < c was built as And(a < b, b < c): show it as written when it links up
        if all(isinstance(p, sympy.core.relational.Relational) for p in parts):
            ordered = _chain(parts)
            if ordered is not None:
                out = render(ordered[0].lhs)
                for p in ordered:
                    out += f" {RELOPS[p.rel_op]} {render(p.rhs)}"
                return out
        return " and ".join(render(p) for p in parts)
    if isinstance(expr, sympy.core.relational.Relational):
        return f"{render(expr.lhs)} {RELOPS.get(expr.rel_op, expr.rel_op)} {render(expr.rhs)}"
    return _expr(expr)


def _chain(parts: list[Any]) -> list[Any] | None:
    """The relations ordered so each one's rhs is the next one's lhs, or None."""
    rhs_set = {p.rhs for p in parts}
    starts = [p for p in parts if p.lhs not in rhs_set]
    if len(starts) != 1:
        return None
    out, left = [starts[0]], [p for p in parts if p is not starts[0]]
    while left:
        nxt = [p for p in left if p.lhs == out[-1].rhs]
        if len(nxt) != 1:
            return None
        out.append(nxt[0])
        left.remove(nxt[0])
    return out
