"""Fused ⇔ per-head layouts and torch conversions keep the function and the weights;
bad arguments raise a ValueError that names the argument and the expected shape."""
import pytest
import torch

import mha


def close(a, b):
    torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def randomized(m, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return m


@pytest.mark.parametrize("kdim,vdim", [(None, None), (3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_and_per_head_are_the_same_function(kdim, vdim, bias):
    fused = randomized(mha.MultiHeadAttention(12, 3, kdim=kdim, vdim=vdim, bias=bias))
    per_head = fused.to_layout("per_head")
    assert per_head.layout == "per_head" and len(per_head.W_i_Q) == 3
    assert per_head.W_i_Q[0].shape == (12, 4)  # W_i^Q: d_model × d_k
    assert per_head.W_i_K[0].shape == (kdim or 12, 4) and per_head.W_i_V[0].shape == (vdim or 12, 4)
    q = torch.randn(2, 4, 12)
    k, v = torch.randn(2, 6, kdim or 12), torch.randn(2, 6, vdim or 12)
    for need_weights in (True, False):
        a, wa = fused(q, k, v, need_weights=need_weights, average_attn_weights=False)
        b, wb = per_head(q, k, v, need_weights=need_weights, average_attn_weights=False)
        close(b, a)
        if need_weights:
            close(wb, wa)
    back = per_head.to_layout("fused")
    for name, p in fused.named_parameters():
        assert torch.equal(dict(back.named_parameters())[name], p)  # the round trip is exact


def test_head_weights_are_column_blocks_of_the_full_matrices():
    m = randomized(mha.MultiHeadAttention(8, 2))
    W_Q = m.W_Q  # text orientation: Q_all = X · W^Q, (d_model, h·d_k)
    assert W_Q.shape == (8, 8)
    assert torch.equal(m.head_weights(1)[0], W_Q[:, 4:8])
    per_head = m.to_layout("per_head")
    assert torch.equal(per_head.head_weights(1)[0], W_Q[:, 4:8])
    assert torch.equal(per_head.W_Q, W_Q)
    assert m.W_O.shape == (8, 8) and torch.equal(m.W_O, m.out_proj.weight.T)


@pytest.mark.parametrize("kdim", [None, 5])
def test_torch_round_trip_keeps_weights_and_settings(kdim):
    ref = torch.nn.MultiheadAttention(8, 2, kdim=kdim, vdim=kdim, bias=False, dropout=0.25, batch_first=False)
    randomized(ref)
    ours = mha.MultiHeadAttention.from_torch(ref)
    assert (ours.d_model, ours.num_heads, ours.kdim, ours.dropout, ours.batch_first, ours.bias) == \
        (8, 2, kdim or 8, 0.25, False, False)
    back = ours.to_torch()
    assert set(back.state_dict()) == set(ref.state_dict())
    for name, t in ref.state_dict().items():
        assert torch.equal(back.state_dict()[name], t)


@pytest.mark.parametrize("kwargs,match", [
    ({"add_bias_kv": True}, "bias_k"),
    ({"add_zero_attn": True}, "add_zero_attn"),
])
def test_from_torch_refuses_what_it_cannot_represent(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mha.MultiHeadAttention.from_torch(torch.nn.MultiheadAttention(8, 2, **kwargs))


def test_from_torch_refuses_other_modules():
    with pytest.raises(ValueError, match="torch.nn.MultiheadAttention"):
        mha.MultiHeadAttention.from_torch(torch.nn.Linear(4, 4))


def test_layout_conversion_keeps_training_mode_device_and_dtype():
    m = mha.MultiHeadAttention(8, 2, dtype=torch.float64).eval()
    p = m.to_layout("per_head")
    assert not p.training and p.W_i_Q[0].dtype == torch.float64
    assert mha.MultiHeadAttention(8, 2, device="meta").to_layout("per_head").W_i_Q[0].is_meta


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("args,kwargs,expected", [
    ((10, 3), {}, "d_model (10) must be divisible by num_heads (3)"),
    ((0, 1), {}, "d_model must be a positive integer, got 0"),
    ((8, 2), {"layout": "heads"}, "layout must be one of ('fused', 'per_head'), got 'heads'"),
    ((8, 2), {"dropout": 1.5}, "dropout must be a probability in [0, 1), got 1.5"),
    ((8, 2), {"kdim": -1}, "kdim must be a positive integer, got -1"),
])
def test_constructor_errors(args, kwargs, expected):
    with pytest.raises(ValueError) as e:
        mha.MultiHeadAttention(*args, **kwargs)
    assert expected in str(e.value)


def test_to_layout_unknown():
    with pytest.raises(ValueError, match="layout must be one of"):
        mha.MultiHeadAttention(8, 2).to_layout("heads")


@pytest.fixture
def m():
    return mha.MultiHeadAttention(8, 2, kdim=3)


def test_query_of_wrong_width_names_d_model(m):
    with pytest.raises(ValueError) as e:
        m(torch.randn(2, 5, 7), torch.randn(2, 5, 3), torch.randn(2, 5, 8))
    assert "query must have shape (batch, n, d_model=8)" in str(e.value) and "(2, 5, 7)" in str(e.value)


def test_key_of_wrong_width_names_kdim(m):
    with pytest.raises(ValueError) as e:
        m(torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8))
    assert "key must have shape (batch, n, kdim=3)" in str(e.value)


def test_unbatched_shapes_are_named_so():
    m = mha.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"value must have shape \(n, vdim=8\)"):
        m(torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 4))
    with pytest.raises(ValueError, match=r"query must be \(batch, n, d_model\) or unbatched \(n_q, d_model\)"):
        m(torch.randn(8), torch.randn(8), torch.randn(8))


def test_key_and_value_lengths_must_agree():
    m = mha.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="key and value must have the same leading dimensions"):
        m(torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 6, 8))


