"""Tolerances an author states (absolute, relative, from the digits), compare at different sizes on each
side and with a ratio, config checks that add values to a model card. Figures derived by hand."""
import pytest

from grader.errors import ErrorList
from grader.claims.load import load_subject
from grader.claims.run import run_subject
from spec_helpers import HEADER, claim, write_spec

H = HEADER.replace("symbols:\n", "symbols:\n  L: {positive: true, integer: true}\n  g: {positive: true, integer: true}\n"
                   "  p: {positive: true, integer: true, meaning: bytes per number}\n")


def run(tmp_path, *claims):
    subject = load_subject(write_spec(tmp_path, *claims, header=H))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def test_numeric_and_measure_tolerances(tmp_path):
    # GPT-2 small's 124,439,808 parameters stated as "117M": off by 7,439,808, which is 6.0% of 117M
    at = "{d: 768, h: 12, d_ff: 3072, L: 12, V: 50257, n_ctx: 1024}"
    h2 = H.replace("symbols:\n", "symbols:\n  d_ff: {positive: true, integer: true}\n  V: {positive: true, integer: true}\n"
                   "  n_ctx: {positive: true, integer: true}\n")
    claims = [
        claim("digits", "refuted", [f'{{kind: measure, quantity: params.model, at: {at}, claimed: "117M"}}']),
        claim("rel7", "holds", [f'{{kind: measure, quantity: params.model, at: {at}, claimed: "117M", tolerance: "7%"}}']),
        claim("rel5", "refuted", [f'{{kind: measure, quantity: params.model, at: {at}, claimed: "117M", tolerance: "5%"}}']),
        claim("abs", "holds", [f'{{kind: measure, quantity: params.model, at: {at}, claimed: "117M", tolerance: 7.5M}}']),
        # 4·512² = 1,048,576 stated as "1M": within 0.5M from the digits; not within 1,000
        claim("num-digits", "holds", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1M", tolerance: digits}']),
        claim("num-abs", "refuted", ['{kind: numeric, expr: "4*d^2", at: {d: 512}, claimed: "1M", tolerance: 1000}'])]
    s = load_subject(write_spec(tmp_path, *claims, header=h2))
    r = {x.claim.id: x for x in run_subject(s, device="cpu").results}
    assert {k: v.verdict for k, v in r.items()} == {"digits": "refuted", "rel7": "holds", "rel5": "refuted",
                                                    "abs": "holds", "num-digits": "holds", "num-abs": "refuted"}
    assert "117M (= 117,000,000 ± 8,190,000, stated tolerance 7%)" in r["rel7"].evidence


def test_compare_sides_ratio_and_invariance_tolerance(tmp_path):
    # KV cache per token and layer, fp32: 2·g·d_k·4; d 4096, h 32 (d_k 128): MHA 32 768 bytes, GQA g 8: 8,192
    r = run(tmp_path,
            claim("h-over-g", "holds", ['{kind: compare, left: bytes.kv_cache_token_layer, right: bytes.kv_cache_token_layer, '
                                        'at: {d: 4096, h: 32}, right_at: {g: 8}, claimed: greater, ratio: "4"}']),
            claim("wrong-ratio", "refuted", ['{kind: compare, left: bytes.kv_cache_token_layer, right: bytes.kv_cache_token_layer, '
                                             'at: {d: 4096, h: 32}, right_at: {g: 8}, ratio: "8"}']),
            # params 4d² + 4d of d = 512 and 4·520² + 4·520 = 1,083,680: 3.1% apart; "equal" within 5%
            claim("near", "holds", ['{kind: compare, left: params, right: params, left_at: {d: 512, h: 8}, '
                                    'right_at: {d: 520, h: 8}, claimed: equal, tolerance: "5%"}']),
            claim("exact", "refuted", ['{kind: compare, left: params, right: params, left_at: {d: 512, h: 8}, '
                                       'right_at: {d: 520, h: 8}, claimed: equal}']),
            # flops.total 8nd² + 4n²d at d 64, h 4, n 8 and 9: 32,768 + 16,384 = 49,152 and 36,864 + 20,736 = 57,600
            claim("inv", "holds", ['{kind: invariance, quantity: flops.total, at: {d: 64, h: 4}, vary: {n: [8, 9]}, '
                                   'tolerance: "15%"}']),
            claim("inv-tight", "refuted", ['{kind: invariance, quantity: flops.total, at: {d: 64, h: 4}, vary: {n: [8, 9]}, '
                                           'tolerance: "10%"}']))
    assert {k: v.verdict for k, v in r.items()} == {"h-over-g": "holds", "wrong-ratio": "refuted", "near": "holds",
                                                    "exact": "refuted", "inv": "holds", "inv-tight": "refuted"}
    assert "ratio left/right = 4" in r["h-over-g"].evidence


def test_config_adds_values_to_a_model_card(tmp_path):
    # the toy card has d 1024, h 16, n_kv 4 (d_k 64); a KV cache of n = 4096 tokens at fp16 (p = 2) per layer:
    # 2·n·n_kv·d_k·p = 2·4096·4·64·2 = 4,194,304 = 4 MiB
    r = run(tmp_path,
            claim("kv", "holds", ['{kind: config, model: toy, values: {n: 4096, p: 2}, expr: "2*n*n_kv*d_k*p", '
                                  'claimed: "4 MiB"}']))
    assert r["kv"].verdict == "holds" and "for Toy model with n=4,096, p=2" in r["kv"].evidence


@pytest.mark.parametrize("check, message", [
    ('{kind: numeric, expr: d, at: {d: 1}, claimed: "1", tolerance: "lots"}', "bad tolerance 'lots'"),
    ('{kind: numeric, expr: d, at: {d: 1}, claimed: "1", tolerance: "500%"}', "at most 100%"),
    ('{kind: config, model: toy, values: {d: 4}, expr: d, claimed: "4"}', "records d already"),
    ('{kind: compare, left: params, right: params, at: {d: 8, h: 2}}', "needs 'claimed'"),
])
def test_bad_tolerances_and_values_are_load_errors(tmp_path, check, message):
    with pytest.raises(ErrorList) as e:
        load_subject(write_spec(tmp_path, claim("c", "holds", [check]), header=H))
    assert any(message in str(x) for x in e.value.errors), [str(x) for x in e.value.errors]
