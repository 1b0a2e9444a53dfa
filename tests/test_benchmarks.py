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


def test_bench_cluster_runs_and_every_path_gives_the_local_pool_s_results():
    # a class of typed answers and three code solutions (the reference, then dropout_in_eval,
    # whose feedback quotes a share of zeros drawn at random: seeded, it is the same on each path)
    pytest = __import__("pytest")
    pytest.importorskip("distributed")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cluster.py"), "--learners", "40",
                        "--solutions", "3", "--workers", "1,2"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert ("results against the local pool: typed 1: identical; typed 2: identical; code 1: identical; "
            "code 2: identical") in r.stdout, r.stdout
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    for kind in ("typed", "code"):
        assert {f"{kind}_overhead_1_worker", f"{kind}_scaling_2_workers", f"{kind}_run_s_per_unique_answer_1_worker",
                f"{kind}_check_s_per_unique_answer_1_worker"} <= set(summary)
