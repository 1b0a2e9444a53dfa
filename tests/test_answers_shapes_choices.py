"""Shapes, multiple choice and free text, right and wrong; Example 1 of 17-08 (d_model 768,
h 12, n 128): d_k = 768 / 12 = 64, so Q_i is (n, d_k) = (128, 64)."""
import pickle

import pytest

from grader.answers import AnswerSpec, Mistake, Outcome, check_answer

Q_I = AnswerSpec("shape", [128, 64], mistakes=(
    Mistake([128, 768], "(128, 768) is Q itself; W_i^Q maps d_model = 768 to d_k = 64."),
    Mistake([12, 128, 64], "That is all heads stacked; Q_i is ONE head's queries.", credit=0.25),
), feedback="Q_i = Q · W_i^Q: (n, d_model) · (d_model, d_k).")


@pytest.mark.parametrize("answer", ["(128, 64)", "(128,64)", "128×64", "128 × 64", "128x64", "128 x 64", "128X64",
                                    "[128,64]", "[128, 64]", "128 by 64", "128*64", "128·64", [128, 64], ["128", "64"],
                                    (128, 64), " ( 128 , 64 ) "])
def test_every_shape_form_reads_as_128_by_64(answer):
    out = check_answer(Q_I, answer)
    assert (out.status, out.correct, out.credit, out.read_as) == ("correct", True, 1.0, "(128, 64)"), out


@pytest.mark.parametrize("answer, feedback, credit", [
    ("(64, 128)", "(64, 128) is the transpose of the expected shape: check which axis is rows and which is columns.", 0),
    ("(128,)", "(128,) has one axis too few (1 instead of 2): an axis is missing.", 0),
    ("(64)", "(64,) has one axis too few (1 instead of 2): an axis is missing.", 0),
    ("(128, 64, 1)", "(128, 64, 1) has one axis too many: the extra axis of length 1 does not belong "
                     "(are heads or a batch stacked?).", 0),
    ("(8192,)", "(8192,) has the right number of elements (8,192) but 1 axis instead of 2: axes merged or split?", 0),
    ("(256, 32)", "(256, 32) has the right number of elements (8,192) but another layout.", 0),
    ("(128, 768)", "(128, 768) is Q itself; W_i^Q maps d_model = 768 to d_k = 64.", 0),
    ("12x128x64", "That is all heads stacked; Q_i is ONE head's queries. (partial credit: 25%)", 0.25),
    ("(128, 32)", "Q_i = Q · W_i^Q: (n, d_model) · (d_model, d_k).", 0),      # author feedback outranks a bare one
])
def test_wrong_shapes_get_the_most_specific_message(answer, feedback, credit):
    out = check_answer(Q_I, answer)
    assert (out.status, out.correct, out.credit, out.feedback) == ("wrong", False, credit, feedback)


def test_wrong_shape_without_author_feedback_says_which_axis():
    out = check_answer(AnswerSpec("shape", (128, 64)), "(128, 32)")
    assert out.feedback == "(128, 32) is right except axis 2 (of 2)."
    out = check_answer(AnswerSpec("shape", (2, 3, 4)), "(2, 4, 3)")
    assert out.feedback == "(2, 4, 3) has the right axes in the wrong order: check which axis comes first."
    out = check_answer(AnswerSpec("shape", (128, 64)), "(5,)")
    assert out.feedback == "(5,) has 1 axis; the expected shape has 2."
    out = check_answer(AnswerSpec("shape", (128, 64)), "(1, 2)")
    assert out.feedback == "not the expected shape"


@pytest.mark.parametrize("answer, why", [
    ("(128, 64", "unbalanced brackets"), ("(128, -64)", "non-negative integer"), ([128, -64], "cannot be negative"),
    ("(128.5, 64)", "non-negative integer"), ([[128, 64]], "flat list"), ([128, 64.0], "flat list"),
    (list(range(17)), "at most 16 axes"), ("(a, b)", "non-negative integer"), ({"rows": 128}, "not a mapping"),
])
def test_malformed_shapes_are_invalid(answer, why):
    out = check_answer(Q_I, answer)
    assert out.status == "invalid" and out.credit == 0.0 and why in out.feedback, out


DOMINANT = AnswerSpec("choice", "A", choices={
    "A": "The projections (the n·d² term)", "B": "QKᵀ and A·V (the n²·d term)", "C": "They are exactly equal",
}, mistakes=(Mistake("C", "8·n·d² = 4·n²·d only at n = 2d."),),
    feedback="8·n·d² against 4·n²·d: the projections win while n < 2d.")


@pytest.mark.parametrize("answer", ["A", "a", "(A)", "A)", "A.", "[a]", "option A", "  A  ",
                                    "The projections (the n·d² term)", "the projections (the n·d² term).",
                                    "THE  PROJECTIONS (THE N·D² TERM)"])
def test_choice_by_letter_or_text(answer):
    out = check_answer(DOMINANT, answer)
    assert (out.status, out.correct, out.read_as) == ("correct", True, "A: The projections (the n·d² term)")


def test_wrong_choices():
    b = check_answer(DOMINANT, "b")
    assert (b.status, b.read_as, b.feedback) == ("wrong", "B: QKᵀ and A·V (the n²·d term)",
                                                 "8·n·d² against 4·n²·d: the projections win while n < 2d.")
    c = check_answer(DOMINANT, "they are exactly equal")
    assert (c.status, c.feedback) == ("wrong", "8·n·d² = 4·n²·d only at n = 2d.")
    d = check_answer(DOMINANT, "D")
    assert (d.status, d.feedback) == ("invalid", "invalid answer: D is not one of the choices A, B, C")
    e = check_answer(DOMINANT, "the projections, obviously")
    assert e.status == "invalid" and "neither a choice letter" in e.feedback


def test_yaml_booleans_match_yes_no_options():
    spec = AnswerSpec("choice", "Y", choices={"Y": "yes", "N": "no"})
    assert check_answer(spec, True).status == "correct"
    assert check_answer(spec, False).status == "wrong"


def test_free_text_is_recorded_for_a_person():
    spec = AnswerSpec("free_text", "Q from the decoder; K and V from the encoder.")
    out = check_answer(spec, "Q comes from the decoder,\nK and V from the encoder")
    assert out == Outcome("needs_person", None, 0.0, "Q comes from the decoder, K and V from the encoder",
                          "recorded: a person will grade this answer")


def test_specs_and_outcomes_hash_and_pickle():
    for spec in (Q_I, DOMINANT, AnswerSpec("number", 64, tolerance={"rel": 0.01}, mistakes=[(768, "d_model")])):
        again = pickle.loads(pickle.dumps(spec))
        assert again == spec and hash(again) == hash(spec)
        out = check_answer(spec, "64")
        assert pickle.loads(pickle.dumps(out)) == out
    assert {Q_I: 1}[AnswerSpec("shape", (128, 64), mistakes=Q_I.mistakes, feedback=Q_I.feedback)] == 1
