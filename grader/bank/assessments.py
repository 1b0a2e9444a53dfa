"""Assessments as data in the bank: ``assessments.yaml`` beside the bank's files.

The file declares the course's time zone and its assessments (homework, quizzes): which
problems each holds (ids or fnmatch-style patterns such as ``17-08/example-1.*``, with an
optional points override), when it opens and is due, how late answers are treated, how many
attempts count, when scores are shown, and an optional time limit::

    course: {timezone: Europe/Paris}
    assessments:
      - id: hw1
        title: Homework 1
        problems: ["17-08/example-*", {id: 17-08/practice.d_k, points: 2}]
        opens: 2026-11-30 09:00          # no offset: read in the course's time zone
        due: 2026-12-07 23:59
        late: {until: 2026-12-10 23:59, penalty_per_day: 10%}
        attempts: 3
        show: immediately                # or after_due, on_release
        time_limit: 30 min               # a timed quiz: the clock starts at first open

Times are stored as UTC-aware datetimes. Every error is reported at once, at file:line:column
(:class:`grader.errors.ErrorList`). The rules applied to a learner at a time are in
:mod:`grader.bank.schedule`. Pure: nothing here reads the clock.
"""
from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from grader.errors import ErrorList, GraderError, InputError, Location, SpecError
from grader.files import yamlio
from grader.files.yamlio import YDict, YList

from .load import unknown_keys
from .model import Bank
from .times import parse_duration, parse_fraction, to_utc, zone

FILE_NAMES = ("assessments.yaml", "assessments.yml")
FILE_KEYS = {"course", "assessments"}
COURSE_KEYS = {"timezone"}
ASSESSMENT_KEYS = {"id", "title", "description", "problems", "opens", "due", "late", "attempts", "show",
                   "time_limit"}
ITEM_KEYS = {"id", "points"}
LATE_KEYS = {"until", "penalty_per_day", "multiplier"}
SHOW = ("immediately", "after_due", "on_release")
ASSESSMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")

LateKind = Literal["none", "per_day", "multiplier"]
Show = Literal["immediately", "after_due", "on_release"]


@dataclass(frozen=True)
class LatePolicy:
    """How a late answer is scored: ``per_day`` (``value``: the fraction of the score lost per
    started day after the due time, capped at 1), ``multiplier`` (``value``: the factor the
    score is multiplied by), or ``none`` (late answers, if accepted, lose nothing)."""

    kind: LateKind = "none"
    value: float = 0.0


@dataclass(frozen=True)
class AssessmentItem:
    """One problem of an assessment; ``points`` overrides the problem's own points (None: its own)."""

    problem_id: str
    points: float | None = None


@dataclass(frozen=True)
class Assessment:
    """One homework or quiz. ``late_until`` is None when no late answer is accepted (then
    ``late`` is ``LatePolicy()``); ``attempts`` None: each problem's own limit (or none);
    ``time_limit`` None: not timed. Times are UTC-aware; ``timezone`` is the course's, for display."""

    id: str
    title: str
    description: str
    items: tuple[AssessmentItem, ...]
    opens: datetime
    due: datetime
    late_until: datetime | None = None
    late: LatePolicy = LatePolicy()
    attempts: int | None = None
    show: Show = "immediately"
    time_limit: timedelta | None = None
    location: Location | None = None
    timezone: str = "UTC"

    @property
    def problem_ids(self) -> tuple[str, ...]:
        return tuple(i.problem_id for i in self.items)

    def item(self, problem_id: str) -> AssessmentItem | None:
        return next((i for i in self.items if i.problem_id == problem_id), None)

    def attempts_for(self, problem_attempts: int | None) -> int | None:
        """The attempts that count for one problem: the smaller of the assessment's and the
        problem's own ``attempts:`` (None where neither sets one)."""
        given = [n for n in (self.attempts, problem_attempts) if n is not None]
        return min(given) if given else None


@dataclass(frozen=True)
class Course:
    """The course's time zone (an IANA name, e.g. ``Europe/Paris``) and its assessments, in file order."""

    timezone: str
    assessments: tuple[Assessment, ...]
    path: str | None = None

    def get(self, assessment_id: str) -> Assessment | None:
        return next((a for a in self.assessments if a.id == assessment_id), None)

    def of_problem(self, problem_id: str) -> Assessment | None:
        """The assessment holding this problem (a problem is in at most one), or None."""
        return next((a for a in self.assessments if problem_id in a.problem_ids), None)


def course_file(bank: Bank) -> Path | None:
    """The bank's ``assessments.yaml`` (or ``.yml``): in the folder the bank was loaded from.
    A bank loaded from one file has none."""
    if bank.root is None:
        return None
    for name in FILE_NAMES:
        p = Path(bank.root) / name
        if p.is_file():
            return p
    return None


