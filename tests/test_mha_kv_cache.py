"""KV cache: decoding token by token (or in chunks) with the cache equals the full causal forward,
within a tolerance stated per dtype; its bytes are 2·g·d_k·(bytes per element) per token and layer;
one decoding step costs what the hand formula says."""
import pytest
import torch

import mha

# Decode vs full forward: the same sums in a different order (one query row at a time).
TOLERANCE = {torch.float64: 1e-12, torch.float32: 1e-5, torch.bfloat16: 3e-2}


def randomize(m, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return m


def decode(m, x, cache, chunks, **kw):
    """Feed x (B, n, d) through m in the given chunk lengths; the outputs concatenated."""
    outs, t = [], 0
    for c in chunks:
        part = x[:, t:t + c]
        outs.append(m(part, part, part, is_causal=True, kv_cache=cache, **kw)[0])
        t += c
    return torch.cat(outs, dim=1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("h,g", [(4, 4), (4, 2), (4, 1)])
@pytest.mark.parametrize("layout", ["fused", "per_head"])
@pytest.mark.parametrize("need_weights", [False, True])
def test_token_by_token_equals_full_causal_forward(dtype, h, g, layout, need_weights):
    m = randomize(mha.MultiHeadAttention(8, h, n_kv_heads=g, layout=layout), seed=h + g).to(dtype).eval()
    x = torch.randn(2, 7, 8, generator=torch.Generator().manual_seed(3)).to(dtype)
    with torch.no_grad():
        full, _ = m(x, x, x, is_causal=True, need_weights=need_weights)
        cache = m.new_kv_cache(batch=2, max_len=7)
        step = decode(m, x, cache, [1] * 7, need_weights=need_weights)
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(step, full, atol=tol, rtol=tol)
    assert cache.length == 7


def test_chunks_after_a_prefill_equal_the_full_forward():
    # a prompt of 3 tokens at once, then 2 at once (the causal mask offset by the 3 cached), then 1 by 1
    m = randomize(mha.MultiHeadAttention(12, 6, n_kv_heads=2), seed=1).eval()
    x = torch.randn(1, 8, 12)
    with torch.no_grad():
        full, _ = m(x, x, x, is_causal=True)
        for nw in (False, True):
            step = decode(m, x, m.new_kv_cache(1, 8), [3, 2, 1, 1, 1], need_weights=nw)
            torch.testing.assert_close(step, full, atol=1e-5, rtol=1e-5)


def test_the_cache_matters():
    # without the cache, token t sees only itself: the outputs differ from the causal forward
    m = randomize(mha.MultiHeadAttention(8, 2), seed=2).eval()
    x = torch.randn(1, 5, 8)
    with torch.no_grad():
        full, _ = m(x, x, x, is_causal=True)
        alone = torch.cat([m(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1])[0] for t in range(5)], dim=1)
    assert not torch.allclose(alone[:, 1:], full[:, 1:], atol=1e-3)


def test_a_half_precision_cache_for_a_float32_layer():
    m = randomize(mha.MultiHeadAttention(8, 4, n_kv_heads=2), seed=4).eval()
    x = torch.randn(2, 6, 8)
    with torch.no_grad():
        full, _ = m(x, x, x, is_causal=True)
        cache = m.new_kv_cache(2, 6, dtype=torch.float16)
        step = decode(m, x, cache, [1] * 6)
    assert cache.k.dtype == torch.float16 and step.dtype == torch.float32
    # fp16 keeps 11 significant bits: relative error about 2^-11 ≈ 5e-4 per stored element
    torch.testing.assert_close(step, full, atol=1e-2, rtol=1e-2)
    assert not torch.equal(step, full)  # rounded: the dtype really was fp16


def test_bytes_per_token_per_layer():
    # 2 (K and V) · g · d_k · bytes per element: d 16, h 4 (d_k 4)
    # g 4 fp32: 2·4·4·4 = 128; g 2 fp32: 64; g 1 fp32: 32; g 2 bf16: 32
    for g, dtype, per_token in ((4, torch.float32, 128), (2, torch.float32, 64), (1, torch.float32, 32),
                                (2, torch.bfloat16, 32)):
        m = mha.MultiHeadAttention(16, 4, n_kv_heads=g, dtype=dtype)
        cache = m.new_kv_cache(batch=3, max_len=10)
        x = torch.randn(3, 5, 16, dtype=dtype)
        with torch.no_grad():
            m(x, x, x, is_causal=True, kv_cache=cache)
        assert cache.nbytes == 3 * 5 * per_token  # batch · tokens held · per token
        assert cache.capacity_bytes == 3 * 10 * per_token


def test_llama2_70b_layer_cache_on_meta():
    # g 8, d_k 128, fp16: 2·8·128·2 = 4096 bytes per token per layer; 4096 tokens: 16 MiB per layer
    m = mha.MultiHeadAttention(8192, 64, n_kv_heads=8, bias=False, device="meta", dtype=torch.float16)
    cache = m.new_kv_cache(batch=1, max_len=4096)
    x = torch.empty(1, 4096, 8192, device="meta", dtype=torch.float16)
    m(x, x, x, is_causal=True, kv_cache=cache)
    assert cache.nbytes == 4096 * 4096 == 16 * 2**20


def test_decode_step_flops_against_the_whole_forward():
    # d 16, h 4, g 2, d_k 4, n_past 9 cached tokens, one new token:
    # q, out: 2·1·16·16 = 512 each; k, v: 2·1·16·8 = 256 each; qk, av: 2·h·1·(9+1)·d_k = 320 each
    # the whole forward over n = 10 tokens: q, out 2·10·256 = 5120; k, v 2560; qk, av 2·4·100·4 = 3200
    m = mha.MultiHeadAttention(16, 4, n_kv_heads=2)
    x = torch.randn(1, 10, 16)
    cache = m.new_kv_cache(1, 10)
    with torch.no_grad():
        m(x[:, :9], x[:, :9], x[:, :9], is_causal=True, kv_cache=cache)
    last = x[:, 9:]
    step = mha.measure_flops(m, last, last, last, is_causal=True, kv_cache=cache)
    assert dict(step.by_stage) == {"q_proj": 512, "k_proj": 256, "v_proj": 256, "qk": 320, "av": 320,
                                   "out_proj": 512}
    assert step.masking == 0  # the last token sees every key: no mask
    whole = mha.measure_flops(m, x, x, x, is_causal=True)
    assert dict(whole.by_stage) == {"q_proj": 5120, "k_proj": 2560, "v_proj": 2560, "qk": 3200, "av": 3200,
                                    "out_proj": 5120}


def test_errors():
    m = mha.MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(ValueError, match="kv_cache must be an mha.KVCache"):
        m(x, x, x, kv_cache=object())
    with pytest.raises(ValueError, match="kv_cache is full: 0 \\+ 3 new tokens > max_len 2"):
        m(x, x, x, kv_cache=m.new_kv_cache(1, 2))
    with pytest.raises(ValueError, match="kv_cache holds batch 2"):
        m(x, x, x, kv_cache=m.new_kv_cache(2, 5))
    with pytest.raises(ValueError, match="no key_padding_mask or attn_mask"):
        m(x, x, x, attn_mask=torch.zeros(3, 3), kv_cache=m.new_kv_cache(1, 5))
    with pytest.raises(ValueError, match="max_len must be a positive integer"):
        mha.KVCache(1, 2, 4, 0)
