"""Small value helpers every stage shares: a read-only mapping, plain data, exact numbers.

- :class:`FrozenMap` / :func:`frozen_map`: the read-only mapping of frozen dataclasses' fields
  (a problem's feedback, a check's parameters, a variant's sizes); unlike
  :class:`types.MappingProxyType` it pickles, so the objects holding it cross process
  boundaries (worker processes started by ``forkserver``, a cluster's workers).
- :func:`plain`: YAML's positioned mappings and lists (``YDict``, ``YList``) as plain ones.
- :func:`to_fraction`: an exact :class:`~fractions.Fraction` from an int, a float, a SymPy
  number or numeric text; the one conversion the bank, the spec and the grader use.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any, NoReturn, overload


class FrozenMap(Mapping[Any, Any]):
    """A read-only mapping (a copy of what it is given); equal to any mapping with the same
    items, unhashable like a dict, picklable."""

    __slots__ = ("_data",)
    _data: dict[Any, Any]

    def __init__(self, data: Mapping[Any, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: Any, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like a dict: its values may be unhashable

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("a FrozenMap is read-only")

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._data,))


def frozen_map(data: Mapping[Any, Any] | None = None) -> FrozenMap:
    """A read-only copy of ``data`` (for fields of frozen dataclasses)."""
    return FrozenMap(data)


def plain(value: Any) -> Any:
    """Mappings and lists read from YAML (and nested ones) as plain dicts and lists: what
    crosses process boundaries."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def to_fraction(x: Any) -> Fraction:
    """An exact number from an int, a Fraction, a float (its exact binary value), a SymPy
    Integer/Rational (``p/q``) or Float (its decimal text), or numeric text ("1048576",
    "1,048,576", "1/2", "1e3"). ``ValueError`` for anything else (True/False included)."""
    if isinstance(x, bool):
        raise ValueError("not a number: true/false")
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, float):
        return Fraction(x)
    p, q = getattr(x, "p", None), getattr(x, "q", None)
    if p is not None and q is not None:
        return Fraction(int(p), int(q))
    if getattr(x, "is_Float", False):
        return Fraction(str(x))
    if isinstance(x, str):
        try:
            return Fraction(x.replace(",", "").replace("_", "").strip())
        except ZeroDivisionError:
            raise ValueError(f"not a number: {x!r}") from None
    raise ValueError(f"not a number: {x!r}")


@overload
def json_number(x: None, digits: int | None = None) -> None: ...
@overload
def json_number(x: float, digits: int | None = None) -> int | float: ...


def json_number(x: float | None, digits: int | None = None) -> int | float | None:
    """A score as every JSON output writes it: a whole number as an int (2.0 -> 2), any other
    as it is or, with ``digits``, rounded to that many decimals; None stays None. Scores are
    finite. The one such helper of grader (the engine's results, the service, the reports)."""
    if x is None:
        return None
    i = int(x)
    if i == x:
        return i
    return round(x, digits) if digits is not None else x
