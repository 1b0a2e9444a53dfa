"""pytest plugin, part 2: the code exercises (loaded through ``grader.pytest_plugin``).

- ``--solution PATH``: the learner's file, **untrusted**. The ``solution`` fixture hands the
  tests a stand-in module (:class:`grader.code.solution_proxy.SolutionModule`) whose functions run
  in the sandbox; the tests, the checks and the reference run here, in this process, and
  compare the plain data that comes back. The file is never imported here. One sandboxed
  process serves the whole session (started at configure time, so that its imports overlap
  the collection). Where the sandbox is the weak ``rlimits`` one, the tests refuse to run
  unless ``--allow-weak-sandbox``.
- ``--unsandboxed`` (your own file, to debug it): the file is imported into this process.
  Without ``--solution``: each code exercise's bundled reference ``solution.py``, imported
  here (it is ours).
- ``--grader-report FD`` (used by :func:`grader.code.grade.grade_code`): one JSON line per test
  (nodeid, outcome, message), after a first line listing every test collected.

Import-light: no torch, SymPy or mha at import.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from grader.api import Limits
    from grader.api.shells import Session

_SESSION: pytest.StashKey[Session] = pytest.StashKey()
_REFUSED = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader", "grader: code exercises")
    group.addoption("--solution", metavar="PATH", default=None,
                    help="the solution file graded by the code exercises' tests; its functions run in the "
                         "sandbox (default: each exercise's bundled reference solution.py)")
    group.addoption("--unsandboxed", action="store_true", default=False,
                    help="import the --solution file into this pytest process instead (only for code you "
                         "trust: your own)")
    group.addoption("--solution-timeout", metavar="SECONDS", default=None, type=float,
                    help="wall-clock limit of the learner's code over the whole run (default: grader's, 90)")
    group.addoption("--allow-weak-sandbox", action="store_true", default=False,
                    help="run untrusted code even where only the weak rlimits sandbox is available "
                         "(it does not keep the code from the host's files)")
    group.addoption("--grader-report", metavar="FD", default=None, type=int,
                    help="write one JSON line per test result to this file descriptor (used by grader.code.grade)")
    # used by grader.code.grade: how messages name the file, the sandbox's limits (JSON), folders to hide,
    # where the sandbox's own folders go (inside grader.code.grade's, removed even if this run is killed)
    group.addoption("--solution-name", default=None, help=argparse.SUPPRESS)
    group.addoption("--solution-limits", default=None, help=argparse.SUPPRESS)
    group.addoption("--solution-hide", action="append", default=[], help=argparse.SUPPRESS)
    group.addoption("--solution-workdir", default=None, help=argparse.SUPPRESS)


def _sandboxed(config: pytest.Config) -> bool:
    """Whether the learner's ``--solution`` runs in the sandbox (not in this process)."""
    return bool(config.getoption("solution", None)) and not config.getoption("unsandboxed", False)


def _limits(config: pytest.Config) -> Limits:
    from grader.api.shells import solution_limits
    given = config.getoption("solution_limits")
    return solution_limits(json.loads(given) if given else None, config.getoption("solution_timeout"))


def _open_session(config: pytest.Config) -> None:
    """The sandboxed process for ``--solution``, started now; or why none may run."""
    from grader.api.shells import open_solution
    path = Path(config.getoption("solution"))
    hide = [*config.getoption("solution_hide"), *(a.split("::")[0] for a in config.args)]
    session = open_solution(path, display=config.getoption("solution_name") or str(path), limits=_limits(config),
                            allow_weak=config.getoption("allow_weak_sandbox"),
                            hide=[h for h in hide if os.path.exists(h)], workdir=config.getoption("solution_workdir"))
    if isinstance(session, str):
        config.stash[_REFUSED] = session
        return
    config.stash[_SESSION] = session
    try:
        session.open()
    except Exception as e:  # cannot start: every test says why
        config.stash[_REFUSED] = f"the sandbox could not start: {e}"


