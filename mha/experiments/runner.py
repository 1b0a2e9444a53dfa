"""Run an experiment as a spec asks for it, and return its statistic per seed as plain data.

    run({"name": "two-relations", "statistic": "accuracy-gain", "sizes": {"d": 32, "n": 8},
         "vary": {"h": [1, 2, 4]}, "seeds": [0, 1, 2, 3, 4], "steps": 300})
    -> {"values": [0.73, ...], "details": ["h=1 0.265 ...", ...], "seeds": [...], "setup": "...",
        "control": {...} | None, "pooled": ..., "figures": [...], "rerun": "python -m mha.experiments ...",
        "trained": runs trained now, "cached": runs read from the cache, "seconds": ...}

Training runs are cached on disk (:mod:`mha.experiments.cache`) one by one, so that claims
sharing runs (accuracy at h = 1, 2, 4; specialisation at h = 4; roles at h = 4) train each once.
``attention`` replaces mha.MultiHeadAttention (tests: deliberately broken layers); nothing
computed with it is cached.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import cache, catalog, stats
from .catalog import Request, normalise, rerun_command

if TYPE_CHECKING:
    from .catalog import Attention
    from .tasks import TaskConfig

# A result, a training run's record: plain data (JSON), as the cache keeps it
Result = dict[str, Any]

ROLE_THRESHOLD = 0.5


def run(request: Mapping[str, Any], attention: Attention | None = None) -> Result:
    """The experiment's statistic per seed (see the module doc). The whole result is cached too,
    so that asking again costs one file read; "cached" then counts it, "seconds" is the read's."""
    req = normalise(request)
    start = time.perf_counter()
    if attention is None:
        hit = cache.load({"request": req})
        if hit is not None:
            return {**hit, "trained": 0, "cached": hit.get("trained", 0) + hit.get("cached", 0),
                    "from_cache": True, "seconds": round(time.perf_counter() - start, 3)}
    counts = {"trained": 0, "cached": 0}
    if req["name"] == "two-relations":
        out = _two_relations(req, attention, counts)
    else:
        out = _mechanics(req, attention)
    out.update(seeds=req["seeds"], experiment=req["name"], statistic=req["statistic"],
               pooled_statistic=req["statistic"] in catalog.experiment(req["name"]).pooled,
               rerun=rerun_command(req), seconds=round(time.perf_counter() - start, 3), from_cache=False, **counts)
    if attention is None:
        cache.store({"request": req}, out)
    return out


# -- mechanics -------------------------------------------------------------------------------

def _mechanics(req: Request, attention: Attention | None) -> Result:
    from . import mechanics

    sizes, stat = req["sizes"], req["statistic"]
    values: list[float | str] = []
    details: list[str] = []
    for seed in req["seeds"]:
        if req["name"] == "dropout":
            p = req["dropout"]
            assert p is not None  # normalise gives the dropout experiment its default p
            r = mechanics.dropout(sizes, seed, p, attention)
        elif req["name"] == "gradients":
            r = mechanics.gradients(sizes, seed, attention)
        elif req["name"] == "independent-heads":
            r = mechanics.independent_heads(sizes, seed, attention)
        else:
            r = mechanics.score_scale(sizes, seed, req["vary"]["h"], attention)
        values.append(r[stat])
        details.append(str(r["detail"]))
    size_text = ", ".join(f"{k}={v}" for k, v in sizes.items())
    if req["dropout"] is not None:
        size_text += f", p={req['dropout']:g}"
    if req["vary"]:
        size_text += ", " + ", ".join(f"{k} in {v}" for k, v in req["vary"].items())
    return {"values": values, "details": details, "setup": size_text, "control": None, "figures": []}


# -- the two-relation task -------------------------------------------------------------------

def task_config(req: Request) -> TaskConfig:
    from .tasks import TaskConfig

    s, steps = req["sizes"], req["steps"]
    assert steps is not None  # normalise gives an experiment that trains its default steps
    cross = "n_q" in s
    return TaskConfig(d=s["d"], n_q=s["n_q"] if cross else s["n"], n_k=s["n_k"] if cross else s["n"],
                      cross=cross, steps=steps)


def training_run(cfg: TaskConfig, h: int, seed: int, attention: Attention | None = None,
                 counts: dict[str, int] | None = None) -> Result:
    """One trained model's record, from the cache when it is there (never with ``attention``)."""
    from .tasks import train_run

    what = {"run": "two-relations", "config": cfg.as_dict(), "h": h, "seed": seed}
    if attention is None:
        hit = cache.load(what)
        if hit is not None:
            if counts is not None:
                counts["cached"] += 1
            return hit
    record = train_run(cfg, h, seed, attention)
    if counts is not None:
        counts["trained"] += 1
    if attention is None:
        cache.store(what, record)
    return record


def _heads(xs: Sequence[float], digits: int = 2) -> str:
    return ", ".join(f"{x:.{digits}f}" for x in xs)


