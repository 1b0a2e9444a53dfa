"""Measured inference on a device: time per decoded token and per prefill of an mha model, set
against the roofline the same run measures.

- :func:`measure_device` measures the device's **matmul peak** (a large square matmul in the
  model's dtype: 8192³ on CUDA, 1024³ on a CPU; 2·N³ FLOPs) and its **copy bandwidth** (a large
  device-to-device copy: 1 GiB on CUDA, 64 MiB on a CPU; the bytes read plus the bytes written),
  each the median of several synchronised runs after a warm-up.
- :func:`time_decode` times one decode step at position n (the KV caches hold n − 1 tokens, one
  new token per sequence: mha.inference's convention) and :func:`time_prefill` a causal forward
  over n tokens from empty caches; median seconds over bounded repeats after a warm-up (CUDA
  events on CUDA, ``time.perf_counter`` after a synchronisation elsewhere).
- Each timing carries its **roofline prediction**: the step's matmul FLOPs and minimum bytes,
  traced by :mod:`mha.inference` on the same module, give max(bytes / measured bandwidth,
  FLOPs / measured peak); which of the two binds; and the attained fraction, bound / measured.
  No implementation beats its roofline: a fraction above 1 means the measured peak or bandwidth
  is below what the step itself reached (a copy's bandwidth is not quite a read's).

    PYTHONPATH=. python3 -m mha.device_timing --d-model 4096 --heads 32 --kv-heads 8 --layers 32 \\
        --d-ff 11008 --vocab 32000 --activation swiglu --norm rmsnorm --no-bias --untied --n 4096 \\
        --dtype bf16 --device cuda

Only torch and mha are needed (no grader). torch is imported on first use.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from mha.inference import model_arguments

if TYPE_CHECKING:
    import torch

    from mha.block import Activation, Norm
    from mha.model_measures import Model

Phase = Literal["prefill", "decode"]
Bound = Literal["memory", "compute"]
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
MAX_REPEATS = 1000          # timed runs of one step, at most
MAX_SECONDS = 10.0          # timed work per step, at most (at least one run is always timed)


@dataclass(frozen=True)
class DevicePeaks:
    """What the device reached in this run: a matmul's FLOP/s and a copy's bytes/s (medians)."""

    device: str             # "cuda:0", "cpu"
    name: str               # "NVIDIA H200", or the CPU's
    dtype: str              # the matmul's, e.g. "bfloat16"
    matmul_n: int           # N of the N×N by N×N matmul: 2·N³ FLOPs
    matmul_seconds: float
    copy_bytes: int         # bytes read + bytes written by one copy
    copy_seconds: float
    repeats: int
    torch: str

    @property
    def flop_per_s(self) -> float:
        return 2 * self.matmul_n ** 3 / self.matmul_seconds

    @property
    def bytes_per_s(self) -> float:
        return self.copy_bytes / self.copy_seconds


@dataclass(frozen=True)
class StepTiming:
    """A decode step at position n or a prefill of n tokens: measured, and its roofline."""

    phase: Phase
    n: int
    batch: int
    dtype: str
    seconds: float                  # the median of `times`
    times: tuple[float, ...]        # each timed run, in seconds
    flops: int                      # matmul FLOPs of the step (mha.inference)
    bytes: int                      # minimum bytes the step moves (mha.inference)
    peaks: DevicePeaks

    @property
    def memory_seconds(self) -> float:
        return self.bytes / self.peaks.bytes_per_s      # bytes / measured bandwidth

    @property
    def compute_seconds(self) -> float:
        return self.flops / self.peaks.flop_per_s       # FLOPs / measured matmul peak

    @property
    def roofline_seconds(self) -> float:
        """max(bytes / bandwidth, FLOPs / peak): no run of the step can be faster."""
        return max(self.memory_seconds, self.compute_seconds)

    @property
    def bound(self) -> Bound:      # the larger of the two times
        return "memory" if self.memory_seconds >= self.compute_seconds else "compute"

    @property
    def fraction(self) -> float:
        """The roofline's time over the measured time: 1 is the roofline attained."""
        return self.roofline_seconds / self.seconds


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _device(device: str | torch.device) -> torch.device:
    import torch
    try:
        d = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device must be a torch device such as 'cuda' or 'cpu', got {device!r}") from e
    if d.type == "meta":
        raise ValueError("device 'meta' holds no data: timings need a real device ('cuda' or 'cpu')")
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"no CUDA device: torch {torch.__version__} sees none (device {device!r})")
    if d.type == "cuda" and d.index is None:
        d = torch.device("cuda", torch.cuda.current_device())
    return d


