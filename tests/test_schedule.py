"""An assessment's rules with a controlled clock (grader.bank.schedule): opening, the due time,
late penalties, closing, extensions and time limits, with their edges. Every expected value is
derived by hand in a comment. Paris is UTC+1 (CET) in December: 23:59 CET is 22:59 UTC."""
from datetime import datetime, timedelta, timezone

import pytest

from grader.api import Assessment, AssessmentItem, LatePolicy, Window, apply_late, window

UTC = timezone.utc
S, MIN, H, DAY = timedelta(seconds=1), timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)

OPENS = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)           # 09:00 CET
DUE = datetime(2026, 12, 7, 22, 59, tzinfo=UTC)            # 23:59 CET
LATE_UNTIL = DUE + 3 * DAY                                  # 2026-12-10 23:59 CET


def hw(late=LatePolicy("per_day", 0.1), late_until=LATE_UNTIL, **kw):
    fields = dict(id="hw1", title="Homework 1", description="", items=(AssessmentItem("x/a"),), opens=OPENS,
                  due=DUE, late_until=late_until, late=late, timezone="Europe/Paris")
    fields.update(kw)
    return Assessment(**fields)


def test_before_and_exactly_at_opening():
    w = window(hw(), OPENS - S)
    assert w.state == "not_open" and not w.accepts and w.penalty == 0
    assert w.message == "opens in 1 second, on 2026-11-30 09:00 CET"
    w = window(hw(), OPENS)                                 # opens is inclusive
    assert w.state == "open" and w.accepts and w.penalty == 0
    assert w.message == "open; due in 7 days, on 2026-12-07 23:59 CET"    # 7 d 14 h 59 min, rounded down
    assert (w.opens, w.due, w.closes, w.ends_at) == (OPENS, DUE, LATE_UNTIL, None)


def test_exactly_at_due_is_on_time_and_one_second_after_is_one_day_late():
    w = window(hw(), DUE)                                   # due is inclusive
    assert w.state == "open" and w.penalty == 0 and apply_late(2.0, w) == (2.0, 0.0)
    w = window(hw(), DUE + S)                               # one started day: 1 × 10% = 10%
    assert w.state == "late" and w.penalty == pytest.approx(0.1)
    assert apply_late(2.0, w) == (1.8, 0.2)                 # 2 × 0.9 = 1.8 kept, 0.2 lost
    assert w.message == "late: was due 2026-12-07 23:59 CET; accepted until 2026-12-10 23:59 CET with a 10% penalty"


def test_penalty_per_started_day():
    # exactly 24 h late: 1 day (10%); one second more: the 2nd day has started (20%)
    assert window(hw(), DUE + DAY).penalty == pytest.approx(0.1)
    assert window(hw(), DUE + DAY + S).penalty == pytest.approx(0.2)
    # 2.5 days late: the 3rd day has started -> 3 × 10% = 30%; a raw 2 keeps 2 × 0.7 = 1.4
    w = window(hw(), DUE + 2.5 * DAY)
    assert w.state == "late" and w.penalty == pytest.approx(0.3)
    assert apply_late(2.0, w) == (1.4, 0.6)
    # capped at 100%: 40%/day, 3 days late = 120% -> 100%, nothing kept
    w = window(hw(LatePolicy("per_day", 0.4)), DUE + 2.5 * DAY)
    assert w.penalty == 1.0 and apply_late(3.0, w) == (0.0, 3.0)


def test_exactly_at_late_until_is_accepted_and_after_it_closed():
    w = window(hw(), LATE_UNTIL)                            # inclusive: 3 days late exactly -> 30%
    assert w.state == "late" and w.penalty == pytest.approx(0.3)
    w = window(hw(), LATE_UNTIL + S)
    assert w.state == "closed" and not w.accepts and w.penalty == 0
    assert w.message == "closed since 2026-12-10 23:59 CET"


