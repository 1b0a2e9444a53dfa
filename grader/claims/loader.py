"""One spec file's loading: :class:`Loader` reads the YAML into a :class:`~grader.claims.model.Subject`,
every problem into ``errors`` (file:line:column), and loading goes on.

The sections (symbols, constraints, formulas, models, values) are read by its base,
:class:`grader.claims.sections.Sections`; the claims and their checks here. A check is read by
its kind (:data:`grader.claims.checks.KINDS`): its fields by the field types the kind declares
(:mod:`grader.claims.fields`), then the values it will run at by the kind's own
``validate(site, params)``, given a :class:`CheckSite`.
"""
from __future__ import annotations

import re
from typing import Any

from grader.files import yamlio
from grader.errors import ErrorList, Location, SpecError

from . import fields as F
from .checks import KINDS
from .model import EXPECTATIONS, Check, Claim, Document, Source, Subject, frozen_map
from .sections import Sections

TOP_KEYS = {"subject", "symbols", "aliases", "definitions", "constraints", "formulas", "models", "hardware",
            "claims"}
CLAIM_KEYS = {"id", "quote", "source", "checks", "expect", "corrected", "note"}
# subject.units: lenient (the default) compares a figure with a unit by value where the expression's
# dimension is not known, and says so; strict makes that an error where the spec is loaded
UNITS_MODES = ("lenient", "strict")
CLAIM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class Loader(Sections):
    """One file's loading; every problem goes to ``self.errors`` and loading goes on."""

    source_texts: dict[str, str | None]

    def __init__(self, name: str, lines: Any = ()) -> None:
        super().__init__(name, lines)
        self.source_texts = {}       # document key -> its normalised text (None: no file found)
        self.quotes_unchecked: dict[str, int] = {}   # document key -> its quotes that were not checked
        self.hardware: dict[str, Any] = {}           # the hardware cards (grader.claims.hardware)
        self.strict_units = False                    # subject.units: strict

    def subject(self, data: Any) -> Subject:
        if data is None:
            raise ErrorList(self.errors + [SpecError(
                "the file is empty; a spec is a mapping with 'subject', 'symbols', 'claims', ...",
                Location(self.name, 1, 1))])
        if not F.is_mapping(data):
            raise ErrorList(self.errors + [SpecError(
                f"a spec must be a mapping with 'subject', 'symbols', 'claims', ..., got {what_is(data)}",
                yamlio.loc_of(data, Location(self.name, 1, 1)))])
        self.unknown_keys(data, TOP_KEYS, "a spec")
        head = self.mapping(data, "subject") or yamlio.YDict()
        if not hasattr(head, "loc"):
            head.loc, head.key_locs, head.value_locs = Location(self.name), {}, {}
        sid = self.text(head, "id")
        title = self.text(head, "title")
        self.unknown_keys(head, {"id", "title", "sources", "units"}, "'subject'")
        units = head.get("units", "lenient")
        if units not in UNITS_MODES:
            self.error(f"units must be one of {', '.join(UNITS_MODES)}, got {units!r}", head.loc_of("units"))
        self.strict_units = units == "strict"
        sources: Any = self.mapping(head, "sources") or {}
        for key, doc in sources.items():
            if not F.is_mapping(doc):
                self.error("a source must be a mapping with 'title' and 'path'", sources.loc_of(key))
                continue
            self.unknown_keys(doc, {"title", "path"}, f"source {key!r}")
            self.documents[key] = Document(str(key), self.text(doc, "title"), self.text(doc, "path", required=False))
        self.build_table(data)
        constraints = self.constraints(data)
        self.load_formulas(data)
        self.load_models(data)
        from .hardware import load_hardware
        self.hardware = load_hardware(self, data)
        claims = self.claims(data, sid)
        if self.errors:
            raise ErrorList(self.errors)
        return Subject(sid, title, frozen_map(self.documents), self.answer_table or self.table,
                       frozen_map(self.formulas), tuple(constraints), frozen_map(self.models), tuple(claims),
                       self.name, frozen_map(self.aliases), spec_table=self.table, unchecked=self.unchecked())

    def unchecked(self) -> tuple[str, ...]:
        """One sentence per source whose quotes were not checked against its text."""
        out = []
        for key, n in self.quotes_unchecked.items():
            doc = self.documents[key]
            quotes = f"{n} quote is" if n == 1 else f"{n} quotes are"
            if not doc.path:
                out.append(f"source {key!r} has no 'path:', so its {quotes} not checked against its text")
            else:
                out.append(f"source {key!r}: {doc.path} is not found beside {self.name} or in a folder above it; "
                           f"its {quotes} not checked against its text")
        return tuple(out)

    def claims(self, data: Any, sid: str) -> list[Claim]:
        items = data.get("claims")
        if items is None:
            self.error("missing 'claims' (a list)", data.loc)
            return []
        if not F.is_sequence(items):
            self.error("'claims' must be a list", data.loc_of("claims"))
            return []
        out: list[Claim] = []
        seen: dict[str, Location] = {}
        for i, raw in enumerate(items):
            loc = items.loc_of(i)
            if not F.is_mapping(raw):
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
            self.check_quote(quote, source, raw.loc_of("quote") if "quote" in raw else raw.loc)
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

    def check_quote(self, quote: str, source: Source, loc: Location | None) -> None:
        """A quote of a source with a path must be in that text (grader.claims.quotes); a source whose
        file is not found (or that has no path) cannot be checked: it is no error, but is said in
        ``Subject.unchecked``, which ``grader check-spec`` prints."""
        from .quotes import appears, find_source, missing_fragments, read_source
        doc = self.documents.get(source.document)
        if not quote or doc is None:
            return
        if not doc.path:
            self.quotes_unchecked[source.document] = self.quotes_unchecked.get(source.document, 0) + 1
            return
        if source.document not in self.source_texts:
            found = find_source(doc.path, self.name)
            text = None
            if found is not None:
                try:
                    text = read_source(found)
                except (OSError, UnicodeDecodeError, ValueError) as e:
                    self.error(f"source {source.document!r}: cannot read {doc.path}: {e}", loc)
            self.source_texts[source.document] = text
        text = self.source_texts[source.document]
        if text is None:
            self.quotes_unchecked[source.document] = self.quotes_unchecked.get(source.document, 0) + 1
        if text is not None and not appears(quote, text):
            missing = missing_fragments(quote, text)
            self.error(f"the quote is not in source {source.document!r} ({doc.path}): "
                       + (f"not found: {'; '.join(repr(m[:80]) for m in missing)}" if missing else
                          "each fragment is there, but not in this order")
                       + " (a quote is the text's own words; whitespace is normalised, ' … ' marks a gap)", loc)

    def source(self, raw: Any) -> Source:
        src = raw.get("source")
        if not F.is_mapping(src):
            self.error("'source' must be a mapping {document: ..., section: ...}", raw.loc_of("source") if src else raw.loc)
            return Source("")
        self.unknown_keys(src, {"document", "section"}, "a source")
        doc = self.text(src, "document")
        if doc and self.documents and doc not in self.documents:
            self.error(f"unknown document {doc!r}; the subject's sources are {', '.join(self.documents)}",
                       src.loc_of("document"))
        return Source(doc, self.text(src, "section", required=False))

    def checks(self, raw: Any) -> list[Check]:
        items = raw.get("checks")
        if not F.is_sequence(items) or not items:
            self.error("'checks' must be a non-empty list", raw.loc_of("checks") if items is not None else raw.loc)
            return []
        out: list[Check] = []
        for i, c in enumerate(items):
            loc = items.loc_of(i)
            if not F.is_mapping(c) or "kind" not in c:
                self.error("a check must be a mapping with 'kind'", loc)
                continue
            kind = c["kind"]
            if not isinstance(kind, str) or kind not in KINDS:
                self.error(f"unknown check kind {kind!r}; expected one of: {', '.join(sorted(KINDS))}",
                           c.loc_of("kind"))
                continue
            params = self.fields(c, KINDS[kind].FIELDS, f"{a_or_an(kind)} check")
            if params is not None and self.valid_values(kind, params, c):
                from .spec_units import annotate
                if "expect" in c:
                    want = c["expect"]
                    if not isinstance(want, str) or want not in EXPECTATIONS:
                        self.error(f"a check's expect must be one of {', '.join(EXPECTATIONS)}, got {want!r}",
                                   c.loc_of("expect"))
                        continue
                    params["_expect"] = want
                if annotate(self, kind, params, c):
                    out.append(Check(kind, frozen_map(params), loc))
        return out

    def fields(self, c: Any, spec: dict[str, tuple[str, bool]], what: str) -> dict[str, Any] | None:
        """Validate and convert a check's fields by the kind's FIELDS = {name: (type, required)}."""
        self.unknown_keys(c, set(spec) | {"kind", "expect"}, what)
        params, ok = {}, True
        for name, (ftype, required) in spec.items():
            if name not in c:
                if required:
                    self.error(f"{what} needs {name!r} ({ftype})", c.loc)
                    ok = False
                continue
            value = F.read(self, ftype, c[name], c.loc_of(name), name)
            if value is F.BAD:
                ok = False
            else:
                params[name] = value
        return params if ok else None

    def valid_values(self, kind: str, params: dict[str, Any], c: Any) -> bool:
        """The values a check is run at, by its kind's ``validate`` (errors at the check's ``at``);
        values refused already (reported) build no check."""
        if isinstance(params.get("at"), F.Partial) or isinstance(params.get("vary"), F.Partial):
            return False
        validate = KINDS[kind].validate
        return True if validate is None else bool(validate(CheckSite(self, kind, c), params))


