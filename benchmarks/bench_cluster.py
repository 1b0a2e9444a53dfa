"""Benchmark grading on a Dask cluster (``grader grade --scheduler``) against the local pool.

For 1 and 2 Dask workers (a LocalCluster of worker processes on this machine, one thread
each, as ``--scheduler local:N`` starts it) and the local pool at 1 worker (``--jobs 1``):

1. typed answers: a class of ``--learners`` learners (the generator of bench_grade.py: most
   give one of a few forms of the right answer or a known mistake, a tail guesses), graded
   end to end from the loaded submissions (plan, dedupe, check the unique answers, score);
2. code solutions: ``--solutions`` learners' solution files of the 17-08 code exercise (the
   reference and the broken solutions of tests/broken_solutions, in turn), each graded in the
   sandbox.

Printed: seconds, answers/s (every answer of the class; the unique ones are what is checked),
the scaling of 2 workers over 1, and the overhead of the cluster path at 1 worker over the
local pool at 1 worker. The cluster's start-up (workers, their check processes) is timed
apart: it is paid once per run of `grader grade`, not per answer. The results of every run
are compared with the local pool's (they must be identical). A first, untimed run prepares
the bank's answer specs (cached on the bank) and starts the code runner, so that every timed
run finds them alike. Nothing is asserted about time.

    .venv/bin/python benchmarks/bench_cluster.py [--learners 10000] [--solutions 100] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def write_class(bank, folder: Path, learners: int) -> None:
    from bench_grade import class_answers
    subs = class_answers(bank, learners)
    for i in range(0, len(subs), 1000):       # files of 1,000 learners (the answers reader's size limit)
        (folder / f"class-{i // 1000:03d}.json").write_text(json.dumps({"submissions": subs[i:i + 1000]}))


def write_solutions(folder: Path, n: int) -> None:
    # every broken solution too (dropout_in_eval.py's feedback quotes the share of weights its
    # dropout zeroed: the check seeds the call, so it is the same on every run and every path)
    sources = [ROOT / "exercises" / "17-08" / "code" / "solution.py",
               *sorted((ROOT / "tests" / "broken_solutions").glob("*.py"))]
    subs = []
    for i in range(n):
        shutil.copyfile(sources[i % len(sources)], folder / f"learner-{i:04d}.py")
        subs.append({"learner": f"learner-{i:04d}", "answers": {"17-08/code-mha": f"learner-{i:04d}.py"}})
    (folder / "code.json").write_text(json.dumps({"submissions": subs}))


def timed(bank, loaded, executor):
    from grader.reports.grades import render
    from grader.grade.pool import AnswerLimits
    from grader.grade.run import grade_all
    t = time.perf_counter()
    # tune_gc: the cycle collector paused in the bulk phases, as `grader grade` runs both paths
    report = grade_all(bank, loaded.submissions, executor=executor, limits=AnswerLimits(timeout_s=5.0), tune_gc=True)
    return time.perf_counter() - t, report.stats, render(report, "json")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--learners", type=int, default=10_000)
    ap.add_argument("--solutions", type=int, default=100)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]

    from grader.bank import load_bank
    from grader.cluster.executor import DaskExecutor
    from grader.grade.executors import LocalPoolExecutor
    from grader.grade.submissions import load_submissions
    bank = load_bank(None)
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    try:
        (work / "typed").mkdir()
        (work / "code").mkdir()
        write_class(bank, work / "typed", args.learners)
        write_solutions(work / "code", args.solutions)
        batches = {"typed": load_submissions([work / "typed"]), "code": load_submissions([work / "code"])}
        rows: dict[tuple[str, str], tuple[float, dict]] = {}
        same: list[str] = []
        for name, loaded in batches.items():
            if not loaded.submissions:
                continue
            # untimed: the bank's prepared specs (cached on it) and the code runner, for every run alike
            warm = loaded if name == "typed" else type(loaded)(loaded.submissions[:1], (), False)
            timed(bank, warm, LocalPoolExecutor(1))
            t, stats, local_json = timed(bank, loaded, LocalPoolExecutor(1))
            rows[(name, "local pool, 1 worker")] = (t, stats)
            for n in counts:
                t0 = time.perf_counter()
                with DaskExecutor(f"local:{n}", memory_limit="2GiB") as ex:
                    startup = time.perf_counter() - t0
                    t, stats, got = timed(bank, loaded, ex)
                rows[(name, f"cluster, {n} worker{'s' if n > 1 else ''}")] = (t, dict(stats, startup_s=startup))
                same.append(f"{name} {n}: {'identical' if got == local_json else 'DIFFERENT'}")
        print(f"bench_cluster: {args.learners} learners (typed answers), {args.solutions} code solutions; "
              f"workers {counts}; this machine: {__import__('os').cpu_count()} CPUs")
        summary: dict[str, float] = {}
        for name in batches:
            if not batches[name].submissions:
                continue
            print(f"\n{name}:")
            for (kind, label), (t, stats) in rows.items():
                if kind != name:
                    continue
                extra = f"  (cluster start-up {stats['startup_s']:.1f} s, not counted)" if "startup_s" in stats else ""
                print(f"  {label:<22} {t:8.2f} s  {stats['answers'] / t:9.1f} answers/s  "
                      f"({stats['answers']} answers, {stats['unique']} unique; check {stats['check_s']:.2f} s){extra}")
            local = rows[(name, "local pool, 1 worker")][0]
            one = rows.get((name, "cluster, 1 worker"))
            two = rows.get((name, "cluster, 2 workers"))
            if one:
                summary[f"{name}_overhead_1_worker"] = round(one[0] / local, 3)
                print(f"  overhead of the cluster path at 1 worker: {one[0] / local:.2f}x the local pool's time")
            if one and two:
                summary[f"{name}_scaling_2_workers"] = round(one[0] / two[0], 3)
                print(f"  scaling, 2 workers over 1: {one[0] / two[0]:.2f}x")
            t1, stats1 = one or rows[(name, "local pool, 1 worker")]
            unique = max(1, stats1["unique"])     # the projections of docs/cluster.md start from these
            summary[f"{name}_run_s_per_unique_answer_1_worker"] = round(t1 / unique, 6)
            summary[f"{name}_check_s_per_unique_answer_1_worker"] = round(stats1["check_s"] / unique, 6)
        print("\nresults against the local pool: " + "; ".join(same))
        print(json.dumps(summary))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
