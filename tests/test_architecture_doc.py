"""docs/ARCHITECTURE.md names every package and every path it names exists.

- Every package (a folder with ``__init__.py``) under grader/ and mha/, and every module at
  grader/'s top, is named in the document (as its path: ``grader/serve/`` or
  ``grader/serve/...``; a top module as ``grader/api.py``).
- Every ``grader/...`` or ``mha/...`` path the document writes exists (a file or a folder).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
TOPS = ("grader", "mha")
# a path as the document writes it: grader/serve/engine.py, grader/web/, mha/experiments/
PATH = re.compile(r"(?<![\w./-])((?:grader|mha)/[\w./-]*[\w/])")


def packages(root: Path) -> list[str]:
    """Each package as a folder path with a trailing slash (``grader/serve/``), and each module
    at grader/'s top (``grader/api.py``)."""
    out = []
    for top in TOPS:
        for init in sorted((root / top).rglob("__init__.py")):
            folder = init.parent.relative_to(root).as_posix()
            if "__pycache__" in folder or "/_bundled" in folder:
                continue
            out.append(folder + "/")
    out += sorted(f.relative_to(root).as_posix() for f in (root / "grader").glob("*.py"))
    return out


def named_paths(text: str) -> set[str]:
    return {m.group(1).rstrip(".") for m in PATH.finditer(text)}


def missing_packages(root: Path, text: str) -> list[str]:
    """The packages and top modules of ``root`` the text does not name."""
    named = named_paths(text)
    out = []
    for pkg in packages(root):
        if pkg.endswith("/"):
            if not any(p == pkg.rstrip("/") or p.startswith(pkg) for p in named):
                out.append(pkg)
        elif pkg not in named:
            out.append(pkg)
    return out


def dangling_paths(root: Path, text: str) -> list[str]:
    """The grader/... and mha/... paths the text names that do not exist under ``root``."""
    return sorted(p for p in named_paths(text) if not (root / p).exists())


# -- the checker itself, on a synthetic tree ------------------------------------------------------
def _tree(tmp_path: Path) -> Path:
    for f in ("grader/__init__.py", "grader/api.py", "grader/serve/__init__.py", "grader/serve/engine.py",
              "grader/serve/routes/__init__.py", "mha/__init__.py", "mha/experiments/__init__.py"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    return tmp_path


def test_the_checker_finds_a_missing_package_and_a_dangling_path(tmp_path):
    root = _tree(tmp_path)
    text = ("The API is `grader/api.py` (`grader/__init__.py` too); the service `grader/serve/engine.py`, "
            "its routes `grader/serve/routes/`; `mha/` and `mha/experiments/catalog.py`.")
    assert missing_packages(root, text) == []
    assert dangling_paths(root, text) == ["mha/experiments/catalog.py"]
    without_routes = text.replace("its routes `grader/serve/routes/`; ", "")
    assert missing_packages(root, without_routes) == ["grader/serve/routes/"]
    (root / "grader" / "deadline.py").write_text("")
    assert missing_packages(root, text) == ["grader/deadline.py"]


def test_paths_are_read_as_written():
    assert named_paths("see `grader/web/` and grader/claims/run.py. Also (mha/kv_cache.py)") == {
        "grader/web/", "grader/claims/run.py", "mha/kv_cache.py"}
    assert named_paths("not a path: mygrader/x.py, docs/grader/x") == set()


# -- the real document ------------------------------------------------------------------------------
def test_every_package_is_named_in_the_architecture_document():
    missing = missing_packages(ROOT, DOC.read_text(encoding="utf-8"))
    assert not missing, f"docs/ARCHITECTURE.md does not name: {', '.join(missing)}"


def test_every_path_the_architecture_document_names_exists():
    dangling = dangling_paths(ROOT, DOC.read_text(encoding="utf-8"))
    assert not dangling, f"docs/ARCHITECTURE.md names paths that do not exist: {', '.join(dangling)}"
