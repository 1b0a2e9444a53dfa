"""Hardware as cited data (issue #27): a ``hardware:`` section beside ``models:``, one card per
accelerator, each number with its unit, and the roofline quantities derived from it.

    hardware:
      h100-sxm:
        name: NVIDIA H100 SXM
        citation: "NVIDIA H100 datasheet (2023), SXM column, dense"
        peak: {fp16: 989 TFLOP/s, bf16: 989 TFLOP/s, fp32: 67 TFLOP/s}
        bandwidth: 3.35 TB/s
        memory: 80 GB
        memory_kind: HBM3

Every figure is read as claimed figures are (:func:`grader.claims.figures.parse_figure`) and must
be in its dimension (peak: FLOP/s, bandwidth: bytes/s, memory: bytes), else a located error.
The ``hardware`` check kind (:mod:`grader.claims.checks.hardware`) checks a claim about a card:

- ``peak`` (at a ``dtype``), ``bandwidth``, ``memory``: the card's own figure;
- ``ridge`` (at a ``dtype``): peak / bandwidth, FLOP per byte — the arithmetic intensity above
  which a kernel is bound by compute;
- ``time_memory``: ``bytes`` / bandwidth, seconds — the least time to move that much (a decode
  step reads every weight once: its time per token bound by memory);
- ``time_compute`` (at a ``dtype``): ``flops`` / peak, seconds — the least time to compute that much.

The ``roofline`` check kind (:mod:`grader.claims.checks.roofline`) puts a step of the real model on
a card instead of the author's own figures: its FLOPs and bytes measured on mha (:data:`STEPS`),
their exact ratio against the ridge point (:class:`Roofline`: bound by memory or by compute) and
the step's least time, max(bytes / bandwidth, FLOPs / peak).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .dimensions import Dim, describe

FLOP_PER_S: Dim = (("flop", 1), ("second", -1))
BYTES_PER_S: Dim = (("byte", 1), ("second", -1))
BYTES: Dim = (("byte", 1),)
FLOPS: Dim = (("flop", 1),)
SECONDS: Dim = (("second", 1),)
FLOP_PER_BYTE: Dim = (("flop", 1), ("byte", -1))
CARD_KEYS = ("name", "citation", "peak", "bandwidth", "memory", "memory_kind")
DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")
QUANTITIES: dict[str, Dim] = {"peak": FLOP_PER_S, "bandwidth": BYTES_PER_S, "memory": BYTES,
                              "ridge": FLOP_PER_BYTE, "time_memory": SECONDS, "time_compute": SECONDS}


@dataclass(frozen=True)
class Card:
    """One accelerator's cited figures, in base units (FLOP/s, bytes/s, bytes)."""

    key: str
    name: str
    citation: str
    peak: dict[str, Fraction] = field(default_factory=dict)     # dtype -> FLOP/s
    peak_text: dict[str, str] = field(default_factory=dict)
    bandwidth: Fraction | None = None
    bandwidth_text: str = ""
    memory: Fraction | None = None
    memory_text: str = ""
    memory_kind: str = ""


def _figure(ld: Any, v: Any, loc: Any, what: str, dim: Dim) -> tuple[Fraction, str] | None:
    from .figures import FigureError, parse_figure
    try:
        f = parse_figure(v)
    except FigureError as e:
        ld.error(f"bad {what} {v!r}: {e}", loc)
        return None
    if f.dimension != dim:
        ld.error(f"{what} must be in {describe(dim)} (a figure with its unit, like "
                 f"{'989 TFLOP/s' if dim == FLOP_PER_S else '3.35 TB/s' if dim == BYTES_PER_S else '80 GB'}), "
                 f"got {v!r} ({describe(f.dimension)})", loc)
        return None
    return f.value, f.text


def load_hardware(ld: Any, data: Any) -> dict[str, Card]:
    """The ``hardware:`` section, every problem reported at its place (``ld.error``)."""
    from . import fields as F
    section: Any = ld.mapping(data, "hardware", required=False) or {}
    out: dict[str, Card] = {}
    for key, raw in section.items():
        if not F.is_mapping(raw):
            ld.error("a hardware card must be a mapping with 'name', 'citation', 'peak', 'bandwidth', 'memory'",
                     section.loc_of(key))
            continue
        ld.unknown_keys(raw, set(CARD_KEYS), f"hardware {key!r}")
        peak: dict[str, Fraction] = {}
        peak_text: dict[str, str] = {}
        p = raw.get("peak")
        if p is not None:
            if not F.is_mapping(p):
                ld.error("peak must map a dtype to FLOP/s, e.g. {fp16: 989 TFLOP/s}", raw.loc_of("peak"))
            else:
                for dt, v in p.items():
                    if dt not in DTYPES:
                        ld.error(f"unknown dtype {dt!r} in peak; expected one of {', '.join(DTYPES)}", p.key_loc(dt))
                        continue
                    got = _figure(ld, v, p.loc_of(dt), f"peak.{dt}", FLOP_PER_S)
                    if got is not None:
                        peak[dt], peak_text[dt] = got
        bw = _figure(ld, raw["bandwidth"], raw.loc_of("bandwidth"), "bandwidth", BYTES_PER_S) \
            if "bandwidth" in raw else None
        mem = _figure(ld, raw["memory"], raw.loc_of("memory"), "memory", BYTES) if "memory" in raw else None
        out[str(key)] = Card(str(key), ld.text(raw, "name"), ld.text(raw, "citation"), peak, peak_text,
                             bw[0] if bw else None, bw[1] if bw else "", mem[0] if mem else None,
                             mem[1] if mem else "", ld.text(raw, "memory_kind", required=False))
    return out


