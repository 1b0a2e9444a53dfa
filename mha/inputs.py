"""What mha.MultiHeadAttention checks of its inputs before it computes (a mixin of it): the
tensors' shapes, dtype and device as nn.MultiheadAttention takes them, the masks merged into
one additive mask, and a KV cache's fit."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

from mha.ops import AttentionAttributes

if TYPE_CHECKING:
    from mha.kv_cache import KVCache


class Inputs(AttentionAttributes):
    """_batch_first_inputs, _merged_mask, _check_cache (see MultiHeadAttention.forward); what they
    read of mha.MultiHeadAttention is declared by mha.ops.AttentionAttributes."""

    def _check_cache(self, cache: KVCache, B: int, S_new: int, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None) -> int:
        """The number of tokens already in `cache`, after checking that it fits this layer and call."""
        from mha.kv_cache import KVCache
        if not isinstance(cache, KVCache):
            raise ValueError(f"kv_cache must be an mha.KVCache (m.new_kv_cache(batch, max_len)), "
                             f"got {type(cache).__name__}")
        if key_padding_mask is not None or attn_mask is not None:
            raise ValueError("kv_cache takes no key_padding_mask or attn_mask (use is_causal)")
        if (cache.batch, cache.n_kv_heads, cache.d_k) != (B, self.n_kv_heads, self.d_k):
            raise ValueError(f"kv_cache holds batch {cache.batch}, {cache.n_kv_heads} heads of {cache.d_k}; "
                             f"this call needs batch {B}, {self.n_kv_heads} heads of {self.d_k}")
        if cache.length + S_new > cache.max_len:
            raise ValueError(f"kv_cache is full: {cache.length} + {S_new} new tokens > max_len {cache.max_len}")
        return cache.length

    def _batch_first_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor, bool]:
        """Check shapes; return query, key, value as (B, T|S, dim) views and whether input was unbatched."""
        if (query is key and key is value and self.batch_first and isinstance(query, torch.Tensor)
                and query.dim() == 3 and query.size(-1) == self.d_model == self.kdim == self.vdim):
            # the common call, batched self-attention, in a few µs (before the first kernel starts:
            # on a GPU this latency adds to a short layer's time); anything else, checked below
            w = self.out_proj.weight  # the module's dtype and device, as below
            if query.dtype == w.dtype and query.device == w.device:
                return query, key, value, False
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, torch.Tensor):
                raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        layout = "(batch, n, {})" if self.batch_first else "(n, batch, {})"
        if query.dim() not in (2, 3):
            raise ValueError(f"query must be {layout.format('d_model')} or unbatched (n_q, d_model), "
                             f"got shape {tuple(query.shape)}")
        unbatched = query.dim() == 2
        dims: tuple[tuple[str, Tensor, int, str], ...] = (
            ("query", query, self.d_model, "d_model"), ("key", key, self.kdim, "kdim"),
            ("value", value, self.vdim, "vdim"))
        if query is key and key is value and self.kdim == self.vdim == self.d_model:
            dims = dims[:1]  # self-attention: one tensor, whose one check is the three
        w = self.out_proj.weight
        for name, t, dim, dname in dims:
            if t.dim() != query.dim() or t.size(-1) != dim:  # the message is built only when it is needed
                expected = f"(n, {dname}={dim})" if unbatched else layout.format(f"{dname}={dim}")
                like = "" if name == "query" else f" like query {tuple(query.shape)}"
                raise ValueError(f"{name} must have shape {expected}{like}, got {tuple(t.shape)}")
            if t.dtype != w.dtype:
                raise ValueError(f"{name} must have the module's dtype {w.dtype}, got {t.dtype} "
                                 f"(convert one of them: {name}.to({w.dtype}) or m.to({t.dtype}))")
            if t.device != w.device:
                raise ValueError(f"{name} must be on the module's device {w.device}, got {t.device} "
                                 f"(move one of them: {name}.to('{w.device}') or m.to('{t.device}'))")
        if key is not value and key.shape[:-1] != value.shape[:-1]:
            raise ValueError(f"key and value must have the same leading dimensions (batch and n_k), "
                             f"got key {tuple(key.shape)} and value {tuple(value.shape)}")
        if unbatched:
            return query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0), True  # (n, dim) → (1, n, dim)
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))  # (n, B, dim) → (B, n, dim)
        if query.size(0) != key.size(0):
            raise ValueError(f"query and key must have the same batch size, "
                             f"got {query.size(0)} and {key.size(0)}")
        return query, key, value, False

    def _merged_mask(self, key_padding_mask: Tensor | None, attn_mask: Tensor | None, is_causal: bool, B: int, T: int,
                     S: int, unbatched: bool, dtype: torch.dtype, device: torch.device, explicit: bool,
                     past: int = 0) -> tuple[Tensor | None, bool]:
        """One additive mask broadcastable to (B, nh, T, S), or None; and the is_causal flag for SDPA.
        past: tokens already in a KV cache; the T queries are then the last T positions of S."""
        nh = self.num_heads
        for name, m in (("attn_mask", attn_mask), ("key_padding_mask", key_padding_mask)):
            if m is not None and not isinstance(m, torch.Tensor):
                raise ValueError(f"{name} must be a bool or floating-point torch.Tensor or None, got {type(m).__name__}")
        if not isinstance(is_causal, bool):
            raise ValueError(f"is_causal must be True or False, got {is_causal!r}")
        if is_causal and past and T == 1 and attn_mask is None and key_padding_mask is None:
            return None, False  # one new token after the cached ones sees all of them: nothing to mask
        if is_causal and not past and attn_mask is None and key_padding_mask is None and not explicit:
            return None, True  # SDPA builds the causal mask itself (aligned at the top left)
        if is_causal and attn_mask is None:
            # query t (position past + t) sees keys 0..past + t
            attn_mask = torch.ones(T, S, dtype=torch.bool, device=device).tril(past).logical_not()  # (T, S)
        mask: Tensor | None = None
        if attn_mask is not None:
            ok = [(T, S), (nh, T, S)] if unbatched else [(T, S), (B * nh, T, S)]
            if tuple(attn_mask.shape) not in ok:
                names = ["(n_q, n_k)", "(num_heads, n_q, n_k)" if unbatched else "(batch·num_heads, n_q, n_k)"]
                raise ValueError(f"attn_mask must have shape {names[0]} = {ok[0]} or {names[1]} = {ok[1]}, "
                                 f"got {tuple(attn_mask.shape)}")
            mask = _additive(attn_mask, dtype, "attn_mask")
            mask = mask.view(B, nh, T, S) if mask.dim() == 3 else mask  # (B·nh, T, S) → (B, nh, T, S), or (T, S)
        if key_padding_mask is not None:
            want = (S,) if unbatched else (B, S)
            if tuple(key_padding_mask.shape) != want:
                raise ValueError(f"key_padding_mask must have shape {'(n_k,)' if unbatched else '(batch, n_k)'}"
                                 f" = {want}, got {tuple(key_padding_mask.shape)}")
            kpm = _additive(key_padding_mask, dtype, "key_padding_mask").view(-1, 1, 1, S)  # (B, S) → (B, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        return mask, False


def _additive(mask: Tensor, dtype: torch.dtype, name: str) -> Tensor:
    """A boolean mask (True = not allowed) as 0/−inf; a float mask as is, in `dtype`."""
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(mask, float("-inf"))
    if not mask.is_floating_point():
        raise ValueError(f"{name} must be a bool or floating-point tensor, got dtype {mask.dtype}")
    return mask.to(dtype)
