"""pytest plugin (registered through the ``pytest11`` entry point).

- Collects the exercise bank (``*.yaml`` under a folder named ``exercises``, the code
  exercises' own ``code/`` folders excepted): one item per problem, which verifies the
  problem's reference answer with :func:`grader.bank.verify_reference`. A failure reads
  ``file:line: id: what is wrong`` with what was expected and what was found — not a
  traceback into the engine (the pattern of pytest's "Working with non-python tests").
- ``--solution PATH``: the learner's solution file for the code exercises. Learner code is
  untrusted: each code exercise's tests run on it in the sandbox (:func:`grader.code.run_tests`,
  once per test folder), and every collected test reports its outcome from there; the file is
  never imported into this process. ``--unsandboxed`` imports it here instead, through the
  ``solution`` fixture (for your own code, to debug it). Without ``--solution``, each code
  exercise's bundled reference ``solution.py``, so that the project's own test run passes.
- ``--grader-report FD`` (used by :func:`grader.code.grade_code` inside the sandbox): one JSON
  line per test (nodeid, outcome, message) written to that file descriptor.

Kept import-light: it is loaded by every pytest run in an environment where grader is
installed (no torch, no SymPy at import time; the bank is imported when a YAML file is collected).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

SKIP_DIRS = {"code", "__pycache__"}


def pytest_addoption(parser):
    group = parser.getgroup("grader", "grader: exercise bank and code exercises")
    group.addoption("--solution", metavar="PATH", default=None,
                    help="the solution file graded by the code exercises' tests, run in the sandbox "
                         "(default: each exercise's bundled reference solution.py)")
    group.addoption("--unsandboxed", action="store_true", default=False,
                    help="import the --solution file into this pytest process instead of running its tests "
                         "in the sandbox (only for code you trust: your own)")
    group.addoption("--solution-timeout", metavar="SECONDS", default=None, type=float,
                    help="wall-clock limit of one sandboxed run of a code exercise's tests (default: grader's, 90)")
    group.addoption("--grader-report", metavar="FD", default=None, type=int,
                    help="write one JSON line per test result to this file descriptor (used by grader.code)")


# ------------------------------------------------------------------ the bank


def _is_bank_file(path: Path) -> bool:
    if path.suffix not in (".yaml", ".yml"):
        return False
    parts = path.parts
    if "exercises" not in parts[:-1]:
        return False
    below = parts[len(parts) - 1 - parts[::-1].index("exercises"):-1]
    return not any(p in SKIP_DIRS or p.startswith(".") for p in below)


def pytest_collect_file(file_path, parent):
    if _is_bank_file(Path(file_path)):
        return BankFile.from_parent(parent, path=file_path)
    return None


class BankFile(pytest.File):
    """One bank file: an item per problem, or one failing item listing why it cannot be read."""

    def collect(self):
        from grader.bank import load_bank
        from grader.errors import ErrorList, GraderError

        try:
            bank = load_bank(self.path)
        except ErrorList as e:
            yield BankErrorItem.from_parent(self, name="load", errors=tuple(str(x) for x in e.errors))
            return
        except GraderError as e:
            yield BankErrorItem.from_parent(self, name="load", errors=(str(e),))
            return
        for problem in bank.problems:
            yield ProblemItem.from_parent(self, name=problem.id, problem=problem, bank=bank)


class ReferenceMismatch(Exception):
    """A problem's reference answer is not confirmed by the spec or by mha."""


class ProblemItem(pytest.Item):
    """Verifies one problem's reference answer."""

    def __init__(self, *, problem, bank, **kw):
        super().__init__(**kw)
        self.problem = problem
        self.bank = bank
        self.verification = None

    def runtest(self):
        from grader.bank import verify_reference
        self.verification = v = verify_reference(self.problem, self.bank)
        if not v.ok:
            raise ReferenceMismatch(v)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ReferenceMismatch):
            v = excinfo.value.args[0]
            return "\n".join([f"{self.problem.location}: {self.problem.id}: {v.message}",
                              f"    expected: {v.expected}",
                              f"    found:    {v.found}"])
        return f"{self.problem.location}: {self.problem.id}: verifying it raised " \
               f"{type(excinfo.value).__name__}: {excinfo.value}"

    def reportinfo(self):
        line = (self.problem.location.line or 1) - 1 if self.problem.location else 0
        return self.path, line, f"problem {self.problem.id} ({self.problem.kind})"


class BankErrorItem(pytest.Item):
    """A bank file that cannot be loaded: fails with every error at its file:line:column."""

    def __init__(self, *, errors, **kw):
        super().__init__(**kw)
        self.errors = errors

    def runtest(self):
        raise ReferenceMismatch(self.errors)

    def repr_failure(self, excinfo, style=None):
        return "\n".join(self.errors)

    def reportinfo(self):
        return self.path, 0, f"bank file {self.path.name}"


# ------------------------------------------------------------ code exercises


def _reference_solution(test_path: Path) -> Path | None:
    """The bundled ``solution.py`` nearest above a code exercise's test file."""
    for d in [test_path.parent, *test_path.parents]:
        candidate = d / "solution.py"
        if candidate.is_file():
            return candidate
        if d.name == "exercises":
            break
    return None


