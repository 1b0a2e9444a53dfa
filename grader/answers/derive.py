"""Common mistakes derived from the spec: variants of a reference formula, each with a message.

The bank says how a reference follows from the spec (``derive: {formula, at}``); this module
turns that formula into the wrong answers a learner is likely to give, and says what each one
got wrong. It runs once per problem (when a bank is prepared for grading; the symbolic part is
cached per formula, and a number problem's variants are only evaluated at its sizes); grading an
answer then only compares it with the values or expressions made here.

Named parts. A spec formula ``G`` that is a sum has *parts*: the formulas named ``G_<part>``
whose terms are some of ``G``'s terms (``params = params_weights + params_biases``, ``flops =
flops_projections + flops_attention``). The part's name says its role (:data:`ROLES`):
``weights``/``projections``/``biases`` hold one equal share per projection W^Q, W^K, W^V, W^O
(and biases may be counted twice); ``attention`` is QKᵀ and A·V, two equal products. A formula
that is some of ``G``'s parts (``params_nobias`` is ``params_weights``) knows what it leaves out.
Parts with another name are named by it ("the <part> term"); a sum without named parts has its
terms as unnamed parts.

Variants of a formula ``F`` (:func:`formula_variants`), the simplest first:

- a part (or an unnamed term) missing: ``4d²`` for ``4d² + 4d`` ("The biases (4·d) are missing.");
- W^O's share of a four-fold part missing (× 3/4), one of the four counted (× 1/4), both for all
  four-fold parts at once ("W^O is forgotten", "One projection instead of four"), the biases
  counted twice (× 2), one of QKᵀ and A·V (× 1/2);
- a part the question leaves out, added: ``4d² + 4d`` where ``4d²`` is asked ("The biases (4·d)
  are included, but the question leaves them out.");
- multiply-adds instead of FLOPs (× 1/2), for a FLOP count only;
- a definition confused with its symbol (from the spec's ``definitions`` of the form
  ``symbol/symbol``: d_k = d/h): d_k used where d belongs, in the whole formula or in one part
  (``8nd_k² + 4n²d``); for a formula written with d_k, d where d_k belongs (``d`` for ``d_k``,
  ``(128, 768)`` for the shape ``(n, d_k)``);
- a factor of a product missing (``4hn²`` for ``4bhn²``);
- two of the part changes at once (``3d²`` for ``4d² + 4d``: W^O's weight matrix and the
  biases missing).

A variant equal to the reference, or to an earlier one, is dropped; where two single changes
give the same result, the message says both ("… Or: …").

Formulas are handled as exact sums of monomials (:class:`fractions.Fraction` coefficients,
integer powers of the spec's symbols), not SymPy arithmetic: deriving every variant of the
bank takes milliseconds. A formula that is not such a sum (a square root, a function) has no
derived variants. The sums are :mod:`.monomials`; the named parts and the definitions, :mod:`.parts`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .numbers import format_value
from .shapes import format_shape
from .monomials import linear_combination, poly_of, show, substitute, times_monomial, to_sympy, value_at
from .parts import Formulas, Part, decompose, swaps, text_swaps

if TYPE_CHECKING:
    import sympy

    from grader.expr import SymbolTable

    from .monomials import Poly


# ---------------------------------------------------------------- variants of a formula

def _expr(text: str, table: SymbolTable, formulas: Formulas) -> sympy.Basic:
    for name, expr in formulas:
        if name == text:
            return expr
    from grader.expr import parse
    return parse(str(text), table).expr


@lru_cache(maxsize=1024)
def _poly_of_text(text: str, table: SymbolTable, formulas: Formulas) -> Poly | None:
    return poly_of(_expr(text, table, formulas))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class _Change:
    coefs: tuple[tuple[int, int | Fraction], ...]   # ((part index, new coefficient), ...)
    factor: Fraction            # on the whole formula
    message: str                # said alone
    clause: str                 # said with another change ("the biases (4·d) are missing")
    group: object               # changes of the same group are not combined
    tag: str


def _changes(parts: tuple[Part, ...], inside: tuple[bool, ...], measures: str | None) -> list[_Change]:
    out: list[_Change] = []
    n_in = sum(inside)
    for i, p in enumerate(parts):
        r = p.role
        verb = "are" if r.plural else "is"
        whole = show(p.poly)
        if not inside[i]:
            them = "them" if r.plural else "it"
            out.append(_Change(((i, 1),), Fraction(1), f"{_cap(p.shown)} {verb} included, but the question leaves "
                                                       f"{them} out.", f"{p.shown} {verb} included", i, "added"))
            continue
        if n_in >= 2:
            out.append(_Change(((i, 0),), Fraction(1), f"{_cap(p.shown)} {verb} missing.", f"{p.shown} {verb} missing",
                               i, "part"))
        if r.fourfold:
            quarter = show(linear_combination((Fraction(1, 4), p.poly)))
            clause = f"W^O's {r.one or 'share'} ({quarter}) is missing"
            out.append(_Change(((i, Fraction(3, 4)),), Fraction(1), f"{_cap(clause)}: W^Q, W^K, W^V and W^O make four.",
                               clause, i, "part"))
            clause = f"only one of the four {r.many or 'shares'} is counted ({quarter} instead of {whole})"
            out.append(_Change(((i, Fraction(1, 4)),), Fraction(1), f"{_cap(clause)}: W^Q, W^K, W^V and W^O make four.",
                               clause, i, "part"))
        if r.bias:
            clause = f"{r.desc} are counted twice ({show(linear_combination((2, p.poly)))} instead of {whole})"
            out.append(_Change(((i, 2),), Fraction(1), f"{_cap(clause)}: one bias per projection.", clause, i, "part"))
        if r.pair:
            clause = f"only one of {r.desc} is counted"
            out.append(_Change(((i, Fraction(1, 2)),), Fraction(1), f"{_cap(clause)}: each is "
                                                                    f"{show(linear_combination((Fraction(1, 2), p.poly)))}, "
                                                                    f"together {whole}.", clause, i, "part"))
    four = [i for i, p in enumerate(parts) if inside[i] and p.role.fourfold]
    if len(four) >= 2:
        share = show(linear_combination(*((Fraction(1, 4), parts[i].poly) for i in four)))
        its = " and ".join(f"its {parts[i].role.one or 'share'}" for i in four)
        out.append(_Change(tuple((i, Fraction(3, 4)) for i in four), Fraction(1),
                           f"W^O is forgotten: {its} ({share}) are missing; W^Q, W^K, W^V and W^O make four.",
                           f"W^O is forgotten ({share})", "four", "part"))
        out.append(_Change(tuple((i, Fraction(1, 4)) for i in four), Fraction(1),
                           f"One projection instead of four: W^Q, W^K, W^V and W^O each have {share}.",
                           "one projection is counted instead of four", "four", "part"))
    if measures == "flops":
        out.append(_Change((), Fraction(1, 2), "That counts multiply-adds; with 1 multiply-add = 2 FLOPs it is twice "
                                               "as much.", "multiply-adds are counted instead of FLOPs "
                                                           "(1 multiply-add = 2 FLOPs)", "all", "whole"))
    return out


def _combinable(a: _Change, b: _Change, four: set[int]) -> bool:
    if a.group == b.group:
        return False
    return not ((a.group == "four" and b.group in four) or (b.group == "four" and a.group in four))


@lru_cache(maxsize=512)
def _variants(formula: str, formulas: Formulas, table: SymbolTable, measures: str | None,
              combine: bool = True) -> tuple[tuple[Poly, str, str], ...]:
    """((poly, message, tag), ...), simplest first; tag: part, added, whole (the whole formula
    changed), swap, factor, two (two changes at once)."""
    ref = _poly_of_text(formula, table, formulas)
    if not ref:
        return ()
    parts, inside = decompose(ref, formulas)
    changes = _changes(parts, inside, measures)
    four = {i for i, p in enumerate(parts) if inside[i] and p.role.fourfold}

    def build(coefs: dict[int, int | Fraction], factor: Fraction) -> Poly:
        return linear_combination(*((factor * coefs.get(i, 1 if inside[i] else 0), p.poly) for i, p in enumerate(parts)))

    out: dict[Poly, tuple[list[str], str]] = {}     # poly -> (messages, tag); in the order of preference

    def add(poly: Poly, message: str, tag: str, merge: bool = True) -> None:
        if not poly or poly == ref:
            return
        entry = out.get(poly)
        if entry is None:
            out[poly] = ([message], tag)
        elif merge and entry[1] != "two" and len(entry[0]) < 2 and message not in entry[0]:
            entry[0].append(message)

    for c in changes:
        add(build(dict(c.coefs), c.factor), c.message, c.tag)
    # d_k where d belongs: in the whole formula, or in one part (8·n·d_k² + 4·n²·d)
    polynomial = all(e > 0 for powers, _ in ref for _, e in powers)
    for s in swaps(table):
        by = ((s.base, 1), (s.divisor, -1))
        if not polynomial or not any(n == s.base for powers, _ in ref for n, _ in powers):
            continue
        add(substitute(ref, s.base, by), f"You used {s.def_shown()} where {s.base_shown} belongs.", "whole")
        if sum(inside) >= 2:
            for i, p in enumerate(parts):
                if inside[i] and any(n == s.base for powers, _ in p.poly for n, _ in powers):
                    add(linear_combination((1, ref), (-1, p.poly), (1, substitute(p.poly, s.base, by))),
                        f"In {p.shown}, you used {s.def_shown()} where {s.base_shown} belongs.", "swap")
    # a formula written with d_k: d where d_k belongs (and the other way)
    if all(name != formula for name, _ in formulas):
        for text, message in text_swaps(str(formula), table):
            try:
                poly = _poly_of_text(text, table, formulas)
            except Exception:       # an author's text that does not parse once swapped: no variant
                continue
            if poly is not None:
                add(poly, message, "swap")
    # a factor of a product missing (4·h·n² for 4·b·h·n²)
    if len(ref) == 1 and sum(e for _, e in ref[0][0] if e > 0) >= 2:
        for name, e in ref[0][0]:
            if e > 0:
                add(times_monomial(ref, ((name, -1),)), f"A factor {name} is missing.", "factor", False)
    # two changes at once (on different parts, or a part and the whole)
    if combine:
        for x in range(len(changes)):
            for y in range(x + 1, len(changes)):
                a, b = changes[x], changes[y]
                if _combinable(a, b, four):
                    coefs = dict(a.coefs)
                    coefs.update(b.coefs)
                    add(build(coefs, a.factor * b.factor), f"{_cap(a.clause)}, and {b.clause}.", "two", False)
    return tuple((poly, " Or: ".join(ms), tag) for poly, (ms, tag) in out.items())


# ---------------------------------------------------------------- per kind of answer

def formula_variants(formula: str, formulas: Formulas, table: SymbolTable,
                     measures: str | None = None) -> tuple[tuple[sympy.Expr, str], ...]:
    """Variants of ``formula`` (a name among ``formulas``, the spec's named formulas as
    ((name, SymPy expr), ...), or text in the table's symbols): ((SymPy expr, message), ...),
    simplest first, each different from the formula and from the others."""
    return tuple((to_sympy(p, table), m) for p, m, _ in _variants(formula, formulas, table, measures))


def _values(at: dict[Any, Any], table: SymbolTable) -> dict[str, Fraction]:
    """Sizes by symbol name (aliases resolved), as Fractions."""
    out: dict[str, Fraction] = {}
    for k, v in at.items():
        try:
            out[table.symbol(str(k)).name] = Fraction(str(v)) if isinstance(v, float) else Fraction(v)
        except (KeyError, TypeError, ValueError):
            continue
    return out


def number_variants(formula: str, formulas: Formulas, table: SymbolTable, at: dict[Any, Any],
                    measures: str | None = None) -> tuple[tuple[Fraction, str], ...]:
    """((exact value, message), ...): the formula's variants at the sizes ``at``. None equals
    the reference; where single changes give one value, the message says both."""
    values = _values(at, table)
    ref_poly = _poly_of_text(formula, table, formulas)
    if not ref_poly:
        return ()
    ref = value_at(ref_poly, values)
    out: dict[Fraction, tuple[list[str], str]] = {}     # value -> (messages, tag)
    for poly, message, tag in _variants(formula, formulas, table, measures):
        v = value_at(poly, values)
        if v is None or v == ref or v == 0:
            continue
        entry = out.get(v)
        if entry is None:
            out[v] = ([message], tag)
        elif tag != "two" and entry[1] != "two" and len(entry[0]) < 2:
            entry[0].append(message)
    return tuple((v, " Or: ".join(ms)) for v, (ms, _) in out.items())


def shape_variants(axes: tuple[Any, ...], formulas: Formulas, table: SymbolTable,
                   at: dict[Any, Any]) -> tuple[tuple[tuple[int, ...], str], ...]:
    """((shape, message), ...): one axis at a time with d where d_k belongs (or d_k where d
    belongs) in its formula, at the sizes ``at``."""
    values = _values(at, table)
    ref = []
    for text in axes:
        poly = _poly_of_text(str(text), table, formulas)
        v = None if poly is None else value_at(poly, values)
        if v is None or v.denominator != 1:
            return ()
        ref.append(int(v))
    out: list[tuple[tuple[int, ...], str]] = []
    seen = {tuple(ref)}
    for i, text in enumerate(axes):
        for swapped, message in text_swaps(str(text), table):
            try:
                poly = _poly_of_text(swapped, table, formulas)
            except Exception:
                continue
            v = None if poly is None else value_at(poly, values)
            if v is None or v.denominator != 1 or v <= 0:
                continue
            shape = tuple(ref[:i]) + (int(v),) + tuple(ref[i + 1:])
            if shape not in seen:
                seen.add(shape)
                out.append((shape, f"{format_shape(shape)}: axis {i + 1} is {swapped.replace('*', '·')} = "
                                   f"{format_value(v)}. {message}"))
    return tuple(out)


def _lower(message: str) -> str:
    first = message.split(" ", 1)[0]
    return message[0].lower() + message[1:] if first in ("You", "In", "Only", "The", "That", "One", "A") else message


@lru_cache(maxsize=128)
def relation_variants(lhs: str, op: str, rhs: str, formulas: Formulas,
                      table: SymbolTable) -> tuple[tuple[sympy.Basic, str], ...]:
    """((SymPy relation, message), ...): ``lhs op rhs`` with d_k for d on both sides, or one
    side changed as :func:`formula_variants` changes a formula (one change at a time)."""
    import sympy
    rel = {">": sympy.StrictGreaterThan, "<": sympy.StrictLessThan, ">=": sympy.GreaterThan,
           "<=": sympy.LessThan}.get(op)
    left, right = _poly_of_text(lhs, table, formulas), _poly_of_text(rhs, table, formulas)
    if rel is None or not left or not right:
        return ()
    out: list[tuple[sympy.Basic, str]] = []

    def add(a: Poly, b: Poly, message: str) -> None:
        out.append((rel(to_sympy(a, table), to_sympy(b, table), evaluate=False), message))

    for s in swaps(table):
        by = ((s.base, 1), (s.divisor, -1))
        mentioned = any(n == s.base for poly in (left, right) for powers, _ in poly for n, _ in powers)
        if mentioned:
            add(substitute(left, s.base, by), substitute(right, s.base, by),
                f"You used {s.def_shown()} where {s.base_shown} belongs.")
    for side, text in ((left, lhs), (right, rhs)):
        for poly, message, tag in _variants(text, formulas, table, None, False):
            if tag in ("part", "swap", "whole"):
                a, b = (poly, right) if side is left else (left, poly)
                add(a, b, f"On the side {show(side)}: {_lower(message)} That moves where the two sides cross.")
    return tuple(out)