def load_course(bank: Bank, path: str | Path | None = None) -> Course | None:
    """The course of ``bank``: its ``assessments.yaml`` (or the file ``path``), checked against
    the bank's problems; None when there is none (every problem is then available as without
    assessments). Raises :class:`ErrorList` with every error at file:line:column."""
    p = Path(path) if path is not None else course_file(bank)
    if p is None:
        return None
    if not p.is_file():
        raise InputError("no such file", Location(str(p)))
    doc = yamlio.load_file(p)
    return course_of(doc, bank, str(p))


def course_of(doc: Any, bank: Bank, file: str = "<input>") -> Course:
    """A parsed assessments document checked against ``bank``."""
    errors: list[GraderError] = []
    if not isinstance(doc, YDict):
        raise ErrorList([SpecError("expected a mapping with 'course' and 'assessments'", Location(file, 1, 1))])
    errors += _unknown(doc, FILE_KEYS, "an assessments file")
    tz = "UTC"
    course = doc.get("course", {})
    if not isinstance(course, dict):
        errors.append(SpecError("'course' must be a mapping, e.g. {timezone: Europe/Paris}", doc.loc_of("course")))
    else:
        errors += _unknown(course, COURSE_KEYS, "'course'")
        raw_tz = course.get("timezone", "UTC")
        if zone(raw_tz) is None:
            errors.append(SpecError(f"unknown time zone {raw_tz!r} (an IANA name such as Europe/Paris, "
                                    "America/New_York or UTC)", _loc(course, "timezone", doc.loc)))
        else:
            tz = raw_tz
    items = doc.get("assessments")
    if not isinstance(items, YList):
        errors.append(SpecError("'assessments' must be a list of assessments" if "assessments" in doc
                                else "missing 'assessments' (a list of assessments)", doc.loc_of("assessments")))
        items = YList()
        items.loc, items.item_locs = doc.loc, []
    out: list[Assessment] = []
    ids: dict[str, Location] = {}
    owner: dict[str, tuple[str, Location]] = {}     # problem id -> (assessment id, where it was put there)
    for i, raw in enumerate(items):
        aid = raw.get("id") if isinstance(raw, YDict) else None
        if isinstance(aid, str) and aid in ids:
            errors.append(SpecError(f"duplicate assessment id {aid!r} (first at {ids[aid]})", raw.loc_of("id")))
        elif isinstance(aid, str):
            ids[aid] = raw.loc_of("id")
        reader = _Reader(raw, items.loc_of(i), tz, bank, errors)
        a = reader.assessment()
        for pid, where in reader.where.items():         # checked even when the assessment has other errors
            if pid in owner:
                first, at = owner[pid]
                errors.append(SpecError(f"problem {pid!r} is already in assessment {first!r} (at {at}); "
                                        "a problem is in at most one assessment", where))
            else:
                owner[pid] = (aid if isinstance(aid, str) else f"#{i + 1}", where)
        if a is not None:
            out.append(a)
    if errors:
        raise ErrorList(errors)
    return Course(tz, tuple(out), file)


def _loc(mapping: Any, key: str, default: Location | None) -> Location:
    if isinstance(mapping, YDict):
        return mapping.loc_of(key)
    return default or Location()


def _unknown(mapping: Any, known: set[str], what: str) -> list[SpecError]:
    return unknown_keys(mapping, known, what)


