"""The transformer block around mha.MultiHeadAttention, and a decoder-only stack of them.

    pre-norm  (GPT-2, LLaMA):            x = x + Attn(Norm₁(x));   x = x + FFN(Norm₂(x))
    post-norm (the original Transformer): x = Norm₁(x + Attn(x));   x = Norm₂(x + FFN(x))
    FFN(x) = act(x·W₁ + b₁)·W₂ + b₂        SwiGLU: FFN(x) = (silu(x·W_gate) ⊙ x·W₁)·W₂

    Transformer: logits = Norm_f(Block_L(… Block_1(E[tokens] + P[positions]))) · W_outᵀ,
    W_out = E when the embeddings are tied.

Names follow nanoGPT: B batch, T sequence length, C d_model. Parameters keep torch.nn's names
(`attn` has nn.MultiheadAttention's, `ffn.up`/`ffn.down` are nn.Linear, norms nn.LayerNorm or
nn.RMSNorm), so weights copy across from torch.nn.TransformerEncoderLayer by name.
The matmuls run under the stages mha.measure_flops reports: the attention's, `ffn`, `lm_head`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, cast

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from mha.attention import MultiHeadAttention
from mha.ops import Factory, linear, positive_int, stage

if TYPE_CHECKING:
    from torch.types import Device

    from mha.kv_cache import KVCache

Activation = Literal["gelu", "gelu_tanh", "relu", "silu", "swiglu"]
Norm = Literal["layernorm", "rmsnorm"]
ACTIVATIONS: tuple[Activation, ...] = ("gelu", "gelu_tanh", "relu", "silu", "swiglu")
NORMS: tuple[Norm, ...] = ("layernorm", "rmsnorm")


def _norm(kind: Norm, d_model: int, eps: float, bias: bool, fk: Factory) -> nn.LayerNorm | nn.RMSNorm:
    if kind == "layernorm":
        return nn.LayerNorm(d_model, eps=eps, bias=bias, **fk)  # γ, β: 2·d (γ only without bias)
    return nn.RMSNorm(d_model, eps=eps, **fk)  # γ: d


class FeedForward(nn.Module):
    """Position-wise feed-forward: d_model → d_ff → d_model, with `activation` in between
    ("swiglu": a gated linear unit with SiLU, three matrices, as LLaMA)."""

    def __init__(self, d_model: int, d_ff: int, activation: Activation = "gelu", *, bias: bool = True,
                 dropout: float = 0.0, device: Device = None, dtype: torch.dtype | None = None) -> None:
        super().__init__()
        positive_int("d_model", d_model)
        positive_int("d_ff", d_ff)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        fk: Factory = {"device": device, "dtype": dtype}
        self.activation, self.dropout = activation, float(dropout)
        self.up = nn.Linear(d_model, d_ff, bias=bias, **fk)  # W₁: (out, in) = (d_ff, d_model)
        self.gate = nn.Linear(d_model, d_ff, bias=bias, **fk) if activation == "swiglu" else None
        self.down = nn.Linear(d_ff, d_model, bias=bias, **fk)  # W₂: (d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        with stage("ffn"):
            h = linear(x, self.up.weight, self.up.bias)  # (B, T, d_ff)
            if self.gate is not None:
                h = F.silu(linear(x, self.gate.weight, self.gate.bias)) * h  # (B, T, d_ff)
            elif self.activation == "gelu":
                h = F.gelu(h)
            elif self.activation == "gelu_tanh":
                h = F.gelu(h, approximate="tanh")  # GPT-2's
            elif self.activation == "relu":
                h = F.relu(h)
            else:
                h = F.silu(h)
            h = F.dropout(h, self.dropout, self.training)
            return linear(h, self.down.weight, self.down.bias)  # (B, T, d_model)


class TransformerBlock(nn.Module):
    """Attention and feed-forward, each with a residual connection and a norm (pre- or post-).
    Batch-first: x (B, T, d_model) → (B, T, d_model)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *, n_kv_heads: int | None = None,
                 activation: Activation = "gelu", norm: Norm = "layernorm", norm_first: bool = True, bias: bool = True,
                 dropout: float = 0.0, norm_eps: float = 1e-5, device: Device = None,
                 dtype: torch.dtype | None = None) -> None:
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        fk: Factory = {"device": device, "dtype": dtype}
        self.norm_first, self.dropout = bool(norm_first), float(dropout)
        self.attn = MultiHeadAttention(d_model, num_heads, n_kv_heads=n_kv_heads, bias=bias, dropout=dropout, **fk)
        self.ffn = FeedForward(d_model, d_ff, activation, bias=bias, dropout=dropout, **fk)
        self.norm1 = _norm(norm, d_model, norm_eps, bias, fk)
        self.norm2 = _norm(norm, d_model, norm_eps, bias, fk)

    def _sa(self, x: Tensor, **kw: object) -> Tensor:
        y, _ = self.attn(x, x, x, need_weights=False, **kw)  # (B, T, C)
        return F.dropout(y, self.dropout, self.training)

    def _ff(self, x: Tensor) -> Tensor:
        return F.dropout(self.ffn(x), self.dropout, self.training)  # (B, T, C)

    def forward(self, x: Tensor, *, is_causal: bool = False, attn_mask: Tensor | None = None,
                key_padding_mask: Tensor | None = None, kv_cache: KVCache | None = None) -> Tensor:
        kw = dict(is_causal=is_causal, attn_mask=attn_mask, key_padding_mask=key_padding_mask, kv_cache=kv_cache)
        if self.norm_first:
            x = x + self._sa(self.norm1(x), **kw)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, **kw))
        out: Tensor = self.norm2(x + self._ff(x))
        return out

    def new_kv_cache(self, batch: int, max_len: int, *, dtype: torch.dtype | None = None,
                     device: Device = None) -> KVCache:
        return self.attn.new_kv_cache(batch, max_len, dtype=dtype, device=device)