def value(card: Card, quantity: str, dtype: str | None, amount: Fraction | None) -> tuple[Fraction, str]:
    """(the quantity in base units, how it was derived); ValueError saying what the card lacks."""
    def peak() -> Fraction:
        if dtype is None or dtype not in card.peak:
            raise ValueError(f"{card.name} records no peak for {dtype or '(no dtype given)'}; it has "
                             f"{', '.join(card.peak) or 'none'}")
        return card.peak[dtype]

    def bandwidth() -> Fraction:
        if card.bandwidth is None:
            raise ValueError(f"{card.name} records no memory bandwidth")
        return card.bandwidth

    if quantity == "peak":
        return peak(), f"peak {dtype} of {card.name} = {card.peak_text[str(dtype)]}"
    if quantity == "bandwidth":
        return bandwidth(), f"memory bandwidth of {card.name} = {card.bandwidth_text}"
    if quantity == "memory":
        if card.memory is None:
            raise ValueError(f"{card.name} records no memory size")
        kind = f" {card.memory_kind}" if card.memory_kind else ""
        return card.memory, f"memory of {card.name} = {card.memory_text}{kind}"
    if quantity == "ridge":
        return peak() / bandwidth(), (f"ridge point of {card.name} = peak {dtype} / bandwidth = "
                                      f"{card.peak_text[str(dtype)]} / {card.bandwidth_text}")
    if amount is None:
        raise ValueError(f"{quantity} needs the amount it is bound by")
    if quantity == "time_memory":
        return amount / bandwidth(), f"time bound by memory on {card.name} = bytes / {card.bandwidth_text}"
    return amount / peak(), f"time bound by compute on {card.name} = FLOPs / {card.peak_text[str(dtype)]}"


# ---------------------------------------------------------------- a measured step on a card

# A step of the real model (the `roofline` check kind): the quantities measured for its FLOPs and its bytes
STEPS: dict[str, tuple[str, str]] = {
    "decode_step": ("flops.decode_step", "bytes.decode_step"),
    "prefill": ("flops.forward", "bytes.prefill"),
    "decode_step_layer": ("flops.decode_step_layer", "bytes.decode_step_layer"),
    "prefill_layer": ("flops.prefill_layer", "bytes.prefill_layer"),
}


@dataclass(frozen=True)
class Roofline:
    """A step's measured FLOPs and bytes on a card, exact: its arithmetic intensity against the card's
    ridge point, the least times to move its bytes and to compute its FLOPs, and the larger of the two."""

    flops: Fraction
    bytes: Fraction
    peak: Fraction          # FLOP/s at the step's dtype
    bandwidth: Fraction     # bytes/s

    @property
    def intensity(self) -> Fraction:
        return self.flops / self.bytes

    @property
    def ridge(self) -> Fraction:
        return self.peak / self.bandwidth

    @property
    def time_memory(self) -> Fraction:
        return self.bytes / self.bandwidth

    @property
    def time_compute(self) -> Fraction:
        return self.flops / self.peak

    @property
    def time(self) -> Fraction:
        """The least time of the step: it can neither move its bytes nor do its FLOPs faster."""
        return max(self.time_memory, self.time_compute)

    @property
    def bound(self) -> str:
        """'memory' below the ridge point (moving the bytes takes longer), 'compute' above, 'balanced' on it."""
        return "memory" if self.intensity < self.ridge else "compute" if self.intensity > self.ridge else "balanced"


def roofline(card: Card, dtype: str, flops: int, moved: int) -> Roofline:
    """The roofline of a step of ``flops`` FLOPs moving ``moved`` bytes on ``card`` at ``dtype``;
    ValueError saying what the card lacks (or a step that moves nothing)."""
    if dtype not in card.peak:
        raise ValueError(f"{card.name} records no peak for {dtype}; it has {', '.join(card.peak) or 'none'}")
    if card.bandwidth is None:
        raise ValueError(f"{card.name} records no memory bandwidth")
    if moved <= 0:
        raise ValueError(f"the step moves {moved} bytes: no arithmetic intensity")
    return Roofline(Fraction(flops), Fraction(moved), card.peak[dtype], card.bandwidth)


_TIME_UNITS = (("s", Fraction(1)), ("ms", Fraction(1, 10**3)), ("µs", Fraction(1, 10**6)), ("ns", Fraction(1, 10**9)))


def show_time(t: Fraction) -> str:
    """A time as the evidence writes it, in the largest of s, ms, µs, ns that keeps it at 1 or more
    (6 significant digits): 4.02985 ms, 753.433 ns."""
    from .figures import fmt_real
    name, unit = next(((n, u) for n, u in _TIME_UNITS if t >= u), _TIME_UNITS[-1])
    return f"{fmt_real(float(t / unit))} {name}"
