"""The benchmarks still run (small sizes): their figures are for the closing notes, not asserted
here (these machines are noisy); what is asserted is that our verdicts are the naive grader's."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_grade_runs_and_agrees_with_the_naive_grader():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_grade.py"), "--learners", "20",
                        "--unique", "12", "--repeat", "1"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "same verdicts: 12/12 (jobs 2), 12/12 (jobs 1); undecided: 0" in r.stdout, r.stdout
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(summary) == {"class_answers_per_s", "unique_ratio", "unique_ratio_grading_alone"}
    from grader.bank import load_bank
    answered = sum(p.kind != "code" for p in load_bank().problems)     # every problem but the code ones
    assert f"20 learners x {len(load_bank())} problems = {20 * answered} answers" in r.stdout, r.stdout
