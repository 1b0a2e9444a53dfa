"""The spec's units at load and check time (issue #27): a symbol's declared ``unit:``, the
dimension check of a check's expression, a measured or numeric check's stated unit and
the values scaled to base units. The unit algebra itself is :mod:`grader.claims.dimensions`."""
from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from .dimensions import (Dim, DimensionError, describe, expr_dimension, mul, parse_unit, power,
                         quantity_dimension)


class SymbolUnit:
    """A symbol's declared unit: as written, its dimension, and the factor from it to the base
    unit (a value of F with ``unit: TFLOP/s`` is F·10¹² FLOP/s)."""

    __slots__ = ("dim", "factor", "text")

    def __init__(self, text: str, dim: Dim, factor: Fraction) -> None:
        self.text, self.dim, self.factor = text, dim, factor

    def __repr__(self) -> str:
        return f"SymbolUnit({self.text!r})"


def read_symbol_unit(text: Any) -> tuple[SymbolUnit | None, str]:
    try:
        _, dim, f = parse_unit(text)
    except DimensionError as e:
        return None, str(e)
    return SymbolUnit(str(text).strip(), dim, f), ""


def dims_of(units: Mapping[str, SymbolUnit]) -> dict[str, Dim]:
    return {k: u.dim for k, u in units.items()}


def check_expr(expr: Any, units: Mapping[str, SymbolUnit]) -> str:
    """'' when the expression's dimensions agree, else why not."""
    try:
        expr_dimension(expr, dims_of(units))
    except DimensionError as e:
        return str(e)
    return ""


def scale_values(values: Mapping[str, Any], units: Mapping[str, Fraction]) -> dict[str, Any]:
    """The values of symbols with units, in base units (exact): F = 989 with unit TFLOP/s is
    989·10¹²; a value of a symbol without a unit is as given."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        f = units.get(k)
        if f is None or f == 1:
            out[k] = v
        else:
            x = (Fraction(str(v)) if isinstance(v, float) else Fraction(v)) * f
            out[k] = x.numerator if x.denominator == 1 else x
    return out


def annotate(ld: Any, kind: str, params: dict[str, Any], mapping: Any) -> bool:
    """A check's dimension, added to its params when it is loaded: ``_dim`` (what its value is in,
    None when unknown), ``_scale`` (symbol -> factor of its unit to the base unit) and
    ``_unit_factor`` (a check's own ``unit:`` where its expression's is not inferred). A check
    whose own parts disagree (its ``unit:`` and its expression; a measured quantity and its
    formula) is a located error; False then. So is, where the spec's units are strict
    (``subject: {units: strict}``), a figure with a unit checked against an expression whose
    dimension is not known (otherwise compared by value, the evidence saying so)."""
    units: Mapping[str, SymbolUnit] = getattr(ld, "units", {}) or {}
    dims = dims_of(units)
    dim: Dim | None = None
    factor = Fraction(1)

    def inferred(key: str) -> Dim | None:
        e = params.get(key)
        if e is None:
            return None
        try:
            return expr_dimension(e, dims)
        except DimensionError:      # reported where the expression was read
            return None

    if "expr" in params and kind in ("numeric", "config"):
        dim = inferred("expr")
        stated: SymbolUnit | None = params.get("unit")
        if stated is not None:
            if dim is not None and dim != stated.dim:
                ld.error(f"the check's unit {stated.text!r} ({describe(stated.dim)}) is not the dimension of its "
                         f"expression, which its symbols' units make {describe(dim)}", mapping.loc_of("unit"))
                return False
            if dim is None:
                factor = stated.factor
            dim = stated.dim
    elif kind == "measure":
        dim = quantity_dimension(str(params["quantity"]))
        fd = inferred("formula")
        if fd is not None and dim is not None and fd != dim:
            ld.error(f"the formula is in {describe(fd)} where {params['quantity']} counts {describe(dim)} "
                     "(from its symbols' units)", mapping.loc_of("formula"))
            return False
    elif kind == "compare":
        left, right = quantity_dimension(str(params["left"])), quantity_dimension(str(params["right"]))
        if left is not None and right is not None:
            dim = mul(left, power(right, -1))
    claimed: Any = params.get("claimed")
    stated = getattr(claimed, "dimension", None)
    if dim is None and stated is not None and kind in ("numeric", "config") and getattr(ld, "strict_units", False):
        names = sorted({str(x) for x in getattr(params["expr"], "free_symbols", ())})
        ld.error(f"the figure {claimed.text!r} states {describe(stated)}, but the dimension of the expression is not "
                 f"known: none of its symbols ({', '.join(names) or 'none'}) declares a unit; declare their "
                 "units (a symbol's 'unit:') or give the check a 'unit:' (the spec's units are strict: "
                 "subject.units)", mapping.loc_of("claimed"))
        return False
    params["_dim"] = dim
    params["_scale"] = {k: u.factor for k, u in units.items() if u.factor != 1}
    params["_unit_factor"] = factor
    return True


def unit_type(ld: Any, v: Any, loc: Any, name: str) -> Any:
    """The ``unit:`` field of a check (the reader of field type ``unit``)."""
    unit, problem = read_symbol_unit(v)
    if unit is None:
        ld.error(f"bad {name} {v!r}: {problem}", loc)
    return unit
