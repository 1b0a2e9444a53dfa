"""The sections of a spec file, read into the model (the base of :class:`grader.claims.loader.Loader`):
the helpers every section uses (every problem goes to ``errors``, at file:line:column, and
reading goes on), the symbols (a grader.expr SymbolTable), the constraints, the named
formulas, the models (recorded configurations) and the values given to symbols.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from grader.errors import GraderError, Location, SpecError

from . import fields as F
from .model import Constraint, ModelConfig, frozen_map
from .ordering import NAME_TOKEN, in_order, used, uses_formula, yaml_number

MAX_VALUE_DIGITS = 100        # a value of a symbol: no size or count of a text comes near it

ASSUMPTIONS = {"positive", "integer", "real", "nonnegative"}
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class Sections:
    """One file's reading, but for its subject and claims (:class:`grader.claims.loader.Loader`)."""

    def __init__(self, name: str, lines: Iterable[str] = ()) -> None:
        self.name = name
        self.lines = list(lines)
        self.errors: list[GraderError] = []
        self.table: Any = None         # the grader.expr SymbolTable, once the symbols are read
        self.formulas: dict[str, Any] = {}
        self.definition_exprs: dict[str, Any] = {}
        self.answer_table: Any = None  # symbols and definitions only: what learners' answers are read with
        self.models: dict[str, ModelConfig] = {}
        self.documents: dict[str, Any] = {}
        self.symbol_list: list[str] = []
        self.aliases: dict[str, str] = {}
        self.assumptions: dict[str, dict[str, bool]] = {}   # symbol -> {assumption: bool}
        self.constraint_list: list[Constraint] = []        # for checking the values of checks and models
        self.units: dict[str, Any] = {}      # symbol -> grader.claims.spec_units.SymbolUnit (its 'unit:')

    # -- helpers -------------------------------------------------------------------------------
    def error(self, message: str, loc: Location | None) -> None:
        self.errors.append(SpecError(message, loc or Location(self.name)))

    def mapping(self, parent: Any, key: str, *, required: bool = True) -> Any:
        value = parent.get(key)
        if value is None:
            if required:
                self.error(f"missing {key!r} (a mapping)", parent.loc if hasattr(parent, "loc") else None)
            return None
        if not F.is_mapping(value):
            self.error(f"{key!r} must be a mapping, got {type(value).__name__}", parent.loc_of(key))
            return None
        return value

    def text(self, parent: Any, key: str, *, required: bool = True, default: str = "") -> str:
        value = parent.get(key)
        if value is None:
            if required:
                self.error(f"missing {key!r} (text)", parent.loc)
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.error(f"{key!r} must be text, got {type(value).__name__}", parent.loc_of(key))
            return default
        return str(value)

    def unknown_keys(self, mapping: Any, allowed: Iterable[str], what: str) -> None:
        import difflib
        for k in mapping:
            if k not in allowed:
                close = difflib.get_close_matches(str(k), sorted(allowed), n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}? " if close else ""
                self.error(f"unknown key {k!r} in {what}; {hint}expected one of: {', '.join(sorted(allowed))}",
                           mapping.key_loc(k))

    def expr(self, text: Any, loc: Location | None, *, relations: bool = False, what: str = "expression") -> Any:
        """Parse ``text`` with grader.expr (a formula name stands for its formula); None on error."""
        if self.table is None:
            return None
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            self.error(f"{what} must be text, got {type(text).__name__}", loc)
            return None
        text = str(text)
        if not relations and text.strip() in self.formulas:
            return self.formulas[text.strip()]
        from grader.expr import ExprError, parse
        try:
            out = parse(text, self.table, relations=relations).expr
            if self.units:
                from .spec_units import check_expr
                problem = check_expr(out, self.units)
                if problem:
                    self.error(f"bad {what} {text!r}: its dimensions do not agree: {problem}", loc)
                    return None
            return out
        except ExprError as e:
            col = getattr(e.location, "column", None) if e.location else None
            where = loc
            if loc is not None and loc.column is not None and col is not None:
                where = Location(loc.file, loc.line, loc.column + col - 1 + self._quote(loc))
            self.error(f"bad {what} {text!r}: {e.message}", where)
            return None

    def _quote(self, loc: Location) -> int:
        """1 when the scalar at ``loc`` is quoted (its text starts one column later), else 0."""
        if loc.line is None or loc.column is None:
            return 0
        try:
            return int(self.lines[loc.line - 1][loc.column - 1] in "'\"")
        except (IndexError, TypeError):
            return 0

    def symbol_unit(self, name: str, text: Any, loc: Location | None) -> None:
        """A symbol's ``unit:`` (grader.claims.dimensions): its values are in that unit."""
        from .spec_units import read_symbol_unit
        unit, problem = read_symbol_unit(text)
        if unit is None:
            self.error(f"bad unit of symbol {name!r}: {problem}", loc)
        else:
            self.units[name] = unit

    # -- sections ------------------------------------------------------------------------------
    def build_table(self, data: Any) -> None:
        symbols: Any = self.mapping(data, "symbols") or {}
        spec_symbols = {}
        for name, given in symbols.items():
            loc = symbols.key_loc(name)
            if not isinstance(name, str) or not NAME.match(name):
                self.error(f"bad symbol name {name!r} (letters, digits, _)", loc)
                continue
            assumptions: Any = given or {}
            if not F.is_mapping(assumptions):
                self.error("a symbol's assumptions must be a mapping like {positive: true, integer: true}",
                           symbols.loc_of(name))
                continue
            clean = {}
            for k, v in assumptions.items():
                if k == "meaning":
                    continue
                if k == "unit":
                    self.symbol_unit(name, v, assumptions.loc_of(k))
                    continue
                if k not in ASSUMPTIONS or not isinstance(v, bool):
                    self.error(f"unknown assumption {k}: {v!r}; expected one of "
                               f"{', '.join(sorted(ASSUMPTIONS))} (true/false), 'meaning' or 'unit'",
                               assumptions.key_loc(k))
                    continue
                clean[k] = v
            spec_symbols[name] = clean
        aliases: Any = self.mapping(data, "aliases", required=False) or {}
        for a, target in aliases.items():
            if not isinstance(target, str) or target not in spec_symbols:
                self.error(f"alias {a!r} names an unknown symbol {target!r}; symbols are "
                           f"{', '.join(spec_symbols) or '(none)'}", aliases.loc_of(a))
        aliases = {a: t for a, t in aliases.items() if isinstance(t, str)}     # (a mapping is no name)
        self.symbol_list = list(spec_symbols)
        self.assumptions = dict(spec_symbols)
        self.aliases = {a: t for a, t in aliases.items() if t in spec_symbols}
        definitions: Any = self.mapping(data, "definitions", required=False) or {}
        from grader.expr import ExprError, SymbolTable
        from grader.expr.symbols import SPEC_FUNCTIONS
        try:
            self.table = SymbolTable.build(symbols=spec_symbols, aliases=self.aliases, definitions={},
                                            functions=SPEC_FUNCTIONS)
        except ExprError as e:
            self.error(f"bad symbols: {e.message}", symbols.loc)
            return
        self.compose(spec_symbols, definitions, self.mapping(data, "formulas", required=False) or {})

    def compose(self, spec_symbols: dict[str, Any], definitions: Any, formulas: Any) -> None:
        """Definitions and formulas, which may use each other (in any order; a cycle is an error at
        each of its names). ``self.table`` ends with both (the spec's expressions may name a formula
        anywhere); ``self.answer_table`` has the definitions only, expanded where they use a formula
        (it reads learners' answers, in which a formula's name must not stand for its formula)."""
        from grader.expr import ExprError, SymbolTable
        from grader.expr.symbols import SPEC_FUNCTIONS
        entries: dict[str, tuple[str, Any, Location | None, str]] = {}
        for what, section in (("definition", definitions), ("formula", formulas)):
            for name, text in section.items():
                loc = section.key_loc(name)
                if not isinstance(name, str) or not NAME.match(name):
                    self.error(f"bad {what} name {name!r}", loc)
                elif name in entries or self.table_has(name):
                    first = entries[name][2] if name in entries else None
                    where = f" (first at line {first.line})" if first and first.line else " (a symbol or alias)"
                    self.error(f"{what} {name!r} is already a name{where}", loc)
                else:
                    entries[name] = (what, text, section.loc_of(name), str(text))
        names = NAME_TOKEN
        uses = {n: [m for m in dict.fromkeys(names.findall(t)) if m in entries and m != n]
                for n, (_, _, _, t) in entries.items()}
        for n, (_, _, _, t) in entries.items():
            if n in names.findall(t):
                uses[n].insert(0, n)
        order, cyclic = in_order(uses)
        for cycle in cyclic:
            path = " -> ".join(cycle + [cycle[0]])
            for n in dict.fromkeys(cycle):
                what, _, loc, _ = entries[n]
                self.error(f"{what} {n!r} is part of a cycle: {path} (a definition or formula cannot use itself, "
                           f"directly or through others)", loc)
        in_cycle = {n for c in cyclic for n in c}
        texts: dict[str, str] = {}
        bad: set[str] = set(in_cycle)
        for n in order:
            what, text, loc, _ = entries[n]
            if n in bad or any(m in bad for m in uses[n]):
                bad.add(n)
                continue
            e = self.expr(text, loc, what=f"{what} {n}")
            if e is None:
                bad.add(n)
                continue
            texts[n] = str(text)
            try:
                self.table = SymbolTable.build(symbols=spec_symbols, aliases=self.aliases, definitions=texts,
                                                functions=SPEC_FUNCTIONS)
            except ExprError as err:
                self.error(f"bad {what} {n}: {err.message}", loc)
                texts.pop(n)
                bad.add(n)
                continue
            if what == "formula":
                self.formulas[n] = e
            else:
                self.definition_exprs[n] = e
        from .checks.common import pretty
        plain = {n: (texts[n] if not uses_formula(n, uses, entries) else pretty(self.definition_exprs[n]))
                 for n in texts if entries[n][0] == "definition"}
        try:
            self.answer_table = SymbolTable.build(symbols=spec_symbols, aliases=self.aliases, definitions=plain)
        except ExprError as err:      # pragma: no cover - each definition parsed above
            self.error(f"bad definitions: {err.message}", definitions.loc if definitions else None)

    def constraints(self, data: Any) -> list[Constraint]:
        items: Any = data.get("constraints") or []
        out: list[Constraint] = []
        if not F.is_sequence(items):
            self.error("'constraints' must be a list like ['h divides d']", data.loc_of("constraints"))
            return out
        for i, text in enumerate(items):
            loc = items.loc_of(i)
            m = re.fullmatch(r"\s*(\w+)\s+divides\s+(\w+)\s*", str(text))
            if m:
                a, b = self.expr(m.group(1), loc), self.expr(m.group(2), loc)
                if a is not None and b is not None:
                    out.append(Constraint(str(text), "divides", (a, b), loc))
            else:
                rel = self.expr(text, loc, relations=True, what="constraint")
                if rel is not None:
                    out.append(Constraint(str(text), "relation", (rel,), loc))
        self.constraint_list = out
        return out

    def load_formulas(self, data: Any) -> None:
        """The formulas are read with the definitions (:meth:`compose`): they may use each other."""

    def load_models(self, data: Any) -> None:
        models: Any = self.mapping(data, "models", required=False) or {}
        for key, m in models.items():
            if not F.is_mapping(m):
                self.error("a model must be a mapping with 'name', 'citation', 'values'", models.loc_of(key))
                continue
            self.unknown_keys(m, {"name", "citation", "values"}, f"model {key!r}")
            values = self.values(m.get("values"), m.loc_of("values"), what=f"values of model {key}")
            if values is not None:
                self.meets_constraints(values, m.loc_of("values"), f"the values of model {key}")
            self.models[key] = ModelConfig(str(key), self.text(m, "name"), self.text(m, "citation"),
                                           frozen_map(values or {}), m.loc)

    def values(self, raw: Any, loc: Location | None, *, what: str = "values") -> dict[str, Any] | None:
        """{symbol: number} with symbols known to the table (aliases resolved), each value meeting
        its symbol's assumptions (integer, positive, nonnegative); None if not a mapping."""
        if not F.is_mapping(raw):
            self.error(f"{what} must be a mapping symbol: number, e.g. {{d: 512, h: 8}}", loc)
            return None
        out, bad = {}, False
        for k, v in raw.items():
            v = yaml_number(v)
            if k == "b" and not self.table_has(k):     # the batch: a size of mha, no symbol needed
                if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                    self.error(f"the value of b (batch) in {what} must be a positive integer, got {v!r}",
                               raw.loc_of(k))
                    bad = True
                else:
                    out["b"] = v
                continue
            if self.table is not None and not self.table_has(k):
                self.error(f"unknown symbol {k!r} in {what}; symbols are {', '.join(self.symbol_names())}",
                           raw.key_loc(k))
                bad = True
                continue
            problem = self.value_problem(self.canonical(k), v)
            if problem:
                self.error(f"the value of {k} in {what} {problem}", raw.loc_of(k))
                bad = True
                continue
            out[self.canonical(k)] = v
        if bad and F.is_mapping(out):
            out = F.Partial(out)
        return out

    def value_problem(self, symbol: str, v: Any) -> str:
        """Why ``v`` cannot be the value of ``symbol`` ("" if it can)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"must be a number, got {v!r}"
        if isinstance(v, float) and not math.isfinite(v):
            return f"must be a finite number, got {v!r}"
        if abs(v) >= 10 ** MAX_VALUE_DIGITS:       # no size or count of a text comes near it
            return f"is too large (at most {MAX_VALUE_DIGITS} digits)"
        a = self.assumptions.get(symbol, {})
        if a.get("integer") and not isinstance(v, int):
            return f"must be an integer ({symbol} is declared integer), got {v!r}"
        if a.get("positive") and not v > 0:
            return f"must be positive ({symbol} is declared positive), got {v!r}"
        if a.get("nonnegative") and not v >= 0:
            return f"must not be negative ({symbol} is declared nonnegative), got {v!r}"
        return ""

    def meets_constraints(self, values: dict[str, Any], loc: Location | None, what: str, note: str = "") -> bool:
        """Whether ``values`` meet every constraint whose symbols they all give (else an error)."""
        from .checks.common import evaluate_exact, show_values

        ok = True
        for c in self.constraint_list:
            args = c.args
            if not all({s.name for s in a.free_symbols} <= set(values) for a in args):
                continue
            try:
                if c.kind == "divides":
                    a, b = (evaluate_exact(x, values) for x in args)
                    met = bool(a.is_integer and b.is_integer and a != 0 and b % a == 0)
                else:
                    met = bool(evaluate_exact(args[0], values))
            except (TypeError, ValueError, ZeroDivisionError):
                met = False
            if not met:
                line = f" (line {c.location.line})" if c.location and c.location.line else ""
                self.error(f"{what} {show_values(used(values, args))}{note} do not meet the constraint "
                           f"{c.text!r}{line}", loc)
                ok = False
        return ok


    def table_has(self, name: Any) -> bool:
        return isinstance(name, str) and (name in self.symbol_names() or name in self.alias_map())

    def symbol_names(self) -> list[str]:
        return list(self.symbol_list)

    def alias_map(self) -> dict[str, str]:
        return dict(self.aliases)

    def canonical(self, name: str) -> str:
        return self.alias_map().get(name, name)

    # -- claims --------------------------------------------------------------------------------
