"""mha.MultiHeadAttention computes what torch.nn.MultiheadAttention computes (fp32, within 1e-5),
over randomized configurations; its gradients are torch's; attention dropout acts in training only."""
import warnings

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mha

ATOL = 1e-5


def close(a, b, atol=ATOL):
    torch.testing.assert_close(a, b, atol=atol, rtol=0)


def randomize(m, seed):
    """Non-zero weights and biases everywhere (torch initialises biases at 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return m


@st.composite
def configs(draw):
    nh = draw(st.sampled_from([1, 2, 4]))
    d = nh * draw(st.integers(1, 4))
    cross = draw(st.booleans())
    kdim = draw(st.sampled_from([None, 3, 5])) if cross else None
    vdim = draw(st.sampled_from([None, 2, 6])) if cross else None
    L = draw(st.integers(1, 5))
    S = draw(st.integers(1, 5)) if cross else L
    return dict(
        nh=nh, d=d, cross=cross, kdim=kdim, vdim=vdim, L=L, S=S,
        B=draw(st.integers(1, 3)), unbatched=draw(st.booleans()),
        batch_first=draw(st.booleans()), bias=draw(st.booleans()),
        kpm=draw(st.sampled_from([None, "bool", "float"])),
        attn=draw(st.sampled_from([None, "bool2d", "bool3d", "float2d", "float3d", "causal"])),
        need_weights=draw(st.booleans()), average=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)))


def make_inputs(c, g):
    def seq(n, dim):
        if c["unbatched"]:
            return torch.randn(n, dim, generator=g)
        shape = (c["B"], n, dim) if c["batch_first"] else (n, c["B"], dim)
        return torch.randn(shape, generator=g)

    q = seq(c["L"], c["d"])
    if not c["cross"]:
        return q, q, q  # self-attention: the same tensor three times
    return q, seq(c["S"], c["kdim"] or c["d"]), seq(c["S"], c["vdim"] or c["d"])


def make_masks(c, g):
    """Masks never hide key 0, so that no row is fully masked (softmax of all −inf is NaN in both)."""
    B, L, S, nh = c["B"], c["L"], c["S"], c["nh"]
    kw_ours, kw_torch = {}, {}
    if c["kpm"]:
        shape = (S,) if c["unbatched"] else (B, S)
        if c["kpm"] == "bool":
            kpm = torch.rand(shape, generator=g) < 0.4
            kpm[..., 0] = False
        else:
            kpm = torch.randn(shape, generator=g)
        kw_ours["key_padding_mask"] = kw_torch["key_padding_mask"] = kpm
    kind = c["attn"]
    if kind == "causal":
        causal = torch.ones(L, S, dtype=torch.bool).tril().logical_not()  # True above the diagonal
        kw_ours["is_causal"] = True  # ours builds the mask itself
        kw_torch.update(is_causal=True, attn_mask=causal)  # torch needs the mask as well as the hint
    elif kind:
        lead = () if kind.endswith("2d") else ((nh,) if c["unbatched"] else (B * nh,))
        if kind.startswith("bool"):
            am = torch.rand(lead + (L, S), generator=g) < 0.4
            am[..., 0] = False
        else:
            am = torch.randn(lead + (L, S), generator=g)
        kw_ours["attn_mask"] = kw_torch["attn_mask"] = am
    return kw_ours, kw_torch


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_matches_torch_multihead_attention(c):
    g = torch.Generator().manual_seed(c["seed"])
    ref = torch.nn.MultiheadAttention(c["d"], c["nh"], bias=c["bias"], kdim=c["kdim"], vdim=c["vdim"],
                                      batch_first=c["batch_first"])
    randomize(ref, c["seed"])
    ours = mha.MultiHeadAttention.from_torch(ref)
    q, k, v = make_inputs(c, g)
    kw_ours, kw_torch = make_masks(c, g)
    common = dict(need_weights=c["need_weights"], average_attn_weights=c["average"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about mixed bool/float masks
        out_t, w_t = ref(q, k, v, **common, **kw_torch)
    out_o, w_o = ours(q, k, v, **common, **kw_ours)
    assert out_o.shape == out_t.shape
    close(out_o, out_t)
    if c["need_weights"]:
        assert w_o.shape == w_t.shape
        close(w_o, w_t)
    else:
        assert w_o is None and w_t is None
    # the other layout, and the trip back to torch, compute the same function
    close(ours.to_layout("per_head")(q, k, v, **common, **kw_ours)[0], out_t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(ours.to_torch()(q, k, v, **common, **kw_torch)[0], out_t)


def test_weights_shapes_follow_torch_for_batched_and_unbatched():
    # hand-written expectations: B 2, L 3, S 4, h 2
    m = mha.MultiHeadAttention(4, 2, kdim=5, vdim=6)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(2, 4, 6)
    out, w = m(q, k, v)
    assert out.shape == (2, 3, 4) and w.shape == (2, 3, 4)
    assert m(q, k, v, average_attn_weights=False)[1].shape == (2, 2, 3, 4)
    out, w = m(q[0], k[0], v[0], average_attn_weights=False)
    assert out.shape == (3, 4) and w.shape == (2, 3, 4)
    seq_first = mha.MultiHeadAttention(4, 2, batch_first=False)
    assert seq_first(torch.randn(3, 2, 4), torch.randn(7, 2, 4), torch.randn(7, 2, 4))[0].shape == (3, 2, 4)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("self_attention", [True, False])
def test_gradients_match_torch(need_weights, self_attention):
    torch.manual_seed(0)
    ref = randomize(torch.nn.MultiheadAttention(8, 2, batch_first=True), 1)
    ours = mha.MultiHeadAttention.from_torch(ref)
    x = torch.randn(2, 5, 8)
    kv = x if self_attention else torch.randn(2, 3, 8)
    xs = [x.clone().requires_grad_(), x.clone().requires_grad_()]
    kvs = xs if self_attention else [kv.clone().requires_grad_(), kv.clone().requires_grad_()]
    for m, xi, kvi in ((ref, xs[0], kvs[0]), (ours, xs[1], kvs[1])):
        out, _ = m(xi, kvi, kvi, need_weights=need_weights)
        (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
    close(xs[1].grad, xs[0].grad)
    if not self_attention:
        close(kvs[1].grad, kvs[0].grad)
    ref_grads = {n: p.grad for n, p in ref.named_parameters()}
    ours_grads = {n: p.grad for n, p in ours.named_parameters()}
    assert set(ours_grads) == set(ref_grads)  # same parameter names: in_proj_weight, in_proj_bias, out_proj.*
    for name, grad in ref_grads.items():
        close(ours_grads[name], grad)


def test_per_head_gradients_are_the_fused_gradients_split_by_head():
    torch.manual_seed(0)
    fused = randomize(mha.MultiHeadAttention(8, 2), 2)
    per_head = fused.to_layout("per_head")
    x = torch.randn(2, 5, 8)
    for m in (fused, per_head):
        m(x, x, x)[0].sum().backward()
    W_Q_grad = fused.in_proj_weight.grad[:8].T  # text orientation (d_model, h·d_k)
    close(per_head.W_i_Q[0].grad, W_Q_grad[:, :4])
    close(per_head.W_i_Q[1].grad, W_Q_grad[:, 4:])


def test_dropout_zeroes_and_rescales_weights_in_training_only():
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(2, 6, 8)
    m.eval()
    out_eval, w_eval = m(x, x, x, average_attn_weights=False)
    out_eval2, _ = m(x, x, x, need_weights=False)
    close(out_eval2, out_eval)  # eval: deterministic, no dropout on either path
    m.train()
    out_train, w_train = m(x, x, x, average_attn_weights=False)
    dropped = w_train == 0
    assert 0.25 < dropped.float().mean().item() < 0.75  # p = 0.5 of 144 weights
    # kept weights are scaled by 1 / (1 − p) = 2
    close(w_train[~dropped], 2 * w_eval[~dropped])
    assert not torch.allclose(out_train, out_eval)
    # the fast path drops too, in training
    assert not torch.allclose(m(x, x, x, need_weights=False)[0], out_eval)


@pytest.mark.parametrize("need_weights", [True, False])
def test_dropout_in_training_draws_what_torch_draws(need_weights):
    ref = randomize(torch.nn.MultiheadAttention(8, 2, dropout=0.3, batch_first=True), 3).train()
    ours = mha.MultiHeadAttention.from_torch(ref)
    assert ours.training
    x = torch.randn(3, 4, 8)
    torch.manual_seed(7)
    out_t, _ = ref(x, x, x, need_weights=need_weights)
    torch.manual_seed(7)
    out_o, _ = ours(x, x, x, need_weights=need_weights)
    close(out_o, out_t)


@pytest.mark.parametrize("dtype,atol", [(torch.float16, 2e-2), (torch.bfloat16, 5e-2)])
def test_half_precisions_run_and_stay_near_fp32(dtype, atol):
    torch.manual_seed(0)
    m32 = mha.MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 5, 16)
    expected = m32(x, x, x, need_weights=False)[0]
    low = mha.MultiHeadAttention(16, 4, dtype=dtype).eval()
    low.load_state_dict(m32.state_dict())
    for need_weights in (True, False):
        out, _ = low(x.to(dtype), x.to(dtype), x.to(dtype), need_weights=need_weights, is_causal=False)
        assert out.dtype == dtype
        close(out.float(), expected, atol=atol)


def test_meta_device_gives_shapes_without_memory():
    m = mha.MultiHeadAttention(16384, 128, device="meta")
    x = torch.empty(2, 8192, 16384, device="meta")
    out, w = m(x, x, x, average_attn_weights=False)
    assert out.shape == (2, 8192, 16384) and out.device.type == "meta"
    assert w.shape == (2, 128, 8192, 8192)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu():
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(32, 4).eval()
    x = torch.randn(2, 7, 32)
    expected = m(x, x, x, need_weights=False)[0]
    mc = m.cuda()
    out = mc(x.cuda(), x.cuda(), x.cuda(), need_weights=False)[0]
    close(out.cpu(), expected, atol=1e-4)


def test_a_3d_mask_is_read_batch_major_as_torch_reads_it():
    # (B·h, n_q, n_k) masks: entry b·h + i is batch item b, head i. A distinct mask per (batch,
    # head) — reading it head-major would pair batch 0 head 1 with batch 1 head 0's mask
    B, h, T, S, d = 2, 2, 3, 4, 8
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    randomize(ref, 11)
    ours = mha.MultiHeadAttention.from_torch(ref).eval()
    q, k = torch.randn(B, T, d), torch.randn(B, S, d)
    mask = torch.arange(B * h * T * S, dtype=torch.float32).view(B * h, T, S).remainder(7) * 0.9
    for need_weights in (True, False):
        for avg in (True, False):
            (o1, w1), (o2, w2) = (m(q, k, k, attn_mask=mask, need_weights=need_weights, average_attn_weights=avg)
                                  for m in (ours, ref))
            close(o1, o2)
            if need_weights:
                close(w1, w2)
