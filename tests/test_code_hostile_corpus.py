"""The hostile corpus (tests/hostile_solutions/, one attack per file) graded by `grader grade`.

One batch per namespace backend that runs here: every attack's learner, two learners who
hand in the reference (the first and the last graded), and answers whose file is a directory,
a FIFO, not UTF-8 or too large. The real CLI runs in a subprocess, as an operator runs it.
The test fails if an attack scores a point, a control learner loses one, an answer goes
unreported, or anything is left on the host (files in /tmp, /var/tmp, /dev/shm; processes).

Limits are tightened through ``GRADER_CODE_LIMITS`` (2 s per call, 12 s per learner) so that
the slow attacks cost seconds, not minutes; what is tested is that the limits hold.
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox_helpers import SHARED, STRONG, host_state, needs_strong

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "hostile_solutions"
REFERENCE = ROOT / "exercises" / "17-08" / "code" / "solution.py"
ATTACKS = sorted(p.stem for p in CORPUS.glob("*.py"))
CONTROLS = ("aaa_control", "zzz_control")
UNREADABLE = {"bad_directory": "is a directory", "bad_fifo": "is a FIFO", "bad_encoding": "not UTF-8 text",
              "bad_size": "larger than 1024 KiB"}
LIMITS = {"wall_s": 12, "cpu_s": 12, "call_s": 2}


def answers_file(folder: Path, learner: str, solution: str, extra: str = "") -> None:
    (folder / f"{learner}.yaml").write_text(f"learner: {learner}\nanswers:\n  17-08/code-mha: {solution}\n{extra}")


def make_batch(folder: Path, attacks=ATTACKS) -> None:
    folder.mkdir()
    for name in attacks:
        shutil.copyfile(CORPUS / f"{name}.py", folder / f"{name}.py")
        answers_file(folder, name, f"{name}.py")
    for name in CONTROLS:   # the reference, and an answer of another kind graded beside it
        shutil.copyfile(REFERENCE, folder / f"{name}.py")
        answers_file(folder, name, f"{name}.py", "  17-08/example-1.d_k: 64\n")
    (folder / "bad_directory.py").mkdir()
    os.mkfifo(folder / "bad_fifo.py")
    (folder / "bad_encoding.py").write_bytes(b"def f():\n    return '\xff\xfe'\n")
    (folder / "bad_size.py").write_bytes(b"#" * (1024 * 1024 + 1))
    for name in UNREADABLE:
        answers_file(folder, name, f"{name}.py")


def grade(folder: Path, backend: str, *extra: str, timeout: float = 1500) -> subprocess.CompletedProcess:
    tmp = folder.parent / f"tmp-{backend}"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "GRADER_SANDBOX": backend, "GRADER_CODE_LIMITS": json.dumps(LIMITS), "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "--format", "json", *extra],
                          env=env, capture_output=True, text=True, timeout=timeout, cwd=folder.parent)


@pytest.fixture(scope="module", params=STRONG or [pytest.param("none", marks=needs_strong)])
def graded(request, tmp_path_factory):
    backend = request.param
    folder = tmp_path_factory.mktemp(f"corpus-{backend}") / "class"
    make_batch(folder)
    ours = str(folder.parent / f"tmp-{backend}")     # the batch's TMPDIR: in its sandboxes' command lines
    files_before, procs_before = host_state(ours=ours)
    start = time.monotonic()
    run = grade(folder, backend)
    took = time.monotonic() - start
    time.sleep(0.5)   # a leftover would still be there; a process being reaped is gone
    report = json.loads(run.stdout) if run.stdout.strip() else None
    results = {s["learner"]: s for s in (report or {}).get("submissions", [])}
    return {"run": run, "results": results, "backend": backend, "took": took, "folder": folder,
            "files": host_state(ours=ours)[0] - files_before, "procs": host_state(ours=ours)[1] - procs_before}


def code_result(submission) -> dict:
    (r,) = [r for r in submission["results"] if r["id"] == "17-08/code-mha"]
    return r


def test_the_batch_ran_and_every_learner_is_reported(graded):
    run = graded["run"]
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(graded["results"]) == sorted([*ATTACKS, *CONTROLS, *UNREADABLE])
    assert len(ATTACKS) >= 30
    print(f"\n{graded['backend']}: {len(graded['results'])} learners graded in {graded['took']:.0f} s")


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_attack_scores_a_point(graded, attack):
    r = code_result(graded["results"][attack])
    assert r["score"] == 0 and r["correct"] is not True, f"{attack} scored {r['score']}: {r['feedback'][:500]}"
    assert r["status"] in ("wrong", "invalid"), r
    assert "Traceback" not in r["feedback"]
    assert "[sandbox: " in r["feedback"] or r["status"] == "invalid"


def test_the_control_learners_lose_nothing(graded):
    for name in CONTROLS:
        results = {r["id"]: r for r in graded["results"][name]["results"]}
        code = results["17-08/code-mha"]
        assert (code["score"], code["max_score"], code["correct"]) == (10, 10, True), code["feedback"][:800]
        assert code["feedback"].startswith("all 60 tests passed")
        assert results["17-08/example-1.d_k"]["correct"] is True


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_an_unreadable_solution_is_that_answer_s_zero_with_a_message(graded, name):
    r = code_result(graded["results"][name])
    assert r["score"] == 0 and r["status"] == "invalid"
    assert UNREADABLE[name] in r["feedback"], r["feedback"]


def whose(pid: str) -> str:
    """The hostile file a leftover sandboxed process was serving (read through its root)."""
    try:
        return Path(f"/proc/{pid}/root/grade/solution.py").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def test_nothing_is_left_on_the_host(graded):
    assert graded["files"] == set(), "files left in the shared folders"
    assert graded["procs"] == set(), [(p, whose(p)) for p, _, _ in graded["procs"]]
    assert not any("grader-hostile" in e for d in SHARED for e in os.listdir(d))
    tmp = graded["folder"].parent / f"tmp-{graded['backend']}"
    for _ in range(50):   # the trusted runner removes its folder as it ends, just after the grader
        if not list(tmp.iterdir()):
            break
        time.sleep(0.1)
    assert list(tmp.iterdir()) == [], "the grader's own temporary folders were not removed"


def test_the_attacks_fail_for_the_reasons_they_should(graded):
    """Spot checks that each kind of attack met the defence meant for it (not some accident)."""
    says = {name: code_result(graded["results"][name])["feedback"] for name in ATTACKS}
    expect = {
        "patch_the_checks": "not plain data|should be|returned a int",
        "import_mha": "No module named 'mha'",
        "import_grader": "No module named 'grader'",
        "patch_pytest_report": "No module named '_pytest'",
        "rigged_eq": "returned a Anything, expected a torch.Tensor",
        "torch_function_subclass": "returned a Liar, expected a torch.Tensor",
        "rigged_ints": "returned a YesFloat, expected a torch.Tensor",
        "fork_bomb": "process limit of",
        "slow_calls": "did not return within the time limit of 2 s per call",
        "busy_import": "time limit of 12 s exceeded",
        "oversized_reply": "sent back something that is not a reply",
        "huge_return": "cannot be sent back: more than 16 MiB",
        "deeply_nested_return": "cannot be sent back",
        "kill_the_parent": "not written yet|ended during",
        "memory_hog": "memory limit of 3 GiB exceeded",
        "read_the_reference": "not written yet",
        "read_the_hidden_tests": "found tests: ",
    }
    import re
    for name, pattern in expect.items():
        assert re.search(pattern, says[name]), f"{name}: {says[name][:600]}"
    # what it found is torch's own test files, nothing of the exercise
    found = re.findall(r"found tests: ([^(\n]*)", says["read_the_hidden_tests"])
    assert found and not any(re.search(r"test_17_08|mha_checks|/grade/tests", f) for f in found)


@needs_strong
def test_the_weak_sandbox_refuses_code_unless_allowed_and_then_says_what_it_does_not_prevent(tmp_path):
    folder = tmp_path / "class"
    make_batch(folder, attacks=[])
    run = grade(folder, "rlimits", timeout=600)
    assert run.returncode == 0, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: cannot grade code answers")]
    assert len(errors) == 1 and "install bubblewrap" in errors[0] and "--allow-weak-sandbox" in errors[0]
    results = {s["learner"]: s for s in json.loads(run.stdout)["submissions"]}
    for name in CONTROLS:
        code = code_result(results[name])
        assert code["score"] == 0 and code["status"] == "error" and code["correct"] is None
        assert code["feedback"].startswith("cannot grade code answers: no safe sandbox here")
        assert {r["id"]: r for r in results[name]["results"]}["17-08/example-1.d_k"]["correct"] is True
    allowed = grade(folder, "rlimits", "--allow-weak-sandbox", timeout=600)
    assert "warning: code answers run in the weak sandbox: rlimits" in allowed.stderr
    results = {s["learner"]: s for s in json.loads(allowed.stdout)["submissions"]}
    code = code_result(results["aaa_control"])
    assert code["score"] == 10 and "NOT prevented: reading the host's files" in code["feedback"]
