"""Grade a code exercise: its tests run here, on the grader's side; the learner's code runs in
the sandbox and only plain data comes back.

    from grader.code.grade import grade_code, code_sandbox
    code_sandbox().usable, code_sandbox().refusal    # can code be graded here, and if not, why
    r = grade_code(problem, "alice/solution.py")
    r.score, r.max_score, r.sandbox
    for t in r.tests: t.name, t.passed, t.message

The problem (``kind: code``) names its tests (``tests:``, a folder or one test file, relative
to its bank file); without one, the ``code/`` folder of its subject in the bundled exercises.
The test files (``*.py`` of that folder, the reference ``solution.py`` and the learner's
``template.py`` left out) and the learner's file are copied into a fresh folder, and pytest
runs there in a **trusted** process of the grader's (``--solution`` on the copy): it holds the
tests, the checks and the reference, and starts one sandboxed process that imports the
learner's file and serves calls (:mod:`grader.code.solution_proxy`). The verdict is that trusted
run's, reported test by test through a pipe (``--grader-report``); the sandbox never sees the
pipe, the tests, the reference or the grader. A test the run never reached counts as failed,
with the reason.

Where only the weak sandbox can run (no bubblewrap, no namespaces), code is refused with one
line saying what is missing, unless ``allow_weak`` (``--allow-weak-sandbox``, or
``GRADER_ALLOW_WEAK_SANDBOX=1``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Protocol

from grader import sandbox
from grader.errors import InputError
from grader.code.solution_proxy import read_solution
from grader.sandbox.layout import StrPath


class CodeProblem(Protocol):
    """A code problem as grading reads it (a bank problem): its ``id``; its ``tests`` folder,
    ``subject``, ``solution`` (the reference, hidden from the sandbox), ``points`` and
    ``location`` are read where the problem has them."""

    @property
    def id(self) -> str: ...

LIMITS = sandbox.Limits(wall_s=90, cpu_s=90)
LEFT_OUT = {"solution.py", "template.py"}
STARTUP_S = 60.0            # the trusted run's own start (pytest, torch, collection) on top of wall_s
INSTALL = "install bubblewrap (sudo apt-get install bubblewrap)"


@dataclass(frozen=True)
class CodeTest:
    """One test of a code exercise: its name (``file::test[case]``), passed or not, and why;
    ``hidden``: a test of a hidden test file (:func:`is_hidden`), which learners do not get."""

    name: str
    passed: bool
    message: str = ""
    hidden: bool = False


def is_hidden(name: str) -> bool:
    """A test of a hidden test file: the file's name says so (``test_17_08_hidden.py``)."""
    return "hidden" in name.partition("::")[0].rsplit("/", 1)[-1]


@dataclass(frozen=True)
class CodeResult:
    """All tests of one submission; ``score`` is ``max_score`` × the fraction of tests passed.
    ``refused``: the code was not run at all (no safe sandbox here; ``message`` says why)."""

    tests: tuple[CodeTest, ...]
    score: float
    max_score: float
    sandbox: str
    message: str = ""   # how the run ended ("time limit of 90 s exceeded (wall clock) ...")
    refused: bool = False

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)


@dataclass(frozen=True)
class CodeSandbox:
    """Whether code answers can be graded here: the backend, in words, and if not, one line why."""

    usable: bool
    backend: str            # "bubblewrap", "unshare", "rlimits" or "" (none)
    description: str        # what it is, and for the weak one what it does not prevent
    refusal: str = ""       # one line: what is missing and how to get it

    @property
    def weak(self) -> bool:
        return self.backend == "rlimits"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def code_sandbox(allow_weak: bool | None = None, backend: str | None = None) -> CodeSandbox:
    """Can learner code be graded here? ``allow_weak`` (default: ``GRADER_ALLOW_WEAK_SANDBOX``)
    accepts the ``rlimits`` backend; ``backend`` (default: ``GRADER_SANDBOX``) forces one."""
    if allow_weak is None:
        allow_weak = _env_flag("GRADER_ALLOW_WEAK_SANDBOX")
    try:
        name = sandbox.choose(backend)
        default_limits()
    except (sandbox.SandboxUnavailable, ValueError) as e:
        return CodeSandbox(False, "", "none", f"cannot grade code answers: {e}")
    description = sandbox.describe(name)
    if name in sandbox.STRONG or allow_weak:
        return CodeSandbox(True, name, description)
    missing = "; ".join(f"{b}: {sandbox.problem(b)}" for b in sandbox.STRONG)
    return CodeSandbox(False, name, description,
                       f"cannot grade code answers: no safe sandbox here ({missing}); {INSTALL}, or pass "
                       f"--allow-weak-sandbox to run learner code with rlimits only, which does not prevent "
                       f"{description.split('NOT prevented: ', 1)[-1].split(' (no bubblewrap')[0]}")


