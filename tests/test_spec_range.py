"""The `range` check kind: a derived quantity lies within [lo, hi] (the kind added to show the
registry's steps). Expected values by hand."""
import pytest
from spec_helpers import claim, write_spec

from grader.errors import ErrorList
from grader.claims.load import load_subject
from grader.claims.run import run_subject


def results(tmp_path, *claims):
    return {r.claim.id: r for r in run_subject(load_subject(write_spec(tmp_path, *claims))).results}


def test_within_above_and_below(tmp_path):
    r = results(tmp_path,
                # d_k = 512 / 8 = 64, in [32, 128]
                claim("dk", "holds", ["{kind: range, expr: d_k, at: {d: 512, h: 8}, lo: 32, hi: 128}"]),
                # b·h·n² = 32 · 8 · 1024² = 268,435,456 > 10^8
                claim("big", "refuted", ["{kind: range, expr: b*h*n^2, at: {b: 32, h: 8, n: 1024}, hi: 1e8}"]),
                # 4d² + 4d at d = 4: 80 < 100
                claim("small", "refuted", ["{kind: range, expr: params, at: {d: 4}, lo: 100}"]),
                # bounds included: d/h = 768/12 = 64 exactly
                claim("edge", "holds", ["{kind: range, expr: d/h, at: {d: 768, h: 12}, lo: 64, hi: 64}"]),
                # a fraction stays exact: n/d = 3/2 is above 1.4 and below 1.5000001
                claim("frac", "holds", ["{kind: range, expr: n/d, at: {n: 3, d: 2}, lo: 1.4, hi: 1.5000001}"]),
                # a bound is compared exactly: 3/2 is above 1.49999
                claim("exact", "refuted", ["{kind: range, expr: n/d, at: {n: 3, d: 2}, hi: 1.49999}"]))
    assert r["dk"].verdict == "holds" and r["dk"].evidence == "d/h at d=512, h=8 = 64, within [32, 128]"
    assert r["big"].verdict == "refuted"
    assert r["big"].evidence == "b*h*n^2 at b=32, h=8, n=1,024 = 268,435,456, above 100,000,000 (range [-∞, 100,000,000])"
    assert r["small"].verdict == "refuted" and "= 80, below 100" in r["small"].evidence
    assert r["edge"].verdict == "holds"
    assert r["frac"].verdict == "holds" and "n/d at n=3, d=2 = 1.5, within [1.4, " in r["frac"].evidence
    assert r["exact"].verdict == "refuted" and "above" in r["exact"].evidence
    assert all(x.ok for x in r.values())


@pytest.mark.parametrize("check, message", [
    ("{kind: range, expr: d, at: {d: 4}}", "a range check needs 'lo', 'hi' or both"),
    ("{kind: range, expr: d, at: {d: 4}, lo: 5, hi: 1}", "lo (5) is above hi (1): an empty range"),
    ("{kind: range, expr: d*n, at: {d: 4}, hi: 1}", "a range check needs a value for n (the expression uses it)"),
    ("{kind: range, expr: d, at: {d: 4}, hi: many}", "hi must be a number (like 128, 0.5 or 1e8), got 'many'"),
    ("{kind: range, expr: d, at: {d: 4}, hi: 1, top: 2}", "unknown key 'top' in a range check"),
])
def test_a_bad_range_check_is_a_located_spec_error(tmp_path, check, message):
    with pytest.raises(ErrorList) as info:
        load_subject(write_spec(tmp_path, claim("c", "holds", [check])))
    text = str(info.value)
    assert message in text, text
    assert "t.yaml:" in text                    # located: file:line:column