class Transformer(nn.Module):
    """A decoder-only stack: token embedding (+ learned positions when max_len is given),
    n_layers causal TransformerBlocks, a final norm (pre-norm stacks, by default), and an output
    layer tied to the embedding or not. tokens (B, T) → logits (B, T, vocab_size)."""

    def __init__(self, vocab_size: int, d_model: int, n_layers: int, num_heads: int, d_ff: int, *,
                 max_len: int | None = None, n_kv_heads: int | None = None, activation: Activation = "gelu",
                 norm: Norm = "layernorm", norm_first: bool = True, final_norm: bool | None = None, bias: bool = True,
                 tie_embeddings: bool = True, dropout: float = 0.0, norm_eps: float = 1e-5, device: Device = None,
                 dtype: torch.dtype | None = None) -> None:
        super().__init__()
        positive_int("vocab_size", vocab_size)
        positive_int("n_layers", n_layers)
        if max_len is not None:
            positive_int("max_len", max_len)
        fk: Factory = {"device": device, "dtype": dtype}
        self.vocab_size, self.max_len, self.tie_embeddings = vocab_size, max_len, bool(tie_embeddings)
        self.tok_emb = nn.Embedding(vocab_size, d_model, **fk)  # E: (vocab, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model, **fk) if max_len else None  # P: (max_len, d_model)
        self.blocks: nn.ModuleList = nn.ModuleList(
            TransformerBlock(d_model, num_heads, d_ff, n_kv_heads=n_kv_heads, activation=activation, norm=norm,
                             norm_first=norm_first, bias=bias, dropout=dropout, norm_eps=norm_eps, **fk)
            for _ in range(n_layers))
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = _norm(norm, d_model, norm_eps, bias, fk) if final_norm else None
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False, **fk)  # W_out: (vocab, d_model)
        if self.tie_embeddings:
            self.lm_head.weight = self.tok_emb.weight  # one matrix, counted once

    def new_kv_caches(self, batch: int, max_len: int, *, dtype: torch.dtype | None = None,
                      device: Device = None) -> list[KVCache]:
        """One empty mha.KVCache per layer."""
        blocks = cast("list[TransformerBlock]", list(self.blocks))  # nn.ModuleList's items are nn.Modules to mypy
        return [b.new_kv_cache(batch, max_len, dtype=dtype, device=device) for b in blocks]

    def forward(self, tokens: Tensor, *, kv_caches: Sequence[KVCache] | None = None) -> Tensor:
        """tokens (B, T) of ids; with kv_caches (from new_kv_caches), the tokens follow those cached."""
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(f"tokens must be a (batch, n) tensor of int64 token ids, got "
                             f"{getattr(tokens, 'dtype', type(tokens).__name__)} {tuple(getattr(tokens, 'shape', ()))}")
        if kv_caches is not None and len(kv_caches) != len(self.blocks):
            raise ValueError(f"kv_caches must hold one cache per layer ({len(self.blocks)}), got {len(kv_caches)}")
        B, T = tokens.shape
        start = kv_caches[0].length if kv_caches else 0
        x = self.tok_emb(tokens)  # (B, T, C)
        if self.pos_emb is not None:
            if start + T > self.pos_emb.num_embeddings:  # max_len
                raise ValueError(f"positions {start}..{start + T - 1} exceed max_len {self.max_len}")
            x = x + self.pos_emb(torch.arange(start, start + T, device=tokens.device))  # (T, C) broadcast
        for i, block in enumerate(self.blocks):
            x = block(x, is_causal=True, kv_cache=None if kv_caches is None else kv_caches[i])  # (B, T, C)
        if self.norm is not None:
            x = self.norm(x)
        with stage("lm_head"):
            return linear(x, self.lm_head.weight, None)  # (B, T, vocab)