def test_batch_sizes_must_agree():
    m = mha.MultiHeadAttention(8, 2, batch_first=False)
    with pytest.raises(ValueError, match="query and key must have the same batch size, got 2 and 3"):
        m(torch.randn(5, 2, 8), torch.randn(4, 3, 8), torch.randn(4, 3, 8))


def test_attn_mask_of_wrong_shape_names_the_expected_shapes():
    m = mha.MultiHeadAttention(8, 2)
    x, k = torch.randn(3, 5, 8), torch.randn(3, 4, 8)
    with pytest.raises(ValueError) as e:
        m(x, k, k, attn_mask=torch.zeros(5, 5))
    # B 3, h 2, n_q 5, n_k 4
    assert "attn_mask must have shape (n_q, n_k) = (5, 4) or (batch·num_heads, n_q, n_k) = (6, 5, 4)" \
        in str(e.value)
    assert "got (5, 5)" in str(e.value)


def test_key_padding_mask_of_wrong_shape():
    m = mha.MultiHeadAttention(8, 2)
    x = torch.randn(3, 5, 8)
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(batch, n_k\) = \(3, 5\), got \(5,\)"):
        m(x, x, x, key_padding_mask=torch.zeros(5, dtype=torch.bool))
    with pytest.raises(ValueError, match="must be a bool or floating-point tensor"):
        m(x, x, x, key_padding_mask=torch.zeros(3, 5, dtype=torch.long))


def test_trace_refuses_unknown_keywords():
    m = mha.MultiHeadAttention(8, 2)
    x = torch.randn(5, 8)
    with pytest.raises(ValueError, match="need_weights"):
        mha.trace(m, x, x, x, need_weights=True)


def test_demo_runs_and_measures_405b(capsys):
    from mha.demo import main

    assert main() == 0
    out = capsys.readouterr().out
    assert "Q_i     one head/sequence (128, 64)" in out
    # 8nd² at n 8192, d 16384: 8 · 8192 · 268,435,456
    assert "17,592,186,044,416" in out
    assert "1,073,807,360" in out  # 4d² + 4d


def test_importing_mha_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, mha, mha.measure, mha.tracing; assert 'torch' not in sys.modules; print(mha.__all__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "MultiHeadAttention" in r.stdout


def test_query_message_does_not_compare_the_query_with_itself(m):
    with pytest.raises(ValueError) as e:
        m(torch.randn(2, 5, 7), torch.randn(2, 5, 3), torch.randn(2, 5, 8))
    assert "like query" not in str(e.value)


@pytest.mark.parametrize("which", ["query", "key", "value"])
def test_an_input_of_another_dtype_is_named(which):
    m = mha.MultiHeadAttention(8, 2)
    xs = {n: torch.randn(2, 5, 8) for n in ("query", "key", "value")}
    xs[which] = xs[which].double()
    with pytest.raises(ValueError, match=rf"{which} must have the module's dtype torch.float32, got torch.float64"):
        m(xs["query"], xs["key"], xs["value"])


def test_an_input_on_another_device_is_named():
    m = mha.MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"key must be on the module's device cpu, got meta"):
        m(x, x.to("meta"), x)


@pytest.mark.parametrize("kwargs, match", [
    ({"attn_mask": [[True]]}, "attn_mask must be a bool or floating-point torch.Tensor or None, got list"),
    ({"key_padding_mask": 0.5}, "key_padding_mask must be a bool or floating-point torch.Tensor or None, got float"),
    ({"is_causal": "yes"}, "is_causal must be True or False, got 'yes'"),
])
def test_masks_of_the_wrong_type_are_named(kwargs, match):
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=match):
        mha.MultiHeadAttention(8, 2)(x, x, x, **kwargs)


@pytest.mark.parametrize("i", ["a", 1.0, True, 2, -1])
def test_head_index_must_be_an_integer_in_range(i):
    with pytest.raises(ValueError, match=r"head index i must be an integer in \[0, 2\)"):
        mha.MultiHeadAttention(8, 2).head_weights(i)


def test_an_integer_dtype_is_refused():
    with pytest.raises(ValueError, match="dtype must be a floating-point torch.dtype"):
        mha.MultiHeadAttention(8, 2, dtype=torch.int64)


def test_trace_and_measure_refuse_a_torch_module_and_say_what_to_do():
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(1, 3, 8)
    for call in (lambda: mha.trace(ref, x, x, x), lambda: mha.measure_flops(ref, x, x, x),
                 lambda: mha.attention_matrices(ref, x, x)):
        with pytest.raises(ValueError, match=r"from_torch\(m\)"):
            call()


def test_attention_matrices_are_read_off_a_forward_at_any_size():
    # LLaMA 3.1 405B sizes (d 16384, 128 heads) at n 8192, batch 2, without memory:
    # 2·128 = 256 matrices of 8192 × 8192 = 67,108,864 entries, 17,179,869,184 entries in all,
    # 34,359,738,368 bytes in bf16
    m = mha.MultiHeadAttention(16384, 128, device="meta", dtype=torch.bfloat16)
    x = torch.empty(2, 8192, 16384, device="meta", dtype=torch.bfloat16)
    a = mha.attention_matrices(m, x, x)
    assert (a.count, a.shape, a.elements, a.bytes) == (256, (8192, 8192), 17_179_869_184, 34_359_738_368)
    # cross-attention, unbatched: one matrix per head, n_q × n_k; fp32 bytes on request
    small = mha.MultiHeadAttention(8, 2)
    a = mha.attention_matrices(small, torch.randn(3, 8), torch.randn(5, 8), dtype=torch.float32)
    assert (a.count, a.shape, a.elements, a.bytes) == (2, (3, 5), 30, 120)
