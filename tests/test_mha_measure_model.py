"""Measurements of blocks and stacks equal arithmetic done by hand: GPT-2 small's forward and
decoding FLOPs, LLaMA-2 70B's KV cache (1.25 GiB per 4096-token sequence at fp16), the h/g
saving of GQA/MQA, FFN FLOPs for plain and gated feed-forwards."""
import pytest
import torch

import mha

# GPT-2 small: vocab V 50257, d 768, L 12, h 12 (d_k 64), d_ff 3072, n 1024
V, D, L, H, FF, N = 50257, 768, 12, 12, 3072, 1024


@pytest.fixture(scope="module")
def gpt2():
    return mha.Transformer(V, D, L, H, FF, max_len=N, activation="gelu_tanh", device="meta")


def test_gpt2_small_measured_by_hand(gpt2):
    r = mha.measure_model(gpt2, n=N).named()
    # per layer over n tokens: Q, K, V, O projections 4·2·n·d² = 4·1,207,959,552 = 4,831,838,208
    #                          QKᵀ and A·V 2·2·n²·d = 2·1,610,612,736 = 3,221,225,472
    #                          FFN 2·2·n·d·d_ff = 9,663,676,416
    # output layer once: 2·n·d·V = 79,047,426,048
    assert r["flops.projections"] == 12 * 4_831_838_208 == 57_982_058_496
    assert r["flops.attention"] == 12 * 3_221_225_472 == 38_654_705_664
    assert r["flops.ffn"] == 12 * 9_663_676_416 == 115_964_116_992
    assert r["flops.lm_head"] == 79_047_426_048
    assert r["flops.forward"] == 57_982_058_496 + 38_654_705_664 + 115_964_116_992 + 79_047_426_048
    # one token after 1023 cached, per layer: projections 4·2·d² = 4,718,592; attention 2·2·1024·d
    # = 3,145,728; FFN 2·2·d·d_ff = 9,437,184 -> 17,301,504; ×12 + output 2·d·V = 77,194,752
    assert r["flops.decode_step"] == 12 * 17_301_504 + 77_194_752 == 284_812_800
    # KV cache at fp32 (the model's dtype): 2·h·d_k·4 = 6144 bytes per token per layer
    assert r["bytes.kv_cache_token_layer"] == 6144
    assert r["bytes.kv_cache_token"] == 12 * 6144 == 73_728
    assert r["bytes.kv_cache"] == 1024 * 73_728 == 75_497_472
    assert r["params.block"] == 7_087_872 and r["params.model"] == 124_439_808
    assert set(r) == set(mha.MEASURE_NAMES)


def test_decode_step_flops_on_cpu_by_hand():
    # d 16, h 4, g 2 (d_k 4), d_ff 24 SwiGLU, vocab 10, 2 layers, batch 3, 5 tokens cached:
    # per layer and token: q, out 2·16·16 = 512 each; k, v 2·16·8 = 256 each;
    # qk, av 2·h·6·d_k = 192 each; FFN 3·2·16·24 = 2304 -> 4224; output 2·16·10 = 320
    m = mha.Transformer(10, 16, 2, 4, 24, n_kv_heads=2, activation="swiglu", norm="rmsnorm", bias=False)
    step = mha.decode_step_flops(m, 5, batch=3)
    assert step.matmul_total == 3 * (2 * 4224 + 320)
    assert step.ffn == 3 * 2 * 2304 and step.lm_head == 3 * 320


def test_llama2_70b_kv_cache_is_1_25_gib_per_4096_token_sequence_at_fp16():
    # 2 · g 8 · d_k 128 · 2 bytes = 4096 bytes per token per layer; × 80 layers = 327,680 per token;
    # × 4096 tokens = 1,342,177,280 bytes = 1.25 GiB
    m = mha.Transformer(32000, 8192, 80, 64, 28672, n_kv_heads=8, activation="swiglu", norm="rmsnorm",
                        bias=False, tie_embeddings=False, device="meta")
    assert mha.kv_cache_bytes(m, 1, dtype=torch.float16) == 327_680
    assert mha.kv_cache_bytes(m, 4096, dtype=torch.float16) == 1_342_177_280 == int(1.25 * 2**30)


def test_the_cache_is_h_over_g_times_smaller():
    # one layer, d 8192, h 64, d_k 128, bf16: MHA 2·64·128·2 = 32,768 bytes per token; GQA g 8: 4096; MQA: 512
    got = {g: mha.kv_cache_bytes(mha.MultiHeadAttention(8192, 64, n_kv_heads=g, device="meta"), 1,
                                 dtype=torch.bfloat16) for g in (64, 8, 1)}
    assert got == {64: 32_768, 8: 4096, 1: 512}


def test_ffn_flops_plain_and_gated():
    # one block, batch 2, n 5, d 8, d_ff 32: plain 2 matrices 2·2·(2·5)·8·32 = 10,240; SwiGLU 3: 15,360
    x = torch.randn(2, 5, 8)
    for act, expected in (("gelu", 10_240), ("relu", 10_240), ("swiglu", 15_360)):
        b = mha.TransformerBlock(8, 2, 32, activation=act)
        r = mha.measure_flops(b, x, is_causal=True)
        assert r.ffn == expected
        assert r.by_stage["qk"] == 2 * 2 * 5 * 5 * 8  # the attention stages are still there
    r = mha.measure_model(mha.TransformerBlock(8, 2, 32), n=5, batch=2).named()
    assert r["flops.ffn"] == 10_240 and r["bytes.kv_cache_token_layer"] == 2 * 8 * 4


def test_errors():
    with pytest.raises(ValueError, match="must be an mha.Transformer"):
        mha.measure_model(torch.nn.Linear(2, 2), n=3)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        mha.measure_model(mha.TransformerBlock(8, 2, 16), n=0)
    with pytest.raises(ValueError, match="takes one input"):
        mha.measure_flops(mha.TransformerBlock(8, 2, 16), torch.randn(1, 2, 8), torch.randn(1, 2, 8))


def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing a submodule binds it on the package under its own name: a public name of mha
    equal to a submodule's (mha.measure_model was both) then became the module once anything
    imported the submodule directly (mha.inference does)."""
    import importlib
    import pkgutil
    for info in pkgutil.iter_modules(mha.__path__):
        importlib.import_module(f"mha.{info.name}")
    import types
    shadowed = [name for name in mha._EXPORTS if isinstance(getattr(mha, name), types.ModuleType)]
    assert not shadowed, f"public names of mha that a submodule replaces: {shadowed}"
