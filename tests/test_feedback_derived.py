"""Feedback for wrong answers: common mistakes derived from the spec, each with its message,
offered only where it makes sense for what the problem measures.

Every expected value is worked out by hand here (never taken from the grader):

- GPT-3: d = 12288, 12288² = 144,000,000 + 2·12,000·288 + 288² = 150,994,944;
  4d² = 603,979,776 (the reference), 3d² = 452,984,832 (W^O forgotten),
  4d² + 4d = 603,979,776 + 49,152 = 604,028,928 (biases added), d² = 150,994,944 (one matrix).
- d = 512: 4d² = 1,048,576, 4d² + 4d = 1,050,624, 4d² + 8d = 1,052,672, 4d² + d = 1,049,088.
- Example 3: n = 2048, d = 4096: 8nd² = 8·2048·16,777,216 = 274,877,906,944,
  4n²d = 4·4,194,304·4096 = 68,719,476,736, so the total is 343,597,383,680; W^O forgotten
  6nd² + 4n²d = 206,158,430,208 + 68,719,476,736 = 274,877,906,944 (equal to 8nd² here: 2nd² = 4n²d
  exactly when d = 2n).
- n = 128, d = 512: 8nd² + 4n²d = 268,435,456 + 33,554,432 = 301,989,888; in multiply-adds
  150,994,944.
- LLaMA 3.1: d = 16384, h = 128: d_k = 128; d itself 16,384.
- Practice 4: b·h·n² = 32·8·16,384 = 4,194,304 elements, × 4 bytes = 16,777,216 bytes = 16 MiB.
"""
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from grader.answers import AnswerSpec, Mistake, check_answer
from grader.bank import load_bank
from grader.bank.model import Derive, Problem, frozen
from grader.grade import check

BANK = load_bank()


def spec_of(pid: str, **changes) -> AnswerSpec:
    """The AnswerSpec grading builds for a bank problem (``changes``: e.g. no author mistakes)."""
    return check.prepare(replace(BANK.get(pid), **changes) if changes else BANK.get(pid), BANK)


def problem(kind, reference, formula, at=None, **kw) -> AnswerSpec:
    """A problem of our own, derived from the bundled spec."""
    p = Problem("test/" + str(formula), kind, 1, "?", reference, derive=Derive(formula, frozen(at or {})), **kw)
    return check.prepare(p, BANK)


def feedback(spec, answer) -> str:
    out = check_answer(spec, answer)
    assert out.status == "wrong" and out.correct is False, out
    return out.feedback


# ---------------------------------------------------------------- what a problem measures

@pytest.mark.parametrize("pid, measures", [
    ("17-08/practice-1", "dim"), ("17-08/article.llama-d_head", "dim"), ("17-08/d_k-formula", "dim"),
    ("17-08/example-3.projection_flops", "flops"), ("17-08/flops-formula", "flops"),
    ("17-08/practice-4.bytes", "bytes"), ("17-08/attn-memory-formula", "bytes"),
    ("17-08/practice-4.count", "count"), ("17-08/variant.attn-count", "count"),
    ("17-08/example-2.params", "params"), ("17-08/params-formula", "params"), ("17-08/article.gpt3-attn-params", "params"),
    ("17-08/example-1.q_i_shape", "shape"),
])
def test_what_each_problem_measures(pid, measures):
    assert check.measures_of(BANK.get(pid), BANK.subject) == measures
    assert spec_of(pid).measures == measures


# ---------------------------------------------------------------- a term (a named part) missing

def test_missing_part_number():
    # QKᵀ and A·V alone: 4n²d = 68,719,476,736 where 343,597,383,680 is asked
    assert feedback(spec_of("17-08/example-3.total_flops"), 68719476736) == "The projections (8·d²·n) are missing."
    # the biases left out: 4·512² = 1,048,576 where 4·512² + 4·512 = 1,050,624 is asked
    with_biases = problem("number", 1050624, "params", {"d": 512, "h": 8})
    assert feedback(with_biases, 1048576) == "The biases (4·d) are missing."