def _two_relations(req: Request, attention: Attention | None, counts: dict[str, int]) -> Result:
    cfg = task_config(req)
    stat = req["statistic"]
    hs = req["vary"]["h"] if stat == "accuracy-gain" else [req["sizes"]["h"]]
    runs = {(h, s): training_run(cfg, h, s, attention, counts) for s in req["seeds"] for h in hs}
    values: list[float | None] = []
    details: list[str] = []
    figures: list[dict[str, Any]] = []
    control: dict[str, Any] | None = None
    if stat == "accuracy-gain":
        params = {runs[h, s]["params"] for h in hs for s in req["seeds"]}
        flops = {runs[h, s]["attention_flops"] for h in hs for s in req["seeds"]}
        ok = len(params) == 1 and len(flops) == 1
        control = {"ok": ok, "text": (f"every h: {min(params):,} parameters, attention matmul FLOPs "
                                      f"{min(flops):,} per sequence" if ok else
                                      f"the compared models differ: parameters {sorted(params)}, attention "
                                      f"matmul FLOPs {sorted(flops)}")}
        for s in req["seeds"]:
            acc = {h: runs[h, s]["trained"]["accuracy"] for h in hs}
            values.append(round(stats.accuracy_gain(acc), 4))
            details.append("; ".join(
                f"h={h} {acc[h]:.3f}" + (f" (i-1 {runs[h, s]['trained']['accuracy_prev']:.2f}, match "
                                         f"{runs[h, s]['trained']['accuracy_match']:.2f})" if h == 1 else "")
                for h in hs))
    else:
        (h,) = hs
        tops: list[int | None] = []
        for s in req["seeds"]:
            r = runs[h, s]
            i, t = r["init"], r["trained"]
            if stat == "specialisation":
                before, after = stats.specialisation(i["prev_mass"], i["match_mass"]), \
                    stats.specialisation(t["prev_mass"], t["match_mass"])
                values.append(round(after - before, 4))
                details.append(f"D {before:.2f} -> {after:.2f}; per head mass on i-1 {_heads(t['prev_mass'])}, on "
                               f"the match {_heads(t['match_mass'])}; roles "
                               + ", ".join(stats.roles(t["prev_mass"], t["match_mass"], ROLE_THRESHOLD))
                               + f"; accuracy {t['accuracy']:.3f}")
            elif stat == "shared-roles":
                found = stats.roles(t["prev_mass"], t["match_mass"], ROLE_THRESHOLD)
                values.append(stats.shared_roles(found))
                details.append("roles " + ", ".join(found) + f" (mass on i-1 per head {_heads(t['prev_mass'])}; "
                               f"on the match {_heads(t['match_mass'])})")
            elif stat == "distance-spread":
                before, after = stats.spread(i["distance"]), stats.spread(t["distance"])
                values.append(round(after - before, 4))
                details.append(f"mean attention distance per head {_heads(i['distance'])} -> "
                               f"{_heads(t['distance'])} (spread {before:.2f} -> {after:.2f})")
            else:   # role-heads
                top = stats.positional_head(t["prev_mass"], t["match_mass"], ROLE_THRESHOLD)
                tops.append(top)
                values.append(None if top is None else top + 1)
                details.append(("no head took the positional role" if top is None else f"head {top + 1}")
                               + f" (mass on i-1 per head {_heads(t['prev_mass'])}; on the match "
                               f"{_heads(t['match_mass'])})")
            figures.append({"name": f"two-relations-{'cross-' if cfg.cross else ''}d{cfg.d}-"
                                    + (f"nq{cfg.n_q}-nk{cfg.n_k}" if cfg.cross else f"n{cfg.n_q}")
                                    + f"-h{h}-steps{cfg.steps}-seed{s}",
                            "h": h, "seed": s, "cross": cfg.cross, "maps": r["trained"]["maps"],
                            "example": r["trained"]["example"], "keys": r["example_keys"]})
        if stat == "role-heads":
            clear = [x for x in tops if x is not None]
            k = len(req["seeds"])
            out = {"values": values, "details": details, "figures": figures, "control": None,
                   "pooled": None if len(clear) < 2 else stats.distinct(clear),
                   "pooled_detail": (f"The positional role was taken by head "
                                     + ", ".join(str(x + 1) for x in sorted(set(clear)))
                                     + f" over {len(clear)} seeds with a clear role. Were roles tied to head "
                                     f"indices, one head would take it in every seed; with {h} symmetric heads "
                                     f"the chance that {k} seeds all give the same head is "
                                     f"{h}^(1-{k}) = {h ** (1 - k):.2%}") if len(clear) >= 2 else
                   f"only {len(clear)} seed(s) gave a clear positional head: too few to compare"}
            out["setup"] = f"h={h}, {cfg.describe()}"
            return out
    setup = (f"h in {hs}" if stat == "accuracy-gain" else f"h={hs[0]}") + f", {cfg.describe()}"
    return {"values": values, "details": details, "figures": figures, "control": control, "setup": setup}
