"""Grade a code exercise: run its tests on the learner's file, inside the sandbox.

    from grader.code import grade_code
    r = grade_code(problem, "alice/solution.py")
    r.score, r.max_score, r.sandbox
    for t in r.tests: t.name, t.passed, t.message

The problem (``kind: code``) names its tests (``tests:``, a folder or one test file, relative
to its bank file); without one, the ``code/`` folder of its subject in the bundled exercises.
The test files (``*.py`` of that folder, the reference ``solution.py`` and the learner's
``template.py`` left out) and a copy of the learner's file are put in a fresh folder, bound
read-only at ``/grade`` in the sandbox, and pytest runs there with
``--solution /grade/submission/solution.py``; the plugin's ``--grader-report`` writes each
test's result to a pipe. A test the run never reached (a time-out, a crash) counts as failed,
with the reason. Learner code never runs in the grader's process.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader import sandbox
from grader.errors import InputError, Location

MAX_SOLUTION_BYTES = 1024 * 1024
LIMITS = sandbox.Limits(wall_s=90, cpu_s=90)
LEFT_OUT = {"solution.py", "template.py"}


@dataclass(frozen=True)
class CodeTest:
    """One test of a code exercise: its name (``file::test[case]``), passed or not, and why."""

    name: str
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class CodeResult:
    """All tests of one submission; ``score`` is ``max_score`` × the fraction of tests passed."""

    tests: tuple
    score: float
    max_score: float
    sandbox: str
    message: str = ""   # how the run ended ("time limit of 90 s exceeded (wall clock) ...")

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)


def tests_of(problem) -> Path:
    """The test folder (or file) of a code problem."""
    if getattr(problem, "tests", None):
        return Path(problem.tests)
    from grader.data import bundled
    subject = getattr(problem, "subject", "") or str(problem.id).split("/")[0]
    return Path(bundled("exercises")) / subject / "code"


def grade_code(problem, solution_path, *, limits: sandbox.Limits = LIMITS) -> CodeResult:
    """Run the problem's tests on ``solution_path`` in the sandbox and score them.

    Raises :class:`~grader.errors.InputError` for a solution file that cannot be read (missing,
    too large, not UTF-8 text) or a problem without tests; anything the code does is a result.
    """
    tests = tests_of(problem)
    if not tests.exists():
        raise InputError(f"the tests of {problem.id} are missing: {tests}", getattr(problem, "location", None))
    return run_tests(tests, solution_path, points=float(getattr(problem, "points", 1) or 0), limits=limits)


def run_tests(tests, solution_path, *, points: float = 1.0, limits: sandbox.Limits = LIMITS) -> CodeResult:
    """Run a test folder (or one test file and its helpers) on ``solution_path`` in the sandbox.
    Also what ``pytest --solution PATH`` does for each code exercise it collects."""
    source = _read_solution(Path(solution_path))
    tests = Path(tests)
    work = Path(tempfile.mkdtemp(prefix="grader-code-"))
    try:
        _prepare(work, tests, source)
        result = _run(work, limits)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _score(result, points, limits, shown_as=Path(solution_path).name, inside=_inside(work))


def _read_solution(path: Path) -> bytes:
    where = Location(str(path))
    if not path.is_file():
        raise InputError("no such solution file", where)
    if path.stat().st_size > MAX_SOLUTION_BYTES:
        raise InputError(f"the solution file is larger than {MAX_SOLUTION_BYTES // 1024} KiB", where)
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"the solution file is not UTF-8 text (byte {e.start})", where) from None
    return data


def _prepare(work: Path, tests: Path, source: bytes) -> None:
    """/grade/pytest.ini, /grade/tests/<test files>, /grade/submission/solution.py — all readable
    by the sandbox's unprivileged uid, none writable by it."""
    (work / "tests").mkdir()
    (work / "submission").mkdir()
    if tests.is_file():  # that test file, with the helper modules of its folder
        helpers = [p for p in tests.parent.glob("*.py") if p.name not in LEFT_OUT and not p.name.startswith("test_")]
        files = sorted({tests, *helpers})
    else:
        files = sorted(p for p in tests.glob("*.py") if p.name not in LEFT_OUT)
    for f in files:
        shutil.copyfile(f, work / "tests" / f.name)
    (work / "submission" / "solution.py").write_bytes(source)
    (work / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    for p in [work, *work.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def _inside(work: Path) -> str:
    """Where the work folder is seen by the sandboxed run."""
    return "/grade" if sandbox.backend() == "bubblewrap" else str(work)


def _run(work: Path, limits: sandbox.Limits) -> sandbox.SandboxResult:
    inside = _inside(work)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", f"{inside}/pytest.ini",
            "--rootdir", inside, f"{inside}/tests", "--solution", f"{inside}/submission/solution.py",
            "--unsandboxed", "--grader-report", "{fd0}"]
    return sandbox.run(argv, limits=limits, binds=((str(work), "/grade"),), cwd=inside, report_fds=1)


def _score(run: sandbox.SandboxResult, points: float, limits: sandbox.Limits, shown_as: str = "solution.py",
           inside: str = "/grade") -> CodeResult:
    collected, outcomes = _parse(run.reports[0] if run.reports else b"")
    # pytest's exit code 1 means "some tests failed": the run itself went fine
    abnormal = run.timed_out or run.killed_by or run.limit or run.exit_code not in (0, 1)
    ended = run.message if abnormal else ""
    if not collected:
        tail = "\n".join(run.stderr.strip().splitlines()[-3:]) or "\n".join(run.stdout.strip().splitlines()[-3:])
        why = ended or "no tests were collected"
        test = CodeTest("tests", False, f"the tests did not run: {why}" + (f" ({tail})" if tail else ""))
        return CodeResult((test,), 0.0, points, run.sandbox, why)
    tests = []
    for nodeid in collected:
        name = short_name(nodeid)
        got = outcomes.get(nodeid)
        if got is None:
            reason = ended or "the test process ended before this test ran"
            tests.append(CodeTest(name, False, f"not run: {reason}"))
            continue
        passed, message = got
        message = message.replace(f"{inside}/submission/solution.py", shown_as)  # the learner's own name
        limit = sandbox.explain_limit(message)
        if limit is not None and not passed:
            message = f"{message} — {sandbox.limit_message(limit, limits)}"
        tests.append(CodeTest(name, passed, message))
    n_passed = sum(t.passed for t in tests)
    score = points * n_passed / len(tests) if tests else 0.0
    return CodeResult(tuple(tests), score, points, run.sandbox, ended)


def short_name(nodeid: str) -> str:
    """A test's name without its folders: ``test_file.py::test_x[case]``."""
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def _parse(data: bytes) -> tuple[list, dict]:
    """The plugin's JSON lines: the collected node ids (first line) and, per test, (passed,
    message). A test reported more than once (forked copies of a process) passes only if every
    report says so; lines that are not the plugin's are ignored."""
    collected: list = []
    outcomes: dict = {}
    for raw in data.decode("utf-8", errors="replace").splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if not collected and isinstance(obj.get("collected"), list):
            collected = [str(x) for x in obj["collected"]]
            continue
        nodeid, outcome = obj.get("nodeid"), obj.get("outcome")
        if not isinstance(nodeid, str) or nodeid not in collected or not isinstance(outcome, str):
            continue
        passed = outcome == "passed"
        message = str(obj.get("message") or ("" if passed else outcome))
        if nodeid in outcomes:
            old_passed, old_message = outcomes[nodeid]
            if not old_passed:
                continue
        outcomes[nodeid] = (passed, message)
    return collected, outcomes
