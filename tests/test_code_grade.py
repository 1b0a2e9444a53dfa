"""grader.code.grade.grade_code: the 17-08 code tests run in the sandbox on a learner's file."""
import os
from pathlib import Path

import pytest

from grader import sandbox
from grader.bank import Problem
from grader.code.grade import CodeResult, CodeTest, code_sandbox, grade_code
from grader.errors import InputError

from sandbox_helpers import STRONG, needs_strong

pytestmark = needs_strong   # the weak sandbox is refused: without a namespace backend nothing is graded
ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "exercises" / "17-08" / "code"
BROKEN = ROOT / "tests" / "broken_solutions"
N_VISIBLE, N_HIDDEN = 43, 17   # counted in test_code_broken.py

PROBLEM = Problem(id="17-08/code-mha", kind="code", points=10, prompt="Implement multi-head attention.",
                  reference=None, subject="17-08", tests=str(CODE), solution=str(CODE / "solution.py"))


@pytest.fixture(scope="module")
def reference_result():
    return grade_code(PROBLEM, CODE / "solution.py")


def test_reference_gets_every_point(reference_result):
    r = reference_result
    assert isinstance(r, CodeResult)
    assert len(r.tests) == N_VISIBLE + N_HIDDEN
    assert all(isinstance(t, CodeTest) and t.passed and t.message == "" for t in r.tests)
    assert (r.score, r.max_score) == (10.0, 10.0)
    assert r.sandbox == sandbox.backend() and r.message == "" and not r.refused


def test_hidden_tests_are_run_too(reference_result):
    names = [t.name for t in reference_result.tests]
    assert sum(n.startswith("test_17_08_hidden.py::") for n in names) == N_HIDDEN
    assert "test_17_08_code.py::test_parameter_count[512-8-True]" in names


def test_broken_solution_gets_partial_credit_with_teaching_messages():
    r = grade_code(PROBLEM, BROKEN / "forgot_w_o.py")
    failed = [t for t in r.tests if not t.passed]
    # multi_head_forward: 6 cases + 2 masked; hidden forward: 4 cases
    assert len(failed) == 6 + 2 + 4
    assert all(t.name.split("::")[1].startswith(("test_multi_head_forward", "test_hidden_forward")) for t in failed)
    assert all("forgot W^O" in t.message and "Traceback" not in t.message for t in failed)
    assert r.score == pytest.approx(10 * (60 - 12) / 60)   # 8.0
    assert r.message == ""


def test_the_sandbox_holds_the_learner_s_file_and_nothing_of_the_exercise(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\n"
                     f"LEAKS = [p for p in ({str(CODE)!r}, {str(ROOT)!r}, '/grade/tests') if os.path.exists(p)]\n"
                     "raise RuntimeError('seen: ' + ','.join(sorted(os.listdir('/grade'))) + ' leaks: ' + str(LEAKS))\n")
    r = grade_code(PROBLEM, probe)
    assert r.score == 0 and not r.refused
    assert "probe.py:3: your solution could not be imported: RuntimeError: " \
           "seen: solution.py,solution_server.py,wire.py leaks: []" in r.tests[0].message


@pytest.mark.parametrize("backend", STRONG)
def test_every_namespace_backend_gives_the_reference_every_point(backend):
    r = grade_code(PROBLEM, CODE / "solution.py", backend=backend)
    assert (r.score, r.max_score, len(r.tests)) == (10.0, 10.0, N_VISIBLE + N_HIDDEN)
    assert r.sandbox == sandbox.describe(backend)


def test_an_exception_names_the_learner_s_file_and_line():
    r = grade_code(PROBLEM, BROKEN / "k_transposed_twice.py")
    failed = [t for t in r.tests if not t.passed and "test_attention_weights[" in t.name]
    assert failed and all("attention_weights() raised RuntimeError: " in t.message and
                          "(at k_transposed_twice.py:24: scores = Q @ K_t.transpose(-2, -1)" in t.message
                          for t in failed)


