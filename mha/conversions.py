"""The conversions of mha.MultiHeadAttention (a mixin of it): to the other layout, and from and
to torch.nn.MultiheadAttention, each the same function with the same weights."""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Self

import torch
import torch.nn as nn

from mha.ops import AttentionAttributes

if TYPE_CHECKING:
    from mha.attention import MultiHeadAttention

Layout = Literal["fused", "per_head"]
LAYOUTS: tuple[Layout, ...] = ("fused", "per_head")

# W^Q, W^K, W^V (or their biases, or one projection of each): three tensors, in that order
QKV = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class Conversions(AttentionAttributes):
    """to_layout, from_torch, to_torch (see mha.attention for the layouts)."""

    # What the conversions read of mha.MultiHeadAttention besides what every mixin of it reads.
    bias: bool
    dropout: float
    layout: Layout
    training: bool
    in_proj_bias: nn.Parameter | None

    if TYPE_CHECKING:
        def train(self, mode: bool = True) -> Self: ...
        def _in_weights_out_in(self) -> QKV: ...
        def _in_weights_text(self) -> QKV: ...
        def _in_biases(self) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]: ...

    def _like(self, layout: Layout, batch_first: bool | None = None) -> MultiHeadAttention:
        w = self.out_proj.weight
        return _attention_class(type(self))(
            self.d_model, self.num_heads, kdim=self.kdim, vdim=self.vdim, bias=self.bias,
            dropout=self.dropout, layout=layout,
            batch_first=self.batch_first if batch_first is None else batch_first,
            device=w.device, dtype=w.dtype, n_kv_heads=self.n_kv_heads)

    def to_layout(self, layout: Layout) -> MultiHeadAttention:
        """A new module in `layout` ("fused" or "per_head") computing the same function."""
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        new = self._like(layout)
        with torch.no_grad():
            Ws, bs = self._in_weights_text(), self._in_biases()  # text orientation (in, h·d_k)
            if layout == "fused":
                for w, src in zip(new._in_weights_out_in(), Ws):
                    w.copy_(src.T)  # text (in, out) → torch (out, in)
                if new.in_proj_bias is not None:  # with bias: bs are three tensors
                    new.in_proj_bias.copy_(torch.cat([b for b in bs if b is not None]))
            else:
                hs = self.d_k
                for n, W, b, heads in zip("QKV", Ws, bs, (self.num_heads, self.n_kv_heads, self.n_kv_heads)):
                    for i in range(heads):
                        getattr(new, f"W_i_{n}")[i].copy_(W[:, i * hs:(i + 1) * hs])
                        if b is not None:
                            getattr(new, f"b_i_{n}")[i].copy_(b[i * hs:(i + 1) * hs])
            new.out_proj.load_state_dict(self.out_proj.state_dict())
        return new.train(self.training)

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """The same function, with the same weights, as the torch.nn.MultiheadAttention `m`."""
        if not isinstance(m, nn.MultiheadAttention):
            raise ValueError(f"m must be a torch.nn.MultiheadAttention, got {type(m).__name__}")
        if m.bias_k is not None or m.bias_v is not None:
            raise ValueError("m has bias_k/bias_v (add_bias_kv=True), which mha.MultiHeadAttention does not support")
        if m.add_zero_attn:
            raise ValueError("m has add_zero_attn=True, which mha.MultiHeadAttention does not support")
        w = m.out_proj.weight
        new = _attention_class(cls)(m.embed_dim, m.num_heads, kdim=m.kdim, vdim=m.vdim, bias=m.in_proj_bias is not None,
                  dropout=m.dropout, batch_first=m.batch_first, device=w.device, dtype=w.dtype)
        with torch.no_grad():
            src = (m.in_proj_weight.chunk(3) if m._qkv_same_embed_dim
                   else (m.q_proj_weight, m.k_proj_weight, m.v_proj_weight))
            for dst, s in zip(new._in_weights_out_in(), src):
                dst.copy_(s)
            if new.in_proj_bias is not None:
                new.in_proj_bias.copy_(m.in_proj_bias)
            new.out_proj.load_state_dict(m.out_proj.state_dict())
        return new.train(m.training)

    def to_torch(self) -> nn.MultiheadAttention:
        """A torch.nn.MultiheadAttention with the same function and the same weights (MHA only)."""
        if self.n_kv_heads != self.num_heads:
            raise ValueError(f"torch.nn.MultiheadAttention has no grouped-query attention; this module has "
                             f"n_kv_heads={self.n_kv_heads} < num_heads={self.num_heads}")
        w = self.out_proj.weight
        m = nn.MultiheadAttention(self.d_model, self.num_heads, dropout=self.dropout, bias=self.bias,
                                  kdim=self.kdim, vdim=self.vdim, batch_first=self.batch_first,
                                  device=w.device, dtype=w.dtype)
        fused = self if self.layout == "fused" else self.to_layout("fused")
        with torch.no_grad():
            dst = (m.in_proj_weight.chunk(3) if m._qkv_same_embed_dim
                   else (m.q_proj_weight, m.k_proj_weight, m.v_proj_weight))
            for d, s in zip(dst, fused._in_weights_out_in()):
                d.copy_(s)
            if fused.in_proj_bias is not None:
                m.in_proj_bias.copy_(fused.in_proj_bias)
            m.out_proj.load_state_dict(fused.out_proj.state_dict())
        return m.train(self.training)


def _attention_class(cls: type[Conversions]) -> type[MultiHeadAttention]:
    """The class these conversions are a mixin of (mha.MultiHeadAttention or a subclass): `cls` itself."""
    from mha.attention import MultiHeadAttention
    if not issubclass(cls, MultiHeadAttention):
        raise TypeError(f"{cls.__name__} is not an mha.MultiHeadAttention")
    return cls
