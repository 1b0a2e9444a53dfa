"""The third subject, spec/17-10.yaml (inference arithmetic): every verdict as its author expects, the
text's five slips refuted, and the key figures derived by hand here, independently of the engine (Llama 2
7B's and LLaMA 3 8B's config.json, the A100 80GB SXM datasheet)."""
import json
from fractions import Fraction

from grader.claims.load import load_subject
from grader.claims.run import run_subject

# Llama 2 7B: d 4096, h = g = 32, L 32, d_ff 11008, V 32000; LLaMA 3 8B: g 8, d_ff 14336, V 128256
P2 = 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
P3 = 32 * (2 * 4096**2 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336 + 2 * 4096) + 2 * 128256 * 4096 + 4096
KV2 = 2 * 32 * 32 * 128 * 2      # fp16, bytes a token
KV3 = 2 * 32 * 8 * 128 * 2       # bf16


def test_hand_figures():
    assert P2 == 6_738_415_616 and P3 == 8_030_261_248
    assert KV2 == 524_288 == 512 * 1024 and KV3 == 131_072 == 128 * 1024
    # what an 80 GB card leaves after the fp16 weights, in whole tokens: 126,882 (the text: 12,688)
    assert (80 * 10**9 - 2 * P2) // KV2 == 126_882
    assert (80 * 10**9 - 2 * P3) // KV3 == 487_819 and (80 * 10**9 - 2 * P3) // (8192 * KV3) == 59
    # the A100's ridge point, 312 TFLOP/s over 2,039 GB/s, and the weights' time bound: 6.6 ms (the text: 66)
    assert round(Fraction(312 * 10**12, 2039 * 10**9), 3) == Fraction("153.016")
    assert round(Fraction(2 * P2, 2039 * 10**9) * 1000, 2) == Fraction("6.61")
    # one decode step at position 4096, fp16: weights but 31,999 embedding rows, KV read and written, id, logits
    step_bytes = (P2 - 31999 * 4096) * 2 + 32 * 2 * 4096 * 4096 * 2 + KV2 + 8 + 32000 * 2
    step_flops = 32 * (8 * 4096**2 + 4 * 4096 * 4096 + 6 * 4096 * 11008) + 2 * 4096 * 32000
    assert (step_bytes, step_flops) == (15_362_767_368, 15_361_638_400)


def test_the_inference_subject():
    s = load_subject("spec/17-10.yaml")
    assert s.id == "17-10" and len(s.claims) == 48
    r = {x.claim.id: x for x in run_subject(s, device="cpu").results}
    assert all(x.ok for x in r.values()), {k: (v.verdict, v.evidence) for k, v in r.items() if not v.ok}
    verdicts = {k: v.verdict for k, v in r.items()}
    # the five slips of the text: int8 at half a byte, GB as GiB, MQA without the 2 of K and V, two decimal slips
    assert sorted(k for k, v in verdicts.items() if v == "refuted") == [
        "fit-llama2-tokens", "kv-mqa", "t-weights", "w-int8", "w-llama3-bf16"]
    assert sorted(k for k, v in verdicts.items() if v == "unverifiable") == [
        "ai-roofline", "b-lever", "fit-gqa-reason", "fit-ignore", "t-no-guide"]
    assert sum(v == "holds" for v in verdicts.values()) == 37
    # timed on a GPU only (check-spec --device cuda): skipped here, saying why
    assert [k for k, v in verdicts.items() if v == "skipped"] == ["t-bound-measured"]
    assert all("timed only on a GPU" in c.summary for c in r["t-bound-measured"].checks)
    ev = {k: json.dumps([c.summary for c in v.checks], ensure_ascii=False) for k, v in r.items()}
    assert f"{P2:,}" in ev["m-params"] and f"{P3:,}" in ev["m-params"]
    assert "524,288" in ev["kv-llama2"] and "131,072" in ev["kv-llama3"]
    # MQA: 2·32·1·128·2 = 16,384 bytes, 32 times less than MHA, not 8,192 and 64
    assert "16,384" in ev["kv-mqa"]
    assert "126,882.875" in ev["fit-llama2-tokens"]
    assert "15,362,767,368" in ev["pd-decode-bytes"] and "15,361,638,400" in ev["pd-decode-flops"]
    assert "312000/2039" in ev["ai-ridge"]
    # 16,060,522,496 bytes is 14.96 GiB: 16.1 GiB would be 17,287,243,366.4 bytes
    assert "16,060,522,496" in ev["w-llama3-bf16"] and "17,287,243,366.4" in ev["w-llama3-bf16"]
