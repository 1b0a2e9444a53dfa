"""The small operations mha's layers share: the stage of the forward pass being run (read by
:mod:`mha.measure` to attribute FLOPs), the factory arguments of new parameters, the size check,
K/V heads shared by query heads (GQA/MQA), a linear map as a matmul and an add, and the
attributes of mha.MultiHeadAttention that its mixins read (:class:`AttentionAttributes`)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def stage(name: Stage) -> Iterator[None]:
    token = STAGE.set(name)
    try:
        yield
    finally:
        STAGE.reset(token)


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
    """x·weightᵀ + bias, as a matmul and then an in-place bias add rather than F.linear's fused
    addmm: the same function (and the same FLOPs: 2·M·K·N, plus one addition per output element
    for the bias), and on the "meta" device both ops have C++ shape kernels, whereas torch's
    Python meta kernel for addmm (and for out-of-place add) imports torch._dynamo on first use,
    which costs more than a second: mha measures LLM-sized layers on "meta"."""
    y = F.linear(x, weight)
    return y if bias is None else y.add_(bias)
