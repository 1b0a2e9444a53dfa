"""Load a spec (YAML) into a :class:`~grader.claims.model.Subject`, reporting EVERY error at once.

Each error is a :class:`grader.errors.SpecError` at file:line:column saying what was
expected (unknown symbol, bad expression, unknown check kind, duplicate claim id, ...);
a duplicate YAML key (every one in the file), an alias or a file that is not YAML is a positioned
:class:`grader.errors.InputError` from :mod:`grader.files.yamlio`. All of them are raised
together as one :class:`grader.errors.ErrorList`.

Spec text becomes SymPy only through :func:`grader.expr.parse`. This module reads files (and
lists every duplicate key of one at once); :mod:`grader.claims.sections` reads their sections,
:mod:`grader.claims.loader` the subject, its claims and their checks, :mod:`grader.claims.fields`
a check's fields by their types, and each check kind (:mod:`grader.claims.checks`) the values
it runs at.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from grader.files import textfiles, yamlio
from grader.errors import ErrorList, GraderError, InputError, Location, SpecError

from .files import spec_files
from .loader import Loader as _Loader
from .model import Subject


def load_subjects(paths: Iterable[str | Path] | None = None) -> list[Subject]:
    """Load every spec file under ``paths``; all errors of all files are raised together."""
    subjects: list[Subject] = []
    errors: list[GraderError] = []
    for f in spec_files(paths):
        try:
            subjects.append(load_file(f))
        except ErrorList as e:
            errors.extend(e.errors)
        except GraderError as e:
            errors.append(e)
    seen: dict[tuple[str, str], Location | None] = {}
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


def load_subject(path: str | Path | None = None) -> Subject:
    """One subject: ``path`` a spec file or folder (None: the bundled spec). Several files of one
    subject (same ``subject.id``) are merged: the first holds the symbols, the others add claims."""
    subjects = load_subjects([path] if path else None)
    first = subjects[0]
    claims = list(first.claims)
    for s in subjects[1:]:
        if s.id == first.id:
            claims.extend(s.claims)
    return _replace(first, claims=tuple(claims))


def load_file(path: str | Path) -> Subject:
    try:
        data = yamlio.load_file(path)
    except InputError as e:
        return _load_despite_duplicates(e, lambda: textfiles.read_text(path), str(path))
    try:
        lines = textfiles.read_text(path).splitlines()
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


def _load_despite_duplicates(error: InputError, read: Callable[[], str], name: str) -> Subject:
    """grader.files.yamlio refuses a file at its first duplicate key. List every duplicate key instead,
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


def _position(e: GraderError) -> tuple[str, int, int]:
    loc = e.location or Location()
    return (loc.file or "", loc.line or 0, loc.column or 0)


def _duplicate_keys(text: str, name: str) -> tuple[list[GraderError], str]:
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
    errors: list[GraderError] = []
    spans: list[tuple[int, int, bool]] = []
    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
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


def _replace(obj: Subject, **changes: Any) -> Subject:
    from dataclasses import replace
    return replace(obj, **changes)
