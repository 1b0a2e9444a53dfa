"""mha.inference against hand derivations: bytes, FLOPs and FLOP/byte of a decode step and a prefill.

Every expected number below is derived by hand in the comments, from the configuration alone.
Sizes: d = d_model, h heads, g key/value heads, d_k = d/h, d_ff, L layers, V vocabulary,
n = the decode position (n − 1 cached, n keys attended) or the prefill length, p = bytes per
element. Bytes are the minimum traffic (mha/inference.py): weights read once, the KV cache read
(2·n·g·d_k·p per layer), the new keys and values written (2·T·g·d_k·p per layer), the module's
input and output; FLOPs are matmul FLOPs (1 multiply-add = 2).
"""
from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest
import torch

import mha
from mha.inference import Traffic, main, measure_decode_step, measure_prefill

ROOT = Path(__file__).resolve().parents[1]

# --- the reference block: d = 8, h = 2, g = 1 (MQA), d_k = 4, d_ff = 16, GELU, LayerNorm, biases
# parameters by hand:
#   attention: packed W^Q, W^K, W^V (d + 2·g·d_k) × d = 16 × 8 = 128, its bias 16; W^O 8 × 8 = 64, bias 8 → 216
#   feed-forward: W₁ 16 × 8 = 128 + 16, W₂ 8 × 16 = 128 + 8                                            → 280
#   two LayerNorms: 2 · (8 + 8)                                                                         →  32
#   one block: 216 + 280 + 32 = 528 parameters
# decode FLOPs at n = 5 (one token): q 2·d·d = 128, k 2·d·g·d_k = 64, v 64, out 2·d·d = 128,
#   QKᵀ 2·h·n·d_k = 2·2·5·4 = 80, A·V 80, ffn 2·d·d_ff·2 = 512 → 1056
MQA_PARAMS = 528
MQA_DECODE_FLOPS = 128 + 64 + 64 + 128 + 80 + 80 + 512


def mqa_block(dtype: torch.dtype = torch.float32, device: str = "meta") -> mha.TransformerBlock:
    return mha.TransformerBlock(8, 2, 16, n_kv_heads=1, device=device, dtype=dtype).eval()


@pytest.mark.parametrize("dtype, p", [(torch.float32, 4), (torch.float16, 2), (torch.bfloat16, 2)])
def test_decode_step_of_an_mqa_block_by_hand(dtype: torch.dtype, p: int) -> None:
    r = measure_decode_step(mqa_block(dtype), 5)
    # weights: every parameter once: 528·p (fp32: 2112)
    # KV cache read: 2 (K and V) · n · g · d_k · p = 2·5·1·4·p = 40·p (fp32: 160)
    # KV written: the new token's K and V, 2 · g · d_k · p = 8·p (fp32: 32)
    # activations: x in (1, 1, d) and out (1, 1, d): 2·8·p = 16·p (fp32: 64)
    assert r.traffic == Traffic(weights=528 * p, kv_read=40 * p, kv_write=8 * p, activations=16 * p)
    assert r.traffic.total == (528 + 40 + 8 + 16) * p  # fp32: 2368
    assert r.flops.matmul_total == 1056 == MQA_DECODE_FLOPS
    assert r.intensity == 1056 / (592 * p)  # fp32: 0.446 FLOP/byte
    assert (r.phase, r.n, r.batch, r.dtype) == ("decode", 5, 1, str(dtype).removeprefix("torch."))


def test_prefill_of_an_mqa_block_by_hand() -> None:
    r = measure_prefill(mqa_block(), 5)
    # weights once: 528·4 = 2112; the 5 tokens' K and V written, 2·5·1·4·4 = 160, and read back by the
    # attention, 160; activations x (1, 5, 8) in and out: 2·5·8·4 = 320 → 2752
    assert r.traffic == Traffic(weights=2112, kv_read=160, kv_write=160, activations=320)
    # FLOPs: 5 tokens · (q 128 + k 64 + v 64 + out 128 + ffn 512) = 5·896 = 4480,
    # QKᵀ 2·h·n²·d_k = 2·2·25·4 = 400 (dense: the causal mask does not halve it), A·V 400 → 5280
    assert r.flops.matmul_total == 5280
    assert r.intensity == 5280 / 2752


