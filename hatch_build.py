"""Wheel build hook: bundle spec/ and exercises/ into the wheel (as grader/_bundled/...), all
but what learners must not get: the code exercises' reference solutions (solution.py) and
hidden tests (test files named *hidden*). A grading host grades code answers with the course's
own bank folder (``grader grade --exercises exercises/``), where both stay."""
from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLED = {"spec": "grader/_bundled/spec", "exercises": "grader/_bundled/exercises"}


def kept(path: Path) -> bool:
    """Whether a file of the bundled folders ships in the wheel."""
    return (path.name != "solution.py" and "hidden" not in path.name and "__pycache__" not in path.parts
            and not path.name.endswith(".pyc"))


class BundleHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        root = Path(self.root)
        for folder, dest in BUNDLED.items():
            for path in sorted((root / folder).rglob("*")):
                if path.is_file() and kept(path.relative_to(root / folder)):
                    build_data["force_include"][str(path)] = f"{dest}/{path.relative_to(root / folder).as_posix()}"