def load_solution(path: Path):
    """Import a solution file from its path under a name of its own; failures become messages."""
    path = Path(path).resolve()
    name = "solution_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise SolutionError(f"no solution file at {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        try:
            spec.loader.exec_module(module)
        finally:
            _end_if_forked()
    except SyntaxError as e:
        raise SolutionError(f"{path}:{e.lineno}: SyntaxError: {e.msg}") from None
    except Exception as e:  # the learner's module failed while importing
        import traceback
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == str(path)]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise SolutionError(f"{where}: your solution could not be imported: {type(e).__name__}: {e}") from None
    sys.modules[name] = module
    return module


class SolutionError(Exception):
    """The solution file cannot be imported."""


def _sandboxed(config) -> bool:
    """Whether the learner's ``--solution`` runs in the sandbox (not in this process)."""
    return bool(config.getoption("solution", None)) and not config.getoption("unsandboxed", False)


_SANDBOX_RUNS = pytest.StashKey[dict]()


def _sandbox_outcomes(config, folder: Path) -> dict:
    """{short test name: (passed, message)} for a test folder, from one sandboxed run of it on
    ``--solution`` (made on first use); ``None`` under key ``"*"``: why no test ran."""
    runs = config.stash.setdefault(_SANDBOX_RUNS, {})
    if folder not in runs:
        from dataclasses import replace

        from grader.code import LIMITS, run_tests
        from grader.errors import GraderError
        solution_path = Path(config.getoption("solution"))
        timeout = config.getoption("solution_timeout")
        limits = LIMITS if timeout is None else replace(LIMITS, wall_s=timeout)
        try:
            result = run_tests(folder, solution_path, limits=limits)
        except GraderError as e:
            runs[folder] = {"*": str(e)}
        else:
            runs[folder] = {t.name: (t.passed, t.message) for t in result.tests}
            if [t.name for t in result.tests] == ["tests"]:  # the run never got to the tests
                runs[folder]["*"] = result.tests[0].message
    return runs[folder]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """With a sandboxed ``--solution``, a code test's outcome is the one its sandboxed run reported."""
    if "solution" not in getattr(pyfuncitem, "fixturenames", ()) or not _sandboxed(pyfuncitem.config):
        return None
    from grader.code import short_name
    outcomes = _sandbox_outcomes(pyfuncitem.config, Path(pyfuncitem.path).parent)
    got = outcomes.get(short_name(pyfuncitem.nodeid))
    if got is None:
        pytest.fail(outcomes.get("*") or "not run: the sandboxed run did not report this test", pytrace=False)
    passed, message = got
    if not passed:
        pytest.fail(message, pytrace=False)
    return True


def pytest_report_header(config):
    if _sandboxed(config):
        from grader import sandbox
        return f"grader: the tests of {config.getoption('solution')} run in the sandbox: {sandbox.backend()}"
    return None


@pytest.fixture(scope="module")
def solution(request):
    """The solution module under test: ``--solution PATH``, else the bundled reference. With a
    sandboxed ``--solution`` the learner's file is not imported here: the test's outcome comes
    from its sandboxed run (:func:`pytest_pyfunc_call`)."""
    if _sandboxed(request.config):
        return None
    given = request.config.getoption("solution")
    path = Path(given) if given else _reference_solution(Path(request.path))
    if path is None:
        pytest.fail("no solution to test: pass --solution PATH", pytrace=False)
    try:
        return load_solution(path)
    except SolutionError as e:
        pytest.fail(str(e), pytrace=False)


# ---------------------------------------------------------------- reporting


def _message(report) -> str:
    """What a learner should read: the teaching message of ``pytest.fail(..., pytrace=False)``
    as it is, else the crash line ("ExceptionType: message") of a traceback."""
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, str):
        return longrepr
    if isinstance(longrepr, tuple):  # skipped: (file, line, reason)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longreprtext)
    return text[len("Failed: "):] if text.startswith("Failed: ") else text


_MAIN_PID = os.getpid()


def _end_if_forked() -> None:
    """A process forked by learner code that comes back into pytest ends here, silently: only
    the process pytest started reports results."""
    if os.getpid() != _MAIN_PID:
        os._exit(70)


class Reporter:
    """With ``--grader-report FD``: one JSON line per test result on FD, after a first line
    listing every test collected (so that tests a crash or a time-out kept from running are
    reported as failed by :mod:`grader.code`, not forgotten)."""

    def __init__(self, fd: int):
        self.fd = fd

    def pytest_collection_finish(self, session):
        _write(self.fd, {"collected": [item.nodeid for item in session.items]})

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        _end_if_forked()
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            # under PIPE_BUF (4096 bytes) a write is atomic: lines of forked children cannot interleave
            _write(self.fd, {"nodeid": report.nodeid[:300], "outcome": report.outcome, "when": report.when,
                             "message": _message(report)[:1500]})


def _write(fd, obj) -> None:
    data = (json.dumps(obj, ensure_ascii=False) + "\n").encode()
    while len(data) > 4000 and obj.get("message"):
        obj = {**obj, "message": obj["message"][: len(obj["message"]) // 2] + " …"}
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode()
    os.write(fd, data)


def pytest_configure(config):
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    fd = config.getoption("grader_report", None)
    if fd is not None:
        config.pluginmanager.register(Reporter(fd), "grader-report")