def test_mha_and_gqa_blocks_by_hand() -> None:
    # MHA: d = 8, h = g = 2, d_k = 4. Attention 24·8 + 24 + 64 + 8 = 288; + 280 + 32 → 600 parameters
    mha_block = mha.TransformerBlock(8, 2, 16, device="meta").eval()
    r = measure_decode_step(mha_block, 5)
    # KV read 2·5·2·4·4 = 320, written 2·2·4·4 = 64, activations 64
    assert r.traffic == Traffic(weights=2400, kv_read=320, kv_write=64, activations=64)
    # q 128, k 128, v 128, out 128, QKᵀ 2·2·5·4 = 80, A·V 80, ffn 512 → 1184
    assert r.flops.matmul_total == 1184
    # GQA: d = 8, h = 4, g = 2, d_k = 2, at n = 7. Attention (8 + 2·2·2)·8 + 16 + 64 + 8 = 216; block 528
    gqa = mha.TransformerBlock(8, 4, 16, n_kv_heads=2, device="meta").eval()
    r = measure_decode_step(gqa, 7)
    # KV read 2·7·2·2·4 = 224, written 2·2·2·4 = 32, activations 64
    assert r.traffic == Traffic(weights=2112, kv_read=224, kv_write=32, activations=64)
    # q 128, k 2·8·4 = 64, v 64, out 128, QKᵀ 2·h·n·d_k = 2·4·7·2 = 112, A·V 112, ffn 512 → 1120
    assert r.flops.matmul_total == 1120
    assert r.intensity == 1120 / (2112 + 224 + 32 + 64)


def test_attention_layer_alone() -> None:
    m = mha.MultiHeadAttention(8, 2, n_kv_heads=1, device="meta").eval()
    r = measure_decode_step(m, 5)
    # 216 parameters · 4 = 864; KV 160 read, 32 written; x read once (as query, key and value) 32 + out 32
    assert r.traffic == Traffic(weights=864, kv_read=160, kv_write=32, activations=64)
    assert r.flops.matmul_total == 128 + 64 + 64 + 128 + 80 + 80  # 544


def test_whole_model_tied_two_layers() -> None:
    # V = 10, d = 8, L = 2 MQA blocks, tied output layer, final LayerNorm, no learned positions.
    # parameters: 2·528 + V·d (80, the embedding = the output layer) + 16 (final norm) = 1152 → 4608 bytes:
    # the lookup reads 1 row of E, the output layer the whole E: counted once, 80 elements
    m = mha.Transformer(10, 8, 2, 2, 16, n_kv_heads=1, device="meta").eval()
    r = measure_decode_step(m, 5)
    # KV: each layer 160 read and 32 written → 320 and 64; activations: 1 token id (int64, 8 bytes) in,
    # logits (1, 1, V) out 10·4 = 40 → 48
    assert r.traffic == Traffic(weights=4608, kv_read=320, kv_write=64, activations=48)
    # FLOPs: 2 layers · 1056 + lm_head 2·d·V = 160 → 2272
    assert r.flops.matmul_total == 2272
    assert r.intensity == 2272 / (4608 + 320 + 64 + 48)


def test_whole_model_untied_reads_one_embedding_row() -> None:
    # untied, one layer: 528 + final norm 16 + W_out V·d = 80 read whole, = 624·4 = 2496; of E (V × d)
    # only the token's row: 8·4 = 32; learned positions (n_ctx = 16): one row as well, 32
    m = mha.Transformer(10, 8, 1, 2, 16, n_kv_heads=1, max_len=16, tie_embeddings=False, device="meta").eval()
    r = measure_decode_step(m, 5)
    assert r.traffic.weights == 2496 + 32 + 32
    assert r.flops.matmul_total == 1056 + 160


def test_batch_multiplies_all_but_the_weights() -> None:
    r = measure_decode_step(mqa_block(), 5, batch=3)
    # weights are read once for the batch; KV and activations per sequence
    assert r.traffic == Traffic(weights=2112, kv_read=3 * 160, kv_write=3 * 32, activations=3 * 64)
    assert r.flops.matmul_total == 3 * 1056


def test_cpu_measures_what_meta_measures() -> None:
    cpu, meta = measure_decode_step(mqa_block(device="cpu"), 5), measure_decode_step(mqa_block(), 5)
    assert (cpu.traffic, cpu.flops) == (meta.traffic, meta.flops)


def test_decode_is_memory_bound_prefill_is_not() -> None:
    # d = 512, 8 heads, 2 layers, n = 512 at bf16: a decode step does ≈ 2 FLOPs per parameter read
    # (2 bytes each): ≈ 1 FLOP/byte; the prefill reuses each weight n times: ≈ n FLOP/byte
    m = mha.Transformer(1000, 512, 2, 8, 2048, device="meta", dtype=torch.bfloat16).eval()
    decode, prefill = measure_decode_step(m, 512), measure_prefill(m, 512)
    assert decode.intensity < 1.1
    assert prefill.intensity > 100 * decode.intensity


