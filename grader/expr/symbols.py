"""The names a formula may use: symbols with assumptions, aliases, definitions, functions.

>>> t = SymbolTable.build(symbols={"d": {"positive": True, "integer": True},
...                                "h": {"positive": True, "integer": True}},
...                       aliases={"d_model": "d"}, definitions={"d_k": "d/h"})
>>> t.symbol("d_model") is t.symbol("d") or t.symbol("d_model") == t.symbol("d")
True
>>> t.expand(t.definition_symbol("d_k"))
d/h

A table is frozen, hashable (it keys the parser's cache) and picklable (it travels to the
grading workers).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

import sympy

from .limits import ExprError

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
ASSUMPTIONS = frozenset({"positive", "negative", "nonnegative", "nonpositive", "nonzero", "zero",
                         "integer", "rational", "real", "even", "odd", "prime", "finite"})
# Functions a formula may call, by name. "O" and "Theta" exist for spec authors who need them
# (pass functions=(..., "O", "Theta")); they are not in the default list.
DEFAULT_FUNCTIONS = ("sqrt", "log", "exp", "min", "max", "abs")
AVAILABLE_FUNCTIONS = DEFAULT_FUNCTIONS + ("ln", "O", "Theta", "floor", "ceil", "round")
# A spec's formulas may also round (issue #27): floor, ceil, round (halves up), exact under SymPy.
SPEC_FUNCTIONS = DEFAULT_FUNCTIONS + ("floor", "ceil", "round")


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not NAME.match(name) or "__" in name:
        raise ExprError(f"bad {what} name {name!r}: a letter, then letters, digits or '_'")
    return name


@dataclass(frozen=True)
class SymbolTable:
    """Symbols (name -> SymPy Symbol with assumptions), aliases (alias -> symbol name),
    definitions (name -> expression in the symbols, e.g. d_k = d/h) and allowed functions."""

    symbols: tuple[tuple[str, sympy.Symbol], ...]       # in declaration order
    aliases: tuple[tuple[str, str], ...]                # ((alias, name), ...)
    definitions: tuple[tuple[str, sympy.Expr], ...]     # ((name, expanded SymPy expression), ...)
    definition_texts: tuple[tuple[str, str], ...]       # ((name, text), ...) as written
    functions: tuple[str, ...]                          # allowed function names

    @classmethod
    def build(cls, symbols: Mapping[str, Mapping[str, object] | None] | None = None,
              aliases: Mapping[str, str] | None = None, definitions: Mapping[str, object] | None = None,
              functions: Iterable[str] | None = None) -> "SymbolTable":
        """A table from plain data: ``symbols={name: {assumption: bool}}``,
        ``aliases={alias: name}``, ``definitions={name: "expr text"}`` (parsed with
        :func:`grader.expr.parse`; a definition may use earlier ones), ``functions`` (names from
        ``AVAILABLE_FUNCTIONS``; default ``DEFAULT_FUNCTIONS``). Raises ExprError."""
        syms = []
        seen: set[str] = set()
        for name, assumptions in (symbols or {}).items():
            _check_name(name, "symbol")
            clean: dict[str, bool] = {}
            for k, v in (assumptions or {}).items():
                if k not in ASSUMPTIONS or not isinstance(v, bool):
                    raise ExprError(f"symbol {name!r}: unknown assumption {k}: {v!r} (expected one of "
                                    f"{', '.join(sorted(ASSUMPTIONS))}, true or false)")
                clean[k] = v
            try:
                sym = sympy.Symbol(name, **clean)
            except Exception as e:      # inconsistent assumptions (positive and negative)
                raise ExprError(f"symbol {name!r}: inconsistent assumptions {clean}: {e}") from None
            syms.append((name, sym))
            seen.add(name)
        als = []
        for alias, target in (aliases or {}).items():
            _check_name(alias, "alias")
            if alias in seen:
                raise ExprError(f"alias {alias!r} is already a name")
            if target not in dict(syms):
                raise ExprError(f"alias {alias!r} names an unknown symbol {target!r}")
            als.append((alias, target))
            seen.add(alias)
        funcs = tuple(DEFAULT_FUNCTIONS if functions is None else functions)
        for f in funcs:
            if f not in AVAILABLE_FUNCTIONS:
                raise ExprError(f"unknown function {f!r}; available: {', '.join(AVAILABLE_FUNCTIONS)}")
            if f in seen:
                raise ExprError(f"function {f!r} is also a symbol name")
        table = cls(tuple(syms), tuple(als), (), (), funcs)
        from .parser import parse
        defs: list[tuple[str, sympy.Expr]] = []
        texts: list[tuple[str, str]] = []
        for name, text in (definitions or {}).items():
            _check_name(name, "definition")
            if name in seen or name in funcs:
                raise ExprError(f"definition {name!r} is already a name")
            try:
                expr = parse(str(text), table).expr
            except ExprError as e:
                raise ExprError(f"definition of {name}: {e.message}", e.location) from None
            defs.append((name, expr))
            texts.append((name, str(text)))
            seen.add(name)
            table = cls(tuple(syms), tuple(als), tuple(defs), tuple(texts), funcs)
        return table

    def __hash__(self) -> int:
        # a table keys every parse and comparison cache: its hash is computed once (kept out
        # of pickles, since string hashes differ between processes)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.symbols, self.aliases, self.definition_texts, self.functions))
            object.__setattr__(self, "_hash", h)
        return int(h)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    # -- lookups -----------------------------------------------------------------------------
    @cached_property
    def _by_name(self) -> dict[str, sympy.Symbol]:
        out = dict(self.symbols)
        out.update({a: out[t] for a, t in self.aliases})
        return out

    @cached_property
    def _defs(self) -> dict[str, sympy.Expr]:
        return dict(self.definitions)

    @cached_property
    def _def_symbols(self) -> dict[str, sympy.Symbol]:
        return {name: sympy.Symbol(name) for name, _ in self.definitions}

    @cached_property
    def _expansion(self) -> dict[sympy.Symbol, sympy.Expr]:
        return {self._def_symbols[n]: e for n, e in self.definitions}

    def symbol(self, name: str) -> sympy.Symbol:
        """The Symbol of a symbol or alias name (KeyError otherwise)."""
        return self._by_name[name]

    def names(self) -> tuple[str, ...]:
        """Every name a formula may use for a value: symbols, aliases, definitions."""
        return tuple(n for n, _ in self.symbols) + tuple(a for a, _ in self.aliases) + tuple(
            n for n, _ in self.definitions)

    def definition(self, name: str) -> sympy.Expr:
        """The expression a defined name stands for (in the symbols), e.g. d_k -> d/h."""
        return self._defs[name]

    def definition_symbol(self, name: str) -> sympy.Symbol:
        """The placeholder Symbol a defined name is shown as (in ``read_as``)."""
        return self._def_symbols[name]

    def expand(self, expr: sympy.Basic) -> sympy.Basic:
        """``expr`` with every defined name replaced by its definition (d_k -> d/h).
        :func:`grader.expr.parse` already returns expanded expressions; this is for SymPy
        objects built elsewhere with placeholder symbols of the same names."""
        free = getattr(expr, "free_symbols", None)
        if not free or not self.definitions:
            return expr
        subs = {s: self._defs[s.name] for s in free if s.name in self._defs and s not in self._by_name.values()}
        return expr.xreplace(subs) if subs else expr
