"""Read learners' answer files: YAML or JSON, one submission or many.

::

    learner: alice
    answers:
      17-08/practice-1: 64
      17-08/params-formula: "4d^2 + 4d"

or ``submissions: [{learner: alice, answers: {...}}, {learner: bob, ...}]``. A folder
gives every ``*.yaml``, ``*.yml`` and ``*.json`` file under it (sorted).

Files are read with :func:`grader.files.yamlio.load_file` in its answers mode: scalars as the
learner wrote them (``0100`` stays text, not octal 64), no aliases (so no YAML bombs: such a
file is refused whole). A path that does not exist, or a file that cannot be read, becomes a
positioned :class:`grader.errors.InputError` in the returned ``errors`` (``unreadable``). A
duplicate key or a tag that is not plain data spoils only what it stands in: an answer given
twice is refused (neither copy counts), a submission with ``learner`` or ``answers`` twice is
malformed, and every other submission and answer of the file is still returned, to be graded.
An answer whose key names no problem (null, empty, a number, a list: :func:`_bad_key`) is an
error at its key's file:line:column, not graded; ``Loaded.refused`` says there was one.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from grader.files import yamlio
from grader.bank.model import plain
from grader.answers.guard import shorten
from grader.errors import InputError, Location
from grader.files.yamlio import BadKey, Refused, YDict, YList

from .pool import gc_paused   # the bulk phases' collector tuning lives beside the pool

SUFFIXES = (".yaml", ".yml", ".json")
SUBMISSION_KEYS = {"learner", "answers"}


@dataclass(frozen=True)
class Answer:
    """One answer as given: the problem id, the raw value (text, number or list), where it
    stands; ``refused`` says why it is not read at all (given twice, a tag that is not data)."""

    problem_id: str
    raw: Any                # plain data as the file gives it (text, a number, None, a list, a mapping)
    location: Location
    refused: str | None = None


@dataclass(frozen=True)
class Submission:
    learner: str
    answers: tuple[Answer, ...]
    location: Location
    file: str


@dataclass(frozen=True)
class Loaded:
    """What was read: the submissions, and the errors (``unreadable``: a path or file could not be
    read; ``refused``: an answer was refused for its key, which names no problem: null, empty, a
    number, a list...; either makes ``grader grade`` exit 2)."""

    submissions: tuple[Submission, ...]
    errors: tuple[InputError, ...]
    unreadable: bool
    refused: bool = False


def natural_key(path: Path) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    """Files in natural order: s0, s1, s2, s10 (numbers compared as numbers), folder by folder."""
    return tuple(tuple((0, int(t), t) if t.isdigit() else (1, 0, t.lower()) for t in re.split(r"(\d+)", part) if t)
                 for part in path.parts)


def _shown(path: str | os.PathLike[str]) -> Path:
    """A path as reports show it: relative to the working folder when it lies inside it."""
    p = Path(path)
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd())
        except ValueError:
            return p
    return p


def answer_files(paths: Iterable[str | os.PathLike[str]], errors: list[InputError] | None = None) -> list[Path]:
    """The answer files of ``paths`` (files, or folders searched for them); a path that does not
    exist is an error in ``errors`` (or, without that list, returned as it is, for the reader)."""
    files: list[Path] = []
    for p in map(_shown, paths):
        if p.is_dir():
            # every entry but a folder: one that is not a regular file (a FIFO, a device, a link
            # to one) is refused by the reader, with its path, and the others are graded
            files.extend(q for q in sorted(p.rglob("*"), key=natural_key)
                         if q.suffix.lower() in SUFFIXES and not q.is_dir()
                         and not any(part.startswith(".") for part in q.relative_to(p).parts))
        elif errors is not None and not p.exists() and not p.is_symlink():
            errors.append(InputError("no such file or folder", Location(str(p))))
        else:
            files.append(p)
    return files


def load_submissions(paths: Iterable[str | os.PathLike[str]]) -> Loaded:
    """Every submission in ``paths`` (files or folders)."""
    subs: list[Submission] = []
    errors: list[InputError] = []
    refused: list[bool] = []
    files = answer_files(paths, errors)
    unreadable = bool(errors)
    with gc_paused():
        for f in files:
            try:
                doc = yamlio.load_file(f, answers=True)
            except InputError as e:
                errors.append(InputError(f"cannot read answers: {e.message}; the whole file is refused, "
                                         "none of its answers was graded", e.location))
                unreadable = True
                continue
            refused.append(_collect(doc, str(f), subs, errors))
    return Loaded(tuple(subs), tuple(errors), unreadable, any(refused))


# In answers mode yamlio gives every mapping as a YDict and every sequence as a YList: the casts
# below (no check, no conversion) say so where an isinstance test of dict or list has passed.
def _collect(doc: Any, file: str, subs: list[Submission], errors: list[InputError]) -> bool:
    """The file's submissions into ``subs``, what is wrong into ``errors``; whether an answer
    was refused for its key."""
    here = Location(file, 1, 1)
    if isinstance(doc, dict) and "submissions" in doc:
        doc = cast(YDict, doc)
        for k in doc:
            if k != "submissions":
                errors.append(InputError(f"unknown key {k!r} beside 'submissions' (ignored)", doc.key_loc(k)))
        items = doc["submissions"]
        if isinstance(items, Refused):
            errors.append(InputError(f"no submission of this file was graded: {items.message}", items.location))
            return False
        if not isinstance(items, list):
            errors.append(InputError("'submissions' must be a list of {learner, answers}", doc.loc_of("submissions")))
            return False
        items = cast(YList, items)
        return any([_one(item, items.loc_of(i), file, subs, errors) for i, item in enumerate(items)])
    return _one(doc, getattr(doc, "loc", here), file, subs, errors)


def _one(item: object, loc: Location, file: str, subs: list[Submission], errors: list[InputError]) -> bool:
    """One submission into ``subs`` (what is wrong into ``errors``); whether an answer was
    refused for its key."""
    if isinstance(item, Refused):
        errors.append(InputError(f"malformed submission: {item.message}", item.location))
        return False
    if not isinstance(item, dict):
        errors.append(InputError("malformed submission: expected a mapping with 'learner' and 'answers'", loc))
        return False
    item = cast(YDict, item)
    for k in item:
        if k not in SUBMISSION_KEYS:
            errors.append(InputError(f"unknown key {k!r} in a submission (ignored)", item.key_loc(k)))
    learner = item.get("learner")
    answers = item.get("answers")
    spoiled = [v for v in (learner, answers) if isinstance(v, Refused)]
    if spoiled:         # given twice, or tagged: which one is meant cannot be told
        errors.append(InputError("malformed submission: " + "; ".join(r.message for r in spoiled),
                                 spoiled[0].location))
        return False
    problems: list[str] = []
    if isinstance(learner, bool) or not isinstance(learner, (str, int)) or not str(learner).strip():
        problems.append("'learner' must be a name or an id")
    if not isinstance(answers, dict):
        problems.append("'answers' must map problem ids to answers")
    if problems:
        errors.append(InputError("malformed submission: " + "; ".join(problems), loc))
        return False
    name = str(learner).strip()
    answers = cast(YDict, answers)          # a mapping: checked above
    good: list[Answer] = []
    refused = False
    for k, v in answers.items():
        if k.__class__ is str and k and not k.isspace():       # a problem id (the bank says which)
            good.append(_answer(answers, k, v))
            continue
        why = _bad_key(k)
        if why is None:
            good.append(_answer(answers, k, v))
            continue
        refused = True
        head = f"learner {name!r}: an answer's key must be a problem id such as 17-08/practice-1, not {why}"
        if isinstance(v, Refused) and v.first is not None:      # the same bad key twice
            errors.append(InputError(f"{head}, given twice (first at line {v.first.line}); neither answer "
                                     "was graded", v.location))
            continue
        given = v.source if isinstance(v, Refused) else v
        shown = repr(given) if isinstance(given, (str, int, float)) else type(given).__name__
        errors.append(InputError(f"{head}; that answer ({shorten(shown, 40)}) was not graded", answers.key_loc(k)))
    subs.append(Submission(name, tuple(good), loc, file))
    return refused


def _bad_key(key: object) -> str | None:
    """Why ``key`` cannot name a problem (None: it can, if the bank has it): null, empty, not text."""
    if key is None:
        return "null"
    if isinstance(key, BadKey):         # a list, a mapping, a tagged value
        return f"{key.what} ({shorten(key.source, 40)})"
    if isinstance(key, bool):
        return f"{str(key).lower()} (true/false)"
    if not isinstance(key, str):
        return f"{key!r} (a number)" if isinstance(key, (int, float)) else f"a {type(key).__name__}"
    if not key.strip():
        return "empty text"
    return None


def _answer(answers: YDict, key: Any, value: Any) -> Answer:
    pid = key if isinstance(key, str) else plain(key)
    if isinstance(value, (str, int, float)) or value is None:
        return Answer(pid, value, answers.key_loc(key))
    refused = _refused(value)
    if refused is None:
        return Answer(pid, _text_keys(plain(value)), answers.key_loc(key))
    if refused.first is not None and refused is value:
        first = refused.first
        at = f"line {first.line}" + (f", column {first.column}" if first.line == refused.location.line else "")
        why = f"answered more than once (first at {at}): neither answer counts"
    else:
        why = refused.message
    return Answer(pid, refused.source, refused.location, why)


def _text_keys(value: Any) -> Any:
    """``value`` with each :class:`BadKey` inside it (a list as a mapping's key) as its text: an
    answer is echoed in every format, and JSON's keys are plain values."""
    if isinstance(value, dict):
        return {(k.source if isinstance(k, BadKey) else k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_keys(v) for v in value]
    return value


def _refused(value: object) -> Refused | None:
    """The first Refused in an answer's value (a list or mapping may hold one)."""
    if isinstance(value, Refused):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for v in items:
        found = _refused(v)
        if found is not None:
            return found
    return None
