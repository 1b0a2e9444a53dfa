"""Units in the checks that evaluate expressions beside `numeric` (issue #27): `range`,
`dominance` take the values of symbols with units in base units, as `numeric` does, and
`dominance` and `identity` refuse to compare two sides of different dimensions (an identity needs
no scaling: scaling each symbol by its unit's factor keeps an identity an identity). Expected values by hand."""
from test_spec_units import H, evidence, load_errors, run
from spec_helpers import claim

# The A100's figures: W = 2,039 GB/s, F = 312 TFLOP/s; a decode step of Llama 2 7B reads about
# M = 15.4 GB and does about Y = 15.4 GFLOP.
#   time bound by memory  = 15.4e9 / 2,039e9 s = 77/10195 s ≈ 7.55 ms
#   time bound by compute = 15.4e9 / 312e12 s  = 77/1,560,000 s ≈ 0.0494 ms
# (in the symbols' own units the second would be 15.4e9/312 ≈ 4.9e7, "10¹² times" too long).
HY = H.replace("  x: {positive: true}\n", "  x: {positive: true}\n  Y: {positive: true, unit: FLOP}\n"
               "  B: {positive: true, unit: GB/s}\n  T: {positive: true, unit: ms}\n")
AT = "{M: 15.4, B: 2039, Y: 15400000000, F: 312}"


def test_range_evaluates_in_base_units_and_shows_the_unit(tmp_path):
    r = run(tmp_path,
            claim("in", "holds", [f'{{kind: range, expr: "M/B", at: {AT}, lo: 0.007, hi: 0.008}}']),
            # 0.0000494 s is below 0.001 s (in the symbols' units it would be 49,358,974: above)
            claim("compute-time", "holds", [f'{{kind: range, expr: "Y/F", at: {AT}, hi: 0.001}}']),
            claim("out", "refuted", [f'{{kind: range, expr: "M/B", at: {AT}, lo: 7, hi: 8}}'],
                  corrected="y"),
            header=HY)
    assert r["in"].verdict == "holds" and r["compute-time"].verdict == "holds", evidence(r["compute-time"])
    assert r["out"].verdict == "refuted"
    assert "77/10195" in evidence(r["in"]) and " s, within [0.007, 0.008]" in evidence(r["in"])


def test_dominance_compares_two_times_in_base_units(tmp_path):
    r = run(tmp_path,
            claim("memory-bound", "holds", [f'{{kind: dominance, larger: "M/B", smaller: "Y/F", at: {AT}}}']),
            claim("compute-bound", "refuted", [f'{{kind: dominance, larger: "Y/F", smaller: "M/B", at: {AT}}}'],
                  corrected="y"),
            header=HY)
    assert r["memory-bound"].verdict == "holds" and r["compute-bound"].verdict == "refuted"
    # ratio (77/10195) / (77/1560000) = 1,560,000/10,195 = 312,000/2,039 ≈ 153.016: the ridge point
    assert "312000/2039" in evidence(r["memory-bound"])


def test_sides_of_different_dimensions_are_a_located_load_error(tmp_path):
    errors = load_errors(tmp_path,
                         claim("a", "holds", [f'{{kind: dominance, larger: "M/B", smaller: "M", at: {AT}}}']),
                         claim("b", "holds", ['{kind: identity, lhs: "T", rhs: "M"}']),
                         header=HY)
    assert any("dominance check compares seconds (larger) with bytes (smaller)" in e for e in errors), errors
    assert any("identity check compares seconds (lhs) with bytes (rhs)" in e for e in errors), errors
    assert all(":" in e.split(" ")[0] for e in errors)          # each at file:line:column
