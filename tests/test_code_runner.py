"""grader.code.runner: each job is a fresh fork of one warm runner; jobs run side by side, a
job past its time is killed, and a runner that dies is replaced."""
import json
import os
import signal
import threading
import time


from grader.code.runner import runner
from sandbox_helpers import host_state

TEST = """
import os, time
def test_env():
    assert os.environ["JOB"] == "{job}"
def test_fail():
    assert {job} == -1
def test_state():
    import sys
    assert not hasattr(sys, "left_by_an_earlier_job")
    sys.left_by_an_earlier_job = True
"""


def job(tmp_path, n, extra=""):
    d = tmp_path / f"job{n}"
    d.mkdir()
    (d / "test_x.py").write_text(TEST.format(job=n) + extra)
    return d


def run(d, n, timeout=120):
    env = {**os.environ, "JOB": str(n), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return runner().run(["-q", "-p", "no:cacheprovider", "-p", "grader.pytest_plugin", "--rootdir", str(d), str(d),
                         "--grader-report", "{report}"], cwd=d, env=env, out=d / "out.txt", report=d / "report.jsonl",
                        timeout=timeout)


def outcomes(d):
    lines = [json.loads(x) for x in (d / "report.jsonl").read_text().splitlines()]
    return {x["nodeid"].split("::")[-1]: x["outcome"] for x in lines[1:]}


def test_a_job_runs_pytest_in_its_folder_with_its_environment_and_reports(tmp_path):
    d = job(tmp_path, 1)
    r = run(d, 1)
    assert (r.exit_code, r.timed_out, r.died) == (1, False, "")
    assert outcomes(d) == {"test_env": "passed", "test_fail": "failed", "test_state": "passed"}
    assert "1 failed, 2 passed" in (d / "out.txt").read_text()


def test_jobs_run_side_by_side_each_in_a_fresh_fork(tmp_path):
    dirs = [job(tmp_path, n) for n in range(4)]
    results = {}
    threads = [threading.Thread(target=lambda n=n: results.update({n: run(dirs[n], n)})) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert sorted(results) == [0, 1, 2, 3] and all(r.exit_code == 1 for r in results.values())
    for d in dirs:   # test_state passes in every job: nothing is left from one job to the next
        assert outcomes(d) == {"test_env": "passed", "test_fail": "failed", "test_state": "passed"}


def test_a_job_past_its_time_is_killed_with_its_group(tmp_path):
    d = job(tmp_path, 5, "\ndef test_slow():\n    import subprocess\n    subprocess.Popen(['sleep', '77.5'])\n"
                         "    time.sleep(60)\n")
    start = time.monotonic()
    r = run(d, 5, timeout=3)
    assert r.timed_out and r.exit_code is None and time.monotonic() - start < 20
    time.sleep(0.5)
    assert host_state("77.5")[1] == set()


def test_a_runner_that_dies_is_replaced(tmp_path):
    first = runner()
    os.kill(first.proc.pid, signal.SIGKILL)
    first.proc.wait(10)
    d = job(tmp_path, 6)
    r = run(d, 6)
    assert r.exit_code == 1 and runner() is not first
