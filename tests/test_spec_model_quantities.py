"""The transformer's measured quantities in the spec language (params.block, params.model, flops.*,
bytes.kv_cache*), GQA's g in the attention layer's sizes, and strict sizes: a size that the measured
thing does not take is an error when the spec loads, never dropped.

Expected figures are derived by hand in the comments, from the published configurations.
"""
import pytest

from grader.errors import ErrorList
from grader.claims.load import load_subject
from grader.claims.run import run_subject
from spec_helpers import HEADER, claim, write_spec

MODEL_HEADER = HEADER.replace("symbols:\n", """symbols:
  L: {positive: true, integer: true}
  d_ff: {positive: true, integer: true}
  V: {positive: true, integer: true}
  n_ctx: {positive: true, integer: true}
  g: {positive: true, integer: true}
""")

GPT2 = "{d: 768, h: 12, d_ff: 3072, L: 12, V: 50257, n_ctx: 1024}"
LLAMA7 = "{d: 4096, h: 32, d_ff: 11008, L: 32, V: 32000}"
LLAMA_OPTS = "activation: swiglu, norm: rmsnorm, bias: false, tied: false"


def run(tmp_path, *claims):
    subject = load_subject(write_spec(tmp_path, *claims, header=MODEL_HEADER))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def load_errors(tmp_path, *claims):
    with pytest.raises(ErrorList) as e:
        load_subject(write_spec(tmp_path, *claims, header=MODEL_HEADER))
    return [str(x) for x in e.value.errors]


def test_parameter_counts_of_published_models(tmp_path):
    r = run(tmp_path,
            # GPT-2 small block: attention 4·768² + 4·768 = 2,362,368; FFN 2·768·3072 + 3072 + 768
            # = 4,722,432; two layer norms 4·768 = 3,072 -> 7,087,872
            claim("gpt2-block", "holds", [f'{{kind: measure, quantity: params.block, at: {{d: 768, h: 12, d_ff: 3072}}, '
                                         f'claimed: "7,087,872"}}']),
            # + 12 blocks 85,054,464 + tokens 50257·768 = 38,597,376 + positions 1024·768 = 786,432
            # + final norm 1,536 = 124,439,808 (tied output layer: counted once) — not the paper's "117M"
            claim("gpt2-117m", "refuted", [f'{{kind: measure, quantity: params.model, at: {GPT2}, activation: gelu_tanh, '
                                          f'claimed: "117M"}}']),
            claim("gpt2-exact", "holds", [f'{{kind: measure, quantity: params.model, at: {GPT2}, claimed: "124,439,808"}}']),
            # LLaMA-2 7B: 32 × (4·4096² + 3·4096·11008 + 2·4096) = 32 × 202,383,360 = 6,476,267,520
            # + 2 · 32000·4096 (untied) = 262,144,000 + 4096 = 6,738,415,616
            claim("llama7", "holds", [f'{{kind: measure, quantity: params.model, at: {LLAMA7}, {LLAMA_OPTS}, '
                                      f'claimed: "6,738,415,616"}}']))
    assert {k: v.verdict for k, v in r.items()} == {"gpt2-block": "holds", "gpt2-117m": "refuted",
                                                    "gpt2-exact": "holds", "llama7": "holds"}
    assert "124,439,808" in r["gpt2-117m"].evidence


def test_kv_cache_of_mha_gqa_and_mqa(tmp_path):
    # per token: 2 (K and V) · L · g · d_k · bytes. LLaMA-2 7B (MHA, g = h = 32, d_k 128) at fp16:
    # 2·32·32·128·2 = 524,288; the same with g = 8 (GQA): 131,072; g = 1 (MQA): 16,384
    at = "{d: 4096, h: 32, L: 32"
    r = run(tmp_path,
            claim("mha", "holds", [f'{{kind: measure, quantity: bytes.kv_cache_token, at: {at}}}, dtype: fp16, claimed: "524,288"}}']),
            claim("gqa", "holds", [f'{{kind: measure, quantity: bytes.kv_cache_token, at: {at}, g: 8}}, dtype: fp16, claimed: "131,072"}}']),
            claim("mqa", "holds", [f'{{kind: measure, quantity: bytes.kv_cache_token, at: {at}, g: 1}}, dtype: fp16, '
                                   f'formula: "2*L*g*(d/h)*2", claimed: "16,384"}}']),
            # a sequence of 4096 tokens, batch 2, fp32: 2·32·4096·4 · 4096 · 2 = 8 GiB
            claim("seq", "holds", [f'{{kind: measure, quantity: bytes.kv_cache, at: {at}, n: 4096, b: 2}}, claimed: "8 GiB"}}']),
            claim("smaller", "holds", [f'{{kind: compare, left: bytes.kv_cache_token_layer, right: bytes.kv_cache_token_layer, '
                                       f'at: {{d: 4096, h: 32}}, claimed: equal}}']))
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "holds")


