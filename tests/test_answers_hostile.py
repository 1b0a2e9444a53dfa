"""Hostile answers: each is ``invalid`` (0 credit, a reason) or at worst ``wrong``; nothing
runs, nothing raises out of check_answer, and sizes are bounded before any parsing."""
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.answers import KINDS, AnswerSpec, check_answer

SPECS = {
    "number": AnswerSpec("number", 64),
    "quantity": AnswerSpec("quantity", 16777216, unit="byte"),
    "shape": AnswerSpec("shape", (128, 64)),
    "choice": AnswerSpec("choice", "A", choices={"A": "yes", "B": "no"}),
    "free_text": AnswerSpec("free_text", "anything"),
    "interval": AnswerSpec("interval", "[0, 1]"),
}


@pytest.mark.parametrize("kind", sorted(SPECS))
@pytest.mark.parametrize("answer, why", [
    ({"a": 1}, "not a mapping"),
    (None, "empty answer"),
    ("   ", "empty answer"),
    (float("nan"), "nan is not a finite number"),
    (float("inf"), "inf is not a finite number"),
    (-math.inf, "-inf is not a finite number"),
    ("x" * 1_000_000, "too long (1,000,000 characters"),
    ("64\x00", "control character U+0000 at column 3"),
    ("\x1b[31m64", "control character U+001B at column 1"),
    ("64\u202e", "control character U+202E at column 3"),
    (object(), "unsupported value of type object"),
])
def test_not_plain_data_is_invalid_for_every_kind(kind, answer, why):
    out = check_answer(SPECS[kind], answer)
    assert (out.status, out.correct, out.credit) == ("invalid", False, 0.0), out
    assert out.feedback.startswith("invalid answer: ") and why in out.feedback, out.feedback


@pytest.mark.parametrize("answer, why", [
    ([[128, 64]], "flat list"),
    ([[[[[[[[1]]]]]]]], "flat list"),
    (list(range(10_000)), "at most 16 axes"),
    ([10**500, 64], "number too large"),
    ([True, 64], "flat list"),
])
def test_deep_or_long_lists_are_invalid(answer, why):
    out = check_answer(SPECS["shape"], answer)
    assert out.status == "invalid" and why in out.feedback, out


@pytest.mark.parametrize("answer", [[1, 2], [[1]], (1, 2)])
@pytest.mark.parametrize("kind", ["number", "quantity", "choice"])
def test_lists_where_no_list_belongs(kind, answer):
    out = check_answer(SPECS[kind], answer)
    assert (out.status, out.feedback) == ("invalid", "invalid answer: expected text or a number, not a list")


@pytest.mark.parametrize("answer", [
    "__import__('os').system('touch PWNED')", "exec(\"open('PWNED','w')\")", "lambda: open('PWNED', 'w')",
    "().__class__.__bases__[0].__subclasses__()", "$(touch PWNED); `touch PWNED`", "{0.__class__}",
    "1e999999999", "9" * 1500, "nan", "inf", "Infinity", "1" + "0" * 1999,
])
@pytest.mark.parametrize("kind", ["number", "quantity", "shape", "choice"])
def test_code_and_huge_numbers_are_invalid(kind, answer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = check_answer(SPECS[kind], answer)
    assert out.status == "invalid" and out.credit == 0.0, out
    assert not os.path.exists(tmp_path / "PWNED")


def test_huge_yaml_integer_is_refused_without_converting_it():
    out = check_answer(SPECS["number"], 10**5000)
    assert out.feedback == "invalid answer: number too large (more than 400 digits)"


ANY = st.one_of(
    st.text(max_size=60),
    st.text(alphabet="0123456789.,_ eE+-*/^()xX×·⁰¹²³⁴⁵⁶⁷⁸⁹kKMBGTbimnoy%[]", max_size=40),
    st.integers(), st.floats(), st.booleans(), st.none(),
    st.lists(st.one_of(st.integers(), st.text(max_size=5)), max_size=20),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(SPECS)), answer=ANY)
def test_random_input_never_raises_and_always_gives_a_valid_outcome(kind, answer):
    out = check_answer(SPECS[kind], answer)
    assert out.status in ("correct", "wrong", "invalid", "needs_person")
    assert 0.0 <= out.credit <= 1.0
    assert (out.correct is None) == (out.status == "needs_person")
    if out.status == "invalid":
        assert out.feedback.startswith("invalid answer: ") and out.credit == 0.0


def test_every_kind_is_covered():
    assert set(KINDS) == set(SPECS) | {"expression", "relation"}


def test_a_callers_time_limit_passes_through(monkeypatch):
    """The grade workers raise their own exception from a SIGALRM handler: check_answer must
    not turn it into a grade."""
    import grader.answers.check as check

    class TooComplex(Exception):
        pass

    def slow(spec, raw):
        raise TooComplex("time")

    monkeypatch.setitem(check._CHECKERS, "number", slow)
    with pytest.raises(TooComplex):
        check_answer(SPECS["number"], "64")


def test_a_bug_in_a_checker_becomes_undecided_for_a_person(monkeypatch):
    import grader.answers.check as check

    def buggy(spec, raw):
        raise KeyError("oops")

    monkeypatch.setitem(check._CHECKERS, "number", buggy)
    out = check_answer(SPECS["number"], "64")
    assert (out.status, out.correct, out.credit) == ("undecided", None, 0.0)
    assert out.feedback == "cannot grade automatically (KeyError); a person will check this answer"
