"""An assessment's rules at one moment for one learner: open, late, closed, and the penalty.

Pure: the clock is a parameter (``now``, UTC-aware). The rules (docs/exercises.md, "Assessments"):

- ``opens`` and ``due`` are inclusive: at exactly ``opens`` the assessment is open, at exactly
  ``due`` an answer is on time. One second after ``due`` it is late.
- Late answers are accepted up to and including ``late_until`` (none without a ``late:``);
  after it the assessment is closed. The closing time (``closes``) is ``late_until``, or ``due``
  when no late answer is accepted.
- ``penalty_per_day``: the fraction lost per *started* day after ``due`` (one second late is
  one day; 2.5 days late is 3 days), capped at 100%. ``multiplier``: the late score is
  multiplied by it (the fraction lost is 1 - multiplier), however late.
- An extension is a new due time for one learner. It moves the learner's late window with it:
  ``late_until`` moves by the same amount (``extension - due``), so the learner keeps the same
  late period after the new due time. An extension before ``due`` changes nothing (it never
  shortens). ``opens`` does not move.
- A timed quiz (``time_limit``) starts when the learner first opens it (``started_at``, kept by
  the caller); the learner's own end is ``started_at + time_limit``, but never after the
  learner's closing time (``closes``: ``late_until`` when late answers are accepted, else
  ``due``). After that end the window is closed for that learner. Started after ``due`` (in the
  late window) it runs the same way, late, with the penalty of the moment of each answer.
- ``show``: :func:`scores_shown` (``after_due`` is the learner's own due time, extension included).
- ``penalty`` is the fraction of the score lost by an answer given ``now``: 0 unless ``late``
  (an answer is refused when ``not_open`` or ``closed``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal
from zoneinfo import ZoneInfo

from .assessments import Assessment

State = Literal["not_open", "open", "late", "closed"]
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Window:
    """Where a learner stands with an assessment at one moment. ``due`` and ``closes`` are the
    learner's own (an extension moved them); ``ends_at``: a started timed quiz's end (else None);
    ``penalty``: the fraction of the score lost by an answer now (0..1); ``message``: the state
    in words, with the absolute time in the course's zone."""

    state: State
    opens: datetime
    due: datetime
    closes: datetime
    ends_at: datetime | None
    penalty: float
    message: str
    extended: bool = False

    @property
    def accepts(self) -> bool:
        """An answer given now is recorded (on time or late)."""
        return self.state in ("open", "late")


def window(a: Assessment, now: datetime, *, extension: datetime | None = None,
           started_at: datetime | None = None) -> Window:
    """The learner's window at ``now`` (module doc); ``extension``: the learner's own due time;
    ``started_at``: when the learner first opened a timed quiz."""
    now = _utc(now)
    shift = max(timedelta(0), _utc(extension) - a.due) if extension is not None else timedelta(0)
    due = a.due + shift
    late_until = a.late_until + shift if a.late_until is not None else None
    closes = late_until if late_until is not None else due
    ends_at = None
    if a.time_limit is not None and started_at is not None:
        ends_at = min(_utc(started_at) + a.time_limit, closes)
    extended = shift > timedelta(0)
    zone = a.timezone

    def at(t: datetime) -> str:
        return when(t, zone)

    ext = " (extended for you)" if extended else ""
    if now < a.opens:
        return Window("not_open", a.opens, due, closes, ends_at, 0.0,
                      f"opens {_words(a.opens - now)}, on {at(a.opens)}", extended)
    if ends_at is not None and now > ends_at:
        why = "your time ran out" if ends_at < closes else "closed"
        return Window("closed", a.opens, due, closes, ends_at, 0.0, f"{why} at {at(ends_at)}", extended)
    if now > closes:
        return Window("closed", a.opens, due, closes, ends_at, 0.0, f"closed since {at(closes)}{ext}", extended)
    timer = f"; your time ends {_words(ends_at - now)}, at {at(ends_at)}" if ends_at is not None else ""
    if now <= due:
        return Window("open", a.opens, due, closes, ends_at, 0.0,
                      f"open; due {_words(due - now)}, on {at(due)}{ext}{timer}", extended)
    penalty = late_penalty(a, now - due)
    lost = f"a {penalty * 100:.4g}% penalty" if penalty else "no penalty"
    return Window("late", a.opens, due, closes, ends_at, penalty,
                  f"late: was due {at(due)}{ext}; accepted until {at(closes)} with {lost}{timer}", extended)


def scores_shown(a: Assessment, w: Window, now: datetime, *, released: bool = False) -> bool:
    """Whether the learner may see scores and feedback now (``show``): ``immediately``;
    ``after_due``: once the learner's own due time ``w.due`` has passed (not at it: answers are
    still on time then); ``on_release``: once staff released them (``released``)."""
    if a.show == "immediately":
        return True
    if a.show == "after_due":
        return _utc(now) > w.due
    return released


def late_penalty(a: Assessment, late_by: timedelta) -> float:
    """The fraction lost by an answer ``late_by`` after the (learner's) due time."""
    if late_by <= timedelta(0):
        return 0.0
    if a.late.kind == "per_day":
        days = math.ceil(late_by / DAY)             # every started day counts
        return round(min(1.0, days * a.late.value), 9)
    if a.late.kind == "multiplier":
        return round(1.0 - a.late.value, 9)
    return 0.0


def apply_late(raw: float, w: Window) -> tuple[float, float]:
    """(final score, penalty points) of a raw score given in window ``w``: :func:`penalised` by
    the window's penalty."""
    return penalised(raw, w.penalty)


def penalised(raw: float, fraction: float) -> tuple[float, float]:
    """(final score, penalty points) of ``raw`` losing ``fraction`` of it: the penalty is
    ``raw * fraction``, rounded to 9 decimals; final = raw - penalty points. The one late
    arithmetic: on submission (:func:`apply_late`), on regrade and on a person's review."""
    lost = round(raw * fraction, 9)
    return round(raw - lost, 9), lost


def when(t: datetime, zone: str) -> str:
    """``2026-12-07 23:59 CET``: the time in the course's zone, to the minute, with its abbreviation."""
    return _utc(t).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M %Z")


def _words(delta: timedelta) -> str:
    """``in 3 days``, ``in 5 hours``, ``in 12 minutes``, ``in 40 seconds``, ``now`` (rounded down)."""
    s = int(delta.total_seconds())
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if s >= size:
            n = s // size
            return f"in {n} {unit}{'' if n == 1 else 's'}"
    return "now"


def _utc(t: datetime) -> datetime:
    if t.tzinfo is None:
        raise ValueError("a time without a time zone: pass UTC-aware datetimes")
    return t.astimezone(timezone.utc)
