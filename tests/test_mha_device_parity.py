"""mha.MultiHeadAttention on every device and in every dtype, under one tolerance rule: fp32 (TF32 off
and on, on CUDA), fp16 and bf16; masks, cross-attention, GQA/MQA, the KV cache and the gradients.

Devices: "cpu" always, "cuda" when torch.cuda.is_available() (skipped otherwise, reason "no CUDA
device"). The CPU cases check the test logic itself with small sizes; the CUDA cases use d_model
512, 8 heads, L 256 and S 384. Select the device cases with ``-k cuda``. The file imports only
torch, pytest, the standard library and mha, so that a bare torch + pytest machine runs it::

    PYTHONPATH=. python3 -m pytest -q -rs --noconftest -p no:cacheprovider tests/test_mha_device_parity.py

(MHA_PARITY_ERRORS=file.jsonl writes every error measured, mha's and torch's, one JSON line each.)

The tolerance rule
------------------
Every quantity (output, attention weights, each gradient) is compared with a float64 reference of the
same math, written out here independently of mha (F.linear, the softmax equation exp(s − max)/Σ,
the K/V heads repeated for GQA), fed the *same* rounded weights and inputs: the low-precision module's
weights and inputs converted to float64, so that only the arithmetic is measured, not the rounding
of the data. The error of x is normwise: err(x) = max|x − ref| / max|ref|. Two conditions:

1. **No worse than torch** — err(mha) ≤ K · err(torch) + FLOOR · u_s, with K = 2, FLOOR = 4,
   where err(torch) is the error of torch's own implementation in the same dtype on the same device
   with the same weights against the same reference: nn.MultiheadAttention (via
   MultiHeadAttention.to_torch) for MHA, F.linear + F.scaled_dot_product_attention(enable_gqa=True)
   for GQA/MQA (and torch.softmax of the scores for GQA's weights), whose gradients are taken the same
   way. Why this is the right tolerance: the reference is float64 (error ~1e-16, nothing of the code
   under test), and the yardstick is what PyTorch itself achieves in that dtype on that device, so
   the rule asks "as accurate as torch", without a number tuned to mha's own output. K = 2 allows for
   a different but equally good order of the sums (two independent rounding-error sums differ by a
   factor around 1, rarely 2); the floor covers a yardstick that is luckily near 0 (K·0 would demand
   an exact result): 4 roundings of the storage format.

2. **An absolute bound from the unit roundoff** — err ≤ B = λ · (u_s · (√R + M) + u_a · √N), λ = 4,
   checked for mha *and* for torch (a torch error above B means the bound, not mha, is wrong):
   - u_s, the unit roundoff of what is stored and fed to the multipliers: fp32 2^-24, TF32 2^-11
     (TF32 rounds the matmul operands to a 10-bit mantissa), fp16 2^-11, bf16 2^-8;
   - u_a = 2^-24, the accumulation: torch sums fp16/bf16 products in fp32 (cuBLAS's 32F compute type,
     the CPU kernels' float opmath; the reduced-precision-reduction flags round a few split-K partial
     sums only, which R covers), and TF32 accumulates in fp32;
   - N, the reduction lengths along an output's chain: forward N = d_in + d_k + 2·S + d_model
     (in-projection over max(d_model, kdim, vdim), QKᵀ over d_k, the softmax sum and A·V over S, W^O
     over d_model); gradients N = 2·N_fwd + B·max(L, S) (each reduction again backwards, and the
     weight gradients sum over the tokens). Independent rounding errors add in quadrature (Higham &
     Mary 2019, probabilistic rounding error analysis): √N, not N;
   - R, the roundings of stored intermediates along the chain (forward 8: operands, Q/K/V, scores,
     weights, heads, output and the bias adds; gradients 16);
   - M = max |logit| of the reference: a logit s rounded to the dtype moves by u_s·|s|, which softmax
     turns into the same relative change of the weights;
   - λ = 4 the probabilistic bound's constant (and the data's mild conditioning: Xavier weights and
     unit-normal inputs keep |logits| a few units).

   B for M = 4 (|logits| seen here: up to about 8 on the CPU sizes, where B is computed with the M
   measured), forward N and gradient N as above, CPU sizes cross-attention (N 120 / 280) and CUDA
   sizes cross-attention (N 1,984 / 4,736); the √N term is fp32's, so B barely depends on the sizes:

   | precision        | u_s    | B forward, CPU / CUDA | B gradients, CPU / CUDA | mha's err seen on CPU |
   |------------------|--------|-----------------------|-------------------------|-----------------------|
   | fp32 (TF32 off)  | 2^-24  | 4.2e-6 / 1.2e-5       | 5.9e-6 / 1.8e-5         | ≤ 5.0e-7 / ≤ 1.1e-6   |
   | fp32 (TF32 on)   | 2^-11  | (CUDA only) 1.3e-2    | (CUDA only) 1.6e-2      | —                     |
   | fp16             | 2^-11  | 1.3e-2 / 1.3e-2       | 1.6e-2 / 1.6e-2         | ≤ 1.3e-3 / ≤ 1.2e-3   |
   | bf16             | 2^-8   | 1.1e-1 / 1.1e-1       | 1.3e-1 / 1.3e-1         | ≤ 1.1e-2 / ≤ 9.8e-3   |

   (last column: forward / gradients, the largest over this file's CPU cases; torch's own: fp32
   ≤ 4.2e-7 / 1.1e-6, fp16 ≤ 1.1e-3 / 1.2e-3, bf16 ≤ 9.0e-3 / 9.2e-3: fp16 and bf16 within 1 to 3
   u_s, the roundings of the stored values, as the model says once the sums are fp32; fp32 about 7 to
   18 u_s, the √N term. Rule 1 used at most 0.6 of its allowance on CPU; rule 2 at most 0.17. The CUDA
   sizes run once on the CPU (147 cases: self-attention, GQA/MQA, KV cache, every gradient case):
   mha ≤ 1.2e-6 (fp32), 2.3e-3 (fp16), 2.0e-2 (bf16); rule 1 used at most 0.69, rule 2 at most 0.19.)

   The bound is an order-of-magnitude check (a wrong scale or mask gives errors of order 1, and is
   caught sharply by rule 1); rule 1 is the sharp one.

fp16 runs on CPU too: torch 2.x has CPU fp16 matmul and softmax kernels, and at these sizes the whole
file runs in seconds. Dropout is 0 in eval (a module built with dropout 0.5 in eval is checked to
compute what the same module without dropout computes).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
import warnings
from typing import NamedTuple

import pytest
import torch
import torch.nn.functional as F

import mha

HAS_CUDA = torch.cuda.is_available()
NO_CUDA = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")

K_TORCH = 2.0  # rule 1: err(mha) ≤ K·err(torch) + FLOOR·u_s
FLOOR = 4.0
LAMBDA = 4.0  # rule 2: the probabilistic bound's constant
U_ACC = 2.0 ** -24  # fp32 accumulation
R_FWD, R_GRAD = 8, 16


class Precision(NamedTuple):
    device: str
    dtype: torch.dtype
    tf32: bool | None  # None: not applicable (CPU, or a dtype other than fp32)
    u_s: float  # unit roundoff of the stored values and matmul operands

    def bound(self, n: int, rounds: int, max_logit: float) -> float:
        return LAMBDA * (self.u_s * (math.sqrt(rounds) + max_logit) + U_ACC * math.sqrt(n))


def _p(device, dtype, tf32, u_s, id_):
    return pytest.param(Precision(device, dtype, tf32, u_s), id=id_, marks=(NO_CUDA,) if device == "cuda" else ())


# TF32 applies to CUDA fp32 matmuls only: no CPU TF32 combination is generated
PRECISIONS = [
    _p("cpu", torch.float32, None, 2.0 ** -24, "cpu-fp32"),
    _p("cpu", torch.float16, None, 2.0 ** -11, "cpu-fp16"),
    _p("cpu", torch.bfloat16, None, 2.0 ** -8, "cpu-bf16"),
    _p("cuda", torch.float32, False, 2.0 ** -24, "cuda-fp32"),
    _p("cuda", torch.float32, True, 2.0 ** -11, "cuda-fp32-tf32"),
    _p("cuda", torch.float16, None, 2.0 ** -11, "cuda-fp16"),
    _p("cuda", torch.bfloat16, None, 2.0 ** -8, "cuda-bf16"),
]

# B batch, L queries, S keys (cross-attention; self-attention uses L), d_model, h heads, kdim, vdim
SIZES = {"cpu": dict(B=2, L=12, S=20, d=32, h=4, kdim=24, vdim=40),
         "cuda": dict(B=2, L=256, S=384, d=512, h=8, kdim=384, vdim=640)}


@contextlib.contextmanager
def tf32_mode(on: bool | None):
    """TF32 for CUDA matmuls and cuDNN on/off (None: leave as is); the previous settings restored."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        if on is not None:
            torch.backends.cuda.matmul.allow_tf32 = on
            torch.backends.cudnn.allow_tf32 = on
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.fixture(params=PRECISIONS)
def prec(request):
    p = request.param
    with tf32_mode(p.tf32):
        yield p


