"""The ``demonstrate`` check kind: a named, seeded experiment on mha whose statistic the claim
predicts (mha.experiments). A demonstration is evidence a reader can rerun, not a proof.

    - {kind: demonstrate, experiment: two-relations, statistic: accuracy-gain, at: {d: 32, n: 8},
       vary: {h: [1, 2, 4]}, seeds: 5, steps: 300, effect: "> 0.2", budget: 300}

Verdicts (of the check, and so of a claim whose other checks hold or are unverifiable):

- **demonstrated**: the predicted effect appears in every seed, or the seeds' mean is beyond the
  prediction by more than twice its standard error (sd/√k over k seeds);
- **not demonstrated**: the effect appears in no seed, or the mean is on the other side by more
  than twice its standard error. This refutes nothing unless the check says ``always: true`` (the
  claim says the effect always happens): then the check is **refuted**;
- **inconclusive**: anything between (some seeds show it, within the spread), a pooled statistic
  that could not be computed, or a comparison whose control failed (the models compared differ
  in parameters or FLOPs);
- **skipped**: the experiment trains and the run was asked not to (``check-spec --no-train``); or
  it is timed (decode-time, prefill-time) and the run is not on a GPU (below).

The **timed** experiments time mha's transformer on a GPU against the roofline of the device's
matmul peak and copy bandwidth measured in the same run (mha.experiments.timing): only with
``check-spec --device cuda`` (locally, or on a GPU worker of a cluster). Otherwise, and where the
GPU cannot hold the model, they are skipped with the reason: a CPU's timing is not the device a
claim about GPU inference is about. Their timings are never cached; ``dtype``, ``activation``,
``norm``, ``bias`` and ``tied`` set the model they build (bf16, gelu, layernorm, biases, tied).

The experiment runs in the measuring process (torch), through ``grader.claims.measure.make`` —
one request ``{"experiment": {...}}`` per check; results of training runs are cached on disk
(mha.experiments.cache), timings are not. This module imports no torch.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from grader.values import json_number
from mha.experiments.catalog import EXPERIMENTS, MODEL_OPTIONS, RequestError, normalise

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import CheckResult

NAME = "demonstrate"
MEASURES = True
HELP = ("a seeded experiment on mha (training a small model where it must) whose statistic the claim "
        "predicts: demonstrated / not demonstrated / inconclusive, with the statistic per seed")
FIELDS = {
    "experiment": ("choice:" + "|".join(EXPERIMENTS), True),
    "statistic": ("text", True),
    "effect": ("text", True),
    "at": ("values", False),
    "vary": ("values_list", False),
    "seed": ("seed", False),
    "seeds": ("int", False),
    "steps": ("int", False),
    "dropout": ("number", False),
    "always": ("bool", False),
    "budget": ("number", False),
    **{k: ("choice:" + "|".join(map(str, MODEL_OPTIONS[k])), False) for k in ("dtype", "activation", "norm")},
    "bias": ("bool", False),
    "tied": ("bool", False),
}
MODEL_SETTINGS = ("dtype", "activation", "norm", "bias", "tied")
NEEDS_GPU = ("timed only on a GPU, asked for with check-spec --device cuda (locally or with a GPU worker); a "
             "timing on a CPU is not the device the claim is about")
DEFAULT_SEEDS = 5
MAX_BUDGET = 600.0
_EFFECT = re.compile(r"\s*(>=|<=|>|<|=)\s*([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*")
_OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, "=": lambda a, b: a == b}


def parse_effect(text: str) -> tuple[str, float]:
    """"> 0.2" -> (">", 0.2); ValueError when it is not an operator and a finite number."""
    m = _EFFECT.fullmatch(str(text))
    if not m or not math.isfinite(float(m.group(2))):
        raise ValueError(f"effect must be a comparison with a number, like \"> 0.2\", \">= 1\", \"< 4\" or "
                         f"\"= 0\", got {text!r}")
    return m.group(1), float(m.group(2))


def experiment_request(check: Any) -> dict[str, Any]:
    """The request for mha.experiments (before the experiment's defaults are filled in)."""
    first, count = int(check.get("seed", 0)), int(check.get("seeds", DEFAULT_SEEDS))
    out = {"name": check["experiment"], "statistic": check["statistic"],
           "sizes": {k: int(v) for k, v in dict(check.get("at") or {}).items()},
           "vary": {k: [int(x) for x in v] for k, v in dict(check.get("vary") or {}).items()},
           "seeds": list(range(first, first + count)), "steps": check.get("steps"),
           "dropout": check.get("dropout")}
    model = {k: check.get(k) for k in MODEL_SETTINGS if check.get(k) is not None}
    if model:
        out["model"] = model
    if _timed(check):
        out["device"] = "cuda"
    return out


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """What the loader cannot see by the fields' types alone, reported at the field it is about."""
    found = problems(params)
    for name, message in found:
        site.error(message, site.mapping.loc_of(name) if name in site.mapping else site.mapping.loc)
    return not found


def problems(params: Any) -> list[tuple[str, str]]:
    """[(field, message)]: what is wrong with a demonstration's fields, beyond their types."""
    problems = []
    try:
        parse_effect(params.get("effect", ""))
    except ValueError as e:
        problems.append(("effect", str(e)))
    seeds = params.get("seeds", DEFAULT_SEEDS)
    budget = params.get("budget")
    if budget is not None and not (math.isfinite(budget) and 0 < budget <= MAX_BUDGET):
        problems.append(("budget", f"budget must be a number of seconds above 0 and at most {MAX_BUDGET:g}, "
                                   f"got {budget!r}"))
    if not isinstance(seeds, int) or seeds < 1:
        problems.append(("seeds", f"seeds must be how many seeds to run, 1 or more, got {seeds!r}"))
        return problems
    try:
        normalise(experiment_request(params))
    except RequestError as e:
        problems.append((e.field if e.field in FIELDS else "experiment", str(e)))
    return problems


def budget(check: Any) -> float | None:
    """Seconds this check may take in the measuring process (None: the claim's limit)."""
    b = check.get("budget")
    return None if b is None else float(b)


def _trains(check: Any) -> bool:
    return bool(EXPERIMENTS[check["experiment"]].trains)


def _timed(check: Any) -> bool:
    exp = EXPERIMENTS.get(check.get("experiment", ""))
    return exp is not None and exp.timed


def requests(ctx: Any, check: Any) -> list[dict[str, Any]]:
    if _trains(check) and not getattr(ctx, "train", True):
        return []
    if _timed(check) and getattr(ctx, "device", "cpu") != "cuda":
        return []       # skipped (run): timed only on a GPU asked for
    return [{"experiment": normalise(experiment_request(check))}]


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and abs(v) < 1e15:     # 2.0 -> 2; nan, inf and whole floats from 1e15 stay floats
        v = json_number(v)
    if isinstance(v, int):
        return f"{int(v):,}"
    return f"{v:.3g}" if abs(v) < 1e-3 else f"{v:.3f}"


def _at(check: Any) -> str:
    return ", ".join(f"{k}={int(v)}" for k, v in dict(check.get("at") or {}).items()) or "its default sizes"


def _seeds(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def decide(values: list[Any], op: str, threshold: float) -> tuple[str, str]:
    """(verdict, why) for per-seed statistics against the predicted effect (see the module doc)."""
    k = len(values)
    known = [v for v in values if v is not None]
    hits = [v for v in known if _OPS[op](v, threshold)]
    if k and len(hits) == k:
        return "demonstrated", "in every seed"
    if len(known) == k and k >= 2 and op != "=":
        mean = sum(known) / k
        sd = math.sqrt(sum((v - mean) ** 2 for v in known) / (k - 1))
        se = sd / math.sqrt(k)
        towards = 1 if op in (">", ">=") else -1
        margin = (mean - threshold) * towards
        if margin > 2 * se:
            return "demonstrated", (f"in {len(hits)} of {k} seeds; the mean is beyond the prediction by "
                                    f"{abs(mean - threshold):.3g}, more than twice its standard error {se:.3g}")
        if -margin > 2 * se and hits:
            return "not demonstrated", (f"in {len(hits)} of {k} seeds only; the mean is on the other side by "
                                        f"{abs(mean - threshold):.3g}, more than twice its standard error {se:.3g}")
    if not hits and len(known) == k:
        return "not demonstrated", "in no seed"
    return "inconclusive", (f"in {len(hits)} of {k} seeds, within the seeds' spread" if len(known) == k else
                            f"the statistic could not be computed in {k - len(known)} of {k} seeds")


def run(ctx: Any, check: Any) -> CheckResult:
    from .common import result   # (not at import: the registry imports this module)

    exp = EXPERIMENTS[check["experiment"]]
    op, threshold = parse_effect(check["effect"])
    stat = check["statistic"]
    predicted = f"predicted {stat} {op} {_fmt(threshold)}"
    if exp.trains and not getattr(ctx, "train", True):
        return result(NAME, "skipped", f"skipped (--no-train): experiment {exp.name} trains models; run without "
                                       f"--no-train for its verdict ({predicted})", "demonstrated",
                      experiment=exp.name, statistic=stat)
    if exp.timed and getattr(ctx, "device", "cpu") != "cuda":
        return result(NAME, "skipped", f"skipped: {NEEDS_GPU} (device {getattr(ctx, 'device', 'cpu')}); "
                                       f"experiment {exp.name} at {_at(check)}, {predicted}", "demonstrated",
                      experiment=exp.name, statistic=stat)
    (req,) = requests(ctx, check)
    got = ctx.measured(req)
    if got.get("skipped"):
        return result(NAME, "skipped", f"skipped: {got['skipped']}; experiment {exp.name} ({got['setup']}), "
                                       f"{predicted}", "demonstrated", experiment=exp.name, statistic=stat)
    seeds, values = got["seeds"], got["values"]
    control = got.get("control")
    listed = ", ".join(_fmt(v) for v in values)
    notes = []
    if got.get("pooled_statistic"):
        pooled = got.get("pooled")
        if pooled is None:
            verdict, why = "inconclusive", "the statistic could not be computed"
        else:
            verdict = "demonstrated" if _OPS[op](pooled, threshold) else "not demonstrated"
            why = "over the seeds"
        shown = f"{stat} = {_fmt(pooled)} over seeds {_seeds(seeds)} (per seed: {listed})"
        notes.append(got.get("pooled_detail", ""))
    else:
        verdict, why = decide(values, op, threshold)
        known = [v for v in values if v is not None]
        spread = ""
        if known:
            mean = sum(known) / len(known)
            sd = math.sqrt(sum((v - mean) ** 2 for v in known) / (len(known) - 1)) if len(known) > 1 else 0.0
            spread = f"; mean {_fmt(mean)}, sd {_fmt(sd)}"
        shown = f"{stat} per seed ({_seeds(seeds)}): {listed}{spread}"
    if control is not None and not control.get("ok", True) and verdict != "inconclusive":
        verdict, why = "inconclusive", f"the comparison is not fair — {control['text']}"
    if verdict == "not demonstrated" and check.get("always"):
        verdict, why = "refuted", f"not demonstrated ({why}), and the claim says it always happens"
    parts = [f"{verdict} ({why}): {shown}; {predicted}"] + [n for n in notes if n]
    parts.append(f"Experiment {exp.name} ({got['setup']}), seeds {_seeds(seeds)}")
    if control is not None:
        parts.append(f"Control: {control['text']}")
    parts.append(f"Timed on {got.get('device')}, never cached; rerun (decode and prefill, MHA and this g): "
                 f"{got['rerun']}" if exp.timed else f"A seeded demonstration that can be rerun, not a proof: {got['rerun']}")
    parts.append("Per seed: " + "; ".join(f"seed {s}: {d}" for s, d in zip(seeds, got["details"])))
    return result(NAME, verdict, ". ".join(parts), "demonstrated",
                  experiment=exp.name, statistic=stat, definition=exp.statistics[stat],
                  effect=f"{op} {_fmt(threshold)}", seeds=seeds, values=values, details=got["details"],
                  pooled=got.get("pooled"), control=control, setup=got["setup"], rerun=got["rerun"],
                  trained=got.get("trained", 0), cached=got.get("cached", 0), seconds=got.get("seconds", 0.0),
                  figures=got.get("figures", []))
