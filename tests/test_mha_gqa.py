"""Grouped-query and multi-query attention (n_kv_heads = g): values and gradients against
torch's scaled_dot_product_attention(enable_gqa=True) on the module's own weights, against plain
MHA with the K/V heads repeated, and parameter and FLOP counts derived by hand."""
import pytest
import torch
import torch.nn.functional as F

import mha

ATOL = 1e-5
ATOL64 = 1e-10  # values and gradients in float64: the two computations differ only in summation order


def randomize(m, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return m


def reference(x, kv, Wq, Wk, Wv, Wo, bq, bk, bv, bo, h, g, causal):
    """torch's own functions on raw weights (torch orientation, (out, in)): the GQA layer as
    LLaMA-style code writes it, with SDPA sharing each K/V head among h/g query heads."""
    B, T, C = x.shape
    S, hs = kv.shape[1], C // h
    q = F.linear(x, Wq, bq).view(B, T, h, hs).transpose(1, 2)  # (B, h, T, hs)
    k = F.linear(kv, Wk, bk).view(B, S, g, hs).transpose(1, 2)  # (B, g, S, hs)
    v = F.linear(kv, Wv, bv).view(B, S, g, hs).transpose(1, 2)  # (B, g, S, hs)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)  # (B, h, T, hs)
    return F.linear(y.transpose(1, 2).reshape(B, T, C), Wo, bo)  # (B, T, C)


def raw_weights(m):
    """(Wq, Wk, Wv, Wo, bq, bk, bv, bo) as separate leaf copies, torch orientation."""
    C, kvw = m.d_model, m.n_kv_heads * m.d_k
    W = m.in_proj_weight.detach()
    b = m.in_proj_bias.detach()
    assert W.shape == (C + 2 * kvw, C) and b.shape == (C + 2 * kvw,)  # packed rows: Q, then K, then V
    parts = [W[:C], W[C:C + kvw], W[C + kvw:], m.out_proj.weight.detach(),
             b[:C], b[C:C + kvw], b[C + kvw:], m.out_proj.bias.detach()]
    return [p.clone().requires_grad_(True) for p in parts]


@pytest.mark.parametrize("h,g", [(4, 4), (4, 2), (4, 1), (6, 3), (8, 2)])
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_values_and_gradients_match_sdpa_enable_gqa(h, g, need_weights, causal):
    C = 2 * h
    m = randomize(mha.MultiHeadAttention(C, h, n_kv_heads=g, dtype=torch.float64), seed=h * 10 + g)
    x = torch.randn(2, 5, C, generator=torch.Generator().manual_seed(1), dtype=torch.float64, requires_grad=True)
    out, _ = m(x, x, x, need_weights=need_weights, is_causal=causal)
    raw = raw_weights(m)
    x2 = x.detach().clone().requires_grad_(True)
    ref = reference(x2, x2, *raw, h, g, causal)
    torch.testing.assert_close(out, ref, atol=ATOL64, rtol=0)

    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    out.backward(grad)
    ref.backward(grad)
    torch.testing.assert_close(x.grad, x2.grad, atol=ATOL64, rtol=0)
    C_, kvw = C, g * (C // h)
    gW = m.in_proj_weight.grad
    for mine, theirs in zip((gW[:C_], gW[C_:C_ + kvw], gW[C_ + kvw:], m.out_proj.weight.grad), raw[:4]):
        torch.testing.assert_close(mine, theirs.grad, atol=ATOL64, rtol=0)
    gb = m.in_proj_bias.grad
    for mine, theirs in zip((gb[:C_], gb[C_:C_ + kvw], gb[C_ + kvw:], m.out_proj.bias.grad), raw[4:]):
        torch.testing.assert_close(mine, theirs.grad, atol=ATOL64, rtol=0)


def test_fp32_values_match_sdpa_enable_gqa():
    m = randomize(mha.MultiHeadAttention(16, 8, n_kv_heads=2), seed=11)
    x = torch.randn(3, 7, 16)
    ref = reference(x, x, *[p.detach() for p in raw_weights(m)], 8, 2, True)
    for nw in (False, True):
        torch.testing.assert_close(m(x, x, x, need_weights=nw, is_causal=True)[0], ref, atol=ATOL, rtol=0)


@pytest.mark.parametrize("layout", ["fused", "per_head"])
def test_cross_attention_gqa_matches_reference(layout):
    h, g, C = 4, 2, 8
    m = randomize(mha.MultiHeadAttention(C, h, n_kv_heads=g), seed=3)
    m2 = m.to_layout(layout)
    q, kv = torch.randn(2, 3, C), torch.randn(2, 6, C)
    ref = reference(q, kv, *[p.detach() for p in raw_weights(m)], h, g, False)
    for nw in (False, True):
        torch.testing.assert_close(m2(q, kv, kv, need_weights=nw)[0], ref, atol=ATOL, rtol=0)


def test_gqa_equals_mha_with_each_kv_head_repeated_for_its_group():
    # query heads 0,1 share K/V head 0; heads 2,3 share K/V head 1 (h 4, g 2, d_k 3)
    h, g, hs = 4, 2, 3
    C = h * hs
    gqa = randomize(mha.MultiHeadAttention(C, h, n_kv_heads=g), seed=5)
    full = mha.MultiHeadAttention(C, h)
    Wq, Wk, Wv, Wo, bq, bk, bv, bo = [p.detach() for p in raw_weights(gqa)]
    rep = lambda t: t.view(g, hs, *t.shape[1:]).repeat_interleave(h // g, dim=0).reshape(h * hs, *t.shape[1:])  # noqa: E731
    with torch.no_grad():
        full.in_proj_weight.copy_(torch.cat([Wq, rep(Wk), rep(Wv)]))
        full.in_proj_bias.copy_(torch.cat([bq, rep(bk), rep(bv)]))
        full.out_proj.weight.copy_(Wo)
        full.out_proj.bias.copy_(bo)
    x = torch.randn(2, 5, C)
    for nw in (False, True):
        torch.testing.assert_close(gqa(x, x, x, need_weights=nw)[0], full(x, x, x, need_weights=nw)[0],
                                   atol=ATOL, rtol=0)
    # and that MHA is torch's: the sharing pattern is checked against nn.MultiheadAttention itself
    torch.testing.assert_close(full.to_torch()(x, x, x, need_weights=False)[0],
                               gqa(x, x, x, need_weights=False)[0], atol=ATOL, rtol=0)
    # head_weights(i) gives head i its group's K/V
    assert torch.equal(gqa.head_weights(3)[1], gqa.head_weights(2)[1])
    assert not torch.equal(gqa.head_weights(1)[1], gqa.head_weights(2)[1])


def test_layouts_convert_exactly_with_gqa():
    m = randomize(mha.MultiHeadAttention(12, 6, n_kv_heads=2), seed=7)
    p = m.to_layout("per_head")
    assert len(p.W_i_Q) == 6 and len(p.W_i_K) == 2 and len(p.W_i_V) == 2
    x = torch.randn(3, 4, 12)
    torch.testing.assert_close(p(x, x, x)[0], m(x, x, x)[0], atol=ATOL, rtol=0)
    back = p.to_layout("fused")
    assert all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), m.state_dict().values()))
    t = mha.trace(m, x, x, x)
    assert t["K_i"].shape == (3, 6, 4, 2)  # one K_i per query head, shared within a group
    assert torch.equal(t["K_i"][:, 0], t["K_i"][:, 2]) and not torch.equal(t["K_i"][:, 2], t["K_i"][:, 3])