# ---------------------------------------------------------------------------------------- errors

def rel_err(x, ref) -> float:
    x = x.detach().to(device=ref.device, dtype=torch.float64)
    scale = ref.abs().max().item()
    return (x - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def check(what, ours, theirs, ref, prec, n, rounds, max_logit, request=None):
    """Rules 1 and 2 of the module docstring for one quantity."""
    assert ours.shape == ref.shape == theirs.shape, (what, ours.shape, theirs.shape, ref.shape)
    # computed where and in what it was asked (the reference is float64 on the same device)
    assert ours.device == theirs.device == ref.device and ours.device.type == prec.device, (what, ours.device)
    assert ours.dtype == theirs.dtype == prec.dtype, (what, ours.dtype, theirs.dtype)
    e_o, e_t = rel_err(ours, ref), rel_err(theirs, ref)
    bound = prec.bound(n, rounds, max_logit)
    path = os.environ.get("MHA_PARITY_ERRORS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"test": request.node.name if request else "", "what": what,
                                "precision": f"{prec.device}-{prec.dtype}-tf32={prec.tf32}",
                                "mha": e_o, "torch": e_t, "bound": bound}) + "\n")
    assert e_t <= bound, f"{what}: torch's own error {e_t:.3g} exceeds the bound {bound:.3g} (the bound is wrong)"
    assert e_o <= bound, f"{what}: mha's error {e_o:.3g} exceeds the bound {bound:.3g} (torch: {e_t:.3g})"
    allowed = K_TORCH * e_t + FLOOR * prec.u_s
    assert e_o <= allowed, (f"{what}: mha's error {e_o:.3g} > {K_TORCH:g} × torch's {e_t:.3g} "
                            f"+ {FLOOR:g}·u_s = {allowed:.3g}")
    return e_o, e_t