def test_missing_part_expression():
    params = spec_of("17-08/params-formula")
    assert feedback(params, "4d") == "The weight matrices (4·d²) are missing."
    assert feedback(params, "3*d**2") == "W^O's weight matrix (d²) is missing, and the biases (4·d) are missing."
    assert feedback(spec_of("17-08/flops-formula"), "8nd^2") == "QKᵀ and A·V (4·d·n²) are missing."
    # without the author's mistakes, 4d² is recognised from the spec's parts
    assert feedback(spec_of("17-08/params-formula", mistakes=()), "4d^2") == "The biases (4·d) are missing."


def test_a_part_missing_in_a_relation_side():
    # only one of QKᵀ and A·V: 2n²d > 8nd² ⟺ n > 4d
    msg = feedback(spec_of("17-08/crossover"), "n > 4d")
    assert msg.startswith("On the side 4·d·n²: only one of QKᵀ and A·V is counted")


def test_unnamed_terms_and_factors():
    # a formula without named parts: its terms, and a product's factors
    msg = feedback(problem("expression", "n*d + d**2", "n*d + d**2"), "d^2")
    assert msg == "The term d·n is missing."
    assert feedback(spec_of("17-08/attn-memory-formula"), "4bhn") == "A factor n is missing."
    # 4·b·n² bytes at b = 32, n = 128: 4·32·16,384 = 2,097,152 = 2 MiB (the heads forgotten)
    assert feedback(spec_of("17-08/practice-4.bytes"), "2 MiB") == "A factor h is missing."


# ---------------------------------------------------------------- biases added or counted twice

def test_biases_added_number():
    assert (feedback(spec_of("17-08/article.gpt3-attn-params"), 604028928)
            == "The biases (4·d) are included, but the question leaves them out.")
    assert (feedback(spec_of("17-08/article.gpt3-attn-params"), "604,028,928")
            == "The biases (4·d) are included, but the question leaves them out.")


def test_biases_twice_number_and_expression():
    with_biases = problem("number", 1050624, "params", {"d": 512, "h": 8})
    assert feedback(with_biases, 1052672).startswith("The biases are counted twice (8·d instead of 4·d)")
    assert feedback(with_biases, 1049088).startswith("Only one of the four biases is counted (d instead of 4·d)")
    assert (feedback(spec_of("17-08/params-formula"), "4d² + 8d")
            == "The biases are counted twice (8·d instead of 4·d): one bias per projection.")


def test_the_authors_mistake_comes_first():
    # example-2.params has its own message for 1,050,624 (biases added) and 786,432 (W^O forgotten)
    assert feedback(spec_of("17-08/example-2.params"), 1050624).startswith("1,050,624 includes the 4·512 biases")
    assert feedback(spec_of("17-08/params-formula"), "3d(d+1)").startswith("W^O is forgotten: the output projection is a")
    assert feedback(spec_of("17-08/params-formula"), "4d^2").startswith("4d² leaves the biases out")


# ---------------------------------------------------------------- W^O forgotten, one projection of four

def test_wo_forgotten():
    gpt3 = spec_of("17-08/article.gpt3-attn-params")
    assert feedback(gpt3, 452984832) == "W^O's weight matrix (d²) is missing: W^Q, W^K, W^V and W^O make four."
    assert feedback(gpt3, "453M").startswith("W^O's weight matrix (d²) is missing")     # 3 s.f. of 452,984,832
    assert (feedback(spec_of("17-08/params-formula"), "3d^2 + 4d")
            == "W^O's weight matrix (d²) is missing: W^Q, W^K, W^V and W^O make four.")
    assert (feedback(spec_of("17-08/params-formula", mistakes=()), "3d^2 + 3d")
            == "W^O is forgotten: its weight matrix and its bias (d² + d) are missing; W^Q, W^K, W^V and W^O make four.")
    # 4n²d > 6nd² ⟺ n > 3d/2
    assert feedback(spec_of("17-08/crossover"), "n > 1.5d").startswith(
        "On the side 8·d²·n: W^O's projection (2·d²·n) is missing")
    # two single changes give the same number here (d = 2n): both are said
    both = feedback(spec_of("17-08/example-3.total_flops"), 274877906944)
    assert both == ("W^O's projection (2·d²·n) is missing: W^Q, W^K, W^V and W^O make four. "
                    "Or: QKᵀ and A·V (4·d·n²) are missing.")


