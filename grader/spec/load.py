"""Load a spec (YAML) into a :class:`~grader.spec.model.Subject`, reporting EVERY error at once.

Each error is a :class:`grader.errors.SpecError` at file:line:column saying what was
expected (unknown symbol, bad expression, unknown check kind, duplicate claim id, ...);
a duplicate YAML key (every one in the file), an alias or a file that is not YAML is a positioned
:class:`grader.errors.InputError` from :mod:`grader.yamlio`. All of them are raised
together as one :class:`grader.errors.ErrorList`.

Spec text becomes SymPy only through :func:`grader.expr.parse`.
"""
from __future__ import annotations

import itertools
import math
import re

from grader import yamlio
from grader.errors import ErrorList, GraderError, InputError, Location, SpecError

from .budget import size_problem
from .checks import KINDS
from .figures import FigureError, parse_figure
from .files import may_measure, spec_files  # noqa: F401  (both part of this module's API)
from .model import EXPECTATIONS, Check, Claim, Constraint, Document, ModelConfig, Source, Subject, frozen_map

TOP_KEYS = {"subject", "symbols", "aliases", "definitions", "constraints", "formulas", "models", "claims"}
CLAIM_KEYS = {"id", "quote", "source", "checks", "expect", "corrected", "note"}
ASSUMPTIONS = {"positive", "integer", "real", "nonnegative"}
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
CLAIM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def load_subjects(paths=None) -> list[Subject]:
    """Load every spec file under ``paths``; all errors of all files are raised together."""
    subjects, errors = [], []
    for f in spec_files(paths):
        try:
            subjects.append(load_file(f))
        except ErrorList as e:
            errors.extend(e.errors)
        except GraderError as e:
            errors.append(e)
    seen = {}
    for s in subjects:
        for c in s.claims:
            key = (s.id, c.id)
            if key in seen:
                errors.append(SpecError(f"duplicate claim id {c.id!r} in subject {s.id} "
                                        f"(first at {seen[key]})", c.location))
            else:
                seen[key] = c.location
    if errors:
        raise ErrorList(errors)
    return subjects


def load_subject(path=None) -> Subject:
    """One subject: ``path`` a spec file or folder (None: the bundled spec). Several files of one
    subject (same ``subject.id``) are merged: the first holds the symbols, the others add claims."""
    subjects = load_subjects([path] if path else None)
    first = subjects[0]
    claims = list(first.claims)
    for s in subjects[1:]:
        if s.id == first.id:
            claims.extend(s.claims)
    return _replace(first, claims=tuple(claims))


def load_file(path) -> Subject:
    try:
        data = yamlio.load_file(path)
    except InputError as e:
        return _load_despite_duplicates(e, lambda: yamlio.read_text(path), str(path))
    try:
        lines = yamlio.read_text(path).splitlines()
    except (OSError, UnicodeDecodeError, InputError):  # pragma: no cover - load_file has read it already
        lines = []
    return _Loader(str(path), lines).subject(data)


def loads(text: str, name: str = "<spec>") -> Subject:
    """Load a spec from text (for tests and tools)."""
    try:
        data = yamlio.loads(text, name)
    except InputError as e:
        return _load_despite_duplicates(e, lambda: text, name)
    return _Loader(name, text.splitlines()).subject(data)


def _load_despite_duplicates(error: InputError, read, name: str) -> Subject:
    """grader.yamlio refuses a file at its first duplicate key. List every duplicate key instead,
    then load the file without the repeated entries (the first of each key stays), so that the
    file's other errors are reported in the same run; raises ErrorList with all of them."""
    if not str(error.message).startswith("duplicate key"):
        raise error
    try:
        text = read()
    except (OSError, UnicodeDecodeError):
        raise error from None
    duplicates, cleaned = _duplicate_keys(text, name)
    if not duplicates:
        raise error
    try:
        data = yamlio.loads(cleaned, name)
    except InputError as e:     # what the duplicates hid (or an entry that cannot be cut out)
        errors = duplicates + ([] if str(e.message).startswith("duplicate key") else [e])
        raise ErrorList(sorted(errors, key=_position)) from None
    loader = _Loader(name, text.splitlines())
    loader.errors.extend(duplicates)
    return loader.subject(data)


def _position(e):
    loc = e.location or Location()
    return (loc.file or "", loc.line or 0, loc.column or 0)


