"""mha's fused path runs what a minimal F.linear → SDPA → F.linear layer runs, op for op (so on a GPU
it can only differ from it by Python overhead), and stage() costs nothing when nothing traces.
Counted with torch.profiler (not a TorchDispatchMode, which would switch mha to its traced ops)."""
import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

import mha
from mha.ops import STAGE, stage, tracing

B, T, C, NH = 2, 5, 16, 4
HS = C // NH


def top_level_ops(fn):
    """Names of the aten ops fn runs, outermost only (forward, and backward when fn runs one)."""
    with profile(activities=[ProfilerActivity.CPU]) as p:
        fn()
    events = [e for e in p.events() if e.name.startswith("aten::")]
    return [e.name for e in events if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")]


def minimal(m, x, causal):
    qkv = F.linear(x, m.in_proj_weight, m.in_proj_bias).view(B, T, 3, NH, HS)  # (B, T, 3, nh, hs)
    q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))  # 3 × (B, nh, T, hs)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, nh, T, hs)
    return F.linear(y.transpose(1, 2).reshape(B, T, C), m.out_proj.weight, m.out_proj.bias)  # (B, T, C)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backward", [False, True])
def test_the_fused_path_runs_the_minimal_layer_s_ops(causal, backward):
    # before: the biases were separate add_ ops (mm, then add_: a second pass over each output)
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(C, NH).eval()
    x = torch.randn(B, T, C, requires_grad=backward)

    def run(f):
        def go():
            for t in (x, *m.parameters()):
                t.grad = None  # each run stores its gradients afresh (not added to the other's)
            with torch.enable_grad() if backward else torch.inference_mode():
                out = f()
                if backward:
                    out.sum().backward()
        return go

    ours = top_level_ops(run(lambda: m(x, x, x, need_weights=False, is_causal=causal)[0]))
    theirs = top_level_ops(run(lambda: minimal(m, x, causal)))
    assert ours == theirs
    assert "aten::scaled_dot_product_attention" in ours and "aten::add_" not in ours[:len(ours) // 2]
    torch.testing.assert_close(m(x, x, x, need_weights=False, is_causal=causal)[0], minimal(m, x, causal),
                               atol=1e-6, rtol=0)


def test_the_weights_path_scales_q_not_the_scores_unless_traced():
    # S_i = Q_i·K_iᵀ/√d_k: scaling the (T, hs) queries is T·hs multiplies, scaling the scores T·S;
    # traced (mha.trace, mha.measure_flops) the scores are scaled as the text writes it
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(C, NH).eval()
    x = torch.randn(B, T, C)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        with torch.inference_mode():
            out, w = m(x, x, x)
    muls = [e.input_shapes[0] for e in p.events() if e.name in ("aten::mul", "aten::mul_")]
    assert [B, NH, T, T] not in muls and [B, NH, T, HS] in muls  # the queries (B, nh, T, hs), not the scores
    t = mha.trace(m, x, x, x)
    torch.testing.assert_close(t["A_i"].mean(dim=1), w, atol=1e-6, rtol=0)
    torch.testing.assert_close(t["output"], out, atol=1e-6, rtol=0)


def test_stage_is_free_unless_a_dispatch_mode_listens():
    # before: every stage() set and reset the context variable, a generator context manager per call
    assert not tracing()
    with stage("qk"):
        assert STAGE.get() is None  # nobody reads it: not set
    with TorchDispatchMode():
        assert tracing()
        with stage("qk"):
            assert STAGE.get() == "qk"
        assert STAGE.get() is None
    assert stage("av") is stage("out_proj")  # one shared no-op context