def test_one_projection_instead_of_four():
    assert feedback(spec_of("17-08/article.gpt3-attn-params"), 150994944).startswith(
        "Only one of the four weight matrices is counted (d² instead of 4·d²)")
    assert (feedback(spec_of("17-08/params-formula"), "d^2 + d")
            == "One projection instead of four: W^Q, W^K, W^V and W^O each have d² + d.")
    assert feedback(spec_of("17-08/flops-formula", mistakes=()), "2nd^2 + 4n^2d").startswith(
        "Only one of the four projections is counted (2·d²·n instead of 8·d²·n)")
    # 4n²d > 2nd² ⟺ n > d/2
    assert feedback(spec_of("17-08/crossover", mistakes=()), "n > d/2").startswith(
        "On the side 8·d²·n: only one of the four projections is counted")


# ---------------------------------------------------------------- multiply-adds, for FLOPs only

def test_multiply_adds_number_and_expression():
    flops = problem("number", 301989888, "flops", {"n": 128, "d": 512, "h": 8})
    assert flops.measures == "flops"
    assert (feedback(flops, 150994944)
            == "That counts multiply-adds; with 1 multiply-add = 2 FLOPs it is twice as much.")
    assert (feedback(spec_of("17-08/flops-formula", mistakes=()), "4nd^2 + 2n^2 d")
            == "That counts multiply-adds; with 1 multiply-add = 2 FLOPs it is twice as much.")


def test_no_flop_message_where_no_flops_are_counted():
    # practice-1 is a d_k (64): 128 is twice it, 32 half, 256 and 16 four times and a quarter
    for answer in (128, 32, 256, 16):
        msg = feedback(spec_of("17-08/practice-1"), answer)
        assert "FLOP" not in msg and "multiply-add" not in msg and "bytes" not in msg, msg
    # params-formula: half of 4d² + 4d is 2d² + 2d
    msg = feedback(spec_of("17-08/params-formula"), "2d^2 + 2d")
    assert msg.startswith("Your formula is half the expected one") and "FLOP" not in msg and "multiply" not in msg


# ---------------------------------------------------------------- d instead of d_k

def test_d_for_d_k_number():
    assert feedback(spec_of("17-08/article.llama-d_head"), 16384) == "You used d (d_model) where d_k = d/h belongs."
    # h·d_k = d = 1024; with d for d_k, h·d = 16·1024 = 16,384
    assert feedback(spec_of("17-08/practice-1.check"), 16384) == "You used d (d_model) where d_k = d/h belongs."


def test_d_for_d_k_expression():
    assert feedback(spec_of("17-08/d_k-formula"), "d") == "You used d (d_model) where d_k = d/h belongs."
    assert feedback(spec_of("17-08/d_k-formula"), "d_model") == "You used d (d_model) where d_k = d/h belongs."
    assert feedback(spec_of("17-08/params-formula"), "4*d_k^2 + 4*d_k") == "You used d_k = d/h where d (d_model) belongs."
    assert (feedback(spec_of("17-08/flops-formula"), "8nd_k² + 4n²d")
            == "In the projections (8·d²·n), you used d_k = d/h where d (d_model) belongs.")


def test_d_for_d_k_shape_and_relation():
    assert (feedback(spec_of("17-08/example-1.head_shape"), "(128, 768)")
            == "(128, 768): axis 2 is d = 768. You used d (d_model) where d_k = d/h belongs.")
    assert (feedback(spec_of("17-08/example-1.output_shape"), "(128, 64)")
            == "(128, 64): axis 2 is d_k = 64. You used d_k = d/h where d (d_model) belongs.")
    # the author's message for (128, 768) on Q_i still comes first
    assert feedback(spec_of("17-08/example-1.q_i_shape"), "(128, 768)").startswith("(128, 768) is Q itself")
    assert feedback(spec_of("17-08/crossover"), "n > 2d_k") == "You used d_k = d/h where d (d_model) belongs."
    assert feedback(spec_of("17-08/crossover"), "n > 2*d/h") == "You used d_k = d/h where d (d_model) belongs."


# ---------------------------------------------------------------- shapes: transposed, an axis missing

def test_shape_layout_mistakes_on_bank_problems():
    q = spec_of("17-08/example-1.q_i_shape")
    assert feedback(q, "(64, 128)").startswith("(64, 128) is the transpose of the expected shape")
    assert feedback(q, "(128,)").startswith("(128,) has one axis too few")
    assert feedback(q, [128, 64, 1]).startswith("(128, 64, 1) has one axis too many")


