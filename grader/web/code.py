"""A code exercise on the pages: its template (the one file of its folder a learner may
download) and its tests' results grouped by test function, hidden tests only counted."""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.serve.app import State

TEMPLATE = "template.py"        # grader.code.grade leaves it (and solution.py) out of the tests it runs


def template_of(st: State, problem_id: str) -> Path | None:
    """The ``template.py`` beside a code exercise's tests (its ``tests:`` folder, or the folder
    of its one test file), if there is one: a plain file in that folder, never a link out of it."""
    p = st.engine.get(problem_id)
    tests = getattr(p, "tests", None) if p is not None and p.kind == "code" else None
    if not tests:
        return None
    folder = Path(tests)
    if not folder.is_dir():
        folder = folder.parent
    path = folder / TEMPLATE
    try:
        if path.is_symlink() or not path.is_file() or path.resolve().parent != folder.resolve():
            return None
    except OSError:
        return None
    return path


_CASE = re.compile(r"\[.*\]$")


def by_function(tests: list[dict[str, Any]]) -> dict[str, Any]:
    """The tests of a code job's result, for its page: the visible ones grouped by test function
    (``file::test_name``, the ``[case]`` dropped), each group with its counts and its failed
    cases; the hidden ones only counted (their names and messages are not shown)."""
    groups: dict[str, dict[str, Any]] = {}
    hidden = {"total": 0, "passed": 0}
    for t in tests:
        if t.get("hidden"):
            hidden["total"] += 1
            hidden["passed"] += bool(t.get("passed"))
            continue
        name = str(t.get("name") or "")
        key = _CASE.sub("", name)
        g = groups.setdefault(key, {"name": key, "function": key.rpartition("::")[2] or key, "total": 0,
                                    "passed": 0, "failed": []})
        g["total"] += 1
        if t.get("passed"):
            g["passed"] += 1
        else:
            g["failed"].append({"name": name, "case": name[len(key):], "message": str(t.get("message") or "")})
    shown = list(groups.values())
    return {"groups": shown, "hidden": hidden, "total": len(tests),
            "passed": sum(1 for t in tests if t.get("passed"))}
