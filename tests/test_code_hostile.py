"""Hostile submissions fail their own tests with a clear message; the grader and the other
submissions go on.

A tiny code exercise (two tests, no torch) keeps each sandboxed run short; one case runs the
real 17-08 tests to show that a hog inside one function fails only that function's tests.
"""
import os
import textwrap
from pathlib import Path

import pytest

from grader.bank import Problem
from grader.code.grade import grade_code
from grader.sandbox import GiB, Limits

from sandbox_helpers import needs_strong

pytestmark = needs_strong   # without a namespace backend, code is refused (tests/test_code_grade.py)
LIMITS = Limits(wall_s=15, cpu_s=10, memory_bytes=1 * GiB, processes=32)
BIG = Path(f"/tmp/grader-big-{os.getpid()}")  # the 10 MB write's target, unique to this run
GOOD = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"

HOSTILE = {
    # name: (module text, what every test's message says)
    "infinite loop": ("def add(a, b):\n    while True:\n        pass\n\n\ndef mul(a, b):\n    while True:\n"
                      "        pass\n", "time limit of 4 s exceeded"),
    "fork bomb": ("import os\nwhile True:\n    os.fork()\n", "process limit of 32 exceeded"),
    "memory hog": ("HOG = [bytearray(256 * 1024 ** 2) for _ in range(64)]\n", "memory limit of 1 GiB exceeded"),
    "10 MB write": (f"with open('{BIG}', 'wb') as f:\n    for _ in range(10):\n        f.write(b'x' * 1_000_000)\n",
                    "file size limit of 1 MiB exceeded"),
    "socket connect": ("import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)\n",
                       "network access is not allowed in the sandbox"),
    "read /etc/passwd": ("PASSWD = open('/etc/passwd').read()\n", "that file is not available in the sandbox"),
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    (d / "tests").mkdir()
    (d / "tests" / "test_tiny.py").write_text(textwrap.dedent("""\
        def test_add(solution):
            assert solution.add(2, 3) == 5

        def test_mul(solution):
            assert solution.mul(2, 3) == 6
        """))
    return Problem(id="tiny/code", kind="code", points=2, prompt="add and mul", reference=None,
                   tests=str(d / "tests"))


def grade(problem, tmp_path, name, text, limits=LIMITS):
    path = tmp_path / f"{name.replace(' ', '_').replace('/', '_')}.py"
    path.write_text(text)
    return grade_code(problem, path, limits=limits)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_submission_fails_with_a_clear_message_and_the_next_one_is_graded(tiny, tmp_path, name):
    text, says = HOSTILE[name]
    limits = Limits(wall_s=4, cpu_s=30, memory_bytes=GiB) if name == "infinite loop" else LIMITS
    r = grade(tiny, tmp_path, name, text, limits)
    assert [t.name for t in r.tests] == ["test_tiny.py::test_add", "test_tiny.py::test_mul"]
    assert r.score == 0 and not any(t.passed for t in r.tests)
    for t in r.tests:
        assert says in t.message, t.message
        assert "/grade/" not in t.message  # the learner's own file name, not the sandbox's path
    if name == "read /etc/passwd":
        assert r.tests[0].message.startswith("read__etc_passwd.py:1: your solution could not be imported: "
                                             "FileNotFoundError")
    good = grade(tiny, tmp_path, "good", GOOD)
    assert all(t.passed for t in good.tests) and good.score == 2
    if name == "10 MB write":
        assert not BIG.exists()  # the sandbox's /tmp is its own


def test_a_hog_in_one_function_fails_only_that_function_s_tests(tmp_path):
    code = Path(__file__).resolve().parents[1] / "exercises" / "17-08" / "code"
    problem = Problem(id="17-08/code-mha", kind="code", points=10, prompt="mha", reference=None,
                      tests=str(code / "test_17_08_code.py"))
    text = (code / "solution.py").read_text().replace(
        '    def project(x, name):',
        '    hog = bytearray(8 * 1024 ** 3)  # hostile\n\n    def project(x, name):')
    r = grade(problem, tmp_path, "hog_in_forward", text, Limits(wall_s=60, cpu_s=60, memory_bytes=3 * GiB))
    failed = [t for t in r.tests if not t.passed]
    assert failed and all(t.name.split("::")[1].startswith("test_multi_head_forward") for t in failed)
    assert len(failed) == 6 + 2
    assert all("MemoryError" in t.message and "memory limit of 3 GiB exceeded" in t.message for t in failed)
    assert len(r.tests) - len(failed) == 43 - 8
