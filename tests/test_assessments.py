"""Assessments as data in the bank (``assessments.yaml`` beside the bank's files) and problem
titles: the file read into UTC times and late policies, every error located at file:line,
the bundled course, and the titles of the bundled bank."""
import textwrap
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from grader.api import Assessment, Course, LatePolicy, load_bank, load_course
from grader.bank.titles import derive_title
from grader.errors import ErrorList

UTC = timezone.utc
BANK = """\
subject: x
problems:
  - {id: x/ex-1.a, prompt: "First part. What?", kind: free_text, reference: r}
  - {id: x/ex-1.b, prompt: "Second?", kind: free_text, reference: r, attempts: 2}
  - {id: x/ex-2, prompt: "Third?", kind: free_text, reference: r, title: "The third one"}
  - {id: x/quiz-1, prompt: "Q1?", kind: free_text, reference: r}
"""


def course_dir(tmp_path, text, bank=BANK, name="assessments.yaml"):
    (tmp_path / "bank.yaml").write_text(bank, encoding="utf-8")
    (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def errors_of(tmp_path, text):
    bank = load_bank(course_dir(tmp_path, text))
    with pytest.raises(ErrorList) as info:
        load_course(bank)
    return [str(e) for e in info.value.errors]


GOOD = """\
    course: {timezone: Europe/Paris}
    assessments:
      - id: hw1
        title: Homework 1
        problems: ["x/ex-1.*", {id: x/ex-2, points: 5}]
        opens: 2026-11-30 09:00
        due: 2026-12-07 23:59
        late: {until: 2026-12-10 23:59, penalty_per_day: 10%}
        attempts: 3
      - id: quiz
        problems: [x/quiz-1]
        opens: 2026-12-08T09:00:00+01:00
        due: 2026-12-08T17:00:00Z
        late: {until: 2026-12-09 18:00, multiplier: 0.5}
        show: after_due
        time_limit: 1 h 30 min
"""


def test_a_course_is_read_into_utc_times_and_policies(tmp_path):
    bank = load_bank(course_dir(tmp_path, GOOD))
    assert bank.root == str(tmp_path) and [p.id for p in bank] == ["x/ex-1.a", "x/ex-1.b", "x/ex-2", "x/quiz-1"]
    course = load_course(bank)
    assert isinstance(course, Course) and course.timezone == "Europe/Paris"
    hw = course.get("hw1")
    assert isinstance(hw, Assessment) and hw.title == "Homework 1" and hw.timezone == "Europe/Paris"
    # Paris is UTC+1 in winter (CET): 09:00 local is 08:00 UTC, 23:59 local is 22:59 UTC
    assert hw.opens == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert hw.due == datetime(2026, 12, 7, 22, 59, tzinfo=UTC)
    assert hw.late_until == datetime(2026, 12, 10, 22, 59, tzinfo=UTC)
    assert hw.late == LatePolicy("per_day", 0.1) and hw.attempts == 3 and hw.show == "immediately"
    assert hw.time_limit is None
    # the pattern's matches in bank order, then the explicit entry with its points
    assert [(i.problem_id, i.points) for i in hw.items] == [("x/ex-1.a", None), ("x/ex-1.b", None), ("x/ex-2", 5.0)]
    quiz = course.get("quiz")
    assert quiz.opens == datetime(2026, 12, 8, 8, 0, tzinfo=UTC)        # the explicit +01:00 kept
    assert quiz.due == datetime(2026, 12, 8, 17, 0, tzinfo=UTC)         # Z
    assert quiz.late == LatePolicy("multiplier", 0.5) and quiz.show == "after_due"
    assert quiz.time_limit == timedelta(minutes=90) and quiz.attempts is None
    assert course.of_problem("x/ex-1.b") is hw and course.of_problem("x/quiz-1") is quiz
    assert course.of_problem("x/nope") is None and course.get("nope") is None
    # attempts: the smaller of the assessment's (3) and the problem's own (x/ex-1.b: 2)
    assert hw.attempts_for(2) == 2 and hw.attempts_for(None) == 3 and quiz.attempts_for(None) is None


def test_summer_time_and_the_default_zone(tmp_path):
    course = load_course(load_bank(course_dir(tmp_path, """\
        course: {timezone: Europe/Paris}
        assessments:
          - {id: a, problems: [x/ex-2], opens: 2027-06-01 09:00, due: 2027-06-01 10:00}
    """)))
    assert course.get("a").opens == datetime(2027, 6, 1, 7, 0, tzinfo=UTC)        # CEST is UTC+2
    other = tmp_path / "other"
    other.mkdir()
    course = load_course(load_bank(course_dir(other, """\
        assessments:
          - {id: a, problems: [x/ex-2], opens: 2027-06-01 09:00, due: 2027-06-01 10:00}
    """)))
    assert course.timezone == "UTC" and course.get("a").opens == datetime(2027, 6, 1, 9, 0, tzinfo=UTC)


def test_without_a_course_file_there_is_no_course(tmp_path):
    (tmp_path / "bank.yaml").write_text(BANK, encoding="utf-8")
    assert load_course(load_bank(tmp_path)) is None
    # a bank given as one file has no course, even with an assessments.yaml beside it
    course_dir(tmp_path, GOOD)
    assert load_bank(tmp_path / "bank.yaml").root is None and load_course(load_bank(tmp_path / "bank.yaml")) is None


def test_the_course_file_is_not_read_as_a_bank_file(tmp_path):
    bank = load_bank(course_dir(tmp_path, GOOD))
    assert all("assessments" not in p for p in bank.paths)
    nested = tmp_path / "sub"                           # only the top one is the course's
    nested.mkdir()
    (nested / "assessments.yaml").write_text("course: {}\n")
    with pytest.raises(ErrorList, match=r"sub/assessments.yaml:1:1: unknown key 'course' in a bank file"):
        load_bank(tmp_path)


def test_every_error_is_located(tmp_path):
    errs = errors_of(tmp_path, """\
        course: {timezone: Mars/Olympus, tz: x}
        assessment: []
        assessments:
          - id: hw1
            problems: ["x/ex-9*", x/nope, {id: x/ex-2, points: -1}, {id: x/ex-1.a, pts: 2}]
            opens: 2026-12-07 09:00
            due: 2026-12-01 23:59
            late: {penalty_per_day: 10%}
            attempts: 0
            show: later
            time_limit: 30
            deadline: 2026-12-01
          - id: hw2
            problems: [x/ex-1.a, x/ex-1.a]
            opens: 2026-12-01
            due: 2026-12-07 23:59
            late: {until: 2026-12-06 23:59, multiplier: 2}
          - id: hw3
            problems: ["x/ex-1.*"]
            opens: 2026-12-01 09:00
            due: "next week"
            late: {until: 2026-12-08 23:59, penalty_per_day: 10%, multiplier: 0.5}
            time_limit: 3 fortnights
          - {id: hw1, problems: [x/quiz-1], opens: 2026-03-29 02:30, due: 2026-12-01 09:00}
    """)
    f = str(tmp_path / "assessments.yaml")
    # (line:column, the start of the message): each checked against the text above by hand
    want = [
        ("2:1", "unknown key 'assessment' in an assessments file; did you mean 'assessments'?"),
        ("1:34", "unknown key 'tz' in 'course'"),
        ("1:20", "unknown time zone 'Mars/Olympus'"),
        ("12:5", "unknown key 'deadline' in an assessment"),
        ("5:16", "no problem of the bank matches the pattern 'x/ex-9*'"),
        ("5:27", "no problem of the bank has the id 'x/nope'"),
        ("5:56", "'points' must be a finite number >= 0, got -1"),
        ("5:76", "unknown key 'pts' in a problem entry"),
        ("7:10", "'due' is before 'opens'"),
        ("8:11", "'late' needs 'until'"),
        ("9:15", "'attempts' must be a positive integer"),
        ("10:11", "'show' must be one of immediately, after_due, on_release, got 'later'"),
        ("11:17", "'time_limit' must be a positive duration with its unit (e.g. 30 min, 1 h 30 min), got 30"),
        ("14:26", "problem 'x/ex-1.a' is listed twice in this assessment"),
        ("15:12", "'opens': 2026-12-01 is a date without a time; write the time too"),
        ("17:19", "'late.until' is before 'due'"),
        ("17:49", "'multiplier' must be a number from 0 to 1"),
        ("14:16", f"problem 'x/ex-1.a' is already in assessment 'hw1' (at {f}:5:61)"),   # hw1's {id: x/ex-1.a}
        ("21:10", "'due': cannot read 'next week' as a time"),
        ("22:71", "'late' takes one of 'penalty_per_day' or 'multiplier', not both"),
        ("23:17", "'time_limit' must be a positive duration with its unit (e.g. 30 min, 1 h 30 min), got '3 fortnights'"),
        ("19:16", f"problem 'x/ex-1.a' is already in assessment 'hw1' (at {f}:5:61)"),   # x/ex-1.* holds it
        ("24:10", f"duplicate assessment id 'hw1' (first at {f}:4:9)"),
    ]
    assert len(errs) == len(want), errs
    for (at, msg), got in zip(want, errs):
        assert got.startswith(f"{f}:{at}: {msg}"), (at, msg, got)


def test_a_time_that_does_not_exist_in_the_zone(tmp_path):
    errs = errors_of(tmp_path, """\
        course: {timezone: Europe/Paris}
        assessments:
          - {id: b, problems: [x/quiz-1], opens: 2027-03-28 02:30, due: 2027-04-01 09:00}
    """)
    # Paris moves from 02:00 to 03:00 on 2027-03-28: 02:30 is no time there
    f = str(tmp_path / "assessments.yaml")
    assert errs == [f"{f}:3:42: 'opens': 2027-03-28 02:30 does not exist in Europe/Paris (the clocks move forward "
                    "then)"]


def test_a_problem_in_two_assessments_is_found_even_beside_other_errors(tmp_path):
    errs = errors_of(tmp_path, """\
        assessments:
          - {id: a, problems: [x/ex-2], opens: 2026-12-01, due: 2026-12-02 09:00}
          - {id: b, problems: [x/ex-2], opens: 2026-12-01 09:00, due: 2026-12-02 09:00}
    """)
    f = str(tmp_path / "assessments.yaml")
    assert errs == [f"{f}:2:40: 'opens': 2026-12-01 is a date without a time; write the time too, e.g. 2026-12-01 23:59",
                    f"{f}:3:24: problem 'x/ex-2' is already in assessment 'a' (at {f}:2:24); a problem is in at most "
                    "one assessment"]


def test_a_problem_in_two_assessments(tmp_path):
    errs = errors_of(tmp_path, """\
        assessments:
          - {id: a, problems: ["x/ex-*"], opens: 2026-12-01 09:00, due: 2026-12-02 09:00}
          - {id: b, problems: [x/quiz-1, x/ex-2], opens: 2026-12-01 09:00, due: 2026-12-02 09:00}
    """)
    f = str(tmp_path / "assessments.yaml")
    assert errs == [f"{f}:3:34: problem 'x/ex-2' is already in assessment 'a' (at {f}:2:24); a problem is in "
                    "at most one assessment"]


def test_an_explicit_file_and_a_missing_list(tmp_path):
    bank = load_bank(course_dir(tmp_path, GOOD))
    other = tmp_path / "elsewhere.yaml"
    other.write_text("course: {timezone: UTC}\n")
    with pytest.raises(ErrorList, match=r"elsewhere.yaml:1:1: missing 'assessments'"):
        load_course(bank, other)


# ------------------------------------------------------------------ the bundled course


def test_the_bundled_course_loads_and_holds_every_problem_once():
    bank = load_bank()
    course = load_course(bank)
    assert course is not None and course.timezone == "Europe/Paris"
    assert [a.id for a in course.assessments] == ["hw1", "quiz1", "formulas", "code1", "hw3"]
    held = [pid for a in course.assessments for pid in a.problem_ids]
    assert sorted(held) == sorted(p.id for p in bank) and len(held) == len(set(held))
    quiz = course.get("quiz1")
    assert quiz.time_limit == timedelta(minutes=30) and quiz.show == "after_due" and quiz.late_until is None
    assert [a.due.year for a in course.assessments] == [2026, 2026, 2026, 2026, 2027]


def test_the_documented_example_course_loads_against_the_bundled_bank():
    course = load_course(load_bank(), "docs/examples/assessments.yaml")
    hw1 = course.get("hw1")
    assert hw1.item("17-08/example-2.params").points == 3 and hw1.item("17-08/example-1.d_k").points is None
    assert course.get("quiz1").time_limit == timedelta(minutes=30)


def test_grader_exercises_checks_the_course(tmp_path):
    from grader.cli import cli
    r = CliRunner().invoke(cli, ["exercises", "--format", "json"])
    assert r.exit_code == 0, r.output
    import json
    rows = json.loads(r.output)
    assert {row["id"]: (row["title"], row["assessment"]) for row in rows}["17-08/example-1.d_k"] == \
        ("d_k from d_model and h", "hw1")
    course_dir(tmp_path, "assessments:\n  - {id: a, problems: [x/none], opens: 2026-12-01 09:00, due: 2026-12-02 09:00}\n")
    r = CliRunner().invoke(cli, ["exercises", "--exercises", str(tmp_path)])
    assert r.exit_code == 2
    assert f"error: {tmp_path / 'assessments.yaml'}:2:24: no problem of the bank has the id 'x/none'" in r.output


# ------------------------------------------------------------------ titles


def test_every_bundled_problem_has_its_own_short_title():
    import re
    from pathlib import Path
    bank = load_bank()
    written = set()
    for f in Path("exercises").rglob("[0-9]*.yaml"):          # the bank files (not assessments.yaml)
        written |= set(re.findall(r"^\s*- id: (\S+)\n\s*title: ", f.read_text(encoding="utf-8"), re.M))
    assert written == {p.id for p in bank}
    titles = [p.title for p in bank]
    assert all(0 < len(t) <= 50 for t in titles) and len(set(titles)) == len(titles)


def test_a_title_is_derived_from_the_prompt_when_absent(tmp_path):
    bank = load_bank(course_dir(tmp_path, GOOD))
    assert bank.get("x/ex-1.a").title == "First part"        # the first sentence, its '.' dropped
    assert bank.get("x/ex-1.b").title == "Second?"           # a question keeps its '?'
    assert bank.get("x/ex-2").title == "The third one"       # the bank's own
    # markup stripped: **, backquotes, $...$, a link's target
    assert derive_title("**Bold** `split_heads` and $d_k$ in [the doc](http://x). Rest") == \
        "Bold split_heads and d_k in the doc"
    # a long first sentence: its first clause when that is 12..60 characters
    assert derive_title("In multi-head cross-attention, where do Q, K and V come from, and which of them "
                        "sets the output length?") == "In multi-head cross-attention"
    # no usable clause: cut at a word, at most 60 characters with the ellipsis
    long = "Explain why different heads can learn different attention patterns although they share inputs"
    got = derive_title(long)
    assert got == "Explain why different heads can learn different attention…" and len(got) <= 60
    assert derive_title("   ") == ""


def test_a_bad_title_is_a_located_error(tmp_path):
    (tmp_path / "b.yaml").write_text("subject: x\nproblems:\n"
                                     "  - {id: x/a, prompt: p, kind: free_text, reference: r, title: [1]}\n")
    with pytest.raises(ErrorList, match=r"b.yaml:3:64: 'title' must be a short text on one line"):
        load_bank(tmp_path)


def test_titles_default_to_the_id_and_an_autumn_time_is_the_first_of_the_two(tmp_path):
    course = load_course(load_bank(course_dir(tmp_path, """\
        course: {timezone: Europe/Paris}
        assessments:
          - {id: a, problems: [x/ex-2], opens: 2026-10-25 02:30, due: 2026-10-26 10:00, late: {until: 2026-10-27 10:00}}
    """)))
    a = course.get("a")
    assert a.title == "a" and a.description == ""
    # 02:30 happens twice in Paris on 2026-10-25 (03:00 CEST -> 02:00 CET): the first, CEST (UTC+2) -> 00:30 UTC
    assert a.opens == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    # `late: {until}` alone: late answers accepted without a penalty
    assert a.late == LatePolicy("none", 0.0) and a.late_until == datetime(2026, 10, 27, 9, 0, tzinfo=UTC)