class CheckSite:
    """What a kind's ``validate(site, params)`` works with: the loader (its table, constraints
    and error list), the check's mapping and where its values stand."""

    def __init__(self, loader: Any, kind: str, mapping: Any) -> None:
        self.loader = loader
        self.kind = kind
        self.mapping = mapping
        self.at_loc = mapping.loc_of("at") if "at" in mapping else mapping.loc
        self.what = f"{a_or_an(kind)} check"

    def error(self, message: str, loc: Location | None = None) -> None:
        self.loader.error(message, loc or self.at_loc)

    @staticmethod
    def free(*exprs: Any) -> set[str]:
        """The names of the symbols the expressions use."""
        return set().union(*({s.name for s in e.free_symbols} for e in exprs if e is not None))

    def missing(self, need: Any, given: Any, why: str) -> bool:
        """True when every symbol of ``need`` is ``given``; else an error naming the others."""
        lost = sorted(set(need) - set(given), key=lambda n: (n not in F.SIZE_ORDER, F.SIZE_ORDER.get(n, 0), n))
        if lost:
            self.error(f"{self.what} needs a value for {', '.join(lost)} ({why}); give it in 'at'")
        return not lost

    def meets_constraints(self, values: dict[str, Any], what: str = "the values", note: str = "") -> bool:
        return bool(self.loader.meets_constraints(values, self.at_loc, what, note))


def what_is(v: Any) -> str:
    if F.is_sequence(v):
        return "a list"
    if isinstance(v, str):
        return "text"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return "a number"
    return type(v).__name__


def a_or_an(word: str) -> str:
    """"a check" / "an identity check": the article for a word."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
