"""The field types of check kinds: how the loader validates and converts a check's fields.

A check kind declares ``FIELDS = {name: (type, required)}`` (:mod:`grader.claims.checks`); the
loader reads each field with the reader of its type, registered here in :data:`TYPES`:

``expr``, ``relation`` (parsed by grader.expr; a formula name stands for its formula),
``values`` ({symbol: number}), ``values_list`` ({symbol: [integers]}), ``figure`` (a stated
figure, :mod:`grader.claims.figures`), ``model`` (a model of the spec), ``symbols`` (a list of
the spec's symbols), ``shapes`` ({trace name: shape}), ``quantity`` (a quantity of mha),
``number``, ``real`` (a finite number; text such as "1e8" too), ``int``, ``seed``, ``tolerance``, ``margin`` (a
stated tolerance: absolute, relative or 'digits'), ``bool``, ``text``, ``unit`` (a unit such as
GB/s), ``card`` (a hardware card of the spec), and ``choice:a|b|c``.

A reader takes ``(loader, value, location, field name)`` and gives the converted value, or
None after reporting the error (:meth:`Loader.error`); a generic "bad NAME" is reported if it
said nothing.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from grader.errors import Location

from .figures import FigureError, parse_figure
from .model import frozen_map

BAD = object()          # a field that could not be read (its error is reported)
_BOOLS = {True: True, False: False, "true": True, "false": False}
SIZE_ORDER = {"d": 0, "h": 1, "n": 2, "b": 3, "n_q": 4, "n_k": 5, "g": 6, "L": 7, "d_ff": 8, "V": 9, "n_ctx": 10}
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")

Reader = Callable[[Any, Any, Location, str], Any]


def is_mapping(x: Any) -> bool:
    """``isinstance(x, dict)``, without narrowing ``x`` for the type checker: YAML's mappings
    (:class:`grader.files.yamlio.YDict`) carry positions (``loc_of``, ``key_loc``) a dict has not."""
    return isinstance(x, dict)


def is_sequence(x: Any) -> bool:
    """``isinstance(x, list)``, without narrowing (YAML's lists carry ``loc_of``)."""
    return isinstance(x, list)


class Partial(dict[str, Any]):
    """Values of which some were refused (already reported): the check is not built."""


def number(v: Any) -> float | None:
    """A number from YAML: int, float, or text such as "1e-5" (YAML 1.1 reads 1e-5 as text)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and _NUMBER.fullmatch(v.strip()):
        return float(v.strip())
    return None


def _expr(ld: Any, v: Any, loc: Location, name: str) -> Any:
    return ld.expr(v, loc, what=name)


def _relation(ld: Any, v: Any, loc: Location, name: str) -> Any:
    return ld.expr(v, loc, relations=True, what=name)


def _values(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = ld.values(v, loc, what=name)
    return out if out is None or isinstance(out, Partial) else frozen_map(out)


def _values_list(ld: Any, v: Any, loc: Location, name: str) -> Any:
    if not is_mapping(v):
        ld.error(f"{name} must be a mapping symbol: [numbers], e.g. {{h: [1, 2, 8]}}", loc)
        return None
    out, bad = {}, False
    for k, seq in v.items():
        if not ld.table_has(k):
            ld.error(f"unknown symbol {k!r} in {name}", v.key_loc(k))
        elif not is_sequence(seq) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seq) or not seq:
            ld.error(f"{name}.{k} must be a non-empty list of integers", v.loc_of(k))
        elif any(ld.value_problem(ld.canonical(k), x) for x in seq):
            x = next(x for x in seq if ld.value_problem(ld.canonical(k), x))
            ld.error(f"a value of {k} in {name} {ld.value_problem(ld.canonical(k), x)}", v.loc_of(k))
        else:
            out[ld.canonical(k)] = tuple(seq)
            continue
        bad = True
    return Partial(out) if bad else frozen_map(out)


def _parsed(parse: Callable[[Any], Any], message: str) -> Reader:
    """A reader of a value that ``parse`` reads or refuses with a :class:`FigureError`; ``message``
    (a format with ``{name}``, ``{v!r}`` and ``{e}``) says what was refused."""
    def reader(ld: Any, v: Any, loc: Location, name: str) -> Any:
        try:
            return parse(v)
        except FigureError as e:
            ld.error(message.format(name=name, v=v, e=e), loc)
            return None
    return reader


def _named(table: Callable[[Any], Any], what: str, listing: str) -> Reader:
    """A reader of a name of the spec's ``table(loader)`` (its models, its hardware cards): the entry,
    or an error listing the names there are."""
    def reader(ld: Any, v: Any, loc: Location, name: str) -> Any:
        known = table(ld)
        out = known.get(v) if isinstance(v, str) else None
        if out is None:
            ld.error(f"unknown {what} {v!r}; {listing} {', '.join(known) or '(none)'}", loc)
        return out
    return reader


def _parse_margin(v: Any) -> Any:
    from .tolerance import parse_tolerance
    return parse_tolerance(v)


# a stated figure; a stated tolerance (grader.claims.tolerance): absolute (0.5M), relative ("5%") or 'digits'
_figure = _parsed(parse_figure, "bad figure {v!r} for {name}: {e}")
_margin = _parsed(_parse_margin, "bad {name} {v!r}: {e}")
_model = _named(lambda ld: ld.models, "model", "the spec's models are")
_card = _named(lambda ld: getattr(ld, "hardware", {}), "hardware", "the spec's hardware is")


def _symbols(ld: Any, v: Any, loc: Location, name: str) -> Any:
    if not is_sequence(v) or not all(ld.table_has(x) for x in v):
        ld.error(f"{name} must be a list of known symbols, got {v!r}", loc)
        return None
    return tuple(ld.expr(ld.canonical(x), loc) for x in v)


def _shapes(ld: Any, v: Any, loc: Location, name: str) -> Any:
    if not is_mapping(v) or not all(
            is_sequence(s) and all(isinstance(x, int) and not isinstance(x, bool) for x in s)
            for s in v.values()):
        ld.error(f"{name} must map trace names to shapes, e.g. {{Q_i: [128, 64]}}", loc)
        return None
    from mha.tracing import TRACE_NAMES
    out = {}
    for k, s in v.items():
        base = k[len("tensor."):] if isinstance(k, str) and k.startswith("tensor.") else k
        if base not in TRACE_NAMES:
            ld.error(f"unknown trace name {k!r}; expected one of {', '.join(TRACE_NAMES)} "
                     f"(or tensor.NAME for the whole stacked tensor)", v.key_loc(k))
        else:
            out[k] = tuple(s)
    return frozen_map(out) if len(out) == len(v) else None


def _quantity(ld: Any, v: Any, loc: Location, name: str) -> Any:
    from .measure import QuantityError, check_quantity
    try:
        check_quantity(v)
        return v
    except QuantityError as e:
        ld.error(str(e), loc)
        return None


def _number(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if out is None:
        ld.error(f"{name} must be a number, got {v!r}", loc)
    return out


def _real(ld: Any, v: Any, loc: Location, name: str) -> Any:
    """A finite number, exact as written: an int stays an int; text such as "1e8" is read too."""
    if isinstance(v, str) and re.fullmatch(r"[-+]?[0-9]+", v.strip()):
        return int(v.strip())
    out = v if isinstance(v, int) and not isinstance(v, bool) else number(v)
    if out is None or not math.isfinite(out):
        ld.error(f"{name} must be a number (like 128, 0.5 or 1e8), got {v!r}", loc)
        return None
    return out


def _int(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = v if isinstance(v, int) and not isinstance(v, bool) else None
    if out is None:
        ld.error(f"{name} must be an integer, got {v!r}", loc)
    return out


def _seed(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 else None
    if out is None:
        ld.error(f"{name} must be an integer from 0 to 2^63 - 1, got {v!r}", loc)
    return out


def _tolerance(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = number(v)
    if out is None or not math.isfinite(out) or out < 0:
        ld.error(f"{name} must be a number, 0 or more (like 1e-5 or 0.001), got {v!r}", loc)
        return None
    return out


STAT_SIZES = ("d_k", "n")     # the sizes of a distribution check: a head's width, the keys softmax is over
MAX_STAT_SIZE = 65_536


def _stat_size(ld: Any, k: Any, x: Any, loc: Location, name: str) -> bool:
    if k not in STAT_SIZES:
        ld.error(f"unknown size {k!r} in {name}; a distribution check takes {', '.join(STAT_SIZES)}", loc)
        return False
    if isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= MAX_STAT_SIZE:
        ld.error(f"{name}.{k} must be an integer from 1 to {MAX_STAT_SIZE:,}, got {x!r}", loc)
        return False
    return True


def _stat_sizes(ld: Any, v: Any, loc: Location, name: str) -> Any:
    """{d_k: 64, n: 16}: the sizes of a distribution check (not the spec's symbols)."""
    if not is_mapping(v) or not v:
        ld.error(f"{name} must be a mapping like {{d_k: 64, n: 16}}", loc)
        return None
    ok = all([_stat_size(ld, k, x, v.key_loc(k), name) for k, x in v.items()])
    return frozen_map(dict(v)) if ok else None


def _stat_vary(ld: Any, v: Any, loc: Location, name: str) -> Any:
    """{d_k: [16, 64, 256]}: one size of a distribution check, varied."""
    if not is_mapping(v) or len(v) != 1 or not all(is_sequence(s) and 2 <= len(s) <= 12 for s in v.values()):
        ld.error(f"{name} must vary one size over 2 to 12 values, e.g. {{d_k: [16, 64, 256]}}", loc)
        return None
    (k, seq), = v.items()
    ok = all([_stat_size(ld, k, x, v.loc_of(k), name) for x in seq])
    return frozen_map({k: tuple(seq)}) if ok else None


def _stat_expr(ld: Any, v: Any, loc: Location, name: str) -> Any:
    """An expression in d_k and n (the sizes of a distribution check), read by grader.expr."""
    from grader.expr import ExprError, SymbolTable, parse
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        ld.error(f"{name} must be an expression in d_k and n, got {v!r}", loc)
        return None
    table = SymbolTable.build(symbols={s: {"positive": True, "integer": True} for s in STAT_SIZES})
    try:
        return parse(str(v), table).expr
    except ExprError as e:
        ld.error(f"bad {name} {str(v)!r}: {e.message} (an expression in d_k and n)", loc)
        return None


def _unit(ld: Any, v: Any, loc: Location, name: str) -> Any:
    from .spec_units import unit_type
    return unit_type(ld, v, loc, name)


def _bool(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = _BOOLS.get(v) if isinstance(v, (bool, str)) else None
    if out is None:
        ld.error(f"{name} must be true or false, got {v!r}", loc)
    return out


def _text(ld: Any, v: Any, loc: Location, name: str) -> Any:
    out = str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None
    if out is None:
        ld.error(f"{name} must be text, got {v!r}", loc)
    return out


TYPES: dict[str, Reader] = {
    "expr": _expr, "relation": _relation, "values": _values, "values_list": _values_list, "figure": _figure,
    "model": _model, "symbols": _symbols, "shapes": _shapes, "quantity": _quantity, "number": _number,
    "real": _real, "int": _int, "seed": _seed, "tolerance": _tolerance, "margin": _margin, "bool": _bool,
    "stat_sizes": _stat_sizes, "stat_vary": _stat_vary, "stat_expr": _stat_expr, "text": _text,
    "unit": _unit, "card": _card,
}


def _choice(ld: Any, v: Any, loc: Location, name: str, choices: list[str]) -> Any:
    out = v if v in choices else None
    if out is None:
        ld.error(f"{name} must be one of {', '.join(choices)}, got {v!r}", loc)
    return out


def read(ld: Any, ftype: str, v: Any, loc: Location, name: str) -> Any:
    """The field ``name`` of type ``ftype`` read from ``v``, or :data:`BAD` (its error reported)."""
    n_errors = len(ld.errors)
    if ftype.startswith("choice:"):
        out = _choice(ld, v, loc, name, ftype[len("choice:"):].split("|"))
    elif ftype in TYPES:
        out = TYPES[ftype](ld, v, loc, name)
    else:  # pragma: no cover - a kind declared a type the loader does not know
        raise AssertionError(f"unknown field type {ftype}")
    if out is None:
        if len(ld.errors) == n_errors:
            ld.error(f"bad {name}: {v!r}", loc)
        return BAD
    return out