def pytest_report_header(config: pytest.Config) -> str | None:
    if not _sandboxed(config):
        return None
    session = config.stash.get(_SESSION, None)
    if session is None:
        return f"grader: the tests of {config.getoption('solution')} cannot run: {config.stash.get(_REFUSED, '')}"
    return f"grader: the tests of {config.getoption('solution')} call it in the sandbox: {session.description}"


# ------------------------------------------------------------ in-process (trusted) solutions


def _reference_solution(test_path: Path) -> Path | None:
    """The bundled ``solution.py`` nearest above a code exercise's test file."""
    for d in [test_path.parent, *test_path.parents]:
        candidate = d / "solution.py"
        if candidate.is_file():
            return candidate
        if d.name == "exercises":
            break
    return None


class SolutionError(Exception):
    """The solution file cannot be imported."""


def load_solution(path: Path) -> ModuleType:
    """Import a solution file from its path under a name of its own (``--unsandboxed``, or the
    bundled reference); failures become messages with the file's line."""
    path = Path(path).resolve()
    name = "solution_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    if not path.is_file():
        raise SolutionError(f"no solution file at {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SolutionError(f"{path}: cannot be imported as a Python module")
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


_MAIN_PID = os.getpid()


def _end_if_forked() -> None:
    """``--unsandboxed``: a process forked by learner code that comes back into pytest ends
    here, silently: only the process pytest started reports results."""
    if os.getpid() != _MAIN_PID:
        os._exit(70)


@pytest.fixture(scope="module")
def solution(request: pytest.FixtureRequest) -> object:
    """The solution under test: with ``--solution`` (sandboxed) a stand-in module whose
    functions run in the sandbox; with ``--unsandboxed``, or the bundled reference, the module
    itself, imported here."""
    config = request.config
    if _sandboxed(config):
        from grader.api.shells import is_solution_failure, solution_module
        refused = config.stash.get(_REFUSED, None)
        if refused:
            pytest.fail(refused, pytrace=False)
        try:
            return solution_module(config.stash[_SESSION])
        except Exception as e:
            if not is_solution_failure(e, importing=True):
                raise
            failed = str(e)
        pytest.fail(failed, pytrace=False)
    given = config.getoption("solution")
    path = Path(given) if given else _reference_solution(Path(request.path))
    if path is None:
        pytest.fail("no solution to test: pass --solution PATH", pytrace=False)
    try:
        return load_solution(path)
    except SolutionError as e:
        failed = str(e)
    pytest.fail(failed, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                               ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """What the learner's code did (raised, broke, could not be imported) is shown as its
    message, not as a traceback into the grader."""
    report = yield
    if call.excinfo is not None and _sandboxed(item.config):
        from grader.api.shells import is_solution_failure
        if is_solution_failure(call.excinfo.value):
            report.longrepr = str(call.excinfo.value)
    return report


# ---------------------------------------------------------------- reporting


def _message(report: pytest.TestReport) -> str:
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


class Reporter:
    """With ``--grader-report FD``: one JSON line per test result on FD, after a first line
    listing every test collected (so that tests a crash or a time-out kept from running are
    reported as failed by :mod:`grader.code.grade`, not forgotten)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        _write(self.fd, {"collected": [item.nodeid for item in session.items]})

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        _end_if_forked()
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            _write(self.fd, {"nodeid": report.nodeid[:300], "outcome": report.outcome, "when": report.when,
                             "message": _message(report)[:1500]})


def _write(fd: int, obj: dict[str, Any]) -> None:
    data = (json.dumps(obj, ensure_ascii=True) + "\n").encode()
    while len(data) > 4000 and obj.get("message"):
        obj = {**obj, "message": obj["message"][: len(obj["message"]) // 2] + " …"}
        data = (json.dumps(obj, ensure_ascii=True) + "\n").encode()
    os.write(fd, data)


def pytest_configure(config: pytest.Config) -> None:
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    fd = config.getoption("grader_report", None)
    if fd is not None:
        config.pluginmanager.register(Reporter(fd), "grader-report")
    if _sandboxed(config):
        _open_session(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION, None)
    if session is not None:
        session.close()
        del config.stash[_SESSION]