def _dtype(dtype: str | torch.dtype) -> torch.dtype:
    import torch
    if isinstance(dtype, str):
        dtype = getattr(torch, DTYPES.get(dtype, dtype), dtype)
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype must be fp32, fp16 or bf16 (or a floating-point torch.dtype), got {dtype!r}")
    return dtype


def _timer(device: torch.device, run: Callable[[], object], *, repeats: int, warmup: int,
           before: Callable[[], object] | None = None, max_seconds: float = MAX_SECONDS) -> tuple[float, ...]:
    """Seconds of each of up to `repeats` timed runs of `run` (after `warmup` untimed ones), each
    synchronised on its own; `before` (untimed) runs before each. Stops after max_seconds of timing."""
    import torch
    _positive("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer, got {warmup!r}")
    repeats, cuda = min(repeats, MAX_REPEATS), device.type == "cuda"
    for _ in range(warmup):
        if before is not None:
            before()
        run()
    if cuda:
        torch.cuda.synchronize(device)
    times: list[float] = []
    spent = 0.0     # timed seconds so far
    while len(times) < repeats and spent < max_seconds:
        if before is not None:
            before()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(device)
            start.record()
            run()
            end.record()
            end.synchronize()
            t = start.elapsed_time(end) / 1000.0     # ms -> s
        else:
            t0 = time.perf_counter()
            run()
            t = time.perf_counter() - t0
        times.append(t)
        spent += t
    return tuple(times)


def _name(device: torch.device) -> str:
    import platform

    import torch
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    return platform.processor() or platform.machine() or device.type


def measure_device(device: str | torch.device = "cuda", dtype: str | torch.dtype = "bf16", *,
                   matmul_n: int | None = None, copy_bytes: int | None = None, repeats: int = 10,
                   warmup: int = 3) -> DevicePeaks:
    """The device's matmul peak (N×N by N×N in `dtype`; N 8192 on CUDA, 1024 elsewhere) and copy
    bandwidth (a tensor of copy_bytes / 2 bytes copied: 1 GiB on CUDA, 64 MiB elsewhere), medians."""
    import torch
    dev, dt = _device(device), _dtype(dtype)
    cuda = dev.type == "cuda"
    n = _positive("matmul_n", matmul_n if matmul_n is not None else 8192 if cuda else 1024)
    half = _positive("copy_bytes", copy_bytes if copy_bytes is not None else 2 * 2**30 if cuda else 2 * 2**26) // 2
    if half == 0:
        raise ValueError(f"copy_bytes must be at least 2 (read and written), got {copy_bytes!r}")
    g = torch.Generator(device=dev).manual_seed(0)
    a, b = (torch.randn(n, n, generator=g, device=dev, dtype=dt) for _ in range(2))     # (N, N) each
    out = torch.empty(n, n, device=dev, dtype=dt)
    with torch.inference_mode():
        mm = _timer(dev, lambda: torch.mm(a, b, out=out), repeats=repeats, warmup=warmup)
    del a, b, out
    src, dst = torch.ones(half, dtype=torch.uint8, device=dev), torch.empty(half, dtype=torch.uint8, device=dev)
    with torch.inference_mode():
        cp = _timer(dev, lambda: dst.copy_(src), repeats=repeats, warmup=warmup)
    del src, dst
    return DevicePeaks(str(dev), _name(dev), str(dt).removeprefix("torch."), n, statistics.median(mm), 2 * half,
                       statistics.median(cp), len(mm), torch.__version__)


def _model_device_dtype(m: Model) -> tuple[torch.device, torch.dtype]:
    from mha.model_measures import _kind
    _kind(m)
    w = next(m.parameters())
    _device(w.device)
    return w.device, w.dtype


