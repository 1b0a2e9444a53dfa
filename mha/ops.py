"""The small operations mha's layers share: the stage of the forward pass being run (read by
:mod:`mha.measure` to attribute FLOPs), the factory arguments of new parameters, the size check,
K/V heads shared by query heads (GQA/MQA), a linear map as a matmul and an add, and the
attributes of mha.MultiHeadAttention that its mixins read (:class:`AttentionAttributes`)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeAlias, TypedDict

import torch
import torch.nn.functional as F
from torch import Tensor

if TYPE_CHECKING:
    from torch.types import Device

# The stage of the forward pass being run, read by mha.measure to attribute
# FLOPs: a name, or ("in_proj", (C, g·d_k, g·d_k)) for the packed Q/K/V projection.
Stage: TypeAlias = str | tuple[str, tuple[int, int, int]]
STAGE: ContextVar[Stage | None] = ContextVar("mha_stage", default=None)


class Factory(TypedDict):
    """The device and dtype every new parameter is made with (torch's factory_kwargs)."""
    device: Device
    dtype: torch.dtype | None


class AttentionAttributes:
    """What the mixins of mha.MultiHeadAttention (mha.conversions.Conversions, mha.inputs.Inputs)
    read of it, declared once: annotations only, set by MultiHeadAttention.__init__."""

    d_model: int
    num_heads: int
    n_kv_heads: int
    d_k: int
    kdim: int
    vdim: int
    batch_first: bool
    out_proj: torch.nn.Linear


_NO_STAGE: AbstractContextManager[None] = nullcontext()  # reusable: enters and leaves doing nothing


def tracing() -> bool:
    """Whether a TorchDispatchMode is active (mha.measure's FLOP counter, mha.inference's traffic
    count, a FakeTensorMode, ...): STAGE is read only there, and there the ops must stay those
    they count (matmul, then the bias add). About 0.1 µs; when False, stage() costs nothing more."""
    return torch._C._len_torch_dispatch_stack() > 0


@contextmanager
def _staged(name: Stage) -> Iterator[None]:
    token = STAGE.set(name)
    try:
        yield
    finally:
        STAGE.reset(token)


def stage(name: Stage) -> AbstractContextManager[None]:
    """Mark the stage `name` for the FLOP counter while the block runs; a shared no-op context
    when nothing traces (a generator-based context manager costs microseconds per call, which a
    layer at n = 512 on a GPU would feel: its kernels run for about 0.1 ms)."""
    return _staged(name) if tracing() else _NO_STAGE


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def share_heads(kv: Tensor, nh: int) -> Tensor:
    """K or V heads (B, g, S, hs) repeated for the nh query heads: query head i gets head i // (nh/g)."""
    B, g, S, hs = kv.shape
    if g == nh:
        return kv
    # (B, g, 1, S, hs) → (B, g, nh/g, S, hs) → (B, nh, S, hs)
    return kv[:, :, None].expand(B, g, nh // g, S, hs).reshape(B, nh, S, hs)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """x·weightᵀ + bias. Where nothing traces, F.linear's one fused kernel (addmm: the bias is
    added in the matmul's epilogue, no second pass over the output, as nn.MultiheadAttention
    does). Traced or on "meta", a matmul and then an in-place bias add: the same function (and
    the same FLOPs: 2·M·K·N, plus one addition per output element for the bias) as the ops
    mha.measure counts, and on "meta" both ops have C++ shape kernels, whereas torch's Python
    meta kernel for addmm (and for out-of-place add) imports torch._dynamo on first use, which
    costs more than a second: mha measures LLM-sized layers on "meta"."""
    if bias is not None and not x.is_meta and not tracing():
        return F.linear(x, weight, bias)
    y = F.linear(x, weight)
    return y if bias is None else y.add_(bias)
