"""``draft_text`` and ``check_text``: course texts in, a drafted spec or the text's own
inconsistencies out (what grader.api exposes)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from grader.errors import InputError, Location

from .analyse import Analysed, analyse
from .model import Draft, Model, Statement, TextCheck
from .sources import Source, from_text, read_source
from .spec import render, source_path

MAX_FILES = 100


def _read_all(paths: Sequence[str], fmt: str | None) -> list[Source]:
    if not paths:
        raise InputError("no text given: name at least one file")
    if len(paths) > MAX_FILES:
        raise InputError(f"{len(paths)} files: at most {MAX_FILES} at once")
    return [read_source(str(p), fmt) for p in paths]


def _keys(sources: Sequence[Source]) -> list[str]:
    out: list[str] = []
    for s in sources:
        base = re.sub(r"[^a-z0-9]+", "-", Path(s.path).stem.lower()).strip("-")[:30] or "text"
        if not base[0].isalpha():
            base = "t-" + base
        key, k = base, 2
        while key in out:
            key, k = f"{base}-{k}", k + 1
        out.append(key)
    return out


def draft_sources(sources: Sequence[Source], *, subject: str | None = None, output: str | None = None) -> Draft:
    """A draft of the given texts (already read)."""
    keys = _keys(sources)
    statements: list[Statement] = []
    symbols: set[str] = set()
    models: dict[str, Model] = {}
    problems = []
    unquotable = words = 0
    for key, src in zip(keys, sources):
        a: Analysed = analyse(src)
        words += a.words
        unquotable += a.unquotable
        problems.extend(a.problems)
        symbols |= a.symbols
        for mk, (name, vals) in a.models.items():
            if mk not in models:
                models[mk] = Model(mk, name, tuple(sorted(vals.items())))
        for i, f in enumerate(a.found, 1):
            statements.append(Statement(f"{key}-{i}", f.quote, src.path, f.line, f.span.section,
                                        tuple(f.kinds), tuple(f.checks), key))
    subject = subject or (keys[0] if keys else "draft")
    srcs = [(k, f"DRAFT: {Path(s.path).name}", source_path(s.path, output) if s.utf8 else None)
            for k, s in zip(keys, sources)]
    used = sorted(symbols)
    yaml = render(subject, srcs, used, list(models.values()), statements)
    return Draft(subject, tuple(s.path for s in sources), tuple(statements), tuple(used),
                 tuple(models.values()), yaml, words, tuple(problems), unquotable)


def draft_text(paths: Sequence[str], *, subject: str | None = None, output: str | None = None,
               fmt: str | None = None) -> Draft:
    """Draft a spec of the texts at ``paths`` (written for ``output``'s folder; None: absolute paths)."""
    if subject is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", subject):
        raise InputError(f"bad subject id {subject!r} (letters, digits, '.', '-', '_'; at most 64)",
                         Location("--subject"))
    return draft_sources(_read_all(paths, fmt), subject=subject, output=output)


def check_sources(sources: Sequence[Source]) -> TextCheck:
    problems = []
    statements = computed = 0
    for src in sources:
        a = analyse(src)
        problems.extend(a.problems)
        statements += len(a.found)
        computed += sum(1 for f in a.found if any(c.holds is not None for c in f.checks))
    return TextCheck(tuple(s.path for s in sources), statements, computed, tuple(problems))


def check_text(paths: Sequence[str], *, fmt: str | None = None) -> TextCheck:
    """The texts' own arithmetic, totals, formulas and shapes, with no spec."""
    return check_sources(_read_all(paths, fmt))


def draft_string(text: str, *, name: str = "<text>", fmt: str = "markdown") -> Draft:
    """A draft of a text given as a string (no file: its quotes are not checked by check-spec)."""
    return draft_sources([from_text(text, name, fmt, utf8=False)])