def _step(m: Model, phase: Phase, n: int, batch: int, peaks: DevicePeaks | None, repeats: int,
          warmup: int) -> StepTiming:
    import torch

    from mha.inference import measure_decode_step, measure_prefill
    from mha.model_measures import _caches, _call, _forward_args, _inputs, _kind
    kind = _kind(m)
    _positive("n", n)
    _positive("batch", batch)
    device, dtype = _model_device_dtype(m)
    if peaks is None:
        peaks = measure_device(device, dtype)
    was_training = m.training
    m.eval()
    try:
        traced = (measure_decode_step if phase == "decode" else measure_prefill)(m, n, batch=batch)
        caches = _caches(m, batch, n, None)
        past = n - 1 if phase == "decode" else 0
        if past:
            _call(m, kind, _inputs(m, batch, past), caches)      # the n − 1 cached tokens, once
        args, kw = _forward_args(kind, _inputs(m, batch, 1 if phase == "decode" else n), caches)

        def rewind() -> None:      # the step again from the same position: its keys/values overwrite
            for c in caches:
                c.length = past

        with torch.inference_mode():
            times = _timer(device, lambda: m(*args, **kw), repeats=repeats, warmup=warmup, before=rewind)
    finally:
        m.train(was_training)
    return StepTiming(phase, n, batch, str(dtype).removeprefix("torch."), statistics.median(times), times,
                      traced.flops.matmul_total, traced.traffic.total, peaks)


def time_decode(m: Model, n: int, batch: int = 1, *, peaks: DevicePeaks | None = None, repeats: int = 50,
                warmup: int = 5) -> StepTiming:
    """Median seconds of one decode step at position n (n − 1 cached, one token per sequence) of an
    mha Transformer (or block, or attention layer) on its device, with its roofline (`peaks`:
    measure_device's, measured now on the model's device and dtype when not given)."""
    return _step(m, "decode", n, batch, peaks, repeats, warmup)


def time_prefill(m: Model, n: int, batch: int = 1, *, peaks: DevicePeaks | None = None, repeats: int = 10,
                 warmup: int = 2) -> StepTiming:
    """Median seconds of a causal forward over n tokens per sequence from empty KV caches."""
    return _step(m, "prefill", n, batch, peaks, repeats, warmup)


@dataclass(frozen=True)
class Config:
    """An mha.Transformer's shape and settings, as the CLI and the experiments build it."""

    d_model: int
    heads: int
    kv_heads: int
    layers: int
    d_ff: int
    vocab: int
    activation: Activation = "gelu"
    norm: Norm = "layernorm"
    bias: bool = True
    tied: bool = True

    def weight_bytes(self, element: int) -> int:
        """The weight matrices' bytes (biases and norms, under 0.1 %, left out): what `fits` estimates."""
        d, dk = self.d_model, self.d_model // self.heads
        ffn = (3 if self.activation == "swiglu" else 2) * d * self.d_ff
        block = 2 * d * d + 2 * d * self.kv_heads * dk + ffn      # W^Q, W^O; W^K, W^V (g heads); the FFN
        return element * (self.layers * block + self.vocab * d * (1 if self.tied else 2))

    def build(self, device: str | torch.device, dtype: torch.dtype, seed: int = 0) -> Model:
        import torch

        import mha
        torch.manual_seed(seed)
        return mha.Transformer(self.vocab, self.d_model, self.layers, self.heads, self.d_ff,
                               n_kv_heads=self.kv_heads, activation=self.activation, norm=self.norm, bias=self.bias,
                               tie_embeddings=self.tied, device=device, dtype=dtype).eval()


