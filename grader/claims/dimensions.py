"""Units and dimensions of the spec language (issue #27): what a quantity counts, so that a
figure in the wrong unit never holds.

Six base dimensions, each with its base unit (pint, defined once in grader/units/units.txt):
bytes (``byte``; bits are 1/8 byte), FLOPs (``flop``), parameters (``parameter``), tokens
(``token``), sequences (``sequence``) and time (``second``); a dimension is a product of their
powers (:data:`Dim`: FLOP/s is ``(("flop", 1), ("second", -1))``), the empty product a plain
number.

- a measured quantity declares its dimension (:func:`quantity_dimension`);
- a symbol may declare a unit (``unit: bytes/parameter``, read by :func:`parse_unit` from a
  whitelist of spellings, never by pint's own parser); its values are in that unit;
- an expression's dimension is inferred from its symbols' (:func:`expr_dimension`): terms of a
  sum, sides of a relation and arguments of min/max share one, a function other than
  floor/ceiling/round/min/max/abs takes a plain number; an expression none of whose symbols
  declares a unit has no known dimension (None) and is compared by value, as before;
- a claimed figure's unit gives its dimension (:func:`figure_unit`); a figure whose dimension
  differs from a known one is refuted with the reason (:func:`mismatch`).

Decimal and binary prefixes stay apart (GB = 10⁹ bytes, GiB = 2³⁰ bytes): the factors are pint's.
Importing this module imports neither pint nor SymPy.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

Dim = tuple[tuple[str, int], ...]
NUMBER: Dim = ()

# pint's dimension -> our base unit
BASES: dict[str, str] = {"[information]": "byte", "[operations]": "flop", "[parameters]": "parameter",
                         "[tokens]": "token", "[sequences]": "sequence", "[time]": "second"}
ORDER = ("flop", "byte", "parameter", "token", "sequence", "second")
WORDS: dict[str, str] = {"byte": "bytes", "flop": "FLOPs", "parameter": "parameters", "token": "tokens",
                         "sequence": "sequences", "second": "seconds"}
SYMBOLS: dict[str, str] = {"byte": "bytes", "flop": "FLOP", "parameter": "parameters", "token": "tokens",
                           "sequence": "sequences", "second": "s"}
# Words a unit may be written with besides the spellings of grader.units.quantities.UNITS.
EXTRA_WORDS: dict[str, str] = {
    **{w: "parameter" for w in ("parameter", "parameters", "param", "params", "weight", "weights")},
    **{w: "token" for w in ("token", "tokens", "tok")},
    **{w: "sequence" for w in ("sequence", "sequences", "seq", "seqs")},
    **{w: "flop" for w in ("op", "ops", "operation", "operations")},
}
# count nouns of a figure that state a dimension ("524,288 parameters"); other nouns state none
NOUN_DIMS: dict[str, Dim] = {"parameters": (("parameter", 1),), "params": (("parameter", 1),),
                             "weights": (("parameter", 1),), "tokens": (("token", 1),),
                             "flops": (("flop", 1),), "flop": (("flop", 1),)}
MAX_UNIT_TEXT = 64
MAX_FACTORS = 6
MAX_POWER = 4


class DimensionError(ValueError):
    """A unit that cannot be read, or an expression whose dimensions do not agree."""


# ---------------------------------------------------------------- dimension algebra

def make(powers: Mapping[str, int] | Iterable[tuple[str, int]]) -> Dim:
    items = dict(powers).items() if isinstance(powers, Mapping) else powers
    out: dict[str, int] = {}
    for k, e in items:
        out[k] = out.get(k, 0) + e
    return tuple(sorted(((k, e) for k, e in out.items() if e), key=lambda ke: ORDER.index(ke[0])))


def mul(a: Dim, b: Dim) -> Dim:
    return make(list(a) + list(b))


def power(a: Dim, n: int) -> Dim:
    return make([(k, e * n) for k, e in a])


def describe(dim: Dim | None) -> str:
    """'bytes', 'FLOPs per second', 'bytes per token', 'a plain number'."""
    if dim is None:
        return "no stated unit"
    if not dim:
        return "a plain number"
    num = [WORDS[k] + (f"^{e}" if e > 1 else "") for k, e in dim if e > 0]
    den = [WORDS[k][:-1] + (f"^{-e}" if e < -1 else "") for k, e in dim if e < 0]
    top = "·".join(num) if num else "1"
    return top + (" per " + " per ".join(den) if den else "")


def symbol(dim: Dim) -> str:
    """The base unit as evidence writes it: bytes, FLOP, s, FLOP/s, bytes/token."""
    num = [SYMBOLS[k] + (f"^{e}" if e > 1 else "") for k, e in dim if e > 0]
    den = [SYMBOLS[k].rstrip("s") if SYMBOLS[k] != "s" else "s" for k, e in dim if e < 0 for _ in range(-e)]
    top = "·".join(num) if num else "1"
    return top + "".join("/" + d for d in den)


def pint_base(dim: Dim) -> str:
    """The pint expression of the base unit of ``dim`` (``flop / second``)."""
    return " * ".join(f"{k} ** {e}" for k, e in dim) or "dimensionless"


# ---------------------------------------------------------------- units

def dim_of_pint(pint_expr: str) -> Dim:
    """The dimension of a pint unit expression made from the whitelist (``teraflop / second``)."""
    from grader.units.quantities import registry
    dims = registry().Quantity(1, pint_expr).dimensionality
    out = []
    for name, e in dict(dims).items():
        if name not in BASES or int(e) != e:        # pragma: no cover - the whitelist has no others
            raise DimensionError(f"unit {pint_expr!r} has a dimension {name} the spec language does not know")
        out.append((BASES[name], int(e)))
    return make(out)


def to_base(pint_expr: str, dim: Dim) -> Fraction:
    """The exact factor from ``pint_expr`` to the base unit of its dimension (GiB: 2³⁰)."""
    from grader.units.quantities import factor
    if not dim:
        return Fraction(1)
    f = factor(pint_expr, pint_base(dim))
    if f is None:     # pragma: no cover - dim comes from the same unit
        raise DimensionError(f"cannot convert {pint_expr!r} to {pint_base(dim)!r}")
    return f


_FACTOR = re.compile(r"^\s*([A-Za-zµμ]+)\s*(?:\^\s*([0-9]+))?\s*$")


def _one(word: str) -> str:
    from grader.units.quantities import UNITS
    if word in UNITS:
        return UNITS[word][0]
    if word in EXTRA_WORDS:
        return EXTRA_WORDS[word]
    if word.lower() in EXTRA_WORDS:
        return EXTRA_WORDS[word.lower()]
    raise DimensionError(f"unknown unit {word!r}; expected bytes (B, kB, MB, GB, KiB, MiB, GiB, ...), FLOP "
                         "(TFLOP, ...), parameters, tokens, sequences, s (ms, µs, ns), or a ratio of "
                         "them such as FLOP/s, GB/s, bytes/token, FLOP/byte")


def parse_unit(text: Any) -> tuple[str, Dim, Fraction]:
    """(pint expression, dimension, factor to its base unit) of a unit as a spec writes it:
    ``bytes``, ``GiB``, ``TFLOP/s``, ``bytes/parameter``, ``FLOP/byte``, ``tokens/s``,
    ``bytes·s``, ``s^2``. Only whitelisted spellings are read; pint never parses the text."""
    from grader.units.quantities import UNITS
    if isinstance(text, bool) or not isinstance(text, str) or not text.strip():
        raise DimensionError(f"a unit must be text like bytes, GB/s or FLOP/s, got {text!r}")
    text = text.strip()
    if len(text) > MAX_UNIT_TEXT:
        raise DimensionError(f"a unit is at most {MAX_UNIT_TEXT} characters")
    if text in ("1", "number", "dimensionless"):
        return "dimensionless", NUMBER, Fraction(1)
    if text in UNITS:
        pint_expr = UNITS[text][0]
    else:
        head, _, tail = text.partition("/")
        parts = [(p, 1) for p in re.split(r"[*·⋅]", head)] + [(p, -1) for p in re.split(r"[*·⋅/]", tail) if tail]
        if len(parts) > MAX_FACTORS:
            raise DimensionError(f"a unit has at most {MAX_FACTORS} factors")
        pieces = []
        for p, sign in parts:
            m = _FACTOR.match(p)
            if not m:
                raise DimensionError(f"cannot read the unit {text!r}: {p.strip()!r} is not a unit")
            e = int(m.group(2) or 1)
            if not 1 <= e <= MAX_POWER:
                raise DimensionError(f"a unit's power is 1 to {MAX_POWER}, got {e}")
            if m.group(1) == "1" and sign == 1:
                continue
            pieces.append(f"({_one(m.group(1))}) ** {sign * e}")
        pint_expr = " * ".join(pieces) or "dimensionless"
    dim = dim_of_pint(pint_expr)
    return pint_expr, dim, to_base(pint_expr, dim)


def figure_unit(unit: str | None, noun: str | None) -> tuple[Dim | None, Fraction]:
    """(dimension, factor to its base unit) of a figure's unit spelling or count noun; (None, 1)
    when it states neither (a bare number, or a noun such as 'dims' that states no dimension)."""
    from grader.units.quantities import UNITS
    if unit is not None:
        pint_expr = UNITS[unit][0]
        dim = dim_of_pint(pint_expr)
        return dim, to_base(pint_expr, dim)
    if noun is not None and noun.lower() in NOUN_DIMS:
        return NOUN_DIMS[noun.lower()], Fraction(1)
    return None, Fraction(1)


# ---------------------------------------------------------------- quantities and expressions

def quantity_dimension(quantity: str) -> Dim | None:
    """What a measured quantity counts: parameters, FLOPs, bytes, FLOP/byte (``intensity.*``); a plain number (attention.count,
    attention.elements); None for shapes and tensors (no figure is compared with them)."""
    if quantity.startswith("params"):
        return (("parameter", 1),)
    if quantity.startswith("flops."):
        return (("flop", 1),)
    if quantity.startswith(("bytes.", "attention.bytes.")):
        return (("byte", 1),)
    if quantity.startswith("intensity."):        # mha.inference: FLOPs per byte moved
        return (("flop", 1), ("byte", -1))
    if quantity in ("attention.count", "attention.elements"):
        return NUMBER
    return None


_SAME_DIM_FUNCS = {"floor", "ceiling", "Min", "Max", "Abs", "round", "RoundHalfEven", "Round"}


def expr_dimension(expr: Any, units: Mapping[str, Dim]) -> Dim | None:
    """The dimension of a SymPy expression whose symbols have the dimensions ``units`` (a symbol
    not there is a plain number); None when none of its symbols has a unit (not inferred).
    :class:`DimensionError` saying where the dimensions disagree."""
    names = {s.name for s in getattr(expr, "free_symbols", set())}
    if not names & set(units):
        return None
    return _dim(expr, units)


def _dim(e: Any, units: Mapping[str, Dim]) -> Dim:
    import sympy
    from sympy.core.relational import Relational
    if isinstance(e, sympy.Symbol):
        return units.get(e.name, NUMBER)
    if e.is_Number or isinstance(e, sympy.NumberSymbol):
        return NUMBER
    if isinstance(e, Relational):
        return _same(e.args, units, "the two sides of a relation")
    if isinstance(e, sympy.Add):
        return _same(e.args, units, "the terms of a sum")
    if isinstance(e, sympy.Mul):
        out: Dim = NUMBER
        for a in e.args:
            out = mul(out, _dim(a, units))
        return out
    if isinstance(e, sympy.Pow):
        base, exp = e.args
        bd = _dim(base, units)
        if _dim(exp, units):
            raise DimensionError(f"the exponent {_show(exp)} has units ({describe(_dim(exp, units))}); an "
                                 "exponent is a plain number")
        if not bd:
            return NUMBER
        if not exp.is_Rational:
            raise DimensionError(f"{_show(base)} has units ({describe(bd)}): its power needs a number exponent, "
                                 f"got {_show(exp)}")
        q = Fraction(int(exp.p), int(exp.q))
        powers = [(k, Fraction(v) * q) for k, v in bd]
        if any(p.denominator != 1 for _, p in powers):
            raise DimensionError(f"{_show(e)} is a fractional power of {describe(bd)}")
        return make([(k, int(p)) for k, p in powers])
    name = type(e).__name__
    if isinstance(e, sympy.Function) or hasattr(e, "func"):
        if name in _SAME_DIM_FUNCS:
            args = e.args
            if name in ("floor", "ceiling") and len(args) == 1 and isinstance(args[0], sympy.Add):
                half = sympy.Rational(1, 2)        # round(x) is floor(x + 1/2): the half is x's rounding
                if half in args[0].args:
                    args = (args[0] - half,)
            return _same(args, units, f"the arguments of {name.lower()}") if args else NUMBER
        for a in getattr(e, "args", ()):
            d = _dim(a, units)
            if d:
                raise DimensionError(f"{name.lower()} of {_show(a)}, which has units ({describe(d)}); "
                                     f"{name.lower()} takes a plain number")
        return NUMBER
    return NUMBER       # pragma: no cover


def _same(args: Iterable[Any], units: Mapping[str, Dim], what: str) -> Dim:
    first: tuple[Any, Dim] | None = None
    for a in args:
        d = _dim(a, units)
        if first is None:
            first = (a, d)
        elif d != first[1]:
            raise DimensionError(f"{what} have different dimensions: {_show(first[0])} is in "
                                 f"{describe(first[1])}, {_show(a)} in {describe(d)}")
    return first[1] if first is not None else NUMBER


def _show(e: Any) -> str:
    import sympy
    return str(sympy.sstr(e)).replace("**", "^")


def mismatch(stated: Dim | None, known: Dim | None, what: str = "the quantity") -> str | None:
    """Why a figure stated in ``stated`` cannot be ``what`` (of dimension ``known``); None when
    they agree or either is unknown (a bare number, an expression whose symbols have no units)."""
    if stated is None or known is None or stated == known:
        return None
    if not known:
        return f"the text states {describe(stated)} where {what} is a plain number"
    verb = "counts" if len(known) == 1 and known[0][1] == 1 and known[0][0] != "second" else "is in"
    return f"the text states {describe(stated)} where {what} {verb} {describe(known)}"


PLAIN_UNITS: frozenset[Dim] = frozenset({(("byte", 1),), (("flop", 1),), (("parameter", 1),), (("token", 1),)})


def shown_unit(dim: Dim | None) -> str:
    """' s', ' FLOP/s', ' bytes/token' after a figure's value in base units; '' for a bare number
    and for the counts (bytes, FLOPs, parameters, tokens) whose evidence writes none."""
    if dim is None or dim in PLAIN_UNITS or not dim:
        return ""
    return " " + symbol(dim)
