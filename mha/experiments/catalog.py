"""The experiments a spec can name (``kind: demonstrate``), without torch: their sizes, their
statistics and what each statistic is, so that a spec is checked when it is loaded.

Each statistic is a number computed per seed from its definition (:mod:`mha.experiments.stats`),
or, for a *pooled* statistic, one number over all the seeds (which head takes which role is a
question about seeds, not about one seed). The verdict (demonstrated, not demonstrated,
inconclusive) is the spec engine's (:mod:`grader.claims.checks.demonstrate`): it compares the
statistic with the effect the claim predicts.

The *timed* experiments (decode-time, prefill-time: :mod:`mha.experiments.timing`) measure
time on a device instead: a "seed" is one timing run, and their results are never cached.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NotRequired, TypeAlias, TypedDict, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from mha.attention import MultiHeadAttention

    # what an experiment builds its layers with: mha.MultiHeadAttention, or a class or factory called
    # like it, (d_model, num_heads, **kw) (tests pass deliberately broken subclasses)
    Attention: TypeAlias = Callable[..., MultiHeadAttention]

# Limits on what a spec may ask for: a spec file is untrusted input, and every experiment runs
# on the checking machine's CPU.
LIMITS = MappingProxyType({"d": 256, "h": 32, "n": 64, "n_q": 64, "n_k": 64, "b": 256,
                           "steps": 5000, "seeds": 32})
# The timed experiments run on a GPU, whose free memory is checked before anything is built
# (mha.device_timing.fits); these only keep the sizes and the number of runs sane.
TIMING_LIMITS = MappingProxyType({"d": 65536, "h": 1024, "g": 1024, "L": 1024, "n": 1_048_576, "b": 4096,
                                  "V": 1_048_576, "d_ff": 262144, "seeds": 10})
MODEL_OPTIONS = MappingProxyType({"activation": ("gelu", "gelu_tanh", "relu", "silu", "swiglu"),
                                  "norm": ("layernorm", "rmsnorm"), "dtype": ("fp32", "fp16", "bf16"),
                                  "bias": (True, False), "tied": (True, False)})


@dataclass(frozen=True)
class Experiment:
    name: str
    summary: str
    trains: bool                       # trains a model (skipped by `check-spec --no-train`)
    sizes: MappingProxyType[str, int]       # default sizes; the names a spec may give in `at`
    statistics: MappingProxyType[str, str]  # name -> what it is
    pooled: frozenset[str] = frozenset()    # statistics that are one number over all the seeds
    steps: int | None = None                # default training steps (experiments that train)
    dropout: float | None = None            # default p (the dropout experiment)
    optional: tuple[str, ...] = ()          # sizes a spec may give that have no default (n_q, n_k)
    vary: tuple[str, ...] = ()              # sizes a spec may vary (`vary: {h: [1, 2, 4]}`)
    needs_vary: frozenset[str] = field(default_factory=frozenset)   # statistics that compare varied sizes
    timed: bool = False                     # times an mha.Transformer on a device (mha.experiments.timing)


class TimedModel(TypedDict):
    """A timed experiment's model settings (mha.Transformer's) and dtype."""
    activation: str
    norm: str
    bias: bool
    tied: bool
    dtype: str


class Request(TypedDict):
    """A request with the experiment's defaults filled in (what normalise returns)."""
    name: str
    statistic: str
    sizes: dict[str, int]
    vary: dict[str, list[int]]
    seeds: list[int]
    steps: int | None
    dropout: float | None
    model: NotRequired[TimedModel]          # the timed experiments only
    device: NotRequired[str]


_V = TypeVar("_V")


def _m(**kw: _V) -> MappingProxyType[str, _V]:
    return MappingProxyType(kw)


_RUN = ("per timing run (the seeds number the runs; each measures the device's matmul peak and copy "
        "bandwidth, then times the step: the median of up to 50 runs, 10 for a prefill, after a warm-up, "
        "each synchronised): ")
_ROOFLINE = ("max(bytes / measured copy bandwidth, matmul FLOPs / measured matmul peak), in ms, the step's "
             "bytes and FLOPs traced on the same model by mha.inference")
_TIMED_SIZES = _m(d=4096, h=32, L=32, n=4096, b=1, V=32000)


