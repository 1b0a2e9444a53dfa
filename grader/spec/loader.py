"""One spec file's loading: :class:`Loader` reads the YAML's sections into the model, every
problem into ``errors`` (file:line:column), and loading goes on.

Sections: the subject and its sources, the symbols (a grader.expr SymbolTable), the
constraints, the named formulas, the models (recorded configurations), the claims and their
checks (:class:`grader.spec.claims.Claims`: a check's fields are read by the field types of
:mod:`grader.spec.fields`, as its kind declares them in :mod:`grader.spec.checks`).
"""
from __future__ import annotations

import math
import re
from typing import Any

from grader import yamlio
from grader.errors import ErrorList, GraderError, Location, SpecError

from . import fields as F
from .claims import Claims, a_or_an, what_is
from .model import Constraint, Document, ModelConfig, Subject, frozen_map

TOP_KEYS = {"subject", "symbols", "aliases", "definitions", "constraints", "formulas", "models", "claims"}
ASSUMPTIONS = {"positive", "integer", "real", "nonnegative"}
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class Loader(Claims):

    def __init__(self, name: str, lines=()):
        self.name = name
        self.lines = list(lines)
        self.errors: list[GraderError] = []
        self.table = None
        self.formulas = {}
        self.models = {}
        self.documents = {}
        self.symbol_list, self.aliases = [], {}
        self.assumptions = {}          # symbol -> {assumption: bool}
        self.constraint_list = []      # Constraint, for checking the values of checks and models

    # -- helpers -------------------------------------------------------------------------------
    def error(self, message: str, loc: Location | None):
        self.errors.append(SpecError(message, loc or Location(self.name)))

    def mapping(self, parent, key, *, required=True):
        value = parent.get(key)
        if value is None:
            if required:
                self.error(f"missing {key!r} (a mapping)", parent.loc if hasattr(parent, "loc") else None)
            return None
        if not isinstance(value, dict):
            self.error(f"{key!r} must be a mapping, got {type(value).__name__}", parent.loc_of(key))
            return None
        return value

    def text(self, parent, key, *, required=True, default=""):
        value = parent.get(key)
        if value is None:
            if required:
                self.error(f"missing {key!r} (text)", parent.loc)
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.error(f"{key!r} must be text, got {type(value).__name__}", parent.loc_of(key))
            return default
        return str(value)

    def unknown_keys(self, mapping, allowed, what):
        for k in mapping:
            if k not in allowed:
                self.error(f"unknown key {k!r} in {what}; expected one of: {', '.join(sorted(allowed))}",
                           mapping.key_loc(k))

    def expr(self, text, loc, *, relations=False, what="expression"):
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
            return parse(text, self.table, relations=relations).expr
        except ExprError as e:
            col = getattr(e.location, "column", None) if e.location else None
            where = loc
            if loc is not None and loc.column is not None and col is not None:
                where = Location(loc.file, loc.line, loc.column + col - 1 + self._quote(loc))
            self.error(f"bad {what} {text!r}: {e.message}", where)
            return None

    def _quote(self, loc) -> int:
        """1 when the scalar at ``loc`` is quoted (its text starts one column later), else 0."""
        try:
            return int(self.lines[loc.line - 1][loc.column - 1] in "'\"")
        except (IndexError, TypeError):
            return 0

    # -- sections ------------------------------------------------------------------------------
    def subject(self, data) -> Subject:
        if data is None:
            raise ErrorList(self.errors + [SpecError(
                "the file is empty; a spec is a mapping with 'subject', 'symbols', 'claims', ...",
                Location(self.name, 1, 1))])
        if not isinstance(data, dict):
            raise ErrorList(self.errors + [SpecError(
                f"a spec must be a mapping with 'subject', 'symbols', 'claims', ..., got {what_is(data)}",
                yamlio.loc_of(data, Location(self.name, 1, 1)))])
        self.unknown_keys(data, TOP_KEYS, "a spec")
        head = self.mapping(data, "subject") or yamlio.YDict()
        if not hasattr(head, "loc"):
            head.loc, head.key_locs, head.value_locs = Location(self.name), {}, {}
        sid = self.text(head, "id")
        title = self.text(head, "title")
        self.unknown_keys(head, {"id", "title", "sources"}, "'subject'")
        sources = self.mapping(head, "sources") or {}
        for key, doc in sources.items():
            if not isinstance(doc, dict):
                self.error("a source must be a mapping with 'title' and 'path'", sources.loc_of(key))
                continue
            self.unknown_keys(doc, {"title", "path"}, f"source {key!r}")
            self.documents[key] = Document(str(key), self.text(doc, "title"), self.text(doc, "path", required=False))
        self.build_table(data)
        constraints = self.constraints(data)
        self.load_formulas(data)
        self.load_models(data)
        claims = self.claims(data, sid)
        if self.errors:
            raise ErrorList(self.errors)
        return Subject(sid, title, frozen_map(self.documents), self.table, frozen_map(self.formulas),
                       tuple(constraints), frozen_map(self.models), tuple(claims), self.name,
                       frozen_map(self.aliases))

    def build_table(self, data):
        symbols = self.mapping(data, "symbols") or {}
        spec_symbols = {}
        for name, assumptions in symbols.items():
            loc = symbols.key_loc(name)
            if not isinstance(name, str) or not NAME.match(name):
                self.error(f"bad symbol name {name!r} (letters, digits, _)", loc)
                continue
            assumptions = assumptions or {}
            if not isinstance(assumptions, dict):
                self.error("a symbol's assumptions must be a mapping like {positive: true, integer: true}",
                           symbols.loc_of(name))
                continue
            clean = {}
            for k, v in assumptions.items():
                if k == "meaning":
                    continue
                if k not in ASSUMPTIONS or not isinstance(v, bool):
                    self.error(f"unknown assumption {k}: {v!r}; expected one of "
                               f"{', '.join(sorted(ASSUMPTIONS))} (true/false) or 'meaning'", assumptions.key_loc(k))
                    continue
                clean[k] = v
            spec_symbols[name] = clean
        aliases = self.mapping(data, "aliases", required=False) or {}
        for a, target in aliases.items():
            if target not in spec_symbols:
                self.error(f"alias {a!r} names an unknown symbol {target!r}; symbols are "
                           f"{', '.join(spec_symbols) or '(none)'}", aliases.loc_of(a))
        self.symbol_list = list(spec_symbols)
        self.assumptions = dict(spec_symbols)
        self.aliases = {a: t for a, t in aliases.items() if t in spec_symbols}
        definitions = self.mapping(data, "definitions", required=False) or {}
        from grader.expr import ExprError, SymbolTable
        try:
            self.table = SymbolTable.build(symbols=spec_symbols,
                                           aliases={a: t for a, t in aliases.items() if t in spec_symbols},
                                           definitions={})
        except ExprError as e:
            self.error(f"bad symbols: {e.message}", symbols.loc)
            return
        good = {}
        for name, text in definitions.items():
            if self.expr(text, definitions.loc_of(name), what=f"definition of {name}") is not None:
                good[name] = str(text)
        try:
            self.table = SymbolTable.build(symbols=spec_symbols,
                                           aliases={a: t for a, t in aliases.items() if t in spec_symbols},
                                           definitions=good)
        except ExprError as e:
            self.error(f"bad definitions: {e.message}", definitions.loc)

    def constraints(self, data):
        items = data.get("constraints") or []
        out = []
        if not isinstance(items, list):
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

    def load_formulas(self, data):
        formulas = self.mapping(data, "formulas", required=False) or {}
        for name, text in formulas.items():
            if not isinstance(name, str) or not NAME.match(name):
                self.error(f"bad formula name {name!r}", formulas.key_loc(name))
                continue
            e = self.expr(text, formulas.loc_of(name), what=f"formula {name}")
            if e is not None:
                self.formulas[name] = e

    def load_models(self, data):
        models = self.mapping(data, "models", required=False) or {}
        for key, m in models.items():
            if not isinstance(m, dict):
                self.error("a model must be a mapping with 'name', 'citation', 'values'", models.loc_of(key))
                continue
            self.unknown_keys(m, {"name", "citation", "values"}, f"model {key!r}")
            values = self.values(m.get("values"), m.loc_of("values"), what=f"values of model {key}")
            if values is not None:
                self.meets_constraints(values, m.loc_of("values"), f"the values of model {key}")
            self.models[key] = ModelConfig(str(key), self.text(m, "name"), self.text(m, "citation"),
                                           frozen_map(values or {}), m.loc)

    def values(self, raw, loc, *, what="values"):
        """{symbol: number} with symbols known to the table (aliases resolved), each value meeting
        its symbol's assumptions (integer, positive, nonnegative); None if not a mapping."""
        if not isinstance(raw, dict):
            self.error(f"{what} must be a mapping symbol: number, e.g. {{d: 512, h: 8}}", loc)
            return None
        out, bad = {}, False
        for k, v in raw.items():
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
        if bad and isinstance(out, dict):
            out = F.Partial(out)
        return out

    def value_problem(self, symbol, v) -> str:
        """Why ``v`` cannot be the value of ``symbol`` ("" if it can)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"must be a number, got {v!r}"
        if isinstance(v, float) and not math.isfinite(v):
            return f"must be a finite number, got {v!r}"
        a = self.assumptions.get(symbol, {})
        if a.get("integer") and not isinstance(v, int):
            return f"must be an integer ({symbol} is declared integer), got {v!r}"
        if a.get("positive") and not v > 0:
            return f"must be positive ({symbol} is declared positive), got {v!r}"
        if a.get("nonnegative") and not v >= 0:
            return f"must not be negative ({symbol} is declared nonnegative), got {v!r}"
        return ""

    def meets_constraints(self, values, loc, what, note="") -> bool:
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
                self.error(f"{what} {show_values(_used(values, args))}{note} do not meet the constraint "
                           f"{c.text!r}{line}", loc)
                ok = False
        return ok


    def table_has(self, name) -> bool:
        return isinstance(name, str) and (name in self.symbol_names() or name in self.alias_map())

    def symbol_names(self):
        return list(self.symbol_list)

    def alias_map(self):
        return dict(self.aliases)

    def canonical(self, name):
        return self.alias_map().get(name, name)

    # -- claims --------------------------------------------------------------------------------


def _used(values, exprs):
    names = set().union(*({s.name for s in e.free_symbols} for e in exprs))
    return {k: v for k, v in values.items() if k in names}

