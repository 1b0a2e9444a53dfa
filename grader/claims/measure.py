"""The ``measure`` adapter: named quantities of the real :mod:`mha`, at given sizes.

    measure("params", {"d": 512, "h": 8})                       -> 1050624
    measure("flops.projections", {"d": 4096, "h": 32, "n": 2048}) -> 274877906944
    measure("shape.Q_i", {"d": 768, "h": 12, "n": 128})          -> (128, 64)

Sizes: d (d_model), h (heads), n (sequence length; self-attention), b (batch; absent:
one unbatched sequence), each a positive integer. Everything is measured on the "meta"
device (shapes, parameters and FLOPs without memory), so sizes can be those of real models.
torch is imported here, on first call (:func:`import_torch`), and nowhere else in the spec
engine: ``grader check-spec`` calls this module in its measuring process
(:mod:`grader.claims.worker`), never in its own. It imports nothing of the engine.

Cross-attention: n_q (query positions, e.g. a decoder's) and n_k (key/value positions, e.g. an
encoder's output) instead of n.

Quantities:
  params, params_nobias                       count_parameters (bias=True / bias=False)
  flops.total | flops.matmul_total            all matmul FLOPs of one forward (1 multiply-add = 2)
  flops.projections | flops.attention         q+k+v+out projections | QKᵀ + A·V
  flops.<stage>                               q_proj, k_proj, v_proj, qk, av, out_proj
  flops.softmax | flops.scaling | flops.bias  reported apart from matmuls
  attention.count | attention.elements        A_i matrices (batch × h) and their elements
  attention.bytes.fp32 | .fp16 | .bf16        bytes of all A_i at that dtype
  shape.<name>                                one head's shape of a trace name (Q_i, S_i, concat, ...)
  tensor.<name>                               the traced tensor's whole shape, heads stacked: (h, n, d_k)
  params.block | params.model | flops.forward | flops.ffn | flops.lm_head | flops.decode_step |
  bytes.kv_cache | bytes.kv_cache_token | bytes.kv_cache_token_layer
                                              a whole transformer's (grader.claims.model_sizes,
                                              grader.claims.measure_blocks): sizes L, d_ff, V, n_ctx, g

Parameters and FLOPs of one layer also take g (key/value heads: GQA, MQA). Every size given must
be one the quantity takes (QuantityError otherwise): a size is never dropped.

FLOPs are counted on the reference path of the forward (``need_weights=True``: the 17-08
equations, one matmul at a time), which mha.measure_flops counts exactly as the fused path
(tests/test_mha_measure.py); on "meta" the fused kernel's decomposition would load torch's
Python meta kernels that import torch._dynamo, more than a second.

On "meta", four ops of that path (mm, bmm, the in-place bias add, softmax) get their output
from :func:`_shape_kernels`, the rule each op's shape follows, instead of torch's meta kernels
for them, which torch writes in Python and whose first call imports SymPy (through
torch.fx.experimental.symbolic_shapes), half a second of the measuring process's start. Every
op still runs through mha's code and the FLOP counter exactly as before; tests/test_spec_api.py
checks every quantity against torch's own meta kernels.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, SupportsIndex, TypedDict, cast

from .model_sizes import MODEL_QUANTITIES, SIZE_ALIASES as ALIASES, is_model_quantity, sizes_taken

SIZE_NAMES = ("d", "h", "n", "b", "n_q", "n_k", "g", "L", "d_ff", "V", "n_ctx")
FLOP_PARTS = ("total", "matmul_total", "projections", "attention", "q_proj", "k_proj", "v_proj", "qk",
              "av", "out_proj", "softmax", "scaling", "masking", "bias")
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}
IMPLEMENTATIONS = ("fused", "per_head", "torch", "single_head")


if TYPE_CHECKING:       # torch and mha are imported on first use only (import_torch)
    from torch import Tensor, nn

    from mha.attention import MultiHeadAttention
    from mha.conversions import Layout
    from mha.measure import FlopReport
    from mha.tracing import Trace

# A measured value: a count (parameters, FLOPs, elements, bytes), a ratio (FLOP/byte) or a shape.
Measured = int | float | tuple[int, ...]


class QuantityError(ValueError):
    """An unknown quantity or missing size."""


class Equivalence(TypedDict):
    """What :func:`equivalence` returns (over the measuring process's pipe: plain data)."""

    max_abs_diff: float
    params: list[int]
    device: str
    sizes: dict[str, int]


def import_torch() -> ModuleType:
    """``import torch`` (and mha), without torch's "Failed to initialize NumPy" UserWarning:
    numpy may be missing (only matplotlib, for figures, needs it) and nothing here converts tensors to arrays."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
        import torch

        import mha.attention  # noqa: F401  (imports torch.nn, torch.nn.functional)
    return torch


def quantities() -> tuple[str, ...]:
    """Every quantity name ``measure`` accepts (shape.* listed with the trace names)."""
    from mha.tracing import TRACE_NAMES
    names: tuple[str, ...] = (("params", "params_nobias") + tuple(f"flops.{p}" for p in FLOP_PARTS) + MODEL_QUANTITIES
            + ("attention.count", "attention.elements") + tuple(f"attention.bytes.{k}" for k in DTYPES)
            + tuple(f"shape.{n}" for n in TRACE_NAMES) + tuple(f"tensor.{n}" for n in TRACE_NAMES))
    return names


def check_quantity(quantity: str) -> None:
    """Raise QuantityError (with the list of known names) if ``quantity`` is not one."""
    if quantity not in quantities():
        raise QuantityError(f"unknown quantity {quantity!r}; expected one of: {', '.join(quantities())}")


def required_sizes(quantity: str, given: Iterable[str] = ()) -> tuple[str, ...]:
    """The sizes a quantity must be given: d and h for parameters, d, h and n for the rest
    (cross-attention, when ``given`` has n_q or n_k: d, h, n_q and n_k); a transformer's
    quantities: see grader.claims.model_sizes."""
    return sizes_taken(quantity, given)[0]


def _sizes(values: Mapping[str, object], need: Iterable[str]) -> dict[str, int]:
    v = {ALIASES.get(k, k): x for k, x in values.items()}
    missing = [k for k in need if k not in v]
    if missing:
        raise QuantityError(f"missing size {', '.join(missing)} (sizes are d, h, n — or n_q and n_k for "
                            f"cross-attention — and optionally b)")
    out: dict[str, int] = {}
    for k in SIZE_NAMES:
        if k in v:
            x = v[k]
            if isinstance(x, float) and x.is_integer():     # not json_number: a size of nan or inf must reach
                x = int(x)                                  # the QuantityError below, where json_number raises
            size: int | None
            try:        # int, or an integer type; any other object raises TypeError (cast: no check)
                size = None if isinstance(x, bool) else operator.index(cast(SupportsIndex, x))
            except TypeError:
                size = None
            if size is None or size <= 0:
                raise QuantityError(f"size {k} must be a positive integer, got {v[k]!r}")
            out[k] = size
    return out


def measure(quantity: str, values: Mapping[str, object], device: str = "meta", layout: Layout = "fused",
            bias: bool = True, model: Mapping[str, Any] | None = None) -> Measured:
    """The named quantity of a real mha.MultiHeadAttention(d, h, n_kv_heads=g) at the given sizes, or
    of a transformer (``model``: its activation, norm, tied, dtype; see grader.claims.model_sizes)."""
    check_quantity(quantity)
    given = [ALIASES.get(k, k) for k in values]
    if "n" in given and {"n_q", "n_k"} & set(given):
        raise QuantityError("give n (self-attention) or n_q and n_k (cross-attention), not both")
    need, optional = sizes_taken(quantity, given)
    extra = sorted(set(given) - set(need) - set(optional))
    if extra:
        raise QuantityError(f"{quantity} does not take the size(s) {', '.join(extra)}; it takes "
                            f"{', '.join(need)}" + (f" (optionally {', '.join(optional)})" if optional else ""))
    v = _sizes(values, need)
    if is_model_quantity(quantity, given):
        from .measure_blocks import measure_model_quantity
        return measure_model_quantity(quantity, v, {**(model or {}), "bias": bool(bias)})
    g = v.get("g")
    if quantity in ("params", "params_nobias"):
        return _params(v["d"], v["h"], layout, bias and quantity == "params", g)
    if "n_q" in v:
        if "n" in v:
            raise QuantityError("give n (self-attention) or n_q and n_k (cross-attention), not both")
        return _measure(quantity, v["d"], v["h"], v["n_q"], v.get("b"), layout, bool(bias), device, v["n_k"], g)
    return _measure(quantity, v["d"], v["h"], v["n"], v.get("b"), layout, bool(bias), device, None, g)


@lru_cache(maxsize=256)
def _params(d: int, h: int, layout: Layout, bias: bool, g: int | None = None) -> int:
    import_torch()
    import mha
    return mha.count_parameters(mha.MultiHeadAttention(d, h, bias=bias, layout=layout, device="meta", n_kv_heads=g))


@lru_cache(maxsize=64)
def _module(d: int, h: int, layout: Layout, bias: bool, device: str, g: int | None = None) -> MultiHeadAttention:
    import mha
    return mha.MultiHeadAttention(d, h, bias=bias, layout=layout, device=device, n_kv_heads=g).eval()


def _inputs(torch: ModuleType, d: int, n: int, b: int | None, device: str, n_k: int | None) -> tuple[Tensor, Tensor]:
    """(query, key/value): one tensor for self-attention (n_k None), else two of n and n_k positions."""
    x = torch.empty((n, d) if b is None else (b, n, d), device=device)
    if n_k is None:
        return x, x
    return x, torch.empty((n_k, d) if b is None else (b, n_k, d), device=device)


@lru_cache(maxsize=256)
def _measure(quantity: str, d: int, h: int, n: int, b: int | None, layout: Layout, bias: bool, device: str,
             n_k: int | None = None, g: int | None = None) -> Measured:
    """n: the (query) length; n_k: the key/value length for cross-attention (None: self-attention);
    g: key/value heads (None: h)."""
    torch = import_torch()
    import mha

    m = _module(d, h, layout, bias, device, g)
    x, kv = _inputs(torch, d, n, b, device, n_k)
    group, _, part = quantity.partition(".")
    if group == "flops":
        report = _flops(d, h, n, b, layout, bias, device, n_k, g)
        return report.matmul_total if part in ("total", "matmul_total") else report.as_dict()[part]
    if group == "attention":
        with _shape_kernels():
            if part.startswith("bytes."):
                return mha.attention_matrices(m, x, kv, dtype=getattr(torch, DTYPES[part[len("bytes."):]])).bytes
            a = mha.attention_matrices(m, x, kv)
        return a.count if part == "count" else a.elements
    t = _trace(d, h, n, b, layout, bias, device, n_k)
    shape = t.shape(part) if group == "shape" else t[part].shape
    return tuple(int(s) for s in shape)


@lru_cache(maxsize=64)
def _flops(d: int, h: int, n: int, b: int | None, layout: Layout, bias: bool, device: str, n_k: int | None = None,
           g: int | None = None) -> FlopReport:
    """mha's FLOP report of one forward (its counts by stage)."""
    torch = import_torch()
    import mha

    m = _module(d, h, layout, bias, device, g)
    x, kv = _inputs(torch, d, n, b, device, n_k)
    with _shape_kernels():
        return mha.measure_flops(m, x, kv, kv, need_weights=True, average_attn_weights=False)


@lru_cache(maxsize=64)
def _trace(d: int, h: int, n: int, b: int | None, layout: Layout, bias: bool, device: str,
           n_k: int | None = None) -> Trace:
    """mha's trace of one forward (its named tensors)."""
    torch = import_torch()
    import mha

    m = _module(d, h, layout, bias, device)
    x, kv = _inputs(torch, d, n, b, device, n_k)
    with torch.no_grad(), _shape_kernels():
        return mha.trace(m, x, kv, kv)


_SHAPE_KERNELS: Callable[[], AbstractContextManager[Any]] | None = None


def _shape_kernels() -> AbstractContextManager[Any]:
    """A dispatch mode giving, on "meta" tensors only, the outputs of mm, bmm, add_ and softmax
    by their shape rules (each checked as torch checks it); everything else, and every other
    device, goes to torch as usual. Enter it outside mha.measure_flops, so that the FLOP counter
    sees each op first."""
    global _SHAPE_KERNELS
    if _SHAPE_KERNELS is not None:
        return _SHAPE_KERNELS()
    torch = import_torch()
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten

    def mm(a: Tensor, b: Tensor) -> Tensor:
        if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0] or a.dtype != b.dtype:
            raise RuntimeError(f"mm: cannot multiply {tuple(a.shape)} {a.dtype} by {tuple(b.shape)} {b.dtype}")
        return a.new_empty((a.shape[0], b.shape[1]))

    def bmm(a: Tensor, b: Tensor) -> Tensor:
        if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1] \
                or a.dtype != b.dtype:
            raise RuntimeError(f"bmm: cannot multiply {tuple(a.shape)} {a.dtype} by {tuple(b.shape)} {b.dtype}")
        return a.new_empty((a.shape[0], a.shape[1], b.shape[2]))

    def add_(self: Tensor, other: object, alpha: float = 1) -> Tensor:
        shape, extra = tuple(self.shape), tuple(getattr(other, "shape", ()))
        if len(extra) > len(shape) or any(o not in (1, s) for o, s in zip(reversed(extra), reversed(shape))):
            raise RuntimeError(f"add_: {extra} does not broadcast to {shape}")
        return self

    def softmax(x: Tensor, dim: int, half_to_float: bool, *, out: Tensor | None = None) -> Tensor:
        if out is not None:
            if tuple(out.shape) != tuple(x.shape):
                raise RuntimeError(f"_softmax.out: out {tuple(out.shape)} is not {tuple(x.shape)}")
            return out
        # torch's softmax keeps a dense input's strides (empty_like, which on "meta" is Python too)
        return x.new_empty_strided(tuple(x.shape), x.stride(), dtype=torch.float32 if half_to_float else x.dtype)

    kernels: dict[Any, Callable[..., Any]] = {aten.mm.default: mm, aten.bmm.default: bmm, aten.add_.Tensor: add_,
               aten._softmax.default: softmax, aten._softmax.out: softmax}

    class ShapeKernels(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False    # see mha.measure: nothing here is compiled; importing torch._dynamo costs 1 s

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            kernel = kernels.get(func)
            if kernel is not None and all(t.device.type == "meta" for t in (*args, *kwargs.values())
                                          if isinstance(t, torch.Tensor)):
                return kernel(*args, **kwargs)
            return func(*args, **kwargs)

    _SHAPE_KERNELS = ShapeKernels
    return ShapeKernels()  # type: ignore[no-untyped-call]  # torch's TorchDispatchMode.__init__ has no annotations


def make(request: Mapping[str, Any]) -> Any:
    """One measurement as the measured checks ask for it (grader.claims.checks.measured.request):
    {"quantity", "at", "layout", "bias"}, or {"equivalence": {"a", "b", "values", "seed", "device"}},
    or {"experiment": {...}} (a demonstration, grader.claims.checks.demonstrate: mha.experiments.run)."""
    if "experiment" in request:
        import_torch()
        from mha.experiments import run
        return run(request["experiment"])
    if "equivalence" in request:
        return equivalence(**request["equivalence"])
    if "statistic" in request:
        from .statistics import run_statistic
        return run_statistic(request["statistic"])
    return measure(request["quantity"], request["at"], layout=request["layout"], bias=request["bias"],
                   model=request.get("model"))


def resolve_device(device: str) -> str:
    """"auto": cuda when available, else cpu; other names as given."""
    if device != "auto":
        return device
    torch = import_torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def equivalence(a: str, b: str, values: Mapping[str, object], seed: int = 0, device: str = "auto") -> Equivalence:
    """Two implementations on the same seeded weights and inputs: {"max_abs_diff" (outputs and
    per-head attention weights), "params": [a's, b's], "device", "sizes"}. Sizes d, h
    (required), n (default 16), b (default 2).

    Implementations: "fused" and "per_head" (mha's two layouts), "torch"
    (torch.nn.MultiheadAttention), and "single_head": ONE head as wide as the model (h = 1)
    with the very same W^Q, W^K, W^V, W^O — the same parameters, a different function when
    h > 1 (its weights, one matrix, are compared with each head's)."""
    for which in (a, b):
        if which not in IMPLEMENTATIONS:
            raise QuantityError(f"unknown implementation {which!r}; expected one of {', '.join(IMPLEMENTATIONS)}")
    v = _sizes(values, ("d", "h"))
    d, h, n, nb = v["d"], v["h"], v.get("n", 16), v.get("b", 2)
    torch = import_torch()
    import mha

    device = resolve_device(device)
    g = torch.Generator(device="cpu").manual_seed(seed)
    ref: nn.MultiheadAttention = torch.nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    base = mha.MultiHeadAttention.from_torch(ref)

    def build(which: str) -> nn.Module:
        if which == "torch":
            return ref
        if which == "single_head":
            one = mha.MultiHeadAttention(d, 1)
            one.load_state_dict(base.to_layout("fused").state_dict())
            return one
        return base.to_layout(cast("Layout", which))     # mha's layouts are left (checked above)

    ma, mb = build(a).to(device).eval(), build(b).to(device).eval()
    x = torch.randn((nb, n, d), generator=g).to(device)
    with torch.no_grad():
        oa, wa = ma(x, x, x, need_weights=True, average_attn_weights=False)
        ob, wb = mb(x, x, x, need_weights=True, average_attn_weights=False)
    err: float = max((oa - ob).abs().max().item(), (wa - wb).abs().max().item())
    pa: int = sum(p.numel() for p in ma.parameters())
    pb: int = sum(p.numel() for p in mb.parameters())
    return {"max_abs_diff": err, "params": [pa, pb], "device": device, "sizes": {"d": d, "h": h, "n": n, "b": nb}}