EXPERIMENTS = MappingProxyType({
    "two-relations": Experiment(
        "two-relations",
        "a synthetic task whose every target needs two relations at once: the value token at "
        "position i-1 (a positional relation) and the value token at the one position whose key "
        "token matches the query's key (a content relation); one mha layer between learned "
        "embeddings and two linear read-outs, trained with Adam on fresh seeded batches",
        True,
        _m(d=32, h=2, n=8),
        _m(**{
            "accuracy-gain": "per seed: the lowest accuracy (both targets right) among the varied h "
                             "other than 1, minus the accuracy at h = 1, after the same steps on the "
                             "same data",
            "specialisation": "per seed: D after training minus D at initialisation, where D is the "
                              "spread over heads of (mass on position i-1 minus mass on the content "
                              "match): max over heads minus min over heads, from 0 (all heads alike) "
                              "to 2 (one head wholly positional, another wholly on the match)",
            "distance-spread": "per seed: the spread over heads of the mean attention distance "
                               "sum_j A[i,j]·|i-j| (max minus min over heads), after training minus at "
                               "initialisation",
            "shared-roles": "per seed: how many heads share their role (positional or match, at least "
                            "half their mass on it) with another head: heads that are not unique",
            "role-heads": "over all the seeds: how many different head indices take the positional "
                          "role (the head with the largest mass on i-1 minus mass on the match, when "
                          "that mass is at least one half); 1 if a role belonged to a head index",
        }),
        pooled=frozenset({"role-heads"}),
        steps=300,
        optional=("n_q", "n_k"),
        vary=("h",),
        needs_vary=frozenset({"accuracy-gain"}),
    ),
    "dropout": Experiment(
        "dropout",
        "one forward pass of mha(d, h, dropout=p) on seeded inputs in training mode, and one in "
        "evaluation mode, against the attention weights A_i before dropout (mha.trace)",
        False,
        _m(d=16, h=2, n=32, b=16),
        _m(**{
            "zeroed-z": "per seed: |zeroed - p·N| / sqrt(N·p·(1-p)), the zeroed weights' distance from "
                        "their expected count in binomial standard deviations (N weights, training mode)",
            "survivor-scale-error": "per seed: the largest |A'·(1-p)/A - 1| over the weights that "
                                    "survive dropout (A' after dropout, A before)",
            "eval-zeroed": "per seed: how many attention weights are zero in evaluation mode "
                           "(A has none: softmax is positive)",
        }),
        dropout=0.1,
    ),
    "gradients": Experiment(
        "gradients",
        "one forward and backward pass of a seeded loss (mean squared error to a random target) "
        "through mha(d, h, layout per_head), then one SGD step",
        False,
        _m(d=16, h=4, n=8, b=4),
        _m(**{
            "updated-fraction": "per seed: the fraction of the 4h per-head matrices (each head's W_i^Q, "
                                "W_i^K, W_i^V and its d_v rows of W^O) that got a non-zero gradient "
                                "from the backward pass and were changed by the step",
        }),
    ),
    "independent-heads": Experiment(
        "independent-heads",
        "mha(d, h, layout per_head) with its own initialisation, on one seeded input: each head's "
        "Q_i, K_i, V_i (mha.trace); then the same with every head given head 1's weights",
        False,
        _m(d=16, h=4, n=8),
        _m(**{
            "min-head-difference": "per seed: over every pair of heads, the smallest of max|Q_a - Q_b|, "
                                   "max|K_a - K_b|, max|V_a - V_b|, relative to the largest |Q_i|, "
                                   "|K_i|, |V_i| (0: two heads compute the same vectors)",
            "equal-weights-difference": "per seed: the same difference when every head has the same "
                                        "weights (the largest over pairs instead of the smallest)",
        }),
    ),
    "score-scale": Experiment(
        "score-scale",
        "freshly initialised mha(d, h) for h = 1, 4, 16 (d_k = d/h) on the same seeded unit-variance "
        "inputs: the variance of the scores S_i = Q_i K_iᵀ/√d_k (mha.trace)",
        False,
        _m(d=64, n=16, b=8),
        _m(**{
            "log2-variance-ratio": "per seed: log2 of var(S_i) at the largest d_k over var(S_i) at the "
                                   "smallest d_k (0 when the scaling by 1/√d_k keeps the scores' "
                                   "variance; log2 of the d_k ratio without it)",
        }),
        vary=("h",),
    ),
    "decode-time": Experiment(
        "decode-time",
        "an mha.Transformer (d_model d, h heads, g key/value heads, L layers, d_ff, vocabulary V) built on the "
        "GPU in its dtype; one decode step at position n (n - 1 tokens cached, one new token for each of b "
        "sequences) timed there, against the roofline of the device's matmul peak and copy bandwidth measured "
        "in the same run (mha.device_timing)",
        False,
        _TIMED_SIZES,
        _m(**{
            "ms-per-token": _RUN + "the decode step's median time in ms (each of the b sequences gets one token)",
            "roofline-ms": _RUN + "the decode step's least time " + _ROOFLINE,
            "fraction-of-roofline": _RUN + "the roofline's time over the measured time (1: the roofline "
                                           "attained; nothing runs faster)",
            "memory-bound": _RUN + "1 when bytes / bandwidth is the larger of the two bounds, else 0",
        }),
        optional=("g", "d_ff"),
        timed=True,
    ),
    "prefill-time": Experiment(
        "prefill-time",
        "the same mha.Transformer on the GPU; a causal forward over n tokens for each of b sequences, from empty "
        "KV caches, timed there against the roofline measured in the same run (mha.device_timing)",
        False,
        _TIMED_SIZES,
        _m(**{
            "ms": _RUN + "the prefill's median time in ms",
            "roofline-ms": _RUN + "the prefill's least time " + _ROOFLINE,
            "fraction-of-roofline": _RUN + "the roofline's time over the measured time",
            "compute-bound": _RUN + "1 when FLOPs / peak is the larger of the two bounds, else 0",
        }),
        optional=("g", "d_ff"),
        timed=True,
    ),
})