def test_multiplier_and_no_late_policy():
    w = window(hw(LatePolicy("multiplier", 0.5)), DUE + S)  # any lateness: × 0.5, i.e. 50% lost
    assert w.penalty == 0.5 and apply_late(3.0, w) == (1.5, 1.5)
    assert window(hw(LatePolicy("multiplier", 0.5)), LATE_UNTIL).penalty == 0.5
    # late accepted without a penalty
    w = window(hw(LatePolicy("none", 0.0)), DUE + DAY)
    assert w.state == "late" and w.penalty == 0 and "no penalty" in w.message
    # no late window at all: closed one second after due
    w = window(hw(LatePolicy(), None), DUE + S)
    assert w.state == "closed" and w.closes == DUE and w.message == "closed since 2026-12-07 23:59 CET"


def test_an_extension_past_late_until():
    ext = LATE_UNTIL + 2 * DAY          # 2026-12-12 23:59 CET: 5 days after the due time
    a = hw()
    w = window(a, ext, extension=ext)   # on time at the learner's own due time (inclusive)
    assert w.state == "open" and w.extended and w.due == ext and w.penalty == 0
    # the late window moves by the same 5 days: until 2026-12-15 23:59 CET
    assert w.closes == LATE_UNTIL + 5 * DAY
    assert window(a, ext + S, extension=ext).penalty == pytest.approx(0.1)           # 1 started day
    assert window(a, ext + 3 * DAY, extension=ext).penalty == pytest.approx(0.3)     # at its late-until: 3 days
    w = window(a, ext + 3 * DAY + S, extension=ext)
    assert w.state == "closed" and w.message == "closed since 2026-12-15 23:59 CET (extended for you)"
    # without a late window the extension is the closing time
    b = hw(LatePolicy(), None)
    assert window(b, ext, extension=ext).state == "open" and window(b, ext + S, extension=ext).state == "closed"
    # an "extension" before the due time never shortens it
    w = window(a, DUE, extension=DUE - DAY)
    assert w.state == "open" and not w.extended and w.due == DUE


QUIZ_OPENS = datetime(2026, 12, 8, 8, 0, tzinfo=UTC)       # 09:00 CET
QUIZ_DUE = datetime(2026, 12, 8, 17, 0, tzinfo=UTC)        # 18:00 CET


def quiz(late=LatePolicy(), late_until=None):
    return hw(late, late_until, opens=QUIZ_OPENS, due=QUIZ_DUE, time_limit=30 * MIN)


def test_a_timed_quiz_runs_its_limit_from_the_first_opening():
    start = QUIZ_OPENS + 2 * H                              # 11:00 CET -> ends 11:30 CET
    w = window(quiz(), start + 10 * MIN, started_at=start)
    assert w.state == "open" and w.ends_at == start + 30 * MIN
    assert w.message == ("open; due in 6 hours, on 2026-12-08 18:00 CET; your time ends in 20 minutes, "
                         "at 2026-12-08 11:30 CET")
    assert window(quiz(), start + 30 * MIN, started_at=start).state == "open"        # its end is inclusive
    w = window(quiz(), start + 30 * MIN + S, started_at=start)
    assert w.state == "closed" and w.message == "your time ran out at 2026-12-08 11:30 CET"
    # not started yet: the usual window, no end of its own
    assert window(quiz(), start).ends_at is None


def test_a_time_limit_that_ends_after_the_due_time_ends_at_the_closing_time():
    start = QUIZ_DUE - 15 * MIN                             # 17:45 CET + 30 min = 18:15 CET, past 18:00
    w = window(quiz(), QUIZ_DUE, started_at=start)
    assert w.state == "open" and w.ends_at == QUIZ_DUE      # cut at the closing time (no late window: due)
    w = window(quiz(), QUIZ_DUE + S, started_at=start)
    assert w.state == "closed" and w.message == "closed at 2026-12-08 18:00 CET"
    # with a late window the limit runs on into it, late, with its penalty
    late = quiz(late=LatePolicy("per_day", 0.1), late_until=QUIZ_DUE + 2 * DAY)
    w = window(late, QUIZ_DUE + 10 * MIN, started_at=start)
    assert w.state == "late" and w.ends_at == start + 30 * MIN and w.penalty == pytest.approx(0.1)
    assert window(late, start + 30 * MIN + S, started_at=start).state == "closed"


