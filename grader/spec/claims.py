"""The claims of a spec and their checks: the part of :class:`grader.spec.loader.Loader` that
reads them.

A check is read by its kind (:data:`grader.spec.checks.KINDS`): its fields by the field types
the kind declares (:mod:`grader.spec.fields`), then the values it will run at by the kind's
own ``validate(site, params)``, given a :class:`CheckSite`.
"""
from __future__ import annotations

import re
from typing import Any

from grader.errors import Location

from . import fields as F
from .checks import KINDS
from .model import EXPECTATIONS, Check, Claim, Source, frozen_map

CLAIM_KEYS = {"id", "quote", "source", "checks", "expect", "corrected", "note"}
CLAIM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class Claims:
    """Reading claims, their sources and checks (a mixin of the Loader: ``error``, ``text``,
    ``unknown_keys``, ``documents`` and the values' checks are the Loader's)."""

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
            if kind not in KINDS:
                self.error(f"unknown check kind {kind!r}; expected one of: {', '.join(sorted(KINDS))}",
                           c.loc_of("kind"))
                continue
            params = self.fields(c, KINDS[kind].FIELDS, f"{a_or_an(kind)} check")
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
            value = F.read(self, ftype, c[name], c.loc_of(name), name)
            if value is F.BAD:
                ok = False
            else:
                params[name] = value
        return params if ok else None

    def valid_values(self: Any, kind: str, params: dict, c: Any) -> bool:
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
    def free(*exprs: Any) -> set:
        """The names of the symbols the expressions use."""
        return set().union(*({s.name for s in e.free_symbols} for e in exprs if e is not None))

    def missing(self, need: Any, given: Any, why: str) -> bool:
        """True when every symbol of ``need`` is ``given``; else an error naming the others."""
        lost = sorted(set(need) - set(given), key=lambda n: (n not in F.SIZE_ORDER, F.SIZE_ORDER.get(n, 0), n))
        if lost:
            self.error(f"{self.what} needs a value for {', '.join(lost)} ({why}); give it in 'at'")
        return not lost

    def meets_constraints(self, values: dict, what: str = "the values", note: str = "") -> bool:
        return self.loader.meets_constraints(values, self.at_loc, what, note)


def what_is(v: Any) -> str:
    if isinstance(v, list):
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