def experiment(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ValueError(f"unknown experiment {name!r}; experiments are {', '.join(EXPERIMENTS)}") from None


class RequestError(ValueError):
    """What an experiment cannot be asked; ``field`` names the spec field at fault."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _int_in(field: str, name: str, v: object, top: int) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= top:
        raise RequestError(field, f"{name} must be an integer from 1 to {top}, got {v!r}")


def normalise(request: Mapping[str, Any]) -> Request:
    """The request with the experiment's defaults filled in (torch-free, so that a spec is checked
    when it is loaded); RequestError for what is not allowed."""
    name: str | None = request.get("name")
    if name is None or name not in EXPERIMENTS:
        raise RequestError("experiment", f"unknown experiment {name!r}; experiments are {', '.join(EXPERIMENTS)}")
    exp = EXPERIMENTS[name]
    statistic: str | None = request.get("statistic")
    if statistic is None or statistic not in exp.statistics:
        raise RequestError("statistic", f"experiment {exp.name} has no statistic {statistic!r}; its statistics "
                                        f"are {', '.join(exp.statistics)}")
    given = dict(request.get("sizes") or {})
    allowed = list(exp.sizes) + list(exp.optional)
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise RequestError("at", f"experiment {exp.name} takes the sizes {', '.join(allowed)}, not "
                                 f"{', '.join(unknown)}")
    sizes = {**exp.sizes, **given}
    model = dict(request.get("model") or {})
    if model and not exp.timed:
        raise RequestError(sorted(model)[0], f"experiment {exp.name} takes no model settings ({', '.join(sorted(model))}): "
                                             f"only the timed experiments build a transformer")
    if exp.timed:
        return _timed(exp, statistic, sizes, model, request)
    if "n_q" in given or "n_k" in given:
        if "n" in given or not ("n_q" in given and "n_k" in given):
            raise RequestError("at", "cross-attention takes both n_q and n_k, and no n")
        sizes.pop("n", None)
    vary = {k: list(v) for k, v in (request.get("vary") or {}).items()}
    if set(vary) - set(exp.vary):
        raise RequestError("vary", f"experiment {exp.name} varies {', '.join(exp.vary) or 'nothing'}, not "
                                   f"{', '.join(sorted(set(vary) - set(exp.vary)))}")
    if statistic in exp.needs_vary and not vary.get("h"):
        raise RequestError("vary", f"statistic {statistic} compares several h: give vary: {{h: [1, 2, 4]}}")
    if statistic in exp.needs_vary and (1 not in vary["h"] or len(set(vary["h"])) < 2):
        raise RequestError("vary", f"statistic {statistic} compares h = 1 with other h: vary h over 1 and at "
                                   f"least one more, got {vary['h']}")
    if vary and statistic not in exp.needs_vary and exp.name != "score-scale":
        raise RequestError("vary", f"statistic {statistic} is about one h (give it in at), it varies nothing")
    if exp.name == "score-scale":
        vary.setdefault("h", [1, 4, 16])
    for k, v in sizes.items():
        _int_in("at", k, v, LIMITS[k])
    for k, xs in vary.items():
        for x in xs:
            _int_in("vary", k, x, LIMITS[k])
    for h in vary.get("h", [sizes.get("h", 1)]):
        if sizes["d"] % h:
            raise RequestError("vary" if vary else "at", f"h = {h} does not divide d = {sizes['d']}")
    if exp.name == "two-relations":
        if "n" in sizes and (sizes["n"] % 2 or sizes["n"] < 4):
            raise RequestError("at", f"the two-relation task needs an even n of at least 4 (keys come in "
                                     f"pairs), got n = {sizes['n']}")
        if "n_q" in sizes and sizes["n_q"] < 2:
            raise RequestError("at", f"the two-relation task needs n_q of at least 2, got {sizes['n_q']}")
    # seed + 1_000_003 seeds the evaluation batch (tasks.EVAL_SEED): room kept above each seed
    seeds = _seed_list(request.get("seeds"), "the number of seeds", LIMITS["seeds"],
                       LIMITS["seeds"] + 1_000_004)
    steps = request.get("steps")
    if steps is not None and exp.steps is None:
        raise RequestError("steps", f"experiment {exp.name} trains nothing: it takes no steps")
    steps = exp.steps if steps is None else steps
    if steps is not None:
        _int_in("steps", "steps", steps, LIMITS["steps"])
    p = request.get("dropout")
    if p is not None and exp.dropout is None:
        raise RequestError("dropout", f"experiment {exp.name} takes no dropout")
    p = exp.dropout if p is None else p
    if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1):
        raise RequestError("dropout", f"dropout must be a probability between 0 and 1 (both excluded), got {p!r}")
    return {"name": exp.name, "statistic": statistic, "sizes": sizes, "vary": vary, "seeds": seeds,
            "steps": steps, "dropout": None if p is None else float(p)}


def _seed_list(given: Any, what: str, most: int, headroom: int) -> list[int]:
    """The request's seeds ([0] when none are given): at most ``most`` of them, each an integer
    from 0 to 2^63 - ``headroom`` (a run may derive further seeds from it)."""
    seeds = [0] if given is None else list(given)
    _int_in("seeds", what, len(seeds), most)
    for x in seeds:
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 2**63 - headroom:
            raise RequestError("seed", f"a seed must be an integer from 0 to 2^63 - {headroom}, got {x!r}")
    return seeds


def _timed(exp: Experiment, statistic: str, sizes: dict[str, int], model: dict[str, Any],
           request: Mapping[str, Any]) -> Request:
    """A timed experiment's request (normalise's, for decode-time and prefill-time)."""
    for field_name in ("vary", "steps", "dropout"):
        if request.get(field_name):
            raise RequestError(field_name, f"experiment {exp.name} times one model: it takes no {field_name}")
    for k, v in sizes.items():
        _int_in("at", k, v, TIMING_LIMITS[k])
    sizes.setdefault("g", sizes["h"])
    sizes.setdefault("d_ff", 4 * sizes["d"])
    _int_in("at", "d_ff", sizes["d_ff"], TIMING_LIMITS["d_ff"])
    if sizes["d"] % sizes["h"] or sizes["h"] % sizes["g"]:
        raise RequestError("at", f"h = {sizes['h']} must divide d = {sizes['d']}, and g = {sizes['g']} must divide h")
    settings = {"activation": "gelu", "norm": "layernorm", "bias": True, "tied": True, "dtype": "bf16", **model}
    for k, v in settings.items():
        allowed = MODEL_OPTIONS.get(k)
        if allowed is None or v not in allowed or isinstance(v, bool) != isinstance(allowed[0], bool):
            raise RequestError(k, f"{k} must be one of {', '.join(str(a).lower() for a in allowed or ())}, got {v!r}")
    seeds = _seed_list(request.get("seeds") or None, "the number of timing runs", TIMING_LIMITS["seeds"], 1)
    device = request.get("device", "cuda")
    if device not in ("cuda", "cpu"):
        raise RequestError("experiment", f"a timed experiment runs on 'cuda' (or 'cpu', for tests), got {device!r}")
    timed: TimedModel = {"activation": settings["activation"], "norm": settings["norm"], "bias": settings["bias"],
                         "tied": settings["tied"], "dtype": settings["dtype"]}
    return {"name": exp.name, "statistic": statistic, "sizes": sizes, "vary": {}, "seeds": seeds, "steps": None,
            "dropout": None, "model": timed, "device": device}


def rerun_command(req: Request) -> str:
    """The command that reruns this experiment (python -m mha.experiments; for a timed one,
    python -m mha.device_timing, which times the decode step and the prefill both)."""
    if "model" in req:
        s, m = req["sizes"], req["model"]
        return (f"python -m mha.device_timing --d-model {s['d']} --heads {s['h']} --kv-heads {s['g']} "
                f"--layers {s['L']} --n {s['n']} --batch {s['b']} --d-ff {s['d_ff']} --vocab {s['V']} "
                f"--activation {m['activation']} --norm {m['norm']}" + ("" if m["bias"] else " --no-bias")
                + ("" if m["tied"] else " --untied") + f" --dtype {m['dtype']} --device {req.get('device', 'cuda')}")
    parts = ["python -m mha.experiments", req["name"], req["statistic"],
             "--at " + ",".join(f"{k}={v}" for k, v in req["sizes"].items())]
    for k, v in req["vary"].items():
        parts.append(f"--vary {k}=" + ",".join(str(x) for x in v))
    parts.append("--seeds " + ",".join(str(s) for s in req["seeds"]))
    if req["steps"] is not None:
        parts.append(f"--steps {req['steps']}")
    if req["dropout"] is not None:
        parts.append(f"--dropout {req['dropout']:g}")
    return " ".join(parts)
