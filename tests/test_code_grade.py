"""grader.code.grade_code: the 17-08 code tests run in the sandbox on a learner's file."""
from pathlib import Path

import pytest

from grader import sandbox
from grader.bank import Problem
from grader.code import CodeResult, CodeTest, grade_code
from grader.errors import InputError

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
    assert r.sandbox == sandbox.backend() and r.message == ""


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


def test_a_submission_cannot_read_the_reference_solution(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nSEEN = sorted(os.listdir('/grade/tests')) if os.path.isdir('/grade/tests') else []\n"
                     "assert 'solution.py' not in SEEN and 'template.py' not in SEEN, SEEN\n"
                     "raise RuntimeError('seen: ' + ','.join(SEEN))\n")
    r = grade_code(PROBLEM, probe)
    assert r.score == 0
    if sandbox.backend() == "bubblewrap":
        assert "seen: mha_checks.py,test_17_08_code.py,test_17_08_hidden.py" in r.tests[0].message


@pytest.mark.parametrize("content, says", [
    (None, "no such solution file"),
    (b"\xff\xfe not text", "not UTF-8 text"),
    (b"#" * (1024 * 1024 + 1), "larger than 1024 KiB"),
])
def test_unreadable_solution_is_an_input_error(tmp_path, content, says):
    path = tmp_path / "solution.py"
    if content is not None:
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
    assert f"[sandbox: {sandbox.backend()}]" in result["feedback"]

    r = CliRunner().invoke(cli, ["grade", str(answers), "--format", "gradescope"])
    assert r.exit_code == 0, r.output
    (test,) = [t for t in json.loads(r.output)["tests"] if t["name"].startswith("17-08/code-mha")]
    assert test["max_score"] == 10 and test["score"] == pytest.approx(10 * 56 / 60)
    assert "the four bias vectors (4·d) are missing" in test["output"]