def default_limits() -> sandbox.Limits:
    """:data:`LIMITS`, with the fields of ``GRADER_CODE_LIMITS`` over them (JSON, e.g.
    ``{"wall_s": 60, "call_s": 5}``: an operator's setting for every code answer)."""
    text = os.environ.get("GRADER_CODE_LIMITS", "").strip()
    if not text:
        return LIMITS
    fields = {f.name: f.type for f in dataclass_fields(sandbox.Limits)}
    try:
        given = json.loads(text)
        if not isinstance(given, dict) or not given.keys() <= fields.keys() or \
                not all(type(v) in (int, float) and v > 0 for v in given.values()):
            raise ValueError(f"an object of positive numbers with keys among {', '.join(fields)}")
    except ValueError as e:
        raise ValueError(f"GRADER_CODE_LIMITS is not valid: {e}") from None
    ints = {k: int(v) for k, v in given.items() if fields[k] == "int"}
    return replace(LIMITS, **{**given, **ints})


def tests_of(problem: CodeProblem) -> Path:
    """The test folder (or file) of a code problem."""
    if getattr(problem, "tests", None):
        return Path(getattr(problem, "tests"))     # present where set: read as the test above does
    from grader.files.bundled import bundled
    subject = getattr(problem, "subject", "") or str(problem.id).split("/")[0]
    return Path(bundled("exercises")) / subject / "code"


def grade_code(problem: CodeProblem, solution_path: StrPath, *, limits: sandbox.Limits | None = None,
               allow_weak: bool | None = None, backend: str | None = None) -> CodeResult:
    """Run the problem's tests on ``solution_path`` (its functions in the sandbox) and score them.

    Raises :class:`~grader.errors.InputError` for a solution file that cannot be read (missing,
    not a regular file, too large, not UTF-8 text) or a problem without tests; anything the
    code does is a result. Refused (``CodeResult.refused``) where no safe sandbox runs."""
    tests = tests_of(problem)
    if not tests.exists():
        raise InputError(f"the tests of {problem.id} are missing: {tests}", getattr(problem, "location", None))
    hide = [str(tests)] + ([str(Path(getattr(problem, "solution")).parent)]
                           if getattr(problem, "solution", None) else [])
    return run_tests(tests, solution_path, points=float(getattr(problem, "points", 1) or 0), limits=limits,
                     allow_weak=allow_weak, backend=backend, hide=hide)


def run_tests(tests: StrPath, solution_path: StrPath, *, points: float = 1.0, limits: sandbox.Limits | None = None,
              allow_weak: bool | None = None, backend: str | None = None, hide: Iterable[str] = ()) -> CodeResult:
    """Run a test folder (or one test file and its helpers) on ``solution_path``: the tests in
    a trusted pytest process, the learner's functions in the sandbox. ``limits``: default
    :func:`default_limits`."""
    source = read_solution(Path(solution_path))
    status = code_sandbox(allow_weak, backend)
    if not status.usable:
        return CodeResult((CodeTest("tests", False, status.refusal),), 0.0, points, status.description,
                          status.refusal, refused=True)
    limits = limits or default_limits()
    tests = Path(tests)
    work = Path(tempfile.mkdtemp(prefix="grader-code-"))
    try:
        _prepare(work, tests, source)
        run = _run(work, limits, status, shown_as=Path(solution_path).name, hide=[str(tests.resolve()), *hide])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _score(run, points, status.description)