# ------------------------------------------------------------------------------ modules and data

def make_module(prec, *, cross=False, g=None, layout="fused", seed=0, dropout=0.0):
    """mha.MultiHeadAttention in the precision's dtype on its device, eval mode, non-zero biases."""
    s = SIZES[prec.device]
    kw = dict(kdim=s["kdim"], vdim=s["vdim"]) if cross else {}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        m = mha.MultiHeadAttention(s["d"], s["h"], n_kv_heads=g, dropout=dropout, **kw)  # Xavier, fp32, CPU
        with torch.no_grad():
            for p in m.parameters():
                if p.dim() == 1:  # torch initialises biases at 0: make them count
                    p.normal_(0.0, 0.1)
    m = m.to(dtype=prec.dtype)  # the weights rounded to the dtype; the float64 reference reads these
    if layout != "fused":
        m = m.to_layout(layout)
    m = m.to(prec.device).eval()
    return m


def raw_weights(m):
    """(Wq, Wk, Wv, Wo, bq, bk, bv, bo) of m in torch orientation (out, in), float64 leaf copies;
    read through the public text-orientation properties, whatever the layout."""
    C, kvw = m.d_model, m.n_kv_heads * m.d_k
    fused = m if m.layout == "fused" else m.to_layout("fused")
    b = fused.in_proj_bias.detach()
    parts = [m.W_Q.detach().T, m.W_K.detach().T, m.W_V.detach().T, m.out_proj.weight.detach(),
             b[:C], b[C:C + kvw], b[C + kvw:], m.out_proj.bias.detach()]
    return [p.to(torch.float64).clone().requires_grad_(True) for p in parts]