def test_the_weak_sandbox_is_refused_unless_allowed(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "rlimits")
    status = code_sandbox()
    assert not status.usable and status.weak
    assert status.refusal.startswith("cannot grade code answers: no safe sandbox here (")
    assert "install bubblewrap (sudo apt-get install bubblewrap), or pass --allow-weak-sandbox" in status.refusal
    assert "\n" not in status.refusal
    r = grade_code(PROBLEM, CODE / "solution.py")
    assert r.refused and r.score == 0 and r.message == status.refusal
    allowed = grade_code(PROBLEM, CODE / "solution.py", allow_weak=True)
    assert not allowed.refused and allowed.score == 10
    assert "NOT prevented: reading the host's files" in allowed.sandbox
    monkeypatch.setenv("GRADER_ALLOW_WEAK_SANDBOX", "1")
    assert code_sandbox().usable


def test_a_sandbox_forced_but_unavailable_is_refused(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "nonesuch")
    status = code_sandbox(allow_weak=True)
    assert not status.usable and "no such sandbox backend" in status.refusal
    assert grade_code(PROBLEM, CODE / "solution.py").refused


@pytest.mark.parametrize("content, says", [
    (None, "no such solution file"),
    (b"\xff\xfe not text", "not UTF-8 text"),
    (b"#" * (1024 * 1024 + 1), "larger than 1024 KiB"),
    (b"x = 1\x00\n", "contains a NUL byte"),
    ("dir", "the solution is a directory, not a regular file"),
    ("fifo", "the solution is a FIFO, not a regular file"),
])
def test_unreadable_solution_is_an_input_error(tmp_path, content, says):
    path = tmp_path / "solution.py"
    if content == "dir":
        path.mkdir()
    elif content == "fifo":
        os.mkfifo(path)   # opened without blocking: nobody writes to it
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError) as e:
        grade_code(PROBLEM, path)
    assert says in e.value.message
    assert e.value.location.file == str(path)


def test_grader_grade_grades_a_code_answer_of_the_bundled_bank_in_json_and_gradescope(tmp_path):
    # the answers file names the learner's file; parameter_count cases with bias: visible
    # (512, 8, True), (64, 1, True); hidden (768, 12, True), (96, 96, True) — 4 of 60 fail
    import json
    import shutil

    from click.testing import CliRunner

    from grader.cli import cli

    shutil.copyfile(BROKEN / "params_without_biases.py", tmp_path / "alice.py")
    answers = tmp_path / "alice.yaml"
    answers.write_text("learner: alice\nanswers:\n  17-08/code-mha: alice.py\n")
    r = CliRunner().invoke(cli, ["grade", str(answers), "--format", "json"])
    assert r.exit_code == 0, r.output
    (result,) = json.loads(r.output)["submissions"][0]["results"]
    assert result["id"] == "17-08/code-mha" and result["answer"] == "alice.py"
    assert result["max_score"] == 10 and result["score"] == pytest.approx(10 * 56 / 60)
    assert result["correct"] is False
    assert result["feedback"].startswith("56/60 tests passed")
    assert result["feedback"].count("the four bias vectors (4·d) are missing") == 4
    assert len(result["feedback"].splitlines()) == 1 + 4          # a line per failed test
    assert f"[sandbox: {sandbox.backend()}]" in result["feedback"]
    assert len(result["tests"]) == 60
    failed = [t for t in result["tests"] if not t["passed"]]
    assert len(failed) == 4 and all("the four bias vectors (4·d) are missing" in t["message"] for t in failed)
    assert sum(t["hidden"] for t in result["tests"]) == N_HIDDEN
    assert sum(t["hidden"] for t in failed) == 2                  # (768, 12, True), (96, 96, True)

    r = CliRunner().invoke(cli, ["grade", str(answers), "--format", "gradescope"])
    assert r.exit_code == 0, r.output
    tests = [t for t in json.loads(r.output)["tests"] if t["name"].startswith("17-08/code-mha")]
    assert len(tests) == 60                                        # one per code test
    assert sum(t["max_score"] for t in tests) == pytest.approx(10)
    assert sum(t["score"] for t in tests) == pytest.approx(10 * 56 / 60)
    failed = [t for t in tests if t["status"] == "failed"]
    assert len(failed) == 4 and all("the four bias vectors (4·d) are missing" in t["output"] for t in failed)
    assert sum(t.get("visibility") == "after_published" for t in tests) == N_HIDDEN
