"""Every check kind both ways: a claim that holds and one that is refuted (small specs in tmp_path).

Expected figures are worked out by hand in the comments, never taken from the engine.
"""

from grader.claims.load import load_subject
from grader.claims.run import run_subject
from spec_helpers import claim, write_spec


def run(tmp_path, *claims):
    subject = load_subject(write_spec(tmp_path, *claims))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def test_identity_both_ways(tmp_path):
    r = run(tmp_path,
            claim("holds", "holds", ['{kind: identity, lhs: "3*h*(d^2/h) + h*d_v*d", rhs: "4*d^2"}']),
            claim("refuted", "refuted", ['{kind: identity, lhs: "h*d_v", rhs: "h*d"}']))
    assert r["holds"].verdict == "holds"
    assert r["refuted"].verdict == "refuted"
    # h·(d/h) = d ≠ h·d as soon as h > 1; the counterexample must respect "h divides d"
    cx = r["refuted"].checks[0].details["counterexample"]
    assert cx["d"] % cx["h"] == 0 and cx["h"] > 1


def test_numeric_exact_and_approximate(tmp_path):
    r = run(tmp_path,
            # 4·512² = 4·262,144 = 1,048,576
            claim("exact", "holds", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,048,576"}']),
            # 2048·4096² = 2^11·2^24 = 2^35 = 34,359,738,368 ≈ 34.4B (34.35..34.45)
            claim("approx", "holds", ['{kind: numeric, expr: "n*d^2", at: {n: 2048, d: 4096}, claimed: "≈ 34.4B"}']),
            # 2^35 + 2·2^22·2^12 = 2^35 + 2^35 = 68,719,476,736: "≈ 68.8B" needs 68.75..68.85
            claim("rounded", "refuted", ['{kind: numeric, expr: "n*d^2 + 2*n^2*d", at: {n: 2048, d: 4096}, claimed: "≈ 68.8B"}']),
            claim("alias", "holds", ['{kind: numeric, expr: "d_model/h", at: {d_model: 768, h: 12}, claimed: "64"}']))
    assert [r[k].verdict for k in ("exact", "approx", "rounded", "alias")] == ["holds", "holds", "refuted", "holds"]
    assert "68,719,476,736" in r["rounded"].evidence


def test_config_both_ways(tmp_path):
    # toy: d 1024, h 16, n_kv 4 -> d_k = 64; GQA: 2·1024² + 2·1024·4·64 = 2,097,152 + 524,288 = 2,621,440
    r = run(tmp_path,
            claim("heads", "holds", ['{kind: config, model: toy, expr: h, claimed: "16"}']),
            claim("gqa", "holds", ['{kind: config, model: toy, expr: attn_params_gqa, claimed: "2,621,440"}']),
            claim("four-d2", "refuted", ['{kind: config, model: toy, expr: attn_params_gqa, claimed: "4,194,304"}']))
    assert r["heads"].verdict == r["gqa"].verdict == "holds"
    assert r["four-d2"].verdict == "refuted"
    assert "made up for the test" in r["heads"].evidence


def test_dominance_region_crossover_and_point(tmp_path):
    r = run(tmp_path,
            # 8nd² > 4n²d  <=>  2d > n: true everywhere in n < d
            claim("short", "holds", ['{kind: dominance, larger: flops_projections, smaller: flops_attention, where: "n < d"}']),
            # 4n²d > 8nd² needs n > 2d: false for d < n < 2d
            claim("long", "refuted", ['{kind: dominance, larger: flops_attention, smaller: flops_projections, where: "n > d"}']),
            claim("cross-real", "holds", ['{kind: dominance, larger: flops_attention, smaller: flops_projections, crossover: "n = 2*d"}']),
            claim("cross-text", "refuted", ['{kind: dominance, larger: flops_attention, smaller: flops_projections, crossover: "n = d"}']),
            # at n 2048, d 4096: 2^38 against 2^36, ratio 4
            claim("point", "holds", ['{kind: dominance, larger: flops_projections, smaller: flops_attention, at: {n: 2048, d: 4096}}']),
            # text's own terms: nd² = 2^35 and 2n²d = 2^35 -> equal, so no dominance
            claim("tie", "refuted", ['{kind: dominance, larger: "n*d^2", smaller: "2*n^2*d", at: {n: 2048, d: 4096}}']))
    assert {k: v.verdict for k, v in r.items()} == {
        "short": "holds", "long": "refuted", "cross-real": "holds", "cross-text": "refuted", "point": "holds",
        "tie": "refuted"}
    cx = r["long"].checks[0].details["counterexample"]
    assert cx["d"] < cx["n"] < 2 * cx["d"]                      # the counterexample lies in d < n < 2d
    assert 8 * cx["n"] * cx["d"] ** 2 > 4 * cx["n"] ** 2 * cx["d"]
    assert "n = 2*d" in r["cross-text"].evidence
    assert "ratio 4" in r["point"].evidence


def test_asymptotic_both_ways(tmp_path):
    r = run(tmp_path,
            claim("theta", "holds", ['{kind: asymptotic, expr: flops, class: Theta, of: "n^2*d + n*d^2", as: [n, d]}']),
            claim("big-o", "holds", ['{kind: asymptotic, expr: "n*d^2", class: O, of: "n^2*d + n*d^2", as: [n, d]}']),
            # n d² is not O(n² d): along d = t², n = t the ratio is t
            claim("not-o", "refuted", ['{kind: asymptotic, expr: "n*d^2", class: O, of: "n^2*d", as: [n, d]}']),
            # n² d + n d² is O(n³ + d³) but not Θ of it... and not Θ(n d²) (n = t², d = t)
            claim("not-theta", "refuted", ['{kind: asymptotic, expr: flops, class: Theta, of: "n*d^2", as: [n, d]}']))
    assert {k: v.verdict for k, v in r.items()} == {"theta": "holds", "big-o": "holds", "not-o": "refuted",
                                                    "not-theta": "refuted"}


def test_asymptotic_when_terms_cancel_along_a_path(tmp_path):
    r = run(tmp_path,
            # (n - d)² + n·d: along n = d = t the squares cancel, n·d = t² is left; n² + d² = 2t²,
            # ratio 1/2; along n = t, d = 1: t² / t² → 1; along n = t², d = t: t⁴ / t⁴ → 1 — Θ holds
            claim("cancel-holds", "holds", ['{kind: asymptotic, expr: "(n - d)^2 + n*d", class: Theta, of: "n^2 + d^2", as: [n, d]}']),
            # (n - d)² is 0 all along n = d: the ratio → 0 there, so it is O(n² + d²) but not Θ
            claim("vanishes-o", "holds", ['{kind: asymptotic, expr: "(n - d)^2", class: O, of: "n^2 + d^2", as: [n, d]}']),
            claim("vanishes-theta", "refuted", ['{kind: asymptotic, expr: "(n - d)^2", class: Theta, of: "n^2 + d^2", as: [n, d]}']),
            # n² - d² + n over n: along n = d = t it is t / t, but along n = t², d = t it is ~t² → unbounded
            claim("not-o", "refuted", ['{kind: asymptotic, expr: "n^2 - d^2 + n", class: O, of: "n", as: [n, d]}']),
            # a sqrt takes the general path (sympy.limit): sqrt(n² + d) / n → 1 along n = t (d fixed)
            claim("sqrt", "holds", ['{kind: asymptotic, expr: "sqrt(n^2 + d)", class: Theta, of: "n", as: [n]}']))
    assert {k: v.verdict for k, v in r.items()} == {"cancel-holds": "holds", "vanishes-o": "holds",
                                                    "vanishes-theta": "refuted", "not-o": "refuted", "sqrt": "holds"}
    assert "along n = t^1, d = t^1" in r["vanishes-theta"].evidence and "ratio → 0" in r["vanishes-theta"].evidence


def test_shapes_both_ways(tmp_path):
    # 17-08 Example 1: d 768, h 12, n 128 -> d_k 64
    r = run(tmp_path,
            claim("ex1", "holds", ['{kind: shapes, at: {d: 768, h: 12, n: 128}, shapes: {Q_i: [128, 64], S_i: [128, 128], concat: [128, 768], tensor.A_i: [12, 128, 128]}}']),
            claim("wrong", "refuted", ['{kind: shapes, at: {d: 768, h: 12, n: 128}, shapes: {head_i: [128, 768]}}']))
    assert r["ex1"].verdict == "holds"
    assert r["wrong"].verdict == "refuted"
    assert "(128, 64)" in r["wrong"].evidence


def test_measure_both_ways_and_large_sizes_on_meta(tmp_path):
    r = run(tmp_path,
            # 4·512² + 4·512 = 1,048,576 + 2,048 = 1,050,624
            claim("params", "holds", ['{kind: measure, quantity: params, at: {d: 512, h: 8}, claimed: "1,050,624", formula: params}']),
            claim("exactly-4d2", "refuted", ['{kind: measure, quantity: params, at: {d: 512, h: 8}, formula: "4*d^2"}']),
            # 8·2048·4096² = 2^38 = 274,877,906,944 FLOPs (meta device: no memory)
            claim("flops", "holds", ['{kind: measure, quantity: flops.projections, at: {d: 4096, h: 32, n: 2048}, claimed: "274,877,906,944"}']),
            claim("flops-text", "refuted", ['{kind: measure, quantity: flops.projections, at: {d: 4096, h: 32, n: 2048}, claimed: "≈ 34.4B"}']),
            # 32·8 = 256 matrices of 128² fp32: 256·16,384·4 = 16,777,216 bytes
            claim("bytes", "holds", ['{kind: measure, quantity: attention.bytes.fp32, at: {d: 512, h: 8, n: 128, b: 32}, claimed: "16 MiB"}']))
    assert {k: v.verdict for k, v in r.items()} == {"params": "holds", "exactly-4d2": "refuted", "flops": "holds",
                                                    "flops-text": "refuted", "bytes": "holds"}
    assert "1,050,624" in r["exactly-4d2"].evidence and "1,048,576" in r["exactly-4d2"].evidence


def test_symbolic_and_measured_disagreement_is_reported(tmp_path):
    r = run(tmp_path, claim("ex3", "refuted", [
        '{kind: numeric, expr: "n*d^2", at: {n: 2048, d: 4096}, claimed: "≈ 34.4B"}',
        '{kind: measure, quantity: flops.projections, at: {d: 4096, h: 32, n: 2048}, claimed: "≈ 34.4B"}']))
    res = r["ex3"]
    assert res.verdict == "refuted"
    # the text's n·d² is right arithmetic (34,359,738,368 ≈ 34.4B) of another quantity than the 8nd² measured
    assert res.disagreement.startswith("the text's arithmetic is right but counts another quantity: d^2*n = "
                                       "34,359,738,368 gives its figure ≈ 34.4B, while flops.projections measures "
                                       "274,877,906,944")


def test_a_formula_of_another_quantity_is_said_precisely(tmp_path):
    # params (with biases) of d = 512: 4·512² + 4·512 = 1,050,624; the formula 4d² = 1,048,576 is params_nobias
    r = run(tmp_path, claim("p", "refuted", [
        '{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1,048,576"}',
        '{kind: measure, quantity: params, at: {d: 512, h: 8}, claimed: "1,048,576", formula: "4*d^2"}']))
    assert r["p"].disagreement.startswith("the formula is not the measured quantity: 4*d^2 = 1,048,576, but params "
                                          "measures 1,050,624 at d=512, h=8")


def test_disagreement_without_a_shared_figure_keeps_the_general_sentence(tmp_path):
    r = run(tmp_path, claim("g", "refuted", [
        '{kind: identity, lhs: "4*d^2", rhs: "4*d^2 + 0*h"}',
        '{kind: measure, quantity: params, at: {d: 512, h: 8}, formula: "4*d^2"}']))
    assert r["g"].disagreement.startswith("symbolic and measured disagree")


def test_no_disagreement_when_a_symbolic_counterpart_agrees(tmp_path):
    # n 96, d 64: the real FLOPs 4·96²·64 = 2,359,296 < 8·96·64² = 3,145,728, so "n > d: n²d
    # dominates" fails both symbolically (with real FLOPs) and by measurement; the text's own
    # terms n²d > nd² for n > d hold symbolically, but they are not the measurement's counterpart.
    r = run(tmp_path, claim("dom", "refuted", [
        '{kind: dominance, larger: "d*n^2", smaller: "d^2*n", where: "n > d"}',
        '{kind: dominance, larger: "4*d*n^2", smaller: "8*d^2*n", where: "n > d"}',
        '{kind: compare, left: flops.attention, right: flops.projections, at: {d: 64, h: 8, n: 96}, claimed: greater}']))
    assert r["dom"].verdict == "refuted"
    assert r["dom"].disagreement == ""


def test_compare_both_ways(tmp_path):
    r = run(tmp_path,
            claim("same", "holds", ['{kind: compare, left: params, right: params, left_layout: fused, right_layout: per_head, at: {d: 64, h: 4}, claimed: equal}']),
            claim("fewer", "refuted", ['{kind: compare, left: params, right: params, left_layout: fused, right_layout: per_head, at: {d: 64, h: 4}, claimed: less}']),
            # n 96, d 64: attention 4·96²·64 = 2,359,296 < projections 8·96·64² = 3,145,728
            claim("attn-wins", "refuted", ['{kind: compare, left: flops.attention, right: flops.projections, at: {d: 64, h: 8, n: 96}, claimed: greater}']))
    assert {k: v.verdict for k, v in r.items()} == {"same": "holds", "fewer": "refuted", "attn-wins": "refuted"}
    assert "2,359,296" in r["attn-wins"].evidence and "3,145,728" in r["attn-wins"].evidence


def test_invariance_both_ways(tmp_path):
    r = run(tmp_path,
            # 8·64·256² + 4·64²·256 = 33,554,432 + 4,194,304 = 37,748,736 for every h
            claim("flops", "holds", ['{kind: invariance, quantity: flops.total, at: {d: 256, n: 64}, vary: {h: [1, 8, 32]}, formula: flops}']),
            # b·h matrices: 2, 16 -> depends on h
            claim("count", "refuted", ['{kind: invariance, quantity: attention.count, at: {d: 256, n: 8, b: 2}, vary: {h: [1, 8]}}']))
    assert r["flops"].verdict == "holds" and "37,748,736" in r["flops"].evidence
    assert r["count"].verdict == "refuted"


def test_equivalence_both_ways(tmp_path):
    r = run(tmp_path,
            claim("layouts", "holds", ['{kind: equivalence, a: fused, b: per_head, at: {d: 16, h: 4, n: 5, b: 2}, seed: 0}']),
            claim("torch", "holds", ['{kind: equivalence, a: per_head, b: torch, at: {d: 16, h: 4, n: 5, b: 2}, seed: 1}']),
            # with h = 1 the single head IS the model: the same function
            claim("one-head", "holds", ['{kind: equivalence, a: fused, b: single_head, at: {d: 16, h: 1, n: 5, b: 2}, seed: 2}']),
            # "h heads of width d/h compute what one head of width d computes": false. The same
            # W^Q, W^K, W^V, W^O (so the same 4·16² + 4·16 = 1,088 parameters), but softmax over each
            # head's 4-wide dot products is not softmax over the 16-wide one
            claim("heads-are-one", "refuted", ['{kind: equivalence, a: fused, b: single_head, at: {d: 16, h: 4, n: 5, b: 2}, seed: 2}']))
    assert {k: v.verdict for k, v in r.items()} == {"layouts": "holds", "torch": "holds", "one-head": "holds",
                                                    "heads-are-one": "refuted"}
    refuted = r["heads-are-one"].checks[0]
    assert refuted.details["params"] == [1088, 1088]          # the parameters agree: the outputs do not
    assert refuted.details["max_abs_diff"] > 1e-3
    assert "parameters 1,088 vs 1,088" in refuted.summary


def test_unverifiable_is_reported_with_its_reason(tmp_path):
    r = run(tmp_path, claim("gpt4", "unverifiable", ['{kind: unverifiable, reason: "GPT-4 heads undisclosed"}']))
    assert r["gpt4"].verdict == "unverifiable" and r["gpt4"].ok
    assert r["gpt4"].evidence == "GPT-4 heads undisclosed"


def test_one_failing_claim_does_not_stop_the_others(tmp_path):
    r = run(tmp_path,
            # √(2 − 10) = 2√2·i is not a real number: the check errors, its claim is "error"
            claim("broken", "holds", ['{kind: numeric, expr: "sqrt(d - 10)", at: {d: 2}, claimed: "4"}']),
            claim("fine", "holds", ['{kind: numeric, expr: "d", at: {d: 2}, claimed: "2"}']))
    assert r["broken"].verdict == "error" and not r["broken"].ok
    assert "not a real number" in r["broken"].evidence
    assert r["fine"].verdict == "holds"


def test_time_limit_per_claim(tmp_path, monkeypatch):
    import time

    from grader.claims import checks

    def slow(ctx, check):
        time.sleep(5)

    monkeypatch.setitem(checks.KINDS, "unverifiable",
                        checks.KINDS["unverifiable"].__class__("unverifiable", checks.KINDS["unverifiable"].FIELDS,
                                                               False, slow))
    subject = load_subject(write_spec(tmp_path,
                                      claim("slow", "unverifiable", ['{kind: unverifiable, reason: "x"}']),
                                      claim("next", "holds", ['{kind: numeric, expr: "d", at: {d: 2}, claimed: "2"}'])))
    res = {r.claim.id: r for r in run_subject(subject, timeout=0.2).results}
    assert res["slow"].verdict == "error" and "time limit" in res["slow"].evidence
    assert res["next"].verdict == "holds"