def test_flops_of_a_stack_and_gqa_layer(tmp_path):
    # GPT-2 small, n = 1024: FFN 12 · 2·2·1024·768·3072 = 115,964,116,992; attention (QKᵀ, A·V)
    # 12 · 2·2·1024²·768 = 38,654,705,664; the FFN costs 3× the attention's matmuls
    r = run(tmp_path,
            claim("ffn", "holds", [f'{{kind: measure, quantity: flops.ffn, at: {{d: 768, h: 12, d_ff: 3072, L: 12, '
                                   f'V: 50257, n_ctx: 1024, n: 1024}}, formula: "4*L*n*d*d_ff", claimed: "≈ 116.0B"}}']),
            claim("ffn-vs-attn", "holds", [f'{{kind: compare, left: flops.ffn, right: flops.attention, '
                                           f'at: {{d: 768, h: 12, d_ff: 3072, L: 12, V: 50257, n: 1024}}, claimed: greater}}']),
            # one GQA layer (no bias): Q and O 2·d², K and V 2·d·g·d_k: 2·1024² + 2·1024·4·64 = 2,621,440
            claim("gqa-layer", "holds", ['{kind: measure, quantity: params_nobias, at: {d: 1024, h: 16, n_kv: 4}, '
                                         'formula: attn_params_gqa}']),
            # decoding one token after 1023 cached costs about 1/1024 of the forward's matmuls and more:
            # projections 8·d² per token, attention 4·n·d; the forward's per token cost is the same
            claim("decode", "holds", [f'{{kind: compare, left: flops.decode_step, right: flops.forward, '
                                      f'at: {{d: 64, h: 4, d_ff: 256, L: 2, V: 100, n: 32}}, claimed: less}}']))
    assert {k: v.verdict for k, v in r.items()} == dict.fromkeys(r, "holds")


def test_a_size_the_quantity_does_not_take_is_a_located_error(tmp_path):
    claims = (  # params of ONE attention layer: L and g of a stack cannot be dropped silently
        claim("c1", "holds", ['{kind: measure, quantity: params, at: {d: 512, h: 8, L: 6}}']),
        claim("c2", "holds", ['{kind: measure, quantity: shape.Q_i, at: {d: 512, h: 8, n: 4, g: 2}}']))
    errs = load_errors(tmp_path, *claims)
    lines = (MODEL_HEADER + "claims:\n" + "".join(claims)).splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "L: 6" in t)
    col = lines[line - 1].index("L: 6") + 1
    assert any("'L' is not a size of params" in e and "takes d (d_model), h (heads); optionally g" in e
               and f"t.yaml:{line}:{col}:" in e for e in errs), errs
    assert any("'g' is not a size of shape.Q_i" in e for e in errs), errs


def test_b_needs_no_symbol_and_g_must_divide_h(tmp_path):
    header = HEADER.replace("  b: {positive: true, integer: true}\n", "")
    assert "b:" not in header.split("claims")[0].split("aliases")[0]
    s = load_subject(write_spec(tmp_path, claim("c", "holds", [
        '{kind: measure, quantity: attention.count, at: {d: 64, h: 4, n: 8, b: 3}, claimed: "12"}']), header=header))
    r = run_subject(s, device="cpu").results[0]
    assert r.verdict == "holds", r.evidence      # b·h = 12 attention matrices
    errs = load_errors(tmp_path, claim("c", "holds", ['{kind: measure, quantity: params, at: {d: 64, h: 4, g: 3}}']))
    assert any("g to divide h" in e for e in errs), errs
