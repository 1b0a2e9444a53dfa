"""A key/value cache for incremental decoding, one attention layer's worth.

Decoding token by token, a causal layer's keys and values for the tokens already seen do not
change: keep them, project only the new token, and let its query attend to all of them.

    cache = m.new_kv_cache(batch=1, max_len=1024)     # K, V: (B, g, max_len, d_k) each, empty
    for t in range(n):
        y, _ = m(x[:, t:t+1], x[:, t:t+1], x[:, t:t+1], is_causal=True, kv_cache=cache)

Its size is what the texts compute: 2 (K and V) · g (key/value heads) · d_k · bytes per element,
per token and per layer; times the tokens held and the batch. `nbytes` reads it off the tensors
that hold the tokens seen so far.

The cache may hold another dtype than the layer computes in (an fp16 cache for an fp32 layer):
new keys/values are stored in the cache's dtype, and read back in the layer's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from torch.types import Device


class KVCache:
    """Keys and values of the tokens seen so far, for one layer: `k`, `v` each (B, g, max_len, d_k),
    of which the first `length` positions are filled."""

    def __init__(self, batch: int, n_kv_heads: int, d_k: int, max_len: int, *, dtype: torch.dtype = torch.float32,
                 device: Device = None) -> None:
        for name, value in (("batch", batch), ("n_kv_heads", n_kv_heads), ("d_k", d_k), ("max_len", max_len)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
        self.batch, self.n_kv_heads, self.d_k, self.max_len = batch, n_kv_heads, d_k, max_len
        self.k = torch.zeros(batch, n_kv_heads, max_len, d_k, dtype=dtype, device=device)  # (B, g, max_len, d_k)
        self.v = torch.zeros(batch, n_kv_heads, max_len, d_k, dtype=dtype, device=device)  # (B, g, max_len, d_k)
        self.length = 0

    @property
    def dtype(self) -> torch.dtype:
        return self.k.dtype

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store the new keys/values k, v (B, g, S_new, d_k); return all held so far, (B, g, length, d_k)
        each, in k's dtype."""
        start, end = self.length, self.length + k.size(2)
        if end > self.max_len:
            raise ValueError(f"KVCache is full: {start} + {k.size(2)} new tokens > max_len {self.max_len}")
        self.k[:, :, start:end] = k  # (B, g, S_new, d_k), converted to the cache's dtype
        self.v[:, :, start:end] = v
        self.length = end
        return (self.k[:, :, :end].to(k.dtype),  # (B, g, length, d_k)
                self.v[:, :, :end].to(v.dtype))

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values held now: 2 · B · g · length · d_k · bytes per element."""
        held = self.k[:, :, :self.length], self.v[:, :, :self.length]
        return sum(t.numel() * t.element_size() for t in held)

    @property
    def capacity_bytes(self) -> int:
        """Bytes allocated (max_len tokens)."""
        return sum(t.numel() * t.element_size() for t in (self.k, self.v))

    def reset(self) -> None:
        """Forget every token (the memory stays allocated)."""
        self.length = 0

    def __repr__(self) -> str:
        return (f"KVCache(batch={self.batch}, n_kv_heads={self.n_kv_heads}, d_k={self.d_k}, "
                f"length={self.length}/{self.max_len}, dtype={self.dtype})")