def test_parameter_counts_by_hand():
    # params = d·d (Q) + 2·d·(g·d_k) (K, V) + d·d (O), plus biases d + 2·g·d_k + d
    # d 16, h 4, d_k 4: g 4: 256 + 512 + 256 + 16 + 32 + 16 = 1088; g 2: 256 + 256 + 256 + 16 + 16 + 16 = 816;
    # g 1 (MQA): 256 + 128 + 256 + 16 + 8 + 16 = 680
    for g, expected in ((4, 1088), (2, 816), (1, 680)):
        for layout in ("fused", "per_head"):
            assert mha.count_parameters(mha.MultiHeadAttention(16, 4, n_kv_heads=g, layout=layout)) == expected
    # LLaMA-2 70B attention (d 8192, h 64, g 8, d_k 128, no bias), on meta:
    # 8192² = 67,108,864 (Q, and O); K, V: 2·8192·1024 = 16,777,216; total 150,994,944
    big = mha.MultiHeadAttention(8192, 64, n_kv_heads=8, bias=False, device="meta")
    assert mha.count_parameters(big) == 2 * 67_108_864 + 16_777_216 == 150_994_944


@pytest.mark.parametrize("need_weights", [False, True])
def test_flops_llama2_70b_attention_on_meta(need_weights):
    # d 8192, h 64, g 8, d_k 128, one sequence of n 4096:
    # q, out: 2·n·d·d = 2·4096·67,108,864 = 549,755,813,888 each
    # k, v:   2·n·d·(g·d_k) = 2·4096·8192·1024 = 68,719,476,736 each
    # qk, av: 2·h·n²·d_k = 2·64·16,777,216·128 = 274,877,906,944 each (every query head scores all keys)
    big = mha.MultiHeadAttention(8192, 64, n_kv_heads=8, bias=False, device="meta")
    x = torch.empty(4096, 8192, device="meta")
    r = mha.measure_flops(big, x, x, x, need_weights=need_weights, is_causal=True)
    assert dict(r.by_stage) == {"q_proj": 549_755_813_888, "k_proj": 68_719_476_736,
                                "v_proj": 68_719_476_736, "qk": 274_877_906_944,
                                "av": 274_877_906_944, "out_proj": 549_755_813_888}
    assert r.softmax == 5 * 64 * 4096 ** 2


def test_mqa_kv_projection_is_h_times_smaller_than_mha():
    # K projection columns: h·d_k for MHA, d_k for MQA: 8 times fewer FLOPs at h 8
    x = torch.randn(2, 5, 32)
    f = {g: mha.measure_flops(mha.MultiHeadAttention(32, 8, n_kv_heads=g), x, x, x).by_stage["k_proj"]
         for g in (8, 1)}
    assert f[8] == 2 * 2 * 5 * 32 * 32 and f[1] == 2 * 2 * 5 * 32 * 4


def test_errors():
    with pytest.raises(ValueError, match=r"num_heads \(6\) must be divisible by n_kv_heads \(4\)"):
        mha.MultiHeadAttention(12, 6, n_kv_heads=4)
    with pytest.raises(ValueError, match="n_kv_heads must be a positive integer"):
        mha.MultiHeadAttention(12, 6, n_kv_heads=0)
    with pytest.raises(ValueError, match="no grouped-query attention"):
        mha.MultiHeadAttention(12, 6, n_kv_heads=2).to_torch()
    assert "n_kv_heads=2" in repr(mha.MultiHeadAttention(12, 6, n_kv_heads=2))