def inputs(prec, m, cross, seed=1):
    """query, key, value (B, L|S, dim) rounded to the dtype, on the device; self-attention: one tensor."""
    s = SIZES[prec.device]
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(s["B"], s["L"], s["d"], generator=gen)
    if not cross:
        q = q.to(prec.device, prec.dtype)
        return q, q, q
    k = torch.randn(s["B"], s["S"], m.kdim, generator=gen)
    v = torch.randn(s["B"], s["S"], m.vdim, generator=gen)
    return tuple(t.to(prec.device, prec.dtype) for t in (q, k, v))


def masks(kind, prec, B, L, S, h, seed=2):
    """(kwargs for mha, kwargs for nn.MultiheadAttention, additive float64 mask (B|1, h|1, L, S) or
    None). Key 0 is never masked, so no row is fully masked."""
    gen = torch.Generator().manual_seed(seed)
    dev, dt = prec.device, prec.dtype
    if kind == "none":
        return {}, {}, None
    if kind == "causal":
        causal = torch.ones(L, S, dtype=torch.bool).tril().logical_not()  # True above the diagonal
        add = torch.zeros(L, S, dtype=torch.float64).masked_fill(causal, float("-inf"))
        # nn.MultiheadAttention takes is_causal as a hint only: it needs the mask too
        return {"is_causal": True}, {"is_causal": True, "attn_mask": causal.to(dev)}, add.to(dev)
    kpm = torch.rand(B, S, generator=gen) < 0.3
    kpm[:, 0] = False
    kpm_add = torch.zeros(B, 1, 1, S, dtype=torch.float64).masked_fill(kpm[:, None, None], float("-inf"))
    if kind == "kpm":
        return ({"key_padding_mask": kpm.to(dev)},) * 2 + (kpm_add.to(dev),)
    if kind == "bool_attn":  # (B·h, L, S) bool attn_mask and a key_padding_mask
        am = torch.rand(B * h, L, S, generator=gen) < 0.3
        am[..., 0] = False
        add = torch.zeros(B * h, L, S, dtype=torch.float64).masked_fill(am, float("-inf")).view(B, h, L, S)
        kw = {"attn_mask": am.to(dev), "key_padding_mask": kpm.to(dev)}
        return kw, kw, (add + kpm_add).to(dev)
    if kind == "float_attn":  # (L, S) float attn_mask, in the dtype
        am = torch.randn(L, S, generator=gen).to(dt)
        return {"attn_mask": am.to(dev)}, {"attn_mask": am.to(dev)}, am.to(dev, torch.float64)
    raise AssertionError(kind)


# ---------------------------------------------------------------------------- the computations

