"""benchmarks/bench_serve.py still runs (tiny and bounded): its figures are for the closing
notes, not asserted; what is asserted is that it loses nothing and meets no error."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_serve_runs_and_loses_nothing():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_serve.py"), "--seconds", "1", "--warmup",
                        "0.3", "--connections", "3", "--max-requests", "150"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    # the whole class answers every problem of the bundled bank but its code problem(s): as many as it has
    from grader.bank import load_bank
    n = sum(p.kind != "code" for p in load_bank().problems)
    assert "one-answer" in r.stdout and f"whole-class ({n} answers)" in r.stdout, r.stdout
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["errors"] == 0 and summary["lost"] == 0, r.stdout
    assert summary["one_answer_per_s"] > 0 and summary["class_per_s"] > 0
