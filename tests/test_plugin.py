"""The grader pytest plugin: bank YAML as items, --solution, the results pipe."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import sandbox
from grader.bank import load_bank

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]

BANK = textwrap.dedent("""\
    subject: 17-08
    problems:
      - id: 17-08/good
        prompt: Parameters for d_model = 512, h = 8, no biases?
        kind: number
        reference: 1048576
        derive: {formula: params_nobias, at: {d: 512, h: 8}}
      - id: 17-08/wrong
        prompt: Parameters for d_model = 512, h = 8, no biases?
        kind: number
        reference: 1048577
        derive: {formula: params_nobias, at: {d: 512, h: 8}}
    """)


def write_bank(pytester, text=BANK, where="exercises/17-08/bank.yaml", opt_in=True):
    if opt_in:
        pytester.makeini("[pytest]\ngrader_banks = exercises\n")
    path = pytester.path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_one_item_per_problem_and_a_wrong_reference_fails_at_its_line(pytester):
    path = write_bank(pytester)
    result = pytester.runpytest_inprocess("exercises", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # the second problem's "- id:" is line 8 of the file (4·512² = 1,048,576, not 1,048,577)
    assert f"{path.relative_to(pytester.path)}:8:" in out or f"{path}:8:" in out
    result.stdout.fnmatch_lines(["*17-08/wrong: reference 1,048,577 is wrong*",
                                 "*expected: 1,048,577*", "*found:*1,048,576*"])
    assert "Traceback" not in out and "verify.py" not in out


def test_reportinfo_gives_the_problem_s_line(pytester):
    path = write_bank(pytester)
    items, _ = pytester.inline_genitems("exercises", "-p", "no:cacheprovider")
    assert [i.name for i in items] == ["17-08/good", "17-08/wrong"]
    assert [i.reportinfo()[1] for i in items] == [2, 7]   # 0-based lines of the two "- id:"
    assert all(Path(i.reportinfo()[0]) == path for i in items)


def test_code_folders_and_yaml_outside_exercises_are_not_collected(pytester):
    write_bank(pytester)
    write_bank(pytester, "not: a bank\n", "exercises/17-08/code/settings.yaml")
    write_bank(pytester, "not: a bank\n", "spec/17-08.yaml")
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider")
    assert sorted(i.name for i in items) == ["17-08/good", "17-08/wrong"]


UNRELATED_TEST = textwrap.dedent("""\
    def test_something():
        assert 1 + 1 == 2
    """)


def test_a_project_that_does_not_opt_in_is_untouched(pytester):
    """Another project with its own exercises/ folder (YAML that is no bank) runs its tests
    with grader installed as if it were not: nothing of exercises/ is collected."""
    write_bank(pytester, "name: week 1\nitems: [a, b]\n", "exercises/week1.yaml", opt_in=False)
    write_bank(pytester, BANK, "exercises/17-08/bank.yaml", opt_in=False)
    pytester.makepyfile(test_mine=UNRELATED_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "unknown key" not in out and "bank" not in out
    result = pytester.runpytest_subprocess("exercises", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_opting_in_from_the_command_line_collects_that_folder(pytester):
    write_bank(pytester, opt_in=False)
    items, _ = pytester.inline_genitems("--grader-banks", "exercises", "-p", "no:cacheprovider")
    assert sorted(i.name for i in items) == ["17-08/good", "17-08/wrong"]


def test_an_unreadable_bank_file_is_one_failure_with_its_position(pytester):
    write_bank(pytester, "subject: 17-08\nproblems:\n  - id: 17-08/a\n    id: 17-08/b\n")
    result = pytester.runpytest_inprocess("exercises", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*bank.yaml:4:5: duplicate key 'id' (first at line 3)*"])


def test_the_bundled_bank_has_one_item_per_problem(pytester):
    items, _ = pytester.inline_genitems(str(ROOT / "exercises"), "-p", "no:cacheprovider",
                                        "--ignore", str(ROOT / "exercises" / "17-08" / "code"))
    # and one for the course (exercises/assessments.yaml)
    assert sorted(i.name for i in items) == sorted(["assessments", *(p.id for p in load_bank(ROOT / "exercises"))])


CODE_TEST = textwrap.dedent("""\
    def test_f(solution):
        assert solution.f() == 1
    """)


@pytest.fixture
def exercise(pytester):
    code = pytester.path / "exercises" / "x" / "code"
    code.mkdir(parents=True)
    (code / "solution.py").write_text("def f():\n    return 1\n")
    (code / "test_x_code.py").write_text(CODE_TEST)
    return code


def test_without_solution_the_bundled_reference_is_tested(pytester, exercise):
    pytester.runpytest_inprocess(str(exercise), "-p", "no:cacheprovider").assert_outcomes(passed=1)


@pytest.mark.parametrize("mode", [[], ["--unsandboxed"]], ids=["sandboxed", "unsandboxed"])
def test_solution_option_grades_the_learner_s_file_from_anywhere(pytester, exercise, tmp_path_factory, mode):
    elsewhere = tmp_path_factory.mktemp("learner") / "mine.py"
    elsewhere.write_text("def f():\n    return 2\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(elsewhere), "-p", "no:cacheprovider", *mode)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*assert 2 == 1*"])


def test_a_sandboxed_solution_is_never_imported_into_pytest(pytester, exercise):
    (exercise / "test_y_code.py").write_text("def test_g(solution):\n    assert solution.f() == 1\n")
    mine = pytester.path / "mine.py"
    marker = pytester.path / "imported-here"
    mine.write_text(f"open({str(marker)!r}, 'w').write('x')\ndef f():\n    return 1\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider")
    r.stdout.fnmatch_lines([f"grader: the tests of {mine} call it in the sandbox: {sandbox.backend()}"])
    # the host folder is not in the sandbox: the write fails, and the import with it
    r.assert_outcomes(errors=2)
    r.stdout.fnmatch_lines(["*mine.py:1: your solution could not be imported: FileNotFoundError*"])
    assert not marker.exists()
    assert not any(m.startswith("solution_") for m in sys.modules), "the learner's module was imported here"


def test_a_sandboxed_function_s_exception_is_its_message_with_the_learner_s_line(pytester, exercise):
    mine = pytester.path / "mine.py"
    mine.write_text("def f():\n    return 1 / 0\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines([f"f() raised ZeroDivisionError: division by zero (at {mine}:2: return 1 / 0)"])
    assert "solution_proxy.py" not in r.stdout.str()  # no traceback into the grader


def test_a_sandboxed_object_that_is_not_plain_data_equals_nothing(pytester, exercise):
    mine = pytester.path / "mine.py"
    mine.write_text("class Anything:\n    def __eq__(self, other):\n        return True\n\n"
                    "def f():\n    return Anything()\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*assert <Anything: not plain data> == 1*"])


def test_a_sandboxed_solution_that_loops_fails_its_tests_with_the_time_limit(pytester, exercise):
    mine = pytester.path / "mine.py"
    mine.write_text("def f():\n    while True:\n        pass\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider",
                                     "--solution-timeout", "3")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*time limit of 3 s exceeded (wall clock): f() did not return*"])


@pytest.mark.parametrize("text, says", [
    ("def f(:\n", ["*mine.py:1: SyntaxError: *"]),
    ("x = 1\nraise ValueError('boom')\n", ["*mine.py:2: your solution could not be imported: ValueError: boom*"]),
])
def test_a_solution_that_cannot_be_imported_is_a_message(pytester, exercise, text, says):
    mine = pytester.path / "mine.py"
    mine.write_text(text)
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider",
                                     "--unsandboxed")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(says)
    sandboxed = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider")
    sandboxed.assert_outcomes(errors=1)  # the same words, from the sandboxed process
    sandboxed.stdout.fnmatch_lines(says)


def test_the_weak_sandbox_is_refused_unless_allowed(pytester, exercise, monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "rlimits")
    mine = pytester.path / "mine.py"
    mine.write_text("def f():\n    return 1\n")
    r = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*cannot grade code answers: no safe sandbox here*install bubblewrap*"
                            "--allow-weak-sandbox*"])
    allowed = pytester.runpytest_inprocess(str(exercise), "--solution", str(mine), "-p", "no:cacheprovider",
                                           "--allow-weak-sandbox")
    allowed.assert_outcomes(passed=1)
    allowed.stdout.fnmatch_lines(["*call it in the sandbox: rlimits*NOT prevented: reading the host's files*"])


def test_grader_report_writes_json_lines_to_the_descriptor(pytester, exercise):
    (exercise / "test_y_code.py").write_text("def test_g(solution):\n    assert solution.f() == 2, 'f() should be 2'\n")
    read, write = os.pipe()
    try:
        pytester.runpytest_inprocess(str(exercise), "--grader-report", str(write), "-p", "no:cacheprovider")
    finally:
        os.close(write)
    with os.fdopen(read) as f:
        lines = [json.loads(x) for x in f.read().splitlines()]
    collected = lines[0]["collected"]
    assert [c.split("::")[-1] for c in collected] == ["test_f", "test_g"]
    results = {x["nodeid"].split("::")[-1]: (x["outcome"], x["message"]) for x in lines[1:]}
    assert results["test_f"] == ("passed", "")
    assert results["test_g"][0] == "failed" and results["test_g"][1].startswith("AssertionError: f() should be 2")


def test_importing_the_plugin_is_light():
    code = "import grader.pytest_plugin, sys; print(sorted(m for m in ('torch', 'sympy', 'mha') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_bank_folder_s_course_file_is_one_item_that_checks_it(pytester):
    bank = ("subject: x\nproblems:\n"
            "  - {id: x/a, prompt: p, kind: free_text, reference: r}\n")
    write_bank(pytester, bank, where="exercises/x.yaml")
    course = ("assessments:\n"
              "  - {id: hw1, problems: [x/a], opens: 2026-12-01 09:00, due: 2026-12-02 09:00}\n")
    path = write_bank(pytester, course, where="exercises/assessments.yaml")
    items, _ = pytester.inline_genitems("exercises", "-p", "no:cacheprovider")
    assert sorted(i.name for i in items) == ["assessments", "x/a"]
    pytester.runpytest_inprocess("exercises/assessments.yaml", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    # a pattern that matches nothing: the item fails at the entry's line and column (2:26), no traceback
    path.write_text(course.replace("[x/a]", "[x/b*]"))
    result = pytester.runpytest_inprocess("exercises/assessments.yaml", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assessments.yaml:2:26: no problem of the bank matches the pattern 'x/b[*]'*"])
    assert "Traceback" not in result.stdout.str()