# ---------------------------------------------------------------- bytes: elements, float64, bits, MB/MiB

def test_bytes_factors():
    b = spec_of("17-08/practice-4.bytes", mistakes=())
    assert feedback(b, "4194304 bytes").startswith("Your answer is a quarter of the expected value: did you count "
                                                   "elements instead of bytes?")
    assert feedback(b, "4 MiB").startswith("Your answer is a quarter of the expected value: did you count elements")
    assert feedback(b, "32 MiB").startswith("Your answer is twice the expected value: 8 bytes per element is float64")
    assert feedback(b, "128 MiB").startswith("Your answer is eight times the expected value: did you count bits")
    # 16.8 Mbit = 2,100,000 bytes, 16,777,216 / 8 = 2,097,152 at 3 s.f.
    assert feedback(b, "16.8 Mbit").startswith("Your answer is an eighth of the expected value: bits and bytes differ")
    assert feedback(b, "16 MB").endswith("MB and MiB differ.")
    # 16,000 KiB = 16,384,000 bytes = 16,777,216 · 10³/2¹⁰: given in KiB, k and Ki
    assert feedback(b, "16000 KiB").startswith("Your answer is 10³/2¹⁰ of the expected value: k (10³) and Ki (2¹⁰)")


def test_unit_messages_only_where_those_units_are():
    b = spec_of("17-08/practice-4.bytes")
    # 15.6 MiB is none of them: not "kB and KiB" (the answer is in MiB), the author's text instead
    msg = feedback(b, "15.6 MiB")
    assert "kB" not in msg and "KiB" not in msg
    assert msg == "256 matrices × 128² elements × 4 bytes = 16,777,216 bytes (16 MiB ≈ 16.8 MB)."
    # 2 MiB is an eighth, but given in bytes: not bits
    assert "bit" not in feedback(b, "2 MiB")
    # a parameter count is not in MB or MiB: 1M is a rounded 1,048,576, not an M/Mi confusion
    msg = feedback(spec_of("17-08/example-2.params"), "1M")
    assert "Mi" not in msg and "MB" not in msg
    assert msg == "1,000,000 is rounded (to 1 significant figure); the question asks for the exact value."
    # a count of matrices (256): four times it is not "bytes where elements were asked"
    msg = feedback(spec_of("17-08/practice-4.count"), 1024)
    assert "bytes" not in msg and "element" not in msg and "float" not in msg


# ---------------------------------------------------------------- never at the cost of a right answer

def _graded_problems():
    for p in BANK.problems:
        if p.kind in ("number", "quantity", "expression", "shape", "relation") and p.derive is not None:
            yield p


@pytest.mark.parametrize("pid", [p.id for p in _graded_problems()])
def test_references_stay_right_and_no_derived_variant_is_right(pid):
    spec = spec_of(pid)
    unit = "bytes" if spec.unit in (None, "byte") else spec.unit      # a quantity in its reference's unit
    ref = {"shape": lambda r: list(r), "quantity": lambda r: f"{r} {unit}"}.get(spec.kind, lambda r: r)(spec.reference)
    assert check_answer(spec, ref).status == "correct"
    for m in spec.derived:
        value = m.value
        if spec.kind in ("expression", "relation"):
            value = str(value)
        elif spec.kind == "shape":
            value = list(value)
        elif spec.kind == "quantity":
            value = f"{value} {unit}"
        else:
            value = str(value)
        out = check_answer(spec, value)
        assert out.status == "wrong", (pid, m, out)


def test_partial_credit_unchanged():
    spec = AnswerSpec("number", 1048576, mistakes=(Mistake(1050624, "Biases included.", credit=0.5),),
                      derived=(Mistake(1050624, "The biases (4·d) are included."),), measures="params")
    out = check_answer(spec, 1050624)
    assert (out.status, out.credit, out.feedback) == ("wrong", 0.5, "Biases included. (partial credit: 50%)")


def test_a_bare_spec_without_measures_says_nothing_domain_specific():
    # 68,719,476,736 = 274,877,906,944 / 4 on a spec that does not say what it counts
    msg = feedback(AnswerSpec("number", 274877906944, sig_figs=3), 68719476736)
    assert msg.startswith("Your answer is a quarter of the expected value")
    assert "projection" not in msg and "bytes" not in msg and "FLOP" not in msg


