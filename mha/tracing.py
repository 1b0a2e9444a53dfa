"""Trace mode: every intermediate of the 17-08 equations, under the names the text uses.

    t = mha.trace(m, x, x, x)
    t.names()      -> ("Q", "K", "V", "Q_i", "K_i", "V_i", "S_i", "A_i", "head_i", "concat", "output")
    t["Q_i"]       -> all heads stacked, (..., h, n_q, d_k)
    t.shape("Q_i") -> one head's shape as the text writes it, e.g. (128, 64)

(This module is mha.tracing so that the name mha.trace stays the function.)
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, TypedDict, Unpack

if TYPE_CHECKING:
    from torch import Tensor

    from mha.attention import MultiHeadAttention

TRACE_NAMES = ("Q", "K", "V", "Q_i", "K_i", "V_i", "S_i", "A_i", "head_i", "concat", "output")

DESCRIPTIONS = MappingProxyType({
    "Q": "queries entering the layer (n_q, d_model)",
    "K": "keys entering the layer (n_k, kdim)",
    "V": "values entering the layer (n_k, vdim)",
    "Q_i": "Q_i = Q·W_i^Q (n_q, d_k)",
    "K_i": "K_i = K·W_i^K (n_k, d_k)",
    "V_i": "V_i = V·W_i^V (n_k, d_v)",
    "S_i": "S_i = Q_i·K_iᵀ/√d_k, before any mask (n_q, n_k)",
    "A_i": "A_i = softmax(S_i + mask), before dropout (n_q, n_k)",
    "head_i": "head_i = A_i·V_i, after attention dropout in training (n_q, d_v)",
    "concat": "Concat(head_1, ..., head_h) (n_q, h·d_v)",
    "output": "Concat·W^O (n_q, d_model)",
})


class MaskKwargs(TypedDict, total=False):
    """What trace() takes besides query, key, value: the masks of MultiHeadAttention.forward."""
    key_padding_mask: Tensor | None
    attn_mask: Tensor | None
    is_causal: bool


@dataclass(frozen=True)
class Trace(Mapping[str, "Tensor"]):
    """Read-only mapping name -> tensor. Batch-first whatever the module's batch_first:
    a leading batch dimension when the input was batched, none when unbatched; the per-head
    names (Q_i, K_i, V_i, S_i, A_i, head_i) have all heads stacked before the last two."""

    tensors: Mapping[str, Tensor] = field(repr=False)
    num_heads: int
    batched: bool

    def __getitem__(self, name: str) -> Tensor:
        if name not in self.tensors:
            raise KeyError(f"no {name!r} in the trace; names are {', '.join(TRACE_NAMES)}")
        return self.tensors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(TRACE_NAMES)

    def __len__(self) -> int:
        return len(TRACE_NAMES)

    def names(self) -> tuple[str, ...]:
        return TRACE_NAMES

    def shape(self, name: str) -> tuple[int, ...]:
        """One head's (or one sequence's) shape as the text writes it: the last two dimensions."""
        return tuple(self[name].shape[-2:])

    def describe(self, name: str) -> str:
        return DESCRIPTIONS[name]


def trace(m: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor,
          **mask_kwargs: Unpack[MaskKwargs]) -> Trace:
    """Run `m` on (query, key, value) through the reference path and keep every intermediate.

    mask_kwargs: key_padding_mask, attn_mask, is_causal, as for m.forward. Works on any device,
    including "meta" (shapes without memory). Nothing is kept for gradients' sake: the trace
    tensors are the ones computed, so they may require grad.
    """
    from mha.attention import MultiHeadAttention
    if not isinstance(m, MultiHeadAttention):
        raise ValueError(f"m must be an mha.MultiHeadAttention (for a torch.nn.MultiheadAttention, trace "
                         f"MultiHeadAttention.from_torch(m)), got {type(m).__name__}")
    allowed = {"key_padding_mask", "attn_mask", "is_causal"}
    unknown = set(mask_kwargs) - allowed
    if unknown:
        raise ValueError(f"trace() takes only {sorted(allowed)} besides query, key, value; got {sorted(unknown)}")
    record: dict[str, Tensor] = {}
    m._run(query, key, value, need_weights=False, record=record, **mask_kwargs)
    batched = query.dim() == 3
    if not batched:
        record = {n: t.squeeze(0) for n, t in record.items()}  # (1, …) → (…): the batch of one goes
    return Trace(MappingProxyType({n: record[n] for n in TRACE_NAMES}), m.num_heads, batched)
