"""The `roofline` check kind (issue #27): a step of the real model — its FLOPs and bytes measured on
mha — on a cited hardware card: bound by memory or by compute, and its least time. Every expected
value is derived by hand here, from the configuration and the card alone (the model's FLOPs and bytes
are those derived in tests/test_mha_inference.py)."""
import pytest

from grader.claims.load import load_subject
from grader.claims.run import run_subject
from grader.errors import ErrorList
from spec_helpers import HEADER, claim, write_spec

# A toy card whose figures make the arithmetic plain: ridge fp16 = 1 FLOP/byte, fp32 = 0.5 FLOP/byte,
# and one byte or one FLOP takes 1 ps (1 TB/s, 1 TFLOP/s at fp16).
H = HEADER.replace("symbols:\n", "symbols:\n"
                   "  L: {positive: true, integer: true}\n"
                   "  g: {positive: true, integer: true}\n"
                   "  d_ff: {positive: true, integer: true}\n"
                   "  V: {positive: true, integer: true}\n") + """hardware:
  toy:
    name: Toy card
    citation: "made up for the test"
    peak: {fp16: 1 TFLOP/s, fp32: 0.5 TFLOP/s, fp8: 2 TFLOP/s}
    bandwidth: 1 TB/s
    memory: 1 GB
  nobw:
    name: No bandwidth
    citation: "made up"
    peak: {fp16: 1 TFLOP/s}
  h100-sxm:
    name: NVIDIA H100 SXM
    citation: "NVIDIA H100 datasheet, SXM, dense"
    peak: {fp16: 989 TFLOP/s, fp32: 67 TFLOP/s}
    bandwidth: 3.35 TB/s
"""
# The MQA reference of tests/test_mha_inference.py: d = 8, h = 2, g = 1, d_k = 4, d_ff = 16, GELU, LayerNorm,
# biases; two layers, V = 10, tied; the step at n = 5.
BLOCK = "{d: 8, h: 2, g: 1, d_ff: 16, n: 5}"
MODEL = "{d: 8, h: 2, g: 1, d_ff: 16, n: 5, L: 2, V: 10}"


def run(tmp_path, *claims):
    subject = load_subject(write_spec(tmp_path, *claims, header=H))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def load_errors(tmp_path, *claims):
    with pytest.raises(ErrorList) as e:
        load_subject(write_spec(tmp_path, *claims, header=H))
    return [str(x) for x in e.value.errors]


def evidence(r):
    return " | ".join(c.summary for c in r.checks)


def rl(fields):
    return "{kind: roofline, card: toy, " + fields + "}"


def test_decode_is_bound_by_memory_and_prefill_by_compute(tmp_path):
    r = run(tmp_path,
            # decode step, whole model, fp16: 2,272 FLOPs (2 layers · 1,056 + lm_head 160) over 2,524 bytes
            # (tests/test_mha_inference.py) = 0.900158 FLOP/byte < ridge 1 TFLOP/s / 1 TB/s = 1: memory;
            # least time max(2,524 bytes / 1 TB/s = 2.524 ns, 2,272 FLOPs / 1 TFLOP/s = 2.272 ns) = 2.524 ns
            claim("decode", "holds", [rl(f"step: decode_step, at: {MODEL}, dtype: fp16, bound: memory, "
                                         'time: "2.524 ns"')]),
            claim("decode-compute", "refuted", [rl(f"step: decode_step, at: {MODEL}, dtype: fp16, bound: compute")]),
            # prefill, fp16: 2·5,280 + lm_head 5·160 = 11,360 FLOPs over 4,608/2 + 160 + 160 + 40 + 100 = 2,764
            # bytes = 4.10999 > 1: compute; max(2.764 ns, 11.36 ns) = 11.36 ns
            claim("prefill", "holds", [rl(f"step: prefill, at: {MODEL}, dtype: fp16, bound: compute, "
                                          'time: "11.36 ns"')]),
            # one block's decode step, fp32: 1,056 FLOPs over 2,368 bytes = 0.445946 < ridge 0.5 TFLOP/s / 1 TB/s
            # = 0.5: memory; max(2,368 / 10¹² = 2.368 ns, 1,056 / (0.5·10¹²) = 2.112 ns) = 2.368 ns
            claim("layer", "holds", [rl(f"step: decode_step_layer, at: {BLOCK}, dtype: fp32, bound: memory, "
                                        'time: "≈ 2.37 ns"')]),
            # one block's prefill, fp32: 5,280 FLOPs over 2,752 bytes = 1.9186 > 0.5: compute;
            # max(2.752 ns, 5,280 / (0.5·10¹²) = 10.56 ns) = 10.56 ns, not the text's 2.75 ns (its bytes only)
            claim("layer-prefill", "refuted", [rl(f"step: prefill_layer, at: {BLOCK}, dtype: fp32, bound: compute, "
                                                  'time: "≈ 2.75 ns"')]))
    assert {k: v.verdict for k, v in r.items()} == {"decode": "holds", "decode-compute": "refuted", "prefill": "holds",
                                                   "layer": "holds", "layer-prefill": "refuted"}, \
        {k: evidence(v) for k, v in r.items()}
    text = evidence(r["decode"])
    assert ("measured flops.decode_step = 2,272 FLOPs, bytes.decode_step = 2,524 bytes at d=8, h=2, g=1, d_ff=16, "
            "n=5, L=2, V=10 (fp16, gelu, layernorm, biases, tied) on Toy card") in text, text
    assert ("intensity 2,272 / 2,524 = 0.900158 FLOP/byte < ridge point 1 TFLOP/s / 1 TB/s = 1 FLOP/byte: "
            "bound by memory; claimed memory-bound") in text, text
    assert ("least time max(2,524 bytes / 1 TB/s = 2.524 ns, 2,272 FLOPs / 1 TFLOP/s = 2.272 ns) = 2.524 ns; "
            "claimed 2.524 ns (= 0.000000002524 ± 0.0000000000005 s)") in text, text
    assert text.endswith("[made up for the test]")
    assert "bound by memory; claimed compute-bound (differs)" in evidence(r["decode-compute"])
    assert "0.445946 FLOP/byte < ridge point 0.5 TFLOP/s / 1 TB/s = 0.5 FLOP/byte" in evidence(r["layer"])
    assert "= 10.56 ns; claimed ≈ 2.75 ns" in evidence(r["layer-prefill"])
    assert "(differs)" in evidence(r["layer-prefill"])