def _duplicate_keys(text: str, name: str):
    """(an InputError per repeated key, the text with each repeated entry blanked out).

    The text is only *composed* (YAML nodes with their marks, no object is constructed; an
    alias is a shared node, visited once), so this is as safe as the loader itself. Blanking
    replaces characters by spaces (newlines stay), so every other entry keeps its line and
    column; in a flow mapping the entry's comma goes with it."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError):
        return [], text
    errors, spans, seen, stack = [], [], set(), [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in first:
                        errors.append(InputError(
                            f"duplicate key {key.value!r} (first at line {first[key.value]})",
                            Location(name, key.start_mark.line + 1, key.start_mark.column + 1)))
                        spans.append((key.start_mark.index, value.end_mark.index, node.flow_style))
                    else:
                        first[key.value] = key.start_mark.line + 1
                stack.extend((value, key))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    chars = list(text)
    for start, end, flow in spans:
        if flow:   # "{a: 1, a: 2, b: 3}": the entry and its comma
            j = end
            while j < len(chars) and chars[j] in " \t\r\n":
                j += 1
            if j < len(chars) and chars[j] == ",":
                end = j + 1
        for i in range(start, min(end, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "
    errors.sort(key=_position)
    return errors, "".join(chars)


def _replace(obj, **changes):
    from dataclasses import replace
    return replace(obj, **changes)


class _Loader:
    """One file's loading; every problem goes to ``self.errors`` and loading goes on."""

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
                f"a spec must be a mapping with 'subject', 'symbols', 'claims', ..., got {_what(data)}",
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
            if not isinstance(target, str) or target not in spec_symbols:
                self.error(f"alias {a!r} names an unknown symbol {target!r}; symbols are "
                           f"{', '.join(spec_symbols) or '(none)'}", aliases.loc_of(a))
        aliases = {a: t for a, t in aliases.items() if isinstance(t, str)}     # (a mapping is no name)
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
            out = _Partial(out)
        return out

    def value_problem(self, symbol, v) -> str:
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

    def valid_values(self, kind, params, c) -> bool:
        """The values a check is run at: every symbol it needs is given, the constraints hold,
        and sizes for mha are positive integers with h dividing d. Errors at the check's ``at``."""
        at = params.get("at")
        if isinstance(at, _Partial) or isinstance(params.get("vary"), _Partial):
            return False    # its values were reported already
        at = dict(at or {})
        at_loc = c.loc_of("at") if "at" in c else c.loc
        what = f"{_a(kind)} check"

        def free(*exprs):
            return set().union(*({s.name for s in e.free_symbols} for e in exprs if e is not None))

        def missing(need, given, why):
            lost = sorted(set(need) - set(given), key=lambda n: (n not in SIZE_ORDER, SIZE_ORDER.get(n, 0), n))
            if lost:
                self.error(f"{what} needs a value for {', '.join(lost)} ({why}); give it in 'at'", at_loc)
            return not lost

        if kind == "numeric":
            return (missing(free(params["expr"]), at, "the expression uses it")
                    and self.meets_constraints(at, at_loc, "the values"))
        if kind == "dominance" and "at" in params:
            return (missing(free(params["larger"], params["smaller"]), at, "the expressions use it")
                    and self.meets_constraints(at, at_loc, "the values"))
        if kind == "config":
            model = params["model"]
            lost = sorted(free(params["expr"]) - set(model.values))
            if lost:
                self.error(f"model {model.key!r} records no value for {', '.join(lost)}, which the expression "
                           f"uses", c.loc_of("expr"))
            return not lost
        if kind not in ("shapes", "measure", "compare", "invariance", "equivalence"):
            return True
        from .measure import required_sizes
        if kind == "shapes":
            need = {"d", "h", "n"}
        elif kind == "measure":
            need = set(required_sizes(params["quantity"]))
        elif kind == "compare":
            need = set(required_sizes(params["left"])) | set(required_sizes(params["right"]))
        elif kind == "invariance":
            need = set(required_sizes(params["quantity"]))
        else:
            need = {"d", "h"}
        vary = dict(params.get("vary") or {})
        ok = missing(need, set(at) | set(vary), "mha is built and run at these sizes")
        formula = params.get("formula")
        if formula is not None:
            ok &= missing(free(formula), set(at) | set(vary), "the formula uses it")
        if not ok:
            return False
        names = list(vary)
        points = [at] if not vary else [{**at, **dict(zip(names, combo))}
                                         for combo in itertools.product(*(vary[n] for n in names))]
        for point in points:
            for k in SIZE_ORDER:
                if k in point and (isinstance(point[k], bool) or not isinstance(point[k], int) or point[k] <= 0):
                    self.error(f"{what}: size {k} of mha must be a positive integer, got {point[k]!r}", at_loc)
                    return False
            note = f" ({', '.join(names)} from vary)" if vary else ""
            if not self.meets_constraints(point, at_loc, "the values", note):
                return False
            too_big = size_problem(point)      # grader.spec.budget: beyond what torch can represent
            if too_big:
                self.error(f"{what}: sizes {', '.join(f'{k}={v:,}' for k, v in point.items())}{note} are too large: "
                           f"{too_big}", at_loc)
                return False
            if "d" in point and "h" in point and point["d"] % point["h"]:
                self.error(f"{what}: mha needs h to divide d (d_k = d/h heads' width), got d={point['d']}, "
                           f"h={point['h']}", at_loc)
                return False
        return True

    def table_has(self, name) -> bool:
        return isinstance(name, str) and (name in self.symbol_names() or name in self.alias_map())

    def symbol_names(self):
        return list(self.symbol_list)

    def alias_map(self):
        return dict(self.aliases)

    def canonical(self, name):
        return self.alias_map().get(name, name)

    # -- claims --------------------------------------------------------------------------------
    def claims(self, data, sid):
        items = data.get("claims")
        if items is None:
            self.error("missing 'claims' (a list)", data.loc)
            return []
        if not isinstance(items, list):
            self.error("'claims' must be a list", data.loc_of("claims"))
            return []
        out, seen = [], {}
        for i, raw in enumerate(items):
            loc = items.loc_of(i)
            if not isinstance(raw, dict):
                self.error("a claim must be a mapping with id, quote, source, checks, expect", loc)
                continue
            self.unknown_keys(raw, CLAIM_KEYS, "a claim")
            cid = self.text(raw, "id")
            if cid and not CLAIM_ID.match(cid):
                self.error(f"bad claim id {cid!r} (letters, digits, '.', '-', '_')", raw.loc_of("id"))
            if cid in seen:
                self.error(f"duplicate claim id {cid!r} (first at line {seen[cid].line})", raw.loc_of("id"))
            seen.setdefault(cid, raw.loc_of("id"))
            quote = self.text(raw, "quote")
            source = self.source(raw)
            expect = self.text(raw, "expect")
            if expect and expect not in EXPECTATIONS:
                self.error(f"expect must be one of {', '.join(EXPECTATIONS)}, got {expect!r}", raw.loc_of("expect"))
            corrected = self.text(raw, "corrected", required=False)
            if expect == "refuted" and not corrected:
                self.error("a claim expected to be refuted needs 'corrected:' (the right statement)", raw.loc)
            checks = self.checks(raw)
            out.append(Claim(cid, quote, source, tuple(checks), expect, corrected,
                             self.text(raw, "note", required=False), raw.loc, sid))
        return out

    def source(self, raw):
        src = raw.get("source")
        if not isinstance(src, dict):
            self.error("'source' must be a mapping {document: ..., section: ...}", raw.loc_of("source") if src else raw.loc)
            return Source("")
        self.unknown_keys(src, {"document", "section"}, "a source")
        doc = self.text(src, "document")
        if doc and self.documents and doc not in self.documents:
            self.error(f"unknown document {doc!r}; the subject's sources are {', '.join(self.documents)}",
                       src.loc_of("document"))
        return Source(doc, self.text(src, "section", required=False))

    def checks(self, raw):
        items = raw.get("checks")
        if not isinstance(items, list) or not items:
            self.error("'checks' must be a non-empty list", raw.loc_of("checks") if items is not None else raw.loc)
            return []
        out = []
        for i, c in enumerate(items):
            loc = items.loc_of(i)
            if not isinstance(c, dict) or "kind" not in c:
                self.error("a check must be a mapping with 'kind'", loc)
                continue
            kind = c["kind"]
            if not isinstance(kind, str) or kind not in KINDS:
                self.error(f"unknown check kind {kind!r}; expected one of: {', '.join(sorted(KINDS))}",
                           c.loc_of("kind"))
                continue
            params = self.fields(c, KINDS[kind].FIELDS, f"{_a(kind)} check")
            if params is not None and self.valid_values(kind, params, c):
                out.append(Check(kind, frozen_map(params), loc))
        return out

    def fields(self, c, spec, what):
        """Validate and convert a check's fields by the kind's FIELDS = {name: (type, required)}."""
        self.unknown_keys(c, set(spec) | {"kind"}, what)
        params, ok = {}, True
        for name, (ftype, required) in spec.items():
            if name not in c:
                if required:
                    self.error(f"{what} needs {name!r} ({ftype})", c.loc)
                    ok = False
                continue
            value = self.field(ftype, c[name], c.loc_of(name), name)
            if value is _BAD:
                ok = False
            else:
                params[name] = value
        return params if ok else None

    def field(self, ftype, v, loc, name):
        n_errors = len(self.errors)
        if ftype == "expr":
            out = self.expr(v, loc, what=name)
        elif ftype == "relation":
            out = self.expr(v, loc, relations=True, what=name)
        elif ftype == "values":
            out = self.values(v, loc, what=name)
            out = out if out is None or isinstance(out, _Partial) else frozen_map(out)
        elif ftype == "values_list":
            if not isinstance(v, dict):
                self.error(f"{name} must be a mapping symbol: [numbers], e.g. {{h: [1, 2, 8]}}", loc)
                out = None
            else:
                out, bad = {}, False
                for k, seq in v.items():
                    if not self.table_has(k):
                        self.error(f"unknown symbol {k!r} in {name}", v.key_loc(k))
                    elif not isinstance(seq, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in seq) or not seq:
                        self.error(f"{name}.{k} must be a non-empty list of integers", v.loc_of(k))
                    elif any(self.value_problem(self.canonical(k), x) for x in seq):
                        x = next(x for x in seq if self.value_problem(self.canonical(k), x))
                        self.error(f"a value of {k} in {name} {self.value_problem(self.canonical(k), x)}", v.loc_of(k))
                    else:
                        out[self.canonical(k)] = tuple(seq)
                        continue
                    bad = True
                out = _Partial(out) if bad else frozen_map(out)
        elif ftype == "figure":
            try:
                out = parse_figure(v)
            except FigureError as e:
                self.error(f"bad figure {v!r} for {name}: {e}", loc)
                out = None
        elif ftype == "model":
            out = self.models.get(v) if isinstance(v, str) else None
            if out is None:
                self.error(f"unknown model {v!r}; the spec's models are {', '.join(self.models) or '(none)'}", loc)
        elif ftype == "symbols":
            if not isinstance(v, list) or not all(self.table_has(x) for x in v):
                self.error(f"{name} must be a list of known symbols, got {v!r}", loc)
                out = None
            else:
                out = tuple(self.expr(self.canonical(x), loc) for x in v)
        elif ftype == "shapes":
            if not isinstance(v, dict) or not all(
                    isinstance(s, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in s)
                    for s in v.values()):
                self.error(f"{name} must map trace names to shapes, e.g. {{Q_i: [128, 64]}}", loc)
                out = None
            else:
                from mha.tracing import TRACE_NAMES
                out = {}
                for k, s in v.items():
                    base = k[len("tensor."):] if isinstance(k, str) and k.startswith("tensor.") else k
                    if base not in TRACE_NAMES:
                        self.error(f"unknown trace name {k!r}; expected one of {', '.join(TRACE_NAMES)} "
                                   f"(or tensor.NAME for the whole stacked tensor)", v.key_loc(k))
                    else:
                        out[k] = tuple(s)
                out = frozen_map(out) if len(out) == len(v) else None
        elif ftype == "quantity":
            from .measure import QuantityError, check_quantity
            try:
                check_quantity(v)
                out = v
            except QuantityError as e:
                self.error(str(e), loc)
                out = None
        elif ftype == "number":
            out = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
            if out is None:
                self.error(f"{name} must be a number, got {v!r}", loc)
        elif ftype == "int":
            out = v if isinstance(v, int) and not isinstance(v, bool) else None
            if out is None:
                self.error(f"{name} must be an integer, got {v!r}", loc)
        elif ftype == "seed":
            out = v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63 else None
            if out is None:
                self.error(f"{name} must be an integer from 0 to 2^63 - 1, got {v!r}", loc)
        elif ftype == "tolerance":
            out = _number(v)
            if out is None or not math.isfinite(out) or out < 0:
                self.error(f"{name} must be a number, 0 or more (like 1e-5 or 0.001), got {v!r}", loc)
                out = None
        elif ftype == "bool":
            out = _BOOLS.get(v) if isinstance(v, (bool, str)) else None
            if out is None:
                self.error(f"{name} must be true or false, got {v!r}", loc)
        elif ftype.startswith("choice:"):
            choices = ftype[len("choice:"):].split("|")
            out = v if v in choices else None
            if out is None:
                self.error(f"{name} must be one of {', '.join(choices)}, got {v!r}", loc)
        elif ftype == "text":
            out = str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) else None
            if out is None:
                self.error(f"{name} must be text, got {v!r}", loc)
        else:  # pragma: no cover - a kind declared a type the loader does not know
            raise AssertionError(f"unknown field type {ftype}")
        if out is None:
            if len(self.errors) == n_errors:
                self.error(f"bad {name}: {v!r}", loc)
            return _BAD
        return out


_BAD = object()
MAX_VALUE_DIGITS = 100
_BOOLS = {True: True, False: False, "true": True, "false": False}
SIZE_ORDER = {"d": 0, "h": 1, "n": 2, "b": 3}
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


class _Partial(dict):
    """Values of which some were refused (already reported): the check is not built."""


def _number(v):
    """A number from YAML: int, float, or text such as "1e-5" (YAML 1.1 reads 1e-5 as text)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and _NUMBER.fullmatch(v.strip()):
        return float(v.strip())
    return None


def _used(values, exprs):
    names = set().union(*({s.name for s in e.free_symbols} for e in exprs))
    return {k: v for k, v in values.items() if k in names}


def _what(v) -> str:
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "text"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return "a number"
    return type(v).__name__


def _a(word: str) -> str:
    """"a check" / "an identity check": the article for a word."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
