"""Multi-head attention as subject 17-08 writes it, and as torch.nn.MultiheadAttention computes it.

    head_i = softmax(Q_i K_iᵀ / √d_k) V_i,   Q_i = Q·W_i^Q, K_i = K·W_i^K, V_i = V·W_i^V
    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) · W^O

Names follow nanoGPT: B batch, T (L) query length, S key length, C d_model,
nh heads, hs head size (d_k = d_v = C / nh).

Two layouts hold the same function:
- "fused" (17-08 §7): one W^Q, W^K, W^V of d_model columns each, split into
  heads by view/transpose. Stored like nn.MultiheadAttention: `in_proj_weight`
  (3C, C) when kdim == vdim == C, else `q_proj_weight` (C, C), `k_proj_weight`
  (C, kdim), `v_proj_weight` (C, vdim); `in_proj_bias` (3C); `out_proj` (W^O).
- "per_head" (the article): h separate W_i^Q, W_i^K (d_model × d_k) and
  W_i^V (d_model × d_v) in `W_i_Q`, `W_i_K`, `W_i_V` (text orientation: Q_i = Q @ W_i^Q),
  biases `b_i_Q`, `b_i_K`, `b_i_V`, plus the same `out_proj`.

torch.nn.Linear stores weights as (out, in) and computes x @ weightᵀ; the text
writes X·W with W (in, out). `W_Q`, `W_K`, `W_V`, `W_O` and `head_weights(i)`
give the text's orientation whatever the layout.

The conversions between layouts and to/from torch are mha.conversions; the checks of the
inputs and the masks, mha.inputs (both mixins of MultiHeadAttention).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from mha.conversions import LAYOUTS, QKV, Conversions, Layout
from mha.inputs import Inputs
from mha.ops import Factory, linear, positive_int, share_heads, stage, tracing

if TYPE_CHECKING:
    from torch.types import Device

    from mha.kv_cache import KVCache

class MultiHeadAttention(Conversions, Inputs, nn.Module):
    """Multi-head attention; forward() takes and returns what nn.MultiheadAttention does.

    >>> m = MultiHeadAttention(768, 12)
    >>> x = torch.randn(128, 768)           # unbatched (n, d_model)
    >>> out, weights = m(x, x, x)           # out (128, 768), weights (128, 128) averaged over heads

    n_kv_heads (g): how many key/value heads; num_heads (default, MHA), a divisor g of num_heads
    (grouped-query attention, GQA: query heads i = j·h/g … (j+1)·h/g − 1 share K/V head j), or 1
    (multi-query attention, MQA). W^K and W^V then have g·d_k columns instead of h·d_k.
    """

    # the parameters of one layout or the other (see the module doc), made in __init__
    in_proj_weight: nn.Parameter  # fused, kdim == vdim == d_model
    q_proj_weight: nn.Parameter  # fused, otherwise
    k_proj_weight: nn.Parameter
    v_proj_weight: nn.Parameter
    W_i_Q: nn.ParameterList  # per_head
    W_i_K: nn.ParameterList
    W_i_V: nn.ParameterList
    b_i_Q: nn.ParameterList  # per_head with bias
    b_i_K: nn.ParameterList
    b_i_V: nn.ParameterList

    def __init__(self, d_model: int, num_heads: int, *, kdim: int | None = None, vdim: int | None = None,
                 bias: bool = True, dropout: float = 0.0, layout: Layout = "fused", batch_first: bool = True,
                 device: Device = None, dtype: torch.dtype | None = None, n_kv_heads: int | None = None) -> None:
        super().__init__()
        positive_int("d_model", d_model)
        positive_int("num_heads", num_heads)
        if d_model % num_heads:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads ({num_heads}): "
                f"d_k = d_model / num_heads = {d_model / num_heads:g} is not an integer")
        n_kv_heads = num_heads if n_kv_heads is None else positive_int("n_kv_heads", n_kv_heads)
        if num_heads % n_kv_heads:
            raise ValueError(f"num_heads ({num_heads}) must be divisible by n_kv_heads ({n_kv_heads}): "
                             f"each key/value head serves num_heads / n_kv_heads query heads")
        kdim = d_model if kdim is None else positive_int("kdim", kdim)
        vdim = d_model if vdim is None else positive_int("vdim", vdim)
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
        if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ValueError(f"dtype must be a floating-point torch.dtype (torch.float32, torch.bfloat16, ...), "
                             f"got {dtype!r}")
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = self.d_v = d_model // num_heads
        self.n_kv_heads = n_kv_heads
        self.kv_width = n_kv_heads * self.d_k  # columns of W^K and of W^V: g·d_k
        self.kdim, self.vdim = kdim, vdim
        self.bias, self.dropout = bool(bias), float(dropout)
        self.layout, self.batch_first = layout, bool(batch_first)
        self.packed = layout == "fused" and kdim == d_model and vdim == d_model
        fk: Factory = {"device": device, "dtype": dtype}
        C, nh, hs, g, kvw = d_model, num_heads, self.d_k, n_kv_heads, self.kv_width

        def new(*shape: int) -> nn.Parameter:
            return nn.Parameter(torch.empty(*shape, **fk))

        if layout == "fused":
            if self.packed:
                self.in_proj_weight = new(C + 2 * kvw, C)  # rows: W^Q (C, C), W^K, W^V (g·d_k, C) each
            else:
                self.q_proj_weight, self.k_proj_weight, self.v_proj_weight = new(C, C), new(kvw, kdim), new(kvw, vdim)
            self.in_proj_bias = new(C + 2 * kvw) if bias else None
        else:
            self.W_i_Q = nn.ParameterList([new(C, hs) for _ in range(nh)])  # each (d_model, d_k)
            self.W_i_K = nn.ParameterList([new(kdim, hs) for _ in range(g)])  # each (kdim, d_k)
            self.W_i_V = nn.ParameterList([new(vdim, hs) for _ in range(g)])  # each (vdim, d_v)
            if bias:
                self.b_i_Q, self.b_i_K, self.b_i_V = (
                    nn.ParameterList([new(hs) for _ in range(n)]) for n in (nh, g, g))
        self.out_proj = nn.Linear(C, C, bias=bias, **fk)  # W^O, (out, in) = (C, h·d_v)
        self._reset_parameters()

    # ------------------------------------------------------------------ weights

    def _reset_parameters(self) -> None:
        """nn.MultiheadAttention's initialisation: Xavier-uniform in-projections, zero biases
        (W^O keeps nn.Linear's initialisation, as in torch)."""
        with torch.no_grad():
            if self.layout == "fused":
                for w in ((self.in_proj_weight,) if self.packed else self._in_weights_out_in()):
                    nn.init.xavier_uniform_(w)
                if self.in_proj_bias is not None:
                    self.in_proj_bias.zero_()
            else:  # draw the full W^Q, W^K, W^V as the fused layout does, then split into heads
                w = self.out_proj.weight
                for n, dim, width in (("Q", self.d_model, self.d_model), ("K", self.kdim, self.kv_width),
                                      ("V", self.vdim, self.kv_width)):
                    full = nn.init.xavier_uniform_(torch.empty(dim, width, device=w.device, dtype=w.dtype))
                    for i, W_i in enumerate(getattr(self, f"W_i_{n}")):
                        W_i.copy_(full[:, i * self.d_k:(i + 1) * self.d_k])  # (dim, d_k)
                    if self.bias:
                        for b_i in getattr(self, f"b_i_{n}"):
                            b_i.zero_()
            if self.out_proj.bias is not None:
                self.out_proj.bias.zero_()

    def _in_weights_out_in(self) -> QKV:
        """(W^Q, W^K, W^V) in torch orientation (out, in); views, no copies. Fused layout only."""
        if self.packed:
            Wq, Wk, Wv = self.in_proj_weight.split(self._split)  # (C, C), (g·d_k, C), (g·d_k, C)
            return Wq, Wk, Wv
        return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight

    def _in_biases(self) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        if self.layout == "per_head":
            if not self.bias:
                return None, None, None
            bq, bk, bv = (torch.cat(list(getattr(self, f"b_i_{n}"))) for n in "QKV")  # (C), (g·d_k) × 2
            return bq, bk, bv
        if self.in_proj_bias is None:
            return None, None, None
        bq, bk, bv = self.in_proj_bias.split(self._split)  # (C), (g·d_k), (g·d_k)
        return bq, bk, bv

    @property
    def _split(self) -> tuple[int, int, int]:
        """Rows of W^Q, W^K, W^V in the packed weight (and entries of the packed bias)."""
        return (self.d_model, self.kv_width, self.kv_width)

    def _in_weights_text(self) -> QKV:
        if self.layout == "per_head":
            # the heads side by side: (d_model, h·d_k), (kdim, g·d_k), (vdim, g·d_v)
            WQ, WK, WV = (torch.cat(list(getattr(self, f"W_i_{n}")), dim=1) for n in "QKV")
            return WQ, WK, WV
        Wq, Wk, Wv = self._in_weights_out_in()
        return Wq.T, Wk.T, Wv.T  # (in, out): (d_model, C), (kdim, g·d_k), (vdim, g·d_k)

    @property
    def W_Q(self) -> Tensor:
        """W^Q as the text writes it: (d_model, h·d_k), Q_all = Q · W^Q."""
        return self._in_weights_text()[0]

    @property
    def W_K(self) -> Tensor:
        """W^K: (kdim, g·d_k) (g = n_kv_heads; h·d_k without GQA)."""
        return self._in_weights_text()[1]

    @property
    def W_V(self) -> Tensor:
        """W^V: (vdim, g·d_v)."""
        return self._in_weights_text()[2]

    @property
    def W_O(self) -> Tensor:
        """W^O as the text writes it: (h·d_v, d_model)."""
        return self.out_proj.weight.T  # (C, h·d_v) → (h·d_v, C)

    def head_weights(self, i: int) -> QKV:
        """(W_i^Q, W_i^K, W_i^V) of head i in the text's orientation: (d_model, d_k), (kdim, d_k), (vdim, d_v).
        With GQA, W_i^K and W_i^V are those of head i's group j = i // (h/g), shared by its query heads."""
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.num_heads:
            raise ValueError(f"head index i must be an integer in [0, {self.num_heads}), got {i!r}")
        j = i // (self.num_heads // self.n_kv_heads)  # the key/value head of query head i
        if self.layout == "per_head":
            return self.W_i_Q[i], self.W_i_K[j], self.W_i_V[j]
        WQ, WK, WV = self._in_weights_text()
        q_cols, kv_cols = slice(i * self.d_k, (i + 1) * self.d_k), slice(j * self.d_k, (j + 1) * self.d_k)
        return WQ[:, q_cols], WK[:, kv_cols], WV[:, kv_cols]

    def extra_repr(self) -> str:
        extra = "" if self.kdim == self.vdim == self.d_model else f", kdim={self.kdim}, vdim={self.vdim}"
        if self.n_kv_heads != self.num_heads:
            extra += f", n_kv_heads={self.n_kv_heads}"
        return (f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}{extra}, "
                f"bias={self.bias}, dropout={self.dropout}, layout={self.layout!r}, batch_first={self.batch_first}")

    # ------------------------------------------------------------------ forward

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False, kv_cache: KVCache | None = None) -> tuple[Tensor, Tensor | None]:
        """Attend from `query` to `key`/`value`; returns (output, weights or None).

        Shapes as nn.MultiheadAttention: query (B, L, C) if batch_first else (L, B, C), or
        unbatched (L, C); key (…, S, kdim); value (…, S, vdim). key_padding_mask (B, S) or (S,),
        True/−inf = ignore that key. attn_mask (L, S) or (B·h, L, S), bool (True = not allowed)
        or float (added to the scores). is_causal: causal masking (builds the mask when attn_mask
        is None; otherwise attn_mask is taken as the causal mask, as torch does).
        Weights (need_weights=True): (B, L, S) averaged over heads, or (B, h, L, S).
        kv_cache (mha.KVCache, incremental decoding): the new keys/values are appended to it and the
        query attends to everything it holds; is_causal then places the new tokens after the cached
        ones (query t sees cached keys and new keys 0..t). No attn_mask/key_padding_mask with it.
        """
        return self._run(query, key, value, key_padding_mask, need_weights, attn_mask,
                         average_attn_weights, is_causal, kv_cache=kv_cache)

    def new_kv_cache(self, batch: int, max_len: int, *, dtype: torch.dtype | None = None,
                     device: Device = None) -> KVCache:
        """An empty mha.KVCache for this layer: keys and values of up to max_len tokens, g heads of d_k."""
        from mha.kv_cache import KVCache
        w = self.out_proj.weight
        return KVCache(batch, self.n_kv_heads, self.d_k, max_len, dtype=dtype or w.dtype,
                       device=w.device if device is None else device)

    def _run(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
             need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
             is_causal: bool = False, record: dict[str, Tensor] | None = None,
             kv_cache: KVCache | None = None) -> tuple[Tensor, Tensor | None]:
        self_attention = query is key and key is value
        q, k, v, unbatched = self._batch_first_inputs(query, key, value)
        B, T, C = q.size()  # batch, query length, d_model
        past = 0 if kv_cache is None else self._check_cache(kv_cache, B, k.size(1), key_padding_mask, attn_mask)
        S = past + k.size(1)  # key length: cached tokens, then the new ones
        nh, hs, g = self.num_heads, self.d_k, self.n_kv_heads
        mask, sdpa_causal = self._merged_mask(key_padding_mask, attn_mask, is_causal, B, T, S, unbatched,
                                              q.dtype, q.device, need_weights or record is not None, past)

        # projections: Q_i = Q·W_i^Q, ... for all heads at once, then split into heads
        Qh, Kh, Vh = self._project(q, k, v, self_attention)  # (B, nh, T, hs), (B, g, S_new, hs) × 2
        if kv_cache is not None:
            Kh, Vh = kv_cache.append(Kh, Vh)  # (B, g, S, hs) each: cached keys/values, then the new ones
        if g != nh or record is not None:
            K_i, V_i = share_heads(Kh, nh), share_heads(Vh, nh)  # head i uses K/V head i // (nh/g): (B, nh, S, hs)
        if record is not None:
            record.update(Q=q, K=k, V=v, Q_i=Qh, K_i=K_i, V_i=V_i)

        p = self.dropout if self.training else 0.0
        att: Tensor | None  # the attention weights A_i, when they are computed
        if not need_weights and record is None:
            # fast path: one fused kernel, the (B, nh, T, S) weights are never materialised
            with stage("attention"):
                gqa = {"enable_gqa": True} if g != nh else {}  # SDPA shares K/V heads itself
                y = F.scaled_dot_product_attention(Qh, Kh, Vh, attn_mask=mask, dropout_p=p,
                                                   is_causal=sdpa_causal, **gqa)  # (B, nh, T, hs)
            att = None
        else:
            # reference path: the equations of 17-08, written out
            if g != nh:
                Kh, Vh = K_i, V_i  # (B, nh, S, hs)
            with stage("qk"):
                scale = 1.0 / math.sqrt(hs)
                if record is not None or tracing():  # as written (and as mha.measure counts it)
                    att = (Qh @ Kh.transpose(-2, -1)).mul_(scale)  # S_i: (B, nh, T, S)
                else:
                    # the same S_i, scaled on the (T, hs) side (T·hs multiplies, not T·S), and with each
                    # head's Q_i, K_i, V_i dense, as torch does: its batched matmuls run slower on views
                    # into the packed projection (rows 3·C apart); the copies are T·C, the matmuls T·S·C
                    Qh = (Qh * scale).contiguous()  # (B, nh, T, hs)
                    Kh, Vh = Kh.contiguous(), Vh.contiguous()  # (B, nh, S, hs) each
                    att = Qh @ Kh.transpose(-2, -1)  # S_i: (B, nh, T, S)
                if record is not None:
                    record["S_i"] = att
                if mask is not None:
                    att = att + mask if record is not None else att.add_(mask)
            with stage("softmax"):
                if record is None and not (torch.is_grad_enabled() and att.requires_grad):
                    att = torch.ops.aten._softmax.out(att, -1, False, out=att)  # in place, as torch's fast path
                else:
                    att = F.softmax(att, dim=-1)  # A_i: (B, nh, T, S)
            if record is not None:
                record["A_i"] = att
            if p > 0.0:
                att = F.dropout(att, p=p)  # 17-08 §8: dropout on the weights, training only
            with stage("av"):
                y = att @ Vh  # head_i = A_i·V_i: (B, nh, T, hs)

        y = y.transpose(1, 2).reshape(B, T, C)  # Concat(head_1..head_h): (B, T, nh·hs)
        if record is not None:
            record.update(head_i=y.view(B, T, nh, hs).transpose(1, 2), concat=y)  # head_i: (B, nh, T, hs)
        with stage("out_proj"):
            out = linear(y, self.out_proj.weight, self.out_proj.bias)  # Concat · W^O: (B, T, C)
        if record is not None:
            record["output"] = out

        if att is not None and need_weights:
            att = att.mean(dim=1) if average_attn_weights else att  # (B, T, S) or (B, nh, T, S)
            att = att.squeeze(0) if unbatched else att  # unbatched: (T, S) or (nh, T, S)
        else:
            att = None
        if unbatched:
            out = out.squeeze(0)  # (T, C)
        elif not self.batch_first:
            out = out.transpose(0, 1)  # (T, B, C)
        return out, att

    def _project(self, q: Tensor, k: Tensor, v: Tensor, self_attention: bool) -> QKV:
        """Q_i for all query heads (B, nh, T, hs); K_j, V_j for all key/value heads (B, g, S, hs)."""
        B, T, C = q.size()
        S = k.size(1)
        nh, hs, g = self.num_heads, self.d_k, self.n_kv_heads
        if self.layout == "per_head":
            heads: list[Tensor] = []
            for n, x, count in zip("QKV", (q, k, v), (nh, g, g)):
                with stage(f"{n.lower()}_proj"):
                    Ws = getattr(self, f"W_i_{n}")
                    bs = getattr(self, f"b_i_{n}") if self.bias else [None] * count
                    # head by head, as the article writes it: X_i = X · W_i (+ b_i), each (B, T|S, hs),
                    # gathered into (B, nh|g, T|S, hs) by copies (torch.stack's Python meta kernel
                    # would import torch._dynamo; see mha.ops.linear)
                    stacked = x.new_empty((x.size(0), count, x.size(1), hs))
                    for i, (W_i, b_i) in enumerate(zip(Ws, bs)):
                        x_i = x @ W_i if b_i is None else (x @ W_i).add_(b_i)
                        stacked[:, i].copy_(x_i)
                    heads.append(stacked)
            Qh, Kh, Vh = heads
            return Qh, Kh, Vh
        if self_attention and self.packed:
            # one matmul for Q, K and V (17-08 §7), like nanoGPT's c_attn
            with stage(("in_proj", self._split)):
                qkv = linear(q, self.in_proj_weight, self.in_proj_bias)  # (B, T, C + 2·g·hs)
            if g == nh:
                qkv = qkv.view(B, T, 3, nh, hs)  # (B, T, 3, nh, hs)
                Qh, Kh, Vh = (t.transpose(1, 2) for t in qkv.unbind(2))  # 3 × (B, T, nh, hs) → (B, nh, T, hs)
                return Qh, Kh, Vh
            q, k, v = qkv.split(self._split, dim=-1)  # (B, T, C), (B, T, g·hs), (B, T, g·hs)
            return (q.view(B, T, nh, hs).transpose(1, 2),  # (B, nh, T, hs)
                    k.view(B, T, g, hs).transpose(1, 2),  # (B, g, T, hs)
                    v.view(B, T, g, hs).transpose(1, 2))  # (B, g, T, hs)
        Wq, Wk, Wv = self._in_weights_out_in()
        bq, bk, bv = self._in_biases()
        with stage("q_proj"):
            q = linear(q, Wq, bq)  # (B, T, C)
        with stage("k_proj"):
            k = linear(k, Wk, bk)  # (B, S, g·hs)
        with stage("v_proj"):
            v = linear(v, Wv, bv)  # (B, S, g·hs)
        return (q.view(B, T, nh, hs).transpose(1, 2),  # (B, nh, T, hs)
                k.view(B, S, g, hs).transpose(1, 2),  # (B, g, S, hs)
                v.view(B, S, g, hs).transpose(1, 2))  # (B, g, S, hs)