def test_errors() -> None:
    with pytest.raises(ValueError, match="n must be a positive integer"):
        measure_decode_step(mqa_block(), 0)
    with pytest.raises(ValueError, match="m must be an mha.Transformer"):
        measure_prefill(torch.nn.Linear(2, 2), 3)  # type: ignore[arg-type]


def test_claims_quantities() -> None:
    from grader.claims.measure import QuantityError, measure
    from grader.claims.model_sizes import INFERENCE
    from mha.inference import INFERENCE_NAMES
    assert set(INFERENCE) == set(INFERENCE_NAMES)
    at = {"d": 8, "h": 2, "g": 1, "d_ff": 16, "n": 5}
    assert measure("bytes.decode_step_layer", at) == 2368
    assert measure("flops.decode_step_layer", at) == 1056
    assert measure("intensity.decode_step_layer", at) == 1056 / 2368
    assert measure("bytes.prefill_layer", at) == 2752
    assert measure("flops.prefill_layer", at) == 5280
    assert measure("intensity.prefill_layer", at) == 5280 / 2752
    model = {**at, "L": 2, "V": 10}
    assert measure("bytes.decode_step", model) == 5040
    # at fp16 every byte halves: 2304 + 160 + 32 + (8 + 20) = 2524
    assert measure("bytes.decode_step", model, model={"dtype": "fp16"}) == 2524
    assert measure("intensity.decode_step", model, model={"dtype": "bf16"}) == 2272 / 2524
    # the prefill: weights 4608, KV read and written 2·160 each, tokens 5·8 = 40, logits 5·10·4 = 200
    assert measure("bytes.prefill", model) == 4608 + 320 + 320 + 40 + 200
    assert measure("intensity.prefill", model) == (2 * 5280 + 5 * 160) / (4608 + 320 + 320 + 240)
    with pytest.raises(QuantityError, match="does not take the size"):
        measure("bytes.decode_step_layer", {**at, "L": 2})


def demo_block() -> tuple[list[str], str]:
    """The command and the output shown in docs/mha.md's console block of `python -m mha.inference`."""
    text = (ROOT / "docs" / "mha.md").read_text(encoding="utf-8")
    m = re.search(r"```console\n\$ python -m mha\.inference (.+?)\n(.*?)```", text, re.DOTALL)
    assert m, "docs/mha.md has no console block of python -m mha.inference"
    return shlex.split(m.group(1)), m.group(2)


def test_docs_demo_is_current() -> None:
    args, shown = demo_block()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(args)
    assert out.getvalue() == shown, "regenerate docs/mha.md's table: run the command and paste its output"


def test_docs_demo_gqa_row_by_hand() -> None:
    # LLaMA 3 8B's shape: d = 4096, h = 32, g = 8, d_k = 128, L = 32, SwiGLU d_ff = 14336, V = 128256,
    # untied, no biases, RMSNorm, bf16 (p = 2), decoding at n = 2048. Its published size: 8,030,261,248
    # parameters. The step reads all of them but the embedding table E (V × d), of which one row:
    #   weights = (8,030,261,248 − (V − 1)·d)·2 = (8,030,261,248 − 525,332,480)·2 = 15,009,857,536
    #   KV read = L · 2·n·g·d_k·p = 32·2·2048·8·128·2 = 268,435,456; written 32·2·8·128·2 = 131,072
    #   activations: the token id 8 + logits V·p = 256,512 → 256,520
    #   total = 15,009,857,536 + 268,435,456 + 131,072 + 256,520 = 15,278,680,584
    # FLOPs: per layer 2·(2·d² + 2·d·g·d_k + 3·d·d_ff) = 2·218,103,808, × 32 = 13,958,643,712;
    #   lm_head 2·d·V = 1,050,673,152; attention L·4·h·n·d_k = 32·4·32·2048·128 = 1,073,741,824
    #   → 16,083,058,688
    _, shown = demo_block()
    row = next(line.split() for line in shown.splitlines() if line.startswith("GQA"))
    assert row[1:6] == ["8", "15,009,857,536", "268,435,456", "15,278,680,584", "16,083,058,688"]
    assert row[6] == f"{16_083_058_688 / 15_278_680_584:.2f}"
