"""benchmarks/bench_serve.py still runs (tiny and bounded): its figures are for the closing
notes, not asserted; what is asserted is that it loses nothing and meets no error, also in its
"under attack" phase (2 attackers replaying the hostile corpus: none of their requests is
answered 5xx, no honest learner meets an error)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_serve_runs_and_loses_nothing():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_serve.py"), "--seconds", "1", "--warmup",
                        "0.3", "--connections", "3", "--max-requests", "150", "--attackers", "2"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    # the whole class answers every problem of the bundled bank but its code problem(s): as many as it has
    from grader.bank import load_bank
    n = sum(p.kind != "code" for p in load_bank().problems)
    assert "one-answer" in r.stdout and f"whole-class ({n} answers)" in r.stdout, r.stdout
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["errors"] == 0 and summary["lost"] == 0, r.stdout
    assert summary["one_answer_per_s"] > 0 and summary["class_per_s"] > 0
    assert "one-answer under attack" in r.stdout and "honest p99 under attack / quiet p99 = " in r.stdout, r.stdout
    assert summary["attack_errors"] == 0 and summary["attack_5xx"] == 0 and summary["attack_per_s"] > 0, r.stdout