def _prepare(work: Path, tests: Path, source: bytes) -> None:
    """work/pytest.ini, work/tests/<test files>, work/submission/solution.py."""
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


def _run(work: Path, limits: sandbox.Limits, status: CodeSandbox, *, shown_as: str,
         hide: Iterable[str]) -> sandbox.SandboxResult:
    """The trusted pytest run (not sandboxed: it runs no learner code), a fork of the warm
    runner (:mod:`grader.code.runner`); its results come back in a file of its own."""
    from grader.code.runner import runner
    out, report = work / "out.txt", work / "report.jsonl"
    argv = ["-q", "-p", "grader.pytest_plugin", "-p", "no:cacheprovider", "-c", str(work / "pytest.ini"),
            "--rootdir", str(work), str(work / "tests"),
            "--solution", str(work / "submission" / "solution.py"), "--solution-name", shown_as,
            "--solution-limits", json.dumps(asdict(limits)), "--solution-workdir", str(work),
            "--grader-report", "{report}"]
    argv += [f"--solution-hide={h}" for h in hide]
    if status.weak:
        argv.append("--allow-weak-sandbox")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                "GRADER_SANDBOX": status.backend, "GRADER_SANDBOX_CHECKED": status.backend})
    timeout = limits.wall_s + STARTUP_S
    r = runner().run(argv, cwd=work, env=env, out=out, report=report, timeout=timeout)
    text = _head(out, 64 * 1024).decode("utf-8", errors="replace")
    if r.timed_out:
        message = f"time limit of {timeout:g} s exceeded (wall clock)"
    elif r.died:
        message = f"the test run ended: {r.died}"
    else:
        message = f"the test run exited with code {r.exit_code}"
    return sandbox.SandboxResult(r.exit_code, text, "", r.timed_out, None, message, status.description,
                                 "time" if r.timed_out else None, (_head(report, 16 * 1024 * 1024),))


def _head(path: Path, limit: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError:
        return b""


def _score(run: sandbox.SandboxResult, points: float, description: str) -> CodeResult:
    collected, outcomes = _parse(run.reports[0] if run.reports else b"")
    # pytest's exit code 1 means "some tests failed": the run itself went fine
    abnormal = run.timed_out or run.exit_code not in (0, 1)
    ended = run.message if abnormal else ""
    if not collected:
        tail = "\n".join(run.stderr.strip().splitlines()[-3:]) or "\n".join(run.stdout.strip().splitlines()[-3:])
        why = ended or "no tests were collected"
        test = CodeTest("tests", False, f"the tests did not run: {why}" + (f" ({tail})" if tail else ""))
        return CodeResult((test,), 0.0, points, description, why)
    tests = []
    for nodeid in collected:
        name = short_name(nodeid)
        got = outcomes.get(nodeid)
        if got is None:
            reason = ended or "the test process ended before this test ran"
            tests.append(CodeTest(name, False, f"not run: {reason}", is_hidden(name)))
            continue
        passed, message = got
        tests.append(CodeTest(name, passed, message, is_hidden(name)))
    n_passed = sum(t.passed for t in tests)
    score = points * n_passed / len(tests) if tests else 0.0
    return CodeResult(tuple(tests), score, points, description, ended)


def short_name(nodeid: str) -> str:
    """A test's name without its folders: ``test_file.py::test_x[case]``."""
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def _parse(data: bytes) -> tuple[list[str], dict[str, tuple[bool, str]]]:
    """The plugin's JSON lines: the collected node ids (first line) and, per test, (passed,
    message). Written by the trusted run only; a line that is not the plugin's is ignored."""
    collected: list[str] = []
    outcomes: dict[str, tuple[bool, str]] = {}
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
        outcomes[nodeid] = (passed, str(obj.get("message") or ("" if passed else outcome)))
    return collected, outcomes
