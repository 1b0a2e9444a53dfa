"""pytest plugin, part 1: the exercise bank as test items (loaded through ``grader.pytest_plugin``).

**Opt-in.** A project opts in with the ini option ``grader_banks``: the folders (relative to
the ini file's folder, or the rootdir) whose ``*.yaml`` are exercise banks::

    [tool.pytest.ini_options]      # pyproject.toml; or [pytest] in pytest.ini / tox.ini
    grader_banks = ["exercises"]

Without it the plugin collects nothing: another project's tests, its own ``exercises/``
folder included, run as if grader were not installed. ``--grader-banks DIR`` opts in from
the command line (``pytest --grader-banks exercises exercises/``).

Under those folders (the code exercises' own ``code/`` folders and dot folders excepted):
one item per problem, which verifies the problem's reference answer with
:func:`grader.api.verify_reference` (the plugin calls only :mod:`grader.api`). A failure reads ``file:line: id: what is wrong`` with
what was expected and what was found — not a traceback into the engine (the pattern of
pytest's "Working with non-python tests"). A file that cannot be loaded is one failing item
listing every error at file:line:column.

Import-light: the bank is imported when a YAML file is collected.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TracebackStyle

    from grader.api import Bank
    from grader.api.shells import BankProblem, Verification

SKIP_DIRS = {"code", "__pycache__"}
COURSE_FILES = {"assessments.yaml", "assessments.yml"}     # a bank folder's course: one item that checks it
INI = "grader_banks"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI, type="paths",
                  help="grader: folders whose *.yaml files are exercise banks, collected as tests "
                       "(none by default: the plugin collects nothing)")
    parser.getgroup("grader", "grader: code exercises").addoption(
        "--grader-banks", action="append", default=[], metavar="DIR",
        help="collect the exercise bank(s) in DIR (as the ini option grader_banks does)")


def bank_roots(config: pytest.Config) -> list[Path]:
    """The folders this project opted in (ini ``grader_banks`` and ``--grader-banks``)."""
    roots = [Path(p) for p in config.getini(INI)]
    roots += [Path(config.invocation_params.dir, p) for p in config.getoption("grader_banks") or []]
    return [r.resolve() for r in roots]


# ------------------------------------------------------------------ the bank


def _is_bank_file(path: Path, roots: list[Path]) -> bool:
    if path.suffix not in (".yaml", ".yml"):
        return False
    path = path.resolve()
    for root in roots:
        try:
            below = path.parent.relative_to(root).parts
        except ValueError:
            continue
        return not any(p in SKIP_DIRS or p.startswith(".") for p in below)
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> BankFile | CourseFile | None:
    roots = bank_roots(parent.config)
    if roots and _is_bank_file(Path(file_path), roots):
        resolved = Path(file_path).resolve()
        if resolved.name in COURSE_FILES and resolved.parent in roots:
            return CourseFile.from_parent(parent, path=file_path)
        return BankFile.from_parent(parent, path=file_path)
    return None


class CourseFile(pytest.File):
    """A bank folder's ``assessments.yaml``: one item, checked against the folder's bank."""

    def collect(self) -> Iterator[pytest.Item]:
        yield CourseItem.from_parent(self, name="assessments")


class CourseItem(pytest.Item):
    """Loads the course against its bank: fails with every error at its file:line:column."""

    def runtest(self) -> None:
        from grader.api import load_bank, load_course
        from grader.errors import GraderError, each
        try:
            load_course(load_bank(self.path.parent), self.path)
        except GraderError as e:
            raise ReferenceMismatch(tuple(str(x) for x in each(e))) from None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str:
        if isinstance(excinfo.value, ReferenceMismatch):
            return "\n".join(excinfo.value.args[0])
        return f"{self.path}: loading the course raised {type(excinfo.value).__name__}: {excinfo.value}"

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"course file {self.path.name}"


class BankFile(pytest.File):
    """One bank file: an item per problem, or one failing item listing why it cannot be read."""

    def collect(self) -> Iterator[pytest.Item]:
        from grader.api import load_bank
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

    def __init__(self, *, problem: BankProblem, bank: Bank, **kw: Any) -> None:
        super().__init__(**kw)
        self.problem = problem
        self.bank = bank
        self.verification: Verification | None = None

    def runtest(self) -> None:
        from grader.api import verify_reference
        self.verification = v = verify_reference(self.problem, self.bank)
        if not v.ok:
            raise ReferenceMismatch(v)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str:
        if isinstance(excinfo.value, ReferenceMismatch):
            v = excinfo.value.args[0]
            return "\n".join([f"{self.problem.location}: {self.problem.id}: {v.message}",
                              f"    expected: {v.expected}",
                              f"    found:    {v.found}"])
        return f"{self.problem.location}: {self.problem.id}: verifying it raised " \
               f"{type(excinfo.value).__name__}: {excinfo.value}"

    def reportinfo(self) -> tuple[Path, int, str]:
        line = (self.problem.location.line or 1) - 1 if self.problem.location else 0
        return self.path, line, f"problem {self.problem.id} ({self.problem.kind})"


class BankErrorItem(pytest.Item):
    """A bank file that cannot be loaded: fails with every error at its file:line:column."""

    def __init__(self, *, errors: tuple[str, ...], **kw: Any) -> None:
        super().__init__(**kw)
        self.errors = errors

    def runtest(self) -> None:
        raise ReferenceMismatch(self.errors)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: TracebackStyle | None = None) -> str:
        return "\n".join(self.errors)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"bank file {self.path.name}"
