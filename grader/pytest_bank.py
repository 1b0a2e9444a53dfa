"""pytest plugin, part 1: the exercise bank as test items (loaded through ``grader.pytest_plugin``).

Collects ``*.yaml`` under a folder named ``exercises`` (the code exercises' own ``code/``
folders excepted): one item per problem, which verifies the problem's reference answer with
:func:`grader.bank.verify_reference`. A failure reads ``file:line: id: what is wrong`` with
what was expected and what was found — not a traceback into the engine (the pattern of
pytest's "Working with non-python tests"). A file that cannot be loaded is one failing item
listing every error at file:line:column.

Import-light: the bank is imported when a YAML file is collected.
"""
from __future__ import annotations

from pathlib import Path

import pytest

SKIP_DIRS = {"code", "__pycache__"}


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
