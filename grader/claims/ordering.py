"""The orders and numbers the spec's sections need: definitions in the order they use each
other (cycles found), which definitions go through a named formula, the values a constraint
reads, and YAML 1.1's exponent numbers (125e12) read as numbers."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_EXP_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]{1,3}")


def yaml_number(v: Any) -> Any:
    """A number YAML 1.1 reads as text (125e12, 1.5E-3: exponent notation without a dot or a
    signed exponent), as the number it writes: an int when it is one (125e12), else a float;
    anything else unchanged. A long exponent stays text (and is refused as not a number)."""
    if isinstance(v, str) and _EXP_NUMBER.fullmatch(v.strip()):
        from fractions import Fraction
        x = Fraction(v.strip())
        if x.denominator == 1:
            return int(x)
        f = float(x)
        return f if math.isfinite(f) else v
    return v


def in_order(uses: dict[str, list[str]]) -> tuple[list[str], list[list[str]]]:
    """(the names, each after those it uses; the cycles found, each a list of names)."""
    order: list[str] = []
    state: dict[str, int] = {}          # 1: being visited, 2: done
    cycles: list[list[str]] = []
    for root in uses:
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = []
        while stack:
            n, i = stack.pop()
            if i == 0:
                if state.get(n) == 2:
                    continue
                state[n] = 1
                path.append(n)
            if i < len(uses[n]):
                stack.append((n, i + 1))
                m = uses[n][i]
                if state.get(m) == 1:
                    cycle = path[path.index(m):]
                    if not any(set(c) == set(cycle) for c in cycles):
                        cycles.append(list(cycle))
                elif not state.get(m):
                    stack.append((m, 0))
            else:
                state[n] = 2
                path.pop()
                order.append(n)
    return order, cycles


def uses_formula(n: str, uses: dict[str, list[str]], entries: dict[str, Any]) -> bool:
    seen, todo = set(), list(uses[n])
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if entries[m][0] == "formula":
            return True
        todo.extend(uses[m])
    return False


def used(values: dict[str, Any], exprs: Iterable[Any]) -> dict[str, Any]:
    names = set().union(*({s.name for s in e.free_symbols} for e in exprs))
    return {k: v for k, v in values.items() if k in names}

