"""The spec's named parts of a formula (``params = params_weights + params_biases``) and its
definitions that can be confused with their symbols (d_k = d/h): what :mod:`.derive` changes."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

from .monomials import Poly, Powers, poly_of, show

if TYPE_CHECKING:
    from fractions import Fraction

    import sympy

    from grader.expr import SymbolTable

#: the spec's named formulas: ((name, SymPy expression), ...)
Formulas: TypeAlias = "tuple[tuple[str, sympy.Expr], ...]"

# ---------------------------------------------------------------- the spec's named parts

@dataclass(frozen=True)
class Role:
    """What a named part of a formula is, for the messages and the changes that fit it."""

    desc: str                   # "the biases"
    plural: bool = False        # "are missing" / "is missing"
    fourfold: bool = False      # one equal share per projection W^Q, W^K, W^V, W^O
    bias: bool = False          # one bias per projection: may be counted twice
    pair: bool = False          # two equal products (QKᵀ and A·V)
    one: str = ""               # a fourfold part: one of the four ("weight matrix")
    many: str = ""              # ... and the four ("weight matrices")


ROLES = {
    "weights": Role("the weight matrices", plural=True, fourfold=True, one="weight matrix", many="weight matrices"),
    "biases": Role("the biases", plural=True, fourfold=True, bias=True, one="bias", many="biases"),
    "projections": Role("the projections", plural=True, fourfold=True, one="projection", many="projections"),
    "attention": Role("QKᵀ and A·V", plural=True, pair=True),
}


@dataclass(frozen=True)
class Part:
    poly: Poly
    role: Role
    named: bool                 # a spec formula's part, or an unnamed term

    @property
    def shown(self) -> str:
        return f"{self.role.desc} ({show(self.poly)})" if self.named else f"the term {show(self.poly)}"


def _unnamed(term: tuple[Powers, Fraction]) -> Part:
    return Part((term,), Role(f"the term {show((term,))}"), False)


@lru_cache(maxsize=64)
def _polys(formulas: Formulas) -> tuple[tuple[str, Poly | None], ...]:
    """The spec's formulas as ((name, poly or None), ...)."""
    return tuple((name, poly_of(expr)) for name, expr in formulas)


@lru_cache(maxsize=256)
def _parts_of(name: str, formulas: Formulas) -> tuple[Part, ...] | None:
    """The parts of formula ``name`` (``name_<part>`` formulas that are some of its terms; known
    roles first, disjoint), its other terms unnamed; None when it is not a sum."""
    polys = dict(_polys(formulas))
    whole = polys.get(name)
    if not whole or len(whole) < 2:
        return None
    terms = set(whole)
    candidates = []
    for other, poly in polys.items():
        if not other.startswith(name + "_") or not poly:
            continue
        suffix = other[len(name) + 1:]
        if len(poly) < len(whole) and set(poly) <= terms:
            candidates.append((suffix not in ROLES, suffix, poly))
    taken: set[tuple[Powers, Fraction]] = set()
    parts = []
    for _, suffix, poly in sorted(candidates, key=lambda c: c[0]):
        if taken & set(poly):
            continue
        taken |= set(poly)
        parts.append(Part(poly, ROLES.get(suffix) or Role(f"the {suffix.replace('_', ' ')} term"), True))
    parts += [_unnamed(t) for t in whole if t not in taken]
    return tuple(parts)


def decompose(poly: Poly, formulas: Formulas) -> tuple[tuple[Part, ...], tuple[bool, ...]]:
    """(parts, inside): ``poly`` as parts of the first spec formula whose parts it is made of
    (``inside[i]``: whether it has part i), or as its own terms, unnamed."""
    terms = set(poly)
    for name, _ in formulas:
        parts = _parts_of(name, formulas)
        if not parts:
            continue
        inside = tuple(set(p.poly) <= terms for p in parts)
        if {t for p, i in zip(parts, inside) if i for t in p.poly} == terms:
            return parts, inside
    return tuple(_unnamed(t) for t in poly), (True,) * len(poly)


# ---------------------------------------------------------------- definitions (d_k = d/h)

@dataclass(frozen=True)
class Swap:
    """A definition ``name = base/divisor`` (d_k = d/h), the other names defined the same way
    (d_v) and the names of its base (d, d_model)."""

    names: tuple[str, ...]      # ("d_k", "d_v")
    texts: tuple[str, ...]      # ("d/h", "d/h")
    base: str                   # "d"
    divisor: str                # "h"
    base_names: tuple[str, ...]  # ("d", "d_model")

    @property
    def base_shown(self) -> str:
        extra = self.base_names[1:]
        return f"{self.base} ({', '.join(extra)})" if extra else self.base

    def def_shown(self, names: list[str] | None = None) -> str:
        texts = dict(zip(self.names, self.texts))
        return " and ".join(f"{n} = {texts[n]}" for n in (names or self.names[:1]))


@lru_cache(maxsize=64)
def swaps(table: SymbolTable) -> tuple[Swap, ...]:
    """The table's definitions of the form ``symbol / symbol``, grouped by what they stand for."""
    import sympy
    groups: dict[tuple[str, str], list[str]] = {}
    texts = dict(table.definition_texts)
    for name, expr in table.definitions:
        num, den = sympy.fraction(expr)
        if isinstance(num, sympy.Symbol) and isinstance(den, sympy.Symbol):
            groups.setdefault((num.name, den.name), []).append(name)
    return tuple(Swap(tuple(names), tuple(texts.get(n, f"{b}/{t}") for n in names), b, t,
                      (b,) + tuple(a for a, target in table.aliases if target == b))
                 for (b, t), names in groups.items())


def _token(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])")


def text_swaps(text: str, table: SymbolTable) -> list[tuple[str, str]]:
    """A formula written as text, with a definition's names replaced by its base (d where d_k
    belongs) and its base by the definition (d_k where d belongs): [(text, message), ...]."""
    out = []
    for s in swaps(table):
        present = [n for n in s.names if _token(n).search(text)]
        if present:
            t = text
            for n in present:
                t = _token(n).sub(s.base, t)
            out.append((t, f"You used {s.base_shown} where {s.def_shown(present)} belongs."))
        if any(_token(n).search(text) for n in s.base_names):
            t = text
            for n in s.base_names:
                t = _token(n).sub(s.names[0], t)
            out.append((t, f"You used {s.def_shown()} where {s.base_shown} belongs."))
    return out
