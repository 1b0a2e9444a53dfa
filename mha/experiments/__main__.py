"""Rerun one experiment and print its statistic per seed (the command a check's evidence shows).

    python -m mha.experiments two-relations accuracy-gain --at d=32,n=8 --vary h=1,2,4 --seeds 0,1,2,3,4 --steps 300
    python -m mha.experiments dropout zeroed-z --at d=16,h=2,n=32,b=16 --seeds 0,1,2 --dropout 0.1
    python -m mha.experiments --list

Results of training runs come from the cache when they are there (--no-cache: train again).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


def _pairs(text: str | None, what: str) -> dict[str, int]:
    out = {}
    for part in filter(None, (text or "").split(",")):
        k, sep, v = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{what}: expected name=value, got {part!r}")
        try:
            out[k.strip()] = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: {k} must be an integer, got {v!r}") from None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from .catalog import EXPERIMENTS
    from .numerics import pin

    pin()   # the kernels of grader's measuring process (before torch is imported): the same numbers

    ap = argparse.ArgumentParser(prog="python -m mha.experiments", description=__doc__.split("\n\n")[0])
    ap.add_argument("name", nargs="?", help="experiment: " + ", ".join(EXPERIMENTS))
    ap.add_argument("statistic", nargs="?")
    ap.add_argument("--at", default="", help="sizes, e.g. d=32,n=8")
    ap.add_argument("--vary", default="", help="h=1,2,4")
    ap.add_argument("--seeds", default="0", help="e.g. 0,1,2,3,4")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--dropout", type=float, default=None)
    ap.add_argument("--no-cache", action="store_true", help="train again instead of reading the cache")
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ap.add_argument("--list", action="store_true", help="list the experiments and their statistics")
    args = ap.parse_args(argv)
    if args.list or not args.name:
        for e in EXPERIMENTS.values():
            print(f"{e.name}: {e.summary}\n  sizes {dict(e.sizes)}" + (f", steps {e.steps}" if e.steps else ""))
            for s, what in e.statistics.items():
                print(f"  - {s}: {what}")
        return 0
    if args.no_cache:
        os.environ["GRADER_CACHE_DIR"] = "off"
    try:
        vary = {}
        if args.vary:
            k, _, v = args.vary.partition("=")
            vary = {k.strip(): [int(x) for x in v.split(",") if x.strip()]}
        request = {"name": args.name, "statistic": args.statistic, "sizes": _pairs(args.at, "--at"), "vary": vary,
                   "seeds": [int(s) for s in args.seeds.split(",") if s.strip()], "steps": args.steps,
                   "dropout": args.dropout}
    except (ValueError, argparse.ArgumentTypeError) as e:
        ap.error(str(e))
    from . import run
    try:
        result = run(request)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['experiment']} / {result['statistic']}: {result['setup']}")
    if result.get("skipped"):
        print(f"  skipped: {result['skipped']}")
        return 0
    for seed, value, detail in zip(result["seeds"], result["values"], result["details"]):
        print(f"  seed {seed}: {value}  ({detail})")
    if result.get("pooled_statistic"):
        print(f"  over the seeds: {result.get('pooled')}  ({result.get('pooled_detail', '')})")
    if result.get("control"):
        print(f"  control: {result['control']['text']}")
    print(f"  {result['trained']} run(s) trained, {result['cached']} from the cache, {result['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