class _Reader:
    """One assessment's entry read, its errors appended to ``errors``."""

    def __init__(self, raw: Any, loc: Location, tz: str, bank: Bank, errors: list[GraderError]) -> None:
        self.raw, self.loc, self.tz, self.bank, self.errors = raw, loc, tz, bank, errors
        self.where: dict[str, Location] = {}       # problem id -> the entry that put it here

    def err(self, msg: str, key: str | None = None, mapping: Any = None) -> None:
        m = self.raw if mapping is None else mapping
        self.errors.append(SpecError(msg, m.loc_of(key) if key is not None and isinstance(m, YDict) else self.loc))

    def time(self, mapping: Any, key: str, what: str) -> datetime | None:
        if key not in mapping:
            return None
        got = to_utc(mapping[key], self.tz)
        if isinstance(got, str):
            self.err(f"'{what}': {got}", key, mapping)
            return None
        return got

    def assessment(self) -> Assessment | None:
        raw = self.raw
        if not isinstance(raw, YDict):
            self.err("an assessment must be a mapping (id, title, problems, opens, due, ...)")
            return None
        before = len(self.errors)
        self.errors += _unknown(raw, ASSESSMENT_KEYS, "an assessment")
        aid = raw.get("id")
        if not isinstance(aid, str) or not ASSESSMENT_ID.match(aid):
            self.err("'id' must be a short name of letters, digits, '.', '_' or '-' (e.g. hw1)", "id")
        title = raw.get("title", aid if isinstance(aid, str) else "")
        if "title" in raw and (not isinstance(title, str) or not title.strip()):
            self.err("'title' must be a text", "title")
        description = raw.get("description", "")
        if not isinstance(description, str):
            self.err("'description' must be a text", "description")
        items = self.items()
        for key in ("opens", "due"):
            if key not in raw:
                self.err(f"missing '{key}' (a time, e.g. 2026-12-07 23:59)")
        opens, due = self.time(raw, "opens", "opens"), self.time(raw, "due", "due")
        if opens is not None and due is not None and due < opens:
            self.err("'due' is before 'opens'", "due")
        late_until, late = self.late(due)
        attempts = raw.get("attempts")
        if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1):
            self.err("'attempts' must be a positive integer (the submissions of each problem that count)", "attempts")
        show = raw.get("show", "immediately")
        if show not in SHOW:
            self.err(f"'show' must be one of {', '.join(SHOW)}, got {show!r}", "show")
        limit = None
        if "time_limit" in raw:
            limit = parse_duration(raw["time_limit"])
            if limit is None:
                self.err(f"'time_limit' must be a positive duration with its unit (e.g. 30 min, 1 h 30 min), "
                         f"got {raw['time_limit']!r}", "time_limit")
        if len(self.errors) > before or opens is None or due is None:
            return None
        return Assessment(id=str(aid), title=str(title).strip(), description=str(description).strip(), items=items, opens=opens,
                          due=due, late_until=late_until, late=late, attempts=attempts, show=show, time_limit=limit,
                          location=self.loc, timezone=self.tz)

    def late(self, due: datetime | None) -> tuple[datetime | None, LatePolicy]:
        raw = self.raw.get("late")
        if raw is None:
            return None, LatePolicy()
        if not isinstance(raw, YDict):
            self.err("'late' must be {until: TIME, penalty_per_day: 10%} or {until: TIME, multiplier: 0.5}", "late")
            return None, LatePolicy()
        self.errors += _unknown(raw, LATE_KEYS, "'late'")
        if "until" not in raw:
            self.err("'late' needs 'until': the time after which no late answer is accepted", "late")
        until = self.time(raw, "until", "late.until")
        if until is not None and due is not None and until < due:
            self.err("'late.until' is before 'due'", "until", raw)
        policy = LatePolicy()
        if "penalty_per_day" in raw and "multiplier" in raw:
            self.err("'late' takes one of 'penalty_per_day' or 'multiplier', not both", "multiplier", raw)
        elif "penalty_per_day" in raw:
            value = parse_fraction(raw["penalty_per_day"])
            if value is None:
                self.err(f"'penalty_per_day' must be a percentage from 0% to 100% (or a fraction from 0 to 1), "
                         f"got {raw['penalty_per_day']!r}", "penalty_per_day", raw)
            else:
                policy = LatePolicy("per_day", value)
        elif "multiplier" in raw:
            value = parse_fraction(raw["multiplier"])
            if value is None:
                self.err(f"'multiplier' must be a number from 0 to 1 (the late score is multiplied by it), "
                         f"got {raw['multiplier']!r}", "multiplier", raw)
            else:
                policy = LatePolicy("multiplier", value)
        return until, policy

    def items(self) -> tuple[AssessmentItem, ...]:
        raw = self.raw.get("problems")
        if not isinstance(raw, YList) or not raw:
            self.err("'problems' must be a list of problem ids or patterns (e.g. 17-08/example-1.*), "
                     "or {id, points}", "problems")
            return ()
        found: dict[str, AssessmentItem] = {}
        explicit: set[str] = set()
        ids = [p.id for p in self.bank.problems]
        for i, entry in enumerate(raw):
            where = raw.loc_of(i)
            points: float | None = None
            if isinstance(entry, YDict):
                self.errors += _unknown(entry, ITEM_KEYS, "a problem entry")
                pattern, p = entry.get("id"), entry.get("points")
                if p is not None:
                    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
                        self.err(f"'points' must be a finite number >= 0, got {p!r}", "points", entry)
                    else:
                        points = float(p)
            else:
                pattern = entry
            if not isinstance(pattern, str) or not pattern.strip():
                self.errors.append(SpecError("a problem entry is a problem id, a pattern such as 17-08/example-1.*, "
                                             "or {id, points}", where))
                continue
            is_pattern = any(c in pattern for c in "*?[")
            matched = fnmatch.filter(ids, pattern) if is_pattern else [pattern] if pattern in self.bank else []
            if not matched:
                what = "no problem of the bank matches the pattern" if is_pattern else "no problem of the bank has the id"
                self.errors.append(SpecError(f"{what} {pattern!r}", where))
                continue
            for pid in matched:
                if not is_pattern:
                    if pid in explicit:
                        self.errors.append(SpecError(f"problem {pid!r} is listed twice in this assessment", where))
                        continue
                    explicit.add(pid)
                    found[pid] = AssessmentItem(pid, points)        # an explicit entry wins over a pattern's
                    self.where[pid] = where
                elif pid not in found:
                    found[pid] = AssessmentItem(pid, points)
                    self.where[pid] = where
        return tuple(found.values())