def fits(cfg: Config, n: int, batch: int, device: torch.device, dtype: torch.dtype) -> str | None:
    """Why the model and two sets of KV caches of n positions would not fit the CUDA device's free
    memory (with a quarter to spare for activations and logits); None when they would (or not CUDA)."""
    import torch
    if device.type != "cuda":
        return None
    element = torch.empty((), dtype=dtype).element_size()
    kv = 2 * cfg.layers * batch * n * cfg.kv_heads * (cfg.d_model // cfg.heads) * element
    need = cfg.weight_bytes(element) + 2 * kv + batch * n * cfg.vocab * element
    free, _ = torch.cuda.mem_get_info(device)
    if need * 1.25 > free:
        return (f"needs about {need * 1.25 / 2**30:.1f} GiB of device memory (weights, KV caches, logits, "
                f"a quarter to spare); {_name(device)} has {free / 2**30:.1f} GiB free")
    return None


def _empty_cache(device: torch.device) -> None:
    import torch
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _row(name: str, g: int, t: StepTiming) -> str:
    return (f"{name:<5} {g:>4} {t.phase:<8} {t.seconds * 1e3:>12.3f} {t.roofline_seconds * 1e3:>12.3f} "
            f"{t.bound:>8} {t.fraction:>9.3f} {t.bytes:>17,} {t.flops:>19,}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mha.device_timing", description=(
        "Measured time of a decode step at position n and of a prefill of n tokens of an mha.Transformer "
        "on a device, against the roofline from the same run's measured matmul peak and copy bandwidth, "
        "for MHA (g = heads) and each --kv-heads given (GQA)."))
    model_arguments(p)
    p.add_argument("--dtype", choices=tuple(DTYPES), default="bf16")
    p.add_argument("--device", default="cuda")
    p.add_argument("--repeats", type=int, default=50, help="timed decode steps (prefills: a fifth, at least 3)")
    p.add_argument("--matmul-n", type=int, help="N of the peak's N×N matmul (default 8192 on CUDA, 1024 else)")
    p.add_argument("--copy-mib", type=int, help="MiB copied for the bandwidth (default 1024 on CUDA, 64 else)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    a = p.parse_args(argv)
    try:
        device, dtype = _device(a.device), _dtype(a.dtype)
        for name in ("d_model", "heads", "layers", "n", "batch", "vocab", "repeats"):
            _positive("--" + name.replace("_", "-"), getattr(a, name))
        groups = list(dict.fromkeys([a.heads, *a.kv_heads]))
        for g in groups:
            if _positive("--kv-heads", g) > a.heads or a.heads % g or a.d_model % a.heads:
                raise ValueError(f"--kv-heads {g} must divide --heads {a.heads}, which must divide --d-model "
                                 f"{a.d_model}")
        peaks = measure_device(device, dtype, matmul_n=a.matmul_n,
                               copy_bytes=None if a.copy_mib is None else 2 * a.copy_mib * 2**20)
        rows: list[tuple[str, int, StepTiming, StepTiming]] = []
        for g in groups:
            cfg = Config(a.d_model, a.heads, g, a.layers, a.d_ff or 4 * a.d_model, a.vocab, a.activation, a.norm,
                         not a.no_bias, not a.untied)
            why = fits(cfg, a.n, a.batch, device, dtype)
            if why:
                raise ValueError(f"g = {g}: {why}")
            m = cfg.build(device, dtype)
            dec = time_decode(m, a.n, a.batch, peaks=peaks, repeats=a.repeats)
            pre = time_prefill(m, a.n, a.batch, peaks=peaks, repeats=max(3, a.repeats // 5))
            rows.append(("MHA" if g == a.heads else "MQA" if g == 1 else "GQA", g, dec, pre))
            del m
            _empty_cache(device)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps({"peaks": asdict(peaks) | {"flop_per_s": peaks.flop_per_s, "bytes_per_s": peaks.bytes_per_s},
                          "rows": [{"attention": name, "g": g, **{t.phase: _as_dict(t) for t in (dec, pre)}}
                                   for name, g, dec, pre in rows]}, indent=1))
        return 0
    print(f"device {peaks.device} ({peaks.name}), torch {peaks.torch}, {peaks.dtype}: measured matmul peak "
          f"{peaks.flop_per_s / 1e12:,.1f} TFLOP/s ({peaks.matmul_n}³, median of {peaks.repeats}), copy bandwidth "
          f"{peaks.bytes_per_s / 1e9:,.1f} GB/s ({peaks.copy_bytes / 2**20:,.0f} MiB read + written)")
    print(f"d_model {a.d_model}, heads {a.heads}, layers {a.layers}, n {a.n}, batch {a.batch}; decode: one token at "
          f"position n; prefill: n tokens; roofline = max(bytes / bandwidth, FLOPs / peak)")
    print(f"{'attn':<5} {'g':>4} {'step':<8} {'measured ms':>12} {'roofline ms':>12} {'bound':>8} {'fraction':>9} "
          f"{'bytes':>17} {'FLOPs':>19}")
    for name, g, dec, pre in rows:
        print(_row(name, g, dec))
        print(_row(name, g, pre))
    return 0


def _as_dict(t: StepTiming) -> dict[str, object]:
    return {k: v for k, v in asdict(t).items() if k != "peaks"} | {
        k: getattr(t, k) for k in ("roofline_seconds", "memory_seconds", "compute_seconds", "bound", "fraction")}


if __name__ == "__main__":
    sys.exit(main())