def test_a_timed_quiz_started_late():
    a = quiz(late=LatePolicy("per_day", 0.1), late_until=QUIZ_DUE + 2 * DAY)        # until 2026-12-10 18:00 CET
    start = QUIZ_DUE + 26 * H                               # 26 h late: 2026-12-09 20:00 CET, ends 20:30 CET
    w = window(a, start + 20 * MIN, started_at=start)       # 26 h 20 min late: the 2nd day -> 20%
    assert w.state == "late" and w.penalty == pytest.approx(0.2) and w.ends_at == start + 30 * MIN
    assert window(a, start + 31 * MIN, started_at=start).message == "your time ran out at 2026-12-09 20:30 CET"
    # started 10 minutes before late-until: its 30 minutes end at late-until
    start = a.late_until - 10 * MIN
    assert window(a, start, started_at=start).ends_at == a.late_until


def test_messages_use_the_course_zone_and_summer_time():
    summer = hw(opens=datetime(2027, 6, 1, 7, 0, tzinfo=UTC), due=datetime(2027, 6, 8, 21, 59, tzinfo=UTC),
                late_until=None, late=LatePolicy())
    assert window(summer, datetime(2027, 6, 9, tzinfo=UTC)).message == "closed since 2027-06-08 23:59 CEST"
    utc = hw(timezone="UTC")
    assert window(utc, OPENS - 3 * H).message == "opens in 3 hours, on 2026-11-30 08:00 UTC"


def test_a_time_without_a_zone_is_refused():
    with pytest.raises(ValueError, match="UTC-aware"):
        window(hw(), datetime(2026, 12, 1, 12, 0))


def test_window_is_a_frozen_value():
    w = window(hw(), OPENS)
    assert isinstance(w, Window)
    with pytest.raises(AttributeError):
        w.state = "closed"                                  # type: ignore[misc]


def test_the_documented_messages():
    """docs/exercises.md's block of messages at each edge: the bundled course's hw1 (the dates
    of the documented example), at each time shown."""
    import re
    from pathlib import Path
    from zoneinfo import ZoneInfo

    from grader.api import load_bank, load_course
    a = load_course(load_bank()).get("hw1")
    assert (a.opens, a.due, a.late_until, a.late) == (OPENS, DUE, LATE_UNTIL, LatePolicy("per_day", 0.1))
    times = [OPENS - S, OPENS, DUE, DUE + S, DUE + 2.5 * DAY, LATE_UNTIL, LATE_UNTIL + S]
    paris = ZoneInfo("Europe/Paris")
    made = [f"{t.astimezone(paris):%Y-%m-%d %H:%M:%S %Z}  {window(a, t).message}" for t in times]
    text = Path(__file__).resolve().parents[1].joinpath("docs", "exercises.md").read_text(encoding="utf-8")
    block = re.search(r"test_the_documented_messages\) -->\n```text\n(.*?)\n```", text, re.S)
    assert block is not None and block.group(1).splitlines() == made


def test_when_scores_are_shown():
    from grader.api import scores_shown
    now = DUE
    assert scores_shown(hw(), window(hw(), now), now)                        # immediately
    after = hw(show="after_due")
    assert not scores_shown(after, window(after, DUE), DUE)                  # at due: answers still on time
    assert scores_shown(after, window(after, DUE + S), DUE + S)
    ext = DUE + DAY                                                          # the learner's own due time
    assert not scores_shown(after, window(after, DUE + S, extension=ext), DUE + S)
    assert scores_shown(after, window(after, ext + S, extension=ext), ext + S)
    release = hw(show="on_release")
    assert not scores_shown(release, window(release, LATE_UNTIL + DAY), LATE_UNTIL + DAY)
    assert scores_shown(release, window(release, OPENS), OPENS, released=True)
