"""Counts measured on the live module equal arithmetic done by hand here, at 17-08 sizes and at
LLaMA 3.1 405B scale on the meta device; the FLOP counter neither drops nor halves anything."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import mha

# LLaMA 3.1 405B attention, as the issue states it: d_model 16384, 128 heads, n 8192.
D, H, N = 16384, 128, 8192
# d² = 16384² = 268,435,456; n·d² = 8192·268,435,456 = 2,199,023,255,552
# n² = 67,108,864;          n²·d = 67,108,864·16384 = 1,099,511,627,776


@pytest.fixture(scope="module")
def big():
    return mha.MultiHeadAttention(D, H, device="meta")


@pytest.fixture(scope="module")
def xb():
    return torch.empty(N, D, device="meta")


def test_parameters_405b(big):
    # 4 matrices of d² plus 4 bias vectors of d: 4·268,435,456 + 4·16384
    assert mha.count_parameters(big) == 1_073_741_824 + 65_536 == 1_073_807_360
    no_bias = mha.MultiHeadAttention(D, H, bias=False, device="meta")
    assert mha.count_parameters(no_bias) == 1_073_741_824


def test_parameters_are_layout_neutral_17_08_example_2():
    # d 512, h 8: per head 3 · 512·64 = 98,304; 8 heads 786,432; W^O 262,144; total 1,048,576 (no bias)
    for layout in ("fused", "per_head"):
        m = mha.MultiHeadAttention(512, 8, bias=False, layout=layout, device="meta")
        assert mha.count_parameters(m) == 1_048_576


def test_parameters_with_kdim_vdim():
    # W^Q 8·8, W^K 8·3, W^V 8·5, W^O 8·8, biases 3·8 + 8: 64 + 24 + 40 + 64 + 32 = 224
    m = mha.MultiHeadAttention(8, 2, kdim=3, vdim=5)
    assert mha.count_parameters(m) == 224
    assert mha.count_parameters(m.to_layout("per_head")) == 224


@pytest.mark.parametrize("need_weights", [False, True])
def test_flops_405b_one_sequence(big, xb, need_weights):
    r = mha.measure_flops(big, xb, xb, xb, need_weights=need_weights)
    # each projection: n·d multiply-adds per output column × d columns, 2 FLOPs each: 2·n·d²
    for stage in ("q_proj", "k_proj", "v_proj", "out_proj"):
        assert r.by_stage[stage] == 2 * 2_199_023_255_552 == 4_398_046_511_104
    # QKᵀ over all heads: n²·d_k·h = n²·d multiply-adds; A·V the same
    assert r.by_stage["qk"] == r.by_stage["av"] == 2 * 1_099_511_627_776
    assert r.projections == 8 * 2_199_023_255_552 == 17_592_186_044_416  # 8nd²
    assert r.attention == 4 * 1_099_511_627_776 == 4_398_046_511_104  # 4n²d
    assert r.matmul_total == 21_990_232_555_520
    # apart from matmuls: one scaling per score, 5 per score for softmax, h·n² = 2^7·2^26 = 2^33 scores
    assert r.scaling == 2**33 and r.softmax == 5 * 2**33
    assert r.masking == 0
    assert r.bias == 4 * N * D  # one add per output element of the four projections


def test_attention_matrices_405b(big, xb):
    a = mha.attention_matrices(big, xb, xb)
    assert a.count == 128 and a.shape == (8192, 8192)
    assert a.elements == 128 * 8192 * 8192 == 2**33
    assert a.bytes == 4 * 2**33  # fp32 weights
    assert mha.attention_matrices(big, xb, xb, dtype=torch.bfloat16).bytes == 2 * 2**33
    batched = torch.empty(4, 100, D, device="meta")
    assert mha.attention_matrices(big, batched, torch.empty(4, 30, D, device="meta")).count == 4 * 128


@pytest.mark.parametrize("layout", ["fused", "per_head"])
def test_cross_attention_flops_by_hand(layout):
    # B 2, n_q 3, n_k 5, d 8, h 2, kdim 4, vdim 6 — multiply-adds per stage (per head: h matmuls
    # of d_k = 4 columns each, the same total):
    # q: 2·3·8·8 = 384; k: 2·5·4·8 = 320; v: 2·5·6·8 = 480; out: 2·3·8·8 = 384
    # qk: B·h·n_q·n_k·d_k = 2·2·3·5·4 = 240; av: the same, 240
    m = mha.MultiHeadAttention(8, 2, kdim=4, vdim=6, layout=layout)
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    macs = {"q_proj": 384, "k_proj": 320, "v_proj": 480, "qk": 240, "av": 240, "out_proj": 384}
    for need_weights in (True, False):
        r = mha.measure_flops(m, q, k, v, need_weights=need_weights)
        assert dict(r.by_stage) == {s: 2 * n for s, n in macs.items()}  # 1 multiply-add = 2 FLOPs


def _some_masks():
    kpm = torch.zeros(2, 6, dtype=torch.bool)
    kpm[:, -1] = True
    return [{}, {"is_causal": True}, {"key_padding_mask": kpm}, {"attn_mask": torch.randn(6, 6)}]


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("layout", ["fused", "per_head"])
@pytest.mark.parametrize("masks", _some_masks(), ids=["none", "causal", "kpm", "attn"])
def test_sdpa_path_measures_what_explicit_path_measures(device, layout, masks):
    m = mha.MultiHeadAttention(16, 4, layout=layout, device=device)
    x = torch.randn(2, 6, 16, device=device)
    masks = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in masks.items()}
    fast = mha.measure_flops(m, x, x, x, need_weights=False, **masks)
    explicit = mha.measure_flops(m, x, x, x, need_weights=True, **masks)
    assert fast == explicit
    assert fast.attention == 4 * 2 * 6 * 6 * 16  # 4·B·n²·d
    assert fast.masking == (0 if not masks else 2 * 4 * 6 * 6)  # one add per score, B·h·n²


def test_agrees_with_torch_flop_counter_on_the_explicit_path():
    m = mha.MultiHeadAttention(32, 4)
    x = torch.randn(2, 7, 32)
    with FlopCounterMode(display=False) as fc:
        m(x, x, x, need_weights=True)
    assert mha.measure_flops(m, x, x, x, need_weights=True).matmul_total == fc.get_total_flops()


def test_torch_flop_counter_drops_sdpa_on_cpu_and_this_does_not():
    # B 2, n 7, d 32: attention = 4·B·n²·d = 4·2·49·32 = 12,544; projections 8·B·n·d² = 114,688
    m = mha.MultiHeadAttention(32, 4)
    x = torch.randn(2, 7, 32)
    with FlopCounterMode(display=False) as fc:
        m(x, x, x, need_weights=False)
    ours = mha.measure_flops(m, x, x, x, need_weights=False)
    assert ours.attention == 12_544 and ours.projections == 114_688
    # the peer's blind spot (pytorch issue 195460): SDPA's fused CPU kernel counted as 0
    assert fc.get_total_flops() == 114_688
    assert ours.matmul_total == 114_688 + 12_544


def test_multiply_adds_are_not_reported_as_flops():
    # fvcore and ptflops report multiply-adds; one sequence, n 4, d 8, h 2:
    # MACs = 4·n·d² + 2·n²·d = 4·4·64 + 2·16·8 = 1024 + 256 = 1280, so FLOPs = 2560
    m = mha.MultiHeadAttention(8, 2)
    x = torch.randn(4, 8)
    assert mha.measure_flops(m, x, x, x).matmul_total == 2560


def test_bias_adds_are_reported_apart_from_matmuls():
    x = torch.randn(3, 8)
    with_bias = mha.measure_flops(mha.MultiHeadAttention(8, 2), x, x, x)
    without = mha.measure_flops(mha.MultiHeadAttention(8, 2, bias=False), x, x, x)
    assert with_bias.matmul_total == without.matmul_total
    assert with_bias.bias == 4 * 3 * 8 and without.bias == 0  # four projections × n × d outputs


def test_an_unknown_kernel_is_refused_not_dropped():
    class Conv(torch.nn.Module):
        def forward(self, q, k, v, **kw):
            return torch.nn.functional.conv1d(q, torch.randn(2, 3, 1))

    with pytest.raises(RuntimeError, match="refusing to drop"):
        mha.measure_flops(Conv(), torch.randn(1, 3, 5), None, None)


def test_a_matmul_outside_the_known_stages_is_refused():
    class Stray(torch.nn.Module):
        def forward(self, q, k, v, **kw):
            return q @ k

    with pytest.raises(RuntimeError, match="outside any known stage"):
        mha.measure_flops(Stray(), torch.randn(3, 4), torch.randn(4, 5), None)


def test_trace_17_08_example_1_shapes():
    # d_model 768, h 12, n 128: d_k = d_v = 768 / 12 = 64
    m = mha.MultiHeadAttention(768, 12, device="meta")
    x = torch.empty(128, 768, device="meta")
    t = mha.trace(m, x, x, x)
    assert t.names() == ("Q", "K", "V", "Q_i", "K_i", "V_i", "S_i", "A_i", "head_i", "concat", "output")
    expected = {"Q": (128, 768), "K": (128, 768), "V": (128, 768), "Q_i": (128, 64), "K_i": (128, 64),
                "V_i": (128, 64), "S_i": (128, 128), "A_i": (128, 128), "head_i": (128, 64),
                "concat": (128, 768), "output": (128, 768)}
    assert {n: t.shape(n) for n in t.names()} == expected
    assert t["Q_i"].shape == (12, 128, 64)  # all heads stacked
    assert dict(t).keys() == expected.keys()


def test_trace_values_are_the_equations():
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(8, 2).eval()
    with torch.no_grad():  # torch initialises biases at 0: make them count
        m.in_proj_bias.copy_(torch.randn(24))
        m.out_proj.bias.copy_(torch.randn(8))
    x = torch.randn(2, 5, 8)
    t = mha.trace(m, x, x, x)
    W_Q0, _, _ = m.head_weights(0)  # (d_model, d_k)
    b_Q0 = m.in_proj_bias[:4]
    torch.testing.assert_close(t["Q_i"][:, 0], x @ W_Q0 + b_Q0)
    torch.testing.assert_close(t["S_i"], t["Q_i"] @ t["K_i"].transpose(-2, -1) / 2.0)  # √d_k = √4
    torch.testing.assert_close(t["A_i"], torch.softmax(t["S_i"], dim=-1))
    torch.testing.assert_close(t["head_i"], t["A_i"] @ t["V_i"])
    torch.testing.assert_close(t["concat"], torch.cat([t["head_i"][:, 0], t["head_i"][:, 1]], dim=-1))
    torch.testing.assert_close(t["output"], m(x, x, x)[0])
    with pytest.raises(TypeError):
        t.tensors["Q"] = None  # read-only


def test_trace_with_seq_first_cross_attention_is_batch_first():
    m = mha.MultiHeadAttention(8, 2, kdim=3, batch_first=False)
    q, k, v = torch.randn(5, 2, 8), torch.randn(7, 2, 3), torch.randn(7, 2, 8)
    t = mha.trace(m, q, k, v, is_causal=True)
    assert t["Q"].shape == (2, 5, 8) and t["S_i"].shape == (2, 2, 5, 7) and t["output"].shape == (2, 5, 8)
    assert t.shape("A_i") == (5, 7)
    assert t["A_i"][0, 0, 0, 1:].abs().sum() == 0  # causal: query 0 sees key 0 only
