"""Benchmark code grading: seconds per solution, the old in-process path against the new one,
on the 17-08 exercise, and solutions per minute for a batch.

- old: the code as it was before the verdict left the learner's process (commit 645204d),
  exported with ``git archive`` into a temporary folder and run from there: one sandboxed
  pytest per solution that imports the learner's file next to the tests.
- new: this checkout: the tests run in a fork of the warm trusted runner, the learner's
  functions in a sandboxed server. The first solution of a process also starts the runner
  (printed apart); the steady figure is what each further solution costs.

Each figure is the median of ``--repeat`` gradings of the reference solution, the old and the
new interleaved (this machine's speed wanders). Then a batch of ``--batch`` learners (the
reference and the broken solutions of tests/broken_solutions, in turn) goes through
``grader grade`` end to end, old and new, and solutions/minute are printed. Nothing is
asserted about time.

    .venv/bin/python benchmarks/bench_code.py [--repeat 5] [--batch 20] [--backend bubblewrap]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD = "645204d"
CODE = ROOT / "exercises" / "17-08" / "code"
BROKEN = sorted((ROOT / "tests" / "broken_solutions").glob("*.py"))

# one grading per line on stdin ("path"), seconds and score per line on stdout; run with the
# old code first on sys.path (its sandbox given PYTHONPATH, as its own checkout's install did)
GRADE_LOOP = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["BENCH_CODE_ROOT"])
import grader.sandbox as sb
if os.environ.get("BENCH_OLD"):
    run = sb.run
    sb.run = lambda *a, **k: run(*a, **{**k, "env": {"PYTHONPATH": os.environ["BENCH_CODE_ROOT"]}})
from grader.bank import Problem
try:
    from grader.code.grade import grade_code          # this tree's layout
except ImportError:
    from grader.code import grade_code                # the old commit's (grader/code.py)
code = os.path.join(os.environ["BENCH_CODE_ROOT"], "exercises", "17-08", "code")
p = Problem(id="17-08/code-mha", kind="code", points=10, prompt="mha", reference=None, subject="17-08",
            tests=code, solution=os.path.join(code, "solution.py"))
import grader
print("ready", os.path.dirname(grader.__file__), flush=True)
for line in sys.stdin:
    t = time.perf_counter()
    r = grade_code(p, line.strip())
    print(json.dumps([time.perf_counter() - t, r.score, r.sandbox[:40]]), flush=True)
"""

CLI = r"""
import os, sys
sys.path.insert(0, os.environ["BENCH_CODE_ROOT"])
import grader.sandbox as sb
if os.environ.get("BENCH_OLD"):
    run = sb.run
    sb.run = lambda *a, **k: run(*a, **{**k, "env": {"PYTHONPATH": os.environ["BENCH_CODE_ROOT"]}})
from grader.cli import main
sys.argv = ["grader", *sys.argv[1:]]
main()
"""


def export_old(where: Path) -> Path | None:
    """The old code (grader, mha, exercises) of commit OLD, or None where git cannot give it."""
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", OLD, "grader", "mha", "exercises"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"old path: not measured (git archive {OLD} failed: {e})")
        return None
    return where


class Grader:
    """A process that grades one solution per request: the old code or the new."""

    def __init__(self, root: Path, old: bool, env: dict):
        env = {**env, "BENCH_CODE_ROOT": str(root), **({"BENCH_OLD": "1"} if old else {})}
        self.proc = subprocess.Popen([sys.executable, "-c", GRADE_LOOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=root)
        ready, where = self.proc.stdout.readline().split()
        assert ready == "ready" and Path(where).parent == root, f"grader from {where}, not {root}"
        self.where = where

    def grade(self, path: Path) -> tuple[float, float]:
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        seconds, score, _ = json.loads(self.proc.stdout.readline())
        return seconds, score

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def batch(root: Path, old: bool, n: int, env: dict, work: Path) -> tuple[float, float]:
    """(seconds, total score) for `grader grade` on n learners."""
    folder = work / ("old" if old else "new")
    folder.mkdir()
    solutions = [CODE / "solution.py", *BROKEN]
    for i in range(n):
        src = solutions[i % len(solutions)]
        shutil.copyfile(src, folder / f"learner{i:02d}.py")
        (folder / f"learner{i:02d}.yaml").write_text(f"learner: l{i:02d}\nanswers:\n  17-08/code-mha: learner{i:02d}.py\n")
    env = {**env, "BENCH_CODE_ROOT": str(root), **({"BENCH_OLD": "1"} if old else {})}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CLI, "grade", str(folder), "--format", "json"], capture_output=True,
                       text=True, env=env, cwd=root)
    seconds = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"grader grade failed: {r.stderr[-2000:]}")
    subs = json.loads(r.stdout)["submissions"]
    return seconds, sum(s["score"] for s in subs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--backend", default=None, help="GRADER_SANDBOX for the new path (default: the best here)")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    if args.backend:
        env["GRADER_SANDBOX"] = args.backend
    reference = CODE / "solution.py"
    with tempfile.TemporaryDirectory(prefix="bench-code-") as tmp:
        tmp = Path(tmp)
        (tmp / "old-code").mkdir()
        old_root = export_old(tmp / "old-code")
        new = Grader(ROOT, False, env)
        first, score = new.grade(reference)
        print(f"new path, first solution of a process (starts the trusted runner): {first:.2f} s (score {score})")
        old = Grader(old_root, True, env) if old_root else None
        if old:
            print(f"old path: commit {OLD}'s grader, run from {old.where}")
        olds, news = [], []
        for i in range(args.repeat):
            if old:
                s, score_old = old.grade(reference)
                olds.append(s)
            s, score_new = new.grade(reference)
            news.append(s)
            print(f"  run {i + 1}: old {olds[-1] if old else float('nan'):.2f} s, new {s:.2f} s")
        new.close()
        if old:
            old.close()
        med_new = statistics.median(news)
        print(f"new path: {med_new:.2f} s per solution (median of {args.repeat}; score {score_new})")
        summary = {"new_s_per_solution": round(med_new, 3), "new_first_s": round(first, 3)}
        if olds:
            med_old = statistics.median(olds)
            print(f"old path: {med_old:.2f} s per solution (median of {args.repeat}; score {score_old})")
            print(f"new / old: {med_new / med_old:.2f} (target: at most 1.5); first solution / old: "
                  f"{first / med_old:.2f}")
            summary.update(old_s_per_solution=round(med_old, 3), ratio=round(med_new / med_old, 3))
        for label, root, is_old in (("new", ROOT, False), ("old", old_root, True)):
            if root is None:
                continue
            seconds, total = batch(root, is_old, args.batch, env, tmp)
            rate = args.batch / seconds * 60
            print(f"{label} path, grader grade on a batch of {args.batch}: {seconds:.1f} s, "
                  f"{rate:.1f} solutions/minute (total score {total:g})")
            summary[f"{label}_batch_per_minute"] = round(rate, 2)
            summary[f"{label}_batch_score"] = total
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