def test_the_roofline_uses_the_measured_intensity():
    """The FLOPs and bytes a roofline reads are those whose ratio is the measured intensity.* quantity."""
    from grader.claims.hardware import STEPS
    from grader.claims.measure import measure
    at = {"d": 8, "h": 2, "g": 1, "d_ff": 16, "n": 5}
    model = {**at, "L": 2, "V": 10}
    for step, (fq, bq) in STEPS.items():
        sizes = at if step.endswith("_layer") else model
        got = measure(fq, sizes, model={"dtype": "fp16"}) / measure(bq, sizes, model={"dtype": "fp16"})
        assert got == measure(f"intensity.{step}", sizes, model={"dtype": "fp16"}), step


def test_llama2_7b_decoding_on_an_h100_is_memory_bound(tmp_path):
    # Llama 2 7B (swiglu, rmsnorm, no biases, untied) decoding at n = 1,024 in fp16, by hand:
    # weights read: 6,738,415,616 parameters less the embedding's 32,000·4,096 = 131,072,000 but its one row
    #   (4,096): 6,607,347,712 · 2 = 13,214,695,424 bytes; KV cache read 2·1,024·4,096·2·32 = 536,870,912;
    #   written 2·4,096·2·32 = 524,288; token id 8 + logits 32,000·2 = 64,000 → 13,752,154,632 bytes
    # FLOPs: 2 · (32 · (4·4,096² + 3·4,096·11,008) + 32,000·4,096) = 13,214,154,752, attention
    #   4·1,024·4,096·32 = 536,870,912 → 13,751,025,664; intensity 1 − 1,128,968/13,752,154,632 = 0.999918
    #   ≪ ridge 989/3.35 = 295.224
    # least time 13,752,154,632 / 3.35·10¹² = 4.10512 ms (compute: 13,751,025,664 / 989·10¹² = 13.904 µs)
    llama = "{d: 4096, h: 32, d_ff: 11008, L: 32, V: 32000, n: 1024}"
    r = run(tmp_path, claim("llama", "holds", [
        "{kind: roofline, card: h100-sxm, step: decode_step, at: " + llama + ", activation: swiglu, norm: rmsnorm, "
        'bias: false, tied: false, dtype: fp16, bound: memory, time: "≈ 4.1 ms"}']))
    text = evidence(r["llama"])
    assert r["llama"].verdict == "holds", text
    assert "flops.decode_step = 13,751,025,664 FLOPs, bytes.decode_step = 13,752,154,632 bytes" in text
    assert "= 0.999918 FLOP/byte < ridge point 989 TFLOP/s / 3.35 TB/s = 295.224 FLOP/byte" in text
    assert "= 4.10512 ms, 13,751,025,664 FLOPs / 989 TFLOP/s = 13.904 µs) = 4.10512 ms" in text, text


@pytest.mark.parametrize("check, message", [
    (rl(f"step: decode_step, at: {MODEL}, dtype: fp16"), "states what the text claims: 'bound'"),
    (rl(f'step: decode_step, at: {MODEL}, dtype: fp16, time: "4 MB"'), "time must be in seconds"),
    (rl(f'step: decode_step, at: {MODEL}, dtype: fp16, time: "4"'), "time must be in seconds"),
    (rl(f"step: decode_step, at: {MODEL}, dtype: fp16, bound: memory, tolerance: 5%"), "a tolerance applies to 'time'"),
    (rl(f"step: decode_step, at: {MODEL}, dtype: bf16, bound: memory"), "records no peak for bf16"),
    (rl(f"step: decode_step, at: {MODEL}, dtype: fp8, bound: memory"), "dtype must be one of fp32, fp16, bf16, fp64"),
    (rl(f"step: decode_step, at: {MODEL}, bound: memory"), "needs 'dtype'"),
    (rl(f"step: decode_step, at: {MODEL}, dtype: fp16, bound: disk"), "bound must be one of memory, compute"),
    (rl(f"step: decode, at: {MODEL}, dtype: fp16, bound: memory"), "step must be one of decode_step, prefill"),
    ("{kind: roofline, card: nobw, step: decode_step, at: " + MODEL + ", dtype: fp16, bound: memory}",
     "records no memory bandwidth"),
    ("{kind: roofline, card: a100, step: decode_step, at: " + MODEL + ", dtype: fp16, bound: memory}",
     "unknown hardware 'a100'"),
    (rl(f"step: decode_step, at: {BLOCK}, dtype: fp16, bound: memory"), "needs a value for L, V"),
    (rl(f"step: decode_step_layer, at: {MODEL}, dtype: fp16, bound: memory"), "'L' is not a size of"),
    (rl(f"step: decode_step, at: {MODEL}, dtype: fp16, bound: memory, layout: fused"), "unknown key 'layout'"),
])
def test_roofline_mistakes_are_located_errors(tmp_path, check, message):
    errors = load_errors(tmp_path, claim("c", "holds", [check]))
    assert any(message in e and "t.yaml:" in e for e in errors), errors
