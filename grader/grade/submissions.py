"""Read learners' answer files: YAML or JSON, one submission or many.

::

    learner: alice
    answers:
      17-08/practice-1: 64
      17-08/params-formula: "4d^2 + 4d"

or ``submissions: [{learner: alice, answers: {...}}, {learner: bob, ...}]``. A folder
gives every ``*.yaml``, ``*.yml`` and ``*.json`` file under it (sorted).

Files are read with :mod:`grader.yamlio` (no duplicate keys, no aliases, so no YAML
bombs). A file that cannot be read, or a submission that is malformed, becomes a
positioned :class:`grader.errors.InputError` in the returned ``errors``; everything else
is still returned, to be graded.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import yamlio
from grader.bank.model import plain
from grader.errors import InputError, Location

SUFFIXES = (".yaml", ".yml", ".json")
SUBMISSION_KEYS = {"learner", "answers"}


@dataclass(frozen=True)
class Answer:
    """One answer as given: the problem id, the raw value (text, number or list), where it stands."""

    problem_id: Any
    raw: Any
    location: Location


@dataclass(frozen=True)
class Submission:
    learner: str
    answers: tuple
    location: Location
    file: str


@dataclass(frozen=True)
class Loaded:
    """What was read: the submissions, and the errors (``unreadable``: a file could not be read)."""

    submissions: tuple
    errors: tuple
    unreadable: bool


def answer_files(paths) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(q for q in sorted(p.rglob("*"))
                         if q.is_file() and q.suffix.lower() in SUFFIXES
                         and not any(part.startswith(".") for part in q.relative_to(p).parts))
        else:
            files.append(p)
    return files


def load_submissions(paths) -> Loaded:
    """Every submission in ``paths`` (files or folders)."""
    subs, errors, unreadable = [], [], False
    for f in answer_files(paths):
        try:
            doc = yamlio.load_file(f)
        except InputError as e:
            errors.append(InputError(f"cannot read answers: {e.message}", e.location))
            unreadable = True
            continue
        _collect(doc, str(f), subs, errors)
    return Loaded(tuple(subs), tuple(errors), unreadable)


def _collect(doc, file: str, subs: list, errors: list):
    here = Location(file, 1, 1)
    if isinstance(doc, dict) and "submissions" in doc:
        extra = [k for k in doc if k != "submissions"]
        for k in extra:
            errors.append(InputError(f"unknown key {k!r} beside 'submissions' (ignored)", doc.key_loc(k)))
        items = doc["submissions"]
        if not isinstance(items, list):
            errors.append(InputError("'submissions' must be a list of {learner, answers}", doc.loc_of("submissions")))
            return
        for i, item in enumerate(items):
            _one(item, items.loc_of(i), file, subs, errors)
        return
    _one(doc, getattr(doc, "loc", here), file, subs, errors)


def _one(item, loc: Location, file: str, subs: list, errors: list):
    if not isinstance(item, dict):
        errors.append(InputError("malformed submission: expected a mapping with 'learner' and 'answers'", loc))
        return
    for k in item:
        if k not in SUBMISSION_KEYS:
            errors.append(InputError(f"unknown key {k!r} in a submission (ignored)", item.key_loc(k)))
    problems = []
    learner = item.get("learner")
    if isinstance(learner, bool) or not isinstance(learner, (str, int)) or not str(learner).strip():
        problems.append("'learner' must be a name or an id")
    answers = item.get("answers")
    if not isinstance(answers, dict):
        problems.append("'answers' must map problem ids to answers")
    if problems:
        errors.append(InputError("malformed submission: " + "; ".join(problems), loc))
        return
    given = tuple(Answer(k if isinstance(k, str) else plain(k), plain(v), answers.key_loc(k))
                  for k, v in answers.items())
    subs.append(Submission(str(learner).strip(), given, loc, file))