def reference(q, k, v, raw, h, g, add_mask):
    """float64 attention written out: (output (B, L, C), weights (B, h, L, S), max |logit|)."""
    Wq, Wk, Wv, Wo, bq, bk, bv, bo = raw
    q, k, v = (t.to(torch.float64) for t in (q, k, v))
    B, L, C = q.shape
    S, hs = k.shape[1], C // h
    Q = F.linear(q, Wq, bq).view(B, L, h, hs).transpose(1, 2)  # (B, h, L, hs)
    K = F.linear(k, Wk, bk).view(B, S, g, hs).transpose(1, 2).repeat_interleave(h // g, dim=1)  # (B, h, S, hs)
    V = F.linear(v, Wv, bv).view(B, S, g, hs).transpose(1, 2).repeat_interleave(h // g, dim=1)
    s = Q @ K.transpose(-2, -1) / math.sqrt(hs)  # (B, h, L, S)
    max_logit = s.detach().abs().max().item()
    if add_mask is not None:
        s = s + add_mask
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    a = e / e.sum(dim=-1, keepdim=True)  # softmax, the equation
    y = (a @ V).transpose(1, 2).reshape(B, L, C)
    return F.linear(y, Wo, bo), a, max_logit


def torch_gqa(q, k, v, raw, h, g, kw, need_weights):
    """torch's own GQA/MQA in the dtype: F.linear + SDPA(enable_gqa=True); the weights (if asked)
    as torch.softmax of the scaled scores. kw: "mask", the float64 additive mask (or None), and
    "is_causal"."""
    Wq, Wk, Wv, Wo, bq, bk, bv, bo = raw
    B, L, C = q.shape
    S, hs = k.shape[1], C // h
    Q = F.linear(q, Wq, bq).view(B, L, h, hs).transpose(1, 2)
    K = F.linear(k, Wk, bk).view(B, S, g, hs).transpose(1, 2)
    V = F.linear(v, Wv, bv).view(B, S, g, hs).transpose(1, 2)
    mask = None if kw["mask"] is None else kw["mask"].to(q.dtype)
    causal = kw["is_causal"]  # SDPA builds the causal mask itself; `mask` is then used for the weights only
    y = F.scaled_dot_product_attention(Q, K, V, attn_mask=None if causal else mask, is_causal=causal,
                                       enable_gqa=True)
    out = F.linear(y.transpose(1, 2).reshape(B, L, C), Wo, bo)
    if not need_weights:
        return out, None
    sc = (Q @ K.repeat_interleave(h // g, dim=1).transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    if mask is not None:
        sc = sc + mask
    return out, torch.softmax(sc, dim=-1)


def setup(prec, mask, *, cross, **module_kw):
    """One case's module, (q, k, v), masks() for them and chain()'s reduction lengths."""
    s = SIZES[prec.device]
    m = make_module(prec, cross=cross, **module_kw)
    q, k, v = inputs(prec, m, cross)
    L, S = q.shape[1], k.shape[1]
    return m, (q, k, v), masks(mask, prec, s["B"], L, S, s["h"]), chain(prec, m, S)


def chain(prec, m, S):
    s = SIZES[prec.device]
    n_fwd = max(m.d_model, m.kdim, m.vdim) + m.d_k + 2 * S + m.d_model
    return n_fwd, 2 * n_fwd + s["B"] * max(s["L"], S)


def yardstick_weights_dtype(m):
    return [t.detach().to(m.out_proj.weight.dtype).requires_grad_(True) for t in raw_weights(m)]


def grads8(m):
    """m's parameter gradients as (Wq, Wk, Wv, Wo, bq, bk, bv, bo), torch orientation, any layout."""
    C, kvw = m.d_model, m.n_kv_heads * m.d_k
    if m.layout == "per_head":
        Ws = [torch.cat([W.grad for W in getattr(m, f"W_i_{n}")], dim=1).T for n in "QKV"]
        bs = [torch.cat([b.grad for b in getattr(m, f"b_i_{n}")]) for n in "QKV"]
    else:
        if getattr(m, "in_proj_weight", None) is not None:  # packed: W^Q, W^K, W^V rows of one matrix
            W = m.in_proj_weight.grad
            Ws = [W[:C], W[C:C + kvw], W[C + kvw:]]
        else:
            Ws = [m.q_proj_weight.grad, m.k_proj_weight.grad, m.v_proj_weight.grad]
        b = m.in_proj_bias.grad
        bs = [b[:C], b[C:C + kvw], b[C + kvw:]]
    return (*Ws, m.out_proj.weight.grad, *bs, m.out_proj.bias.grad)


def compare_grads(prec, ours, theirs, ref, n, max_logit, request):
    """ours/theirs/ref: (input grads..., Wq, Wk, Wv, Wo, bq, bk, bv, bo). The in-projection biases
    are compared as one vector: the gradient of b^K is 0 in exact arithmetic (adding q·b^K to every
    logit of a row leaves softmax unchanged), so alone it has no scale of its own."""
    def grouped(gs):
        *xs, Wq, Wk, Wv, Wo, bq, bk, bv, bo = gs
        return {**{f"d_input{i}": x for i, x in enumerate(xs)}, "dW_Q": Wq, "dW_K": Wk, "dW_V": Wv, "dW_O": Wo,
                "db_in": torch.cat([bq, bk, bv]), "db_O": bo}
    for who, gs in (("mha", ours), ("torch", theirs)):
        missing = [i for i, x in enumerate(gs) if x is None]
        assert not missing, f"{who}: no gradient reached {missing} (input grads, then Wq, Wk, Wv, Wo, bq, bk, bv, bo)"
    o, t, r = grouped(ours), grouped(theirs), grouped(ref)
    for name in r:
        check(f"gradient {name}", o[name], t[name], r[name], prec, n, R_GRAD, max_logit, request)


def call_torch(t, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nn.MultiheadAttention's notes on mask types / the fast path
        return t(*args, **kw)


# ----------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("layout", ["fused", "per_head"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask", ["none", "kpm", "bool_attn", "float_attn", "causal"])
def test_self_attention(prec, mask, need_weights, layout, request):
    run_mha_case(prec, mask, need_weights, layout, cross=False, request=request)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask", ["none", "kpm", "bool_attn", "float_attn"])
def test_cross_attention_kdim_vdim(prec, mask, need_weights, request):
    # L ≠ S, kdim and vdim ≠ d_model (q/k/v_proj_weight rather than in_proj_weight)
    run_mha_case(prec, mask, need_weights, "fused", cross=True, request=request)


def run_mha_case(prec, mask, need_weights, layout, cross, request):
    m, (q, k, v), (kw_o, kw_t, add), (n, _) = setup(prec, mask, cross=cross, layout=layout)
    t = m.to_torch().eval()
    raw = raw_weights(m)
    with torch.no_grad():
        ref, a, M = reference(q, k, v, raw, m.num_heads, m.num_heads, add)
        out_o, _ = m(q, k, v, need_weights=need_weights, **kw_o)
        out_t, _ = call_torch(t, q, k, v, need_weights=need_weights, **kw_t)
        check("output", out_o, out_t, ref, prec, n, R_FWD, M, request)
        if need_weights:
            for avg in (False, True):
                w_o = m(q, k, v, average_attn_weights=avg, **kw_o)[1]
                w_t = call_torch(t, q, k, v, average_attn_weights=avg, **kw_t)[1]
                check(f"weights average={avg}", w_o, w_t, a.mean(dim=1) if avg else a, prec, n, R_FWD, M, request)


@pytest.mark.parametrize("need_weights", [True, False])
# causal cross-attention (L ≠ S) is no case here: the KV cache test has the offset causal mask
@pytest.mark.parametrize("cross,mask", [(False, "none"), (False, "kpm"), (False, "causal"), (True, "none"),
                                        (True, "kpm"), (True, "float_attn")])
@pytest.mark.parametrize("g", [2, 1], ids=["gqa", "mqa"])
def test_gqa_mqa(prec, g, cross, mask, need_weights, request):
    m, (q, k, v), (kw_o, _, add), (n, _) = setup(prec, mask, cross=cross, g=g)
    raw = raw_weights(m)
    with torch.no_grad():
        ref, a, M = reference(q, k, v, raw, m.num_heads, g, add)
        out_o, w_o = m(q, k, v, need_weights=need_weights, average_attn_weights=False, **kw_o)
        out_t, w_t = torch_gqa(q, k, v, yardstick_weights_dtype(m), m.num_heads, g,
                               {"mask": add, "is_causal": mask == "causal"}, need_weights)
    check("output", out_o, out_t, ref, prec, n, R_FWD, M, request)
    if need_weights:
        check("weights per head", w_o, w_t, a, prec, n, R_FWD, M, request)


@pytest.mark.parametrize("layout", ["fused", "per_head"])
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("g", [None, 2, 1], ids=["mha", "gqa", "mqa"])
def test_kv_cache_prefill_then_decode(prec, g, need_weights, layout, request):
    """A prompt of L/2 tokens at once, 3 more at once, then one token per step through m.new_kv_cache on the device:
    the outputs, put together, are the full causal forward (float64 reference). Yardstick: torch's
    own full causal forward in the dtype (nn.MultiheadAttention, or SDPA with enable_gqa)."""
    s = SIZES[prec.device]
    m = make_module(prec, g=g, layout=layout)
    x, _, _ = inputs(prec, m, cross=False)
    B, L = x.shape[:2]
    prefill = L // 2
    _, _, add = masks("causal", prec, B, L, L, s["h"])
    raw = raw_weights(m)
    n, _ = chain(prec, m, L)
    with torch.no_grad():
        ref, _, M = reference(x, x, x, raw, m.num_heads, m.n_kv_heads, add)
        cache = m.new_kv_cache(batch=B, max_len=L)
        assert cache.k.device.type == prec.device and cache.dtype == prec.dtype
        outs = []
        # the prompt; a chunk of 3 (the causal mask offset by the cached tokens); then token by token
        for a, b in [(0, prefill), (prefill, prefill + 3)] + [(t, t + 1) for t in range(prefill + 3, L)]:
            part = x[:, a:b]
            outs.append(m(part, part, part, is_causal=True, kv_cache=cache, need_weights=need_weights)[0])
        assert cache.length == L
        out_o = torch.cat(outs, dim=1)
        if m.n_kv_heads == m.num_heads:
            causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril().logical_not()
            out_t, _ = call_torch(m.to_torch().eval(), x, x, x, need_weights=False, is_causal=True,
                                  attn_mask=causal)
        else:
            out_t, _ = torch_gqa(x, x, x, yardstick_weights_dtype(m), m.num_heads, m.n_kv_heads,
                                 {"mask": None, "is_causal": True}, False)
    check("decoded outputs", out_o, out_t, ref, prec, n, R_FWD, M, request)


GRAD_CASES = {  # name: (cross, n_kv_heads, mask, layout)
    "self": (False, None, "none", "fused"),
    "self-causal": (False, None, "causal", "fused"),
    "self-per_head-float_attn": (False, None, "float_attn", "per_head"),
    "cross-kdim-vdim-kpm": (True, None, "kpm", "fused"),
    "gqa-causal": (False, 2, "causal", "fused"),
    "mqa-cross-kpm": (True, 1, "kpm", "fused"),
    "gqa-per_head": (False, 2, "none", "per_head"),
}


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients(prec, case, need_weights, request):
    """Backward of the scalar loss ⟨out, G⟩ (G fixed, exactly representable in the dtype) w.r.t. the
    inputs and every parameter: mha against the float64 reference, torch's gradients (nn.MultiheadAttention
    via to_torch, or F.linear + SDPA(enable_gqa) on leaf copies of the weights) as the yardstick."""
    cross, g, mask, layout = GRAD_CASES[case]
    m, (q, k, v), (kw_o, kw_t, add), (_, n) = setup(prec, mask, cross=cross, g=g, layout=layout)
    L = q.shape[1]
    G = torch.randn(q.shape[0], L, m.d_model, generator=torch.Generator().manual_seed(5)).to(prec.dtype)
    G = G.to(prec.device)

    def leaves(dtype):
        if not cross:
            x = q.detach().to(dtype).requires_grad_(True)
            return [x], (x, x, x)
        ts = [t.detach().to(dtype).requires_grad_(True) for t in (q, k, v)]
        return ts, tuple(ts)

    # float64 reference
    raw64 = raw_weights(m)
    xs64, args64 = leaves(torch.float64)
    ref, _, M = reference(*args64, raw64, m.num_heads, m.n_kv_heads, add)
    ref.backward(G.to(torch.float64))
    ref_grads = [x.grad for x in xs64] + [w.grad for w in raw64]

    # mha
    xs, args = leaves(prec.dtype)
    out, _ = m(*args, need_weights=need_weights, **kw_o)
    out.backward(G)
    ours = [x.grad for x in xs] + list(grads8(m))

    # torch
    xt, argt = leaves(prec.dtype)
    if m.n_kv_heads == m.num_heads:
        t = m.to_torch().eval()
        out_t, _ = call_torch(t, *argt, need_weights=need_weights, **kw_t)
        out_t.backward(G)
        theirs = [x.grad for x in xt] + list(grads8(_as_mha_grads(t, m)))
    else:
        raw_t = yardstick_weights_dtype(m)
        out_t, _ = torch_gqa(*argt, raw_t, m.num_heads, m.n_kv_heads,
                             {"mask": add, "is_causal": mask == "causal"}, False)
        out_t.backward(G)
        theirs = [x.grad for x in xt] + [w.grad for w in raw_t]
    compare_grads(prec, ours, theirs, ref_grads, n, M, request)


def _as_mha_grads(t, like):
    """nn.MultiheadAttention `t`'s gradients in the shape grads8 reads (a fused mha module view)."""
    class View:
        layout, d_model, n_kv_heads, d_k = "fused", like.d_model, like.num_heads, like.d_k
        in_proj_bias, out_proj = t.in_proj_bias, t.out_proj
    v = View()
    if t._qkv_same_embed_dim:
        v.in_proj_weight = t.in_proj_weight
    else:
        v.in_proj_weight = None
        v.q_proj_weight, v.k_proj_weight, v.v_proj_weight = t.q_proj_weight, t.k_proj_weight, t.v_proj_weight
    return v


def test_dropout_is_off_in_eval(prec):
    # the same weights (dropout draws no initial values), dropout 0.5 in eval: the very same numbers
    m0, m5 = make_module(prec), make_module(prec, dropout=0.5)
    assert m5.dropout == 0.5 and not m5.training
    x, _, _ = inputs(prec, m0, cross=False)
    with torch.no_grad():
        for nw in (True, False):
            a, b = m0(x, x, x, need_weights=nw)[0], m5(x, x, x, need_weights=nw)[0]
            assert torch.equal(a, b)



def test_the_rule_rejects_a_wrong_scale(prec, request):
    """The rules can fail: mha with W^Q and b^Q divided by √d_k computes softmax(QKᵀ/d_k)·V, the
    classic slip (1/d_k for 1/√d_k); against the correct reference it must be rejected."""
    m = make_module(prec)
    x, _, _ = inputs(prec, m, cross=False)
    raw = raw_weights(m)
    t = m.to_torch().eval()
    with torch.no_grad():
        ref, _, M = reference(x, x, x, raw, m.num_heads, m.num_heads, None)
        out_t, _ = call_torch(t, x, x, x, need_weights=False)
        C = m.d_model
        m.in_proj_weight[:C] /= math.sqrt(m.d_k)
        m.in_proj_bias[:C] /= math.sqrt(m.d_k)
        n, _ = chain(prec, m, x.shape[1])
        for nw in (True, False):
            out_o, _ = m(x, x, x, need_weights=nw)
            with pytest.raises(AssertionError, match="mha's error"):
                check("output with 1/d_k", out_o, out_t, ref, prec, n, R_FWD, M)


def test_tf32_mode_sets_and_restores_both_flags():
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    for on in (True, False):
        with tf32_mode(on):
            assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (on, on)
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before
    with pytest.raises(ZeroDivisionError), tf32_mode(not before[0]):
        1 / 0  # restored after an error too
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def test_needs_only_torch_pytest_and_the_standard_library():
    """A device machine has torch and pytest, not this project's other dependencies: this file
    imports nothing else, and importing mha and using it loads none of them."""
    import ast
    tree = ast.parse(open(__file__, encoding="utf-8").read())
    tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    tops |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert tops - set(sys.stdlib_module_names) == {"pytest", "torch", "mha"}, tops
    code = ("import sys, torch, mha\n"
            "m = mha.MultiHeadAttention(8, 2, n_kv_heads=1); x = torch.randn(1, 3, 8)\n"
            "m(x, x, x, is_causal=True, kv_cache=m.new_kv_cache(1, 3)); m.to_layout('per_head')\n"
            "print(' '.join(sorted({k.split('.')[0] for k in sys.modules})))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    loaded = set(subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                                check=True, timeout=120).stdout.split())
    assert "mha" in loaded and "torch" in loaded
    # (sympy, jinja2: dependencies of torch itself, present wherever torch is)
    assert not loaded & {"grader", "pint", "fastapi", "sqlalchemy", "yaml", "click", "hypothesis"}, loaded
