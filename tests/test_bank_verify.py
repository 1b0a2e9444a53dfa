"""Every reference of the bundled bank is verified against the spec and the real mha; a wrong
reference fails, saying what was expected and what was found."""
import textwrap

import pytest

from grader.bank import load_bank, verify_reference

BANK = load_bank()


@pytest.mark.parametrize("pid", [p.id for p in BANK.problems])
def test_bundled_reference_verifies(pid):
    v = verify_reference(BANK.get(pid), BANK)
    assert v.ok, f"{pid}: {v.message} (expected {v.expected}, found {v.found})"


def test_numbers_are_checked_against_spec_and_mha():
    v = verify_reference(BANK.get("17-08/example-3.total_flops"), BANK)
    assert v.ok
    # 8·2048·4096² + 4·2048²·4096 = 274,877,906,944 + 68,719,476,736
    assert "spec: 343,597,383,680" in v.found and "mha: 343,597,383,680" in v.found


WRONG = """\
subject: 17-08
problems:
  - id: 17-08/w.number
    prompt: params, no biases, d 512
    kind: number
    reference: 1048577
    derive: {formula: params_nobias, at: {d: 512, h: 8}}
  - id: 17-08/w.measured
    prompt: attention matrices, h 8, b 32
    kind: number
    reference: 8
    measure: {quantity: attention.count, at: {b: 32, h: 8, n: 16, d: 64}}
  - id: 17-08/w.shape
    prompt: Q_i
    kind: shape
    reference: [64, 128]
    derive: {formula: [n, d_k], at: {d: 768, h: 12, n: 128}}
    measure: {quantity: shape.Q_i, at: {d: 768, h: 12, n: 128}}
  - id: 17-08/w.expression
    prompt: params with biases
    kind: expression
    reference: "4*d**2 + 3*d"
    derive: {formula: params}
  - id: 17-08/w.expression-measured
    prompt: params with biases, measured
    kind: expression
    reference: "4*d**2"
    measure: {quantity: params, at: [{d: 8, h: 2}, {d: 16, h: 4}]}
  - id: 17-08/w.relation
    prompt: crossover
    kind: relation
    reference: "n > d"
    derive: {lhs: flops_attention, op: ">", rhs: flops_projections}
  - id: 17-08/w.unknown-formula
    prompt: nothing by that name
    kind: number
    reference: 1
    derive: {formula: no_such_formula, at: {d: 1}}
  - id: 17-08/w.underivable
    prompt: no derivation at all
    kind: number
    reference: 96
  - id: 17-08/w.variant
    prompt: "d = {d}, h = {h}: d_k?"
    kind: number
    reference: 64
    derive: {formula: d_k, at: {d: 512, h: 8}}
    variant: {seed_from: learner, choose: {d: [100], h: [7, 9]}}
"""


@pytest.fixture(scope="module")
def wrong(tmp_path_factory):
    p = tmp_path_factory.mktemp("wrong") / "bank.yaml"
    p.write_text(textwrap.dedent(WRONG))
    return load_bank(p)


def test_every_wrong_reference_fails(wrong):
    for p in wrong:
        v = verify_reference(p, wrong)
        assert not v.ok, f"{p.id} verified but its reference is wrong"
        assert v.message


def test_wrong_number_says_expected_and_found(wrong):
    v = verify_reference(wrong.get("17-08/w.number"), wrong)
    assert v.expected == "1,048,577"
    assert "1,048,576" in v.found                      # 4·512² = 1,048,576
    assert "params_nobias at d=512, h=8 gives 1,048,576" in v.message


def test_wrong_measured_count(wrong):
    v = verify_reference(wrong.get("17-08/w.measured"), wrong)
    assert "mha: 256" in v.found                       # 32 · 8 = 256


def test_wrong_shape(wrong):
    v = verify_reference(wrong.get("17-08/w.shape"), wrong)
    assert v.expected == "(64, 128)" and "(128, 64)" in v.found


def test_wrong_expression_and_relation(wrong):
    v = verify_reference(wrong.get("17-08/w.expression"), wrong)
    assert not v.ok and "the spec's params gives" in v.message
    v = verify_reference(wrong.get("17-08/w.expression-measured"), wrong)
    # params with biases at d=8: 4·64 + 4·8 = 288, the reference 4d² gives 256
    assert "at d=8, h=2 the reference gives 256 but the real mha measures 288" in v.message
    assert not verify_reference(wrong.get("17-08/w.relation"), wrong).ok


def test_underivable_and_variant_without_draws(wrong):
    assert "cannot be verified" in verify_reference(wrong.get("17-08/w.underivable"), wrong).message
    assert "cannot derive" in verify_reference(wrong.get("17-08/w.unknown-formula"), wrong).message
    v = verify_reference(wrong.get("17-08/w.variant"), wrong)
    assert "no variant has a well-defined reference" in v.message   # 7 and 9 do not divide 100