def test_unknown_measure_is_refused():
    from grader.errors import SpecError
    with pytest.raises(SpecError):
        AnswerSpec("number", 1, measures="furlongs")


def test_variants_follow_the_learners_draw():
    from grader.bank.variants import draws, _variant
    p = BANK.get("17-08/variant.params")
    options = draws(p, BANK.subject)
    for i, (combo, reference) in enumerate(options):
        seen, _ = _variant(p, options, i)
        d, h = dict(combo)["d"], dict(combo)["h"]
        spec = check.prepare(seen, BANK)
        # the author's mistake (3d², with its formula) first, at this draw; d_k for d from the spec:
        # 4·(d/h)², e.g. 4·(768/12)² = 4·64² = 16,384
        assert feedback(spec, 3 * d * d) == "W^O is missing: four d × d matrices."
        # (at d = 256, h = 16 that is 1,024 = 4·256 too: "Or: A factor d is missing.")
        assert feedback(spec, 4 * (d // h) ** 2).startswith("You used d_k = d/h where d (d_model) belongs.")


def test_grader_grade_says_it_and_echoes_the_answer(tmp_path):
    answers = tmp_path / "alice.yaml"
    answers.write_text('learner: alice\nanswers:\n  17-08/params-formula: "4d^2 + 8d"\n'
                       '  17-08/article.gpt3-attn-params: 452984832\n')
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(answers), "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    results = {r["id"]: r for r in json.loads(run.stdout)["submissions"][0]["results"]}
    r = results["17-08/params-formula"]
    assert r["feedback"] == ("The biases are counted twice (8·d instead of 4·d): one bias per projection. "
                             "(read as 4·d² + 8·d)")
    r = results["17-08/article.gpt3-attn-params"]
    assert r["feedback"] == ("W^O's weight matrix (d²) is missing: W^Q, W^K, W^V and W^O make four. "
                             "(read as 452,984,832)")


# ---------------------------------------------------------------- the derivation itself

def test_parts_are_named_by_the_spec_and_unknown_names_said_plainly():
    from grader import expr
    from grader.answers.derive import formula_variants
    pos = {"positive": True, "integer": True}
    table = expr.SymbolTable.build(symbols={"a": pos, "b": pos})
    formulas = (("cost", expr.parse("a^2 + 3*b", table).expr), ("cost_setup", expr.parse("3*b", table).expr))
    found = dict((str(e), m) for e, m in formula_variants("cost", formulas, table))
    assert found["a**2"] == "The setup term (3·b) is missing."
    assert found["3*b"] == "The term a² is missing."
    # nothing about FLOPs, bytes or projections where the spec says nothing of them
    assert not any(w in m for m in found.values() for w in ("FLOP", "byte", "W^O", "projection"))


def test_show_writes_formulas_like_read_as():
    from fractions import Fraction
    from grader.answers.monomials import show
    d2, d1 = (("d", 2),), (("d", 1),)
    assert show(((d2, Fraction(4)), (d1, Fraction(4)))) == "4·d² + 4·d"
    assert show((((("d", 2), ("h", -2), ("n", 1)), Fraction(8)),)) == "8·d²·n/h²"
    assert show(((d1, Fraction(-1, 2)),)) == "-d/2"


@pytest.mark.parametrize("a, b, same", [("n > 2d", "2d < n", True), ("n > 2d", "4n²d > 8nd²", True),
                                        ("n > 2d", "n > 2*h*d_k", True), ("n > 4d", "n > 5d", False),
                                        ("n > 25d", "n > 2*h*d", False), ("n > 2d", "n >= 2d", True),
                                        ("n <= 2d", "n < 2d", True)])
def test_spread_truths_agree_for_equivalent_relations_and_tell_others_apart(a, b, same):
    # "same" off the boundary: n ≥ 2d and n > 2d part ways only on n = 2d, where both are None
    from grader.answers.symbolic import differ_somewhere, read_relation, spread_truths
    table = BANK.subject.table
    ta, tb = (spread_truths(read_relation(x, table)[0], table) for x in (a, b))
    assert ta is not None and tb is not None
    assert (ta == tb) == same
    assert differ_somewhere(ta, tb) != same
