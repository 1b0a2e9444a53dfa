"""Results of experiments kept on disk, so that a second `grader check-spec` trains nothing.

A result is stored under a key made of everything that decides it: the experiment and its
configuration (sizes, seed, steps), the torch and grader versions, the CPU kernels in use
(:mod:`mha.experiments.numerics`), and a hash of the code that computes it (mha's attention and
the experiments' modules) — changing any of them misses the cache rather than reading a stale result. One JSON file per key, written to a temporary file
and renamed (a reader never sees half a file); an unreadable or foreign file is a miss.

Folder: $GRADER_CACHE_DIR, else $XDG_CACHE_HOME/grader, else ~/.cache/grader; the results are
in its experiments/ subfolder. GRADER_CACHE_DIR=off (or an empty value) turns the cache off.
A folder that cannot be written is not an error: results are then computed every time.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = 1
COMPUTING = ("tasks.py", "stats.py", "runner.py", "mechanics.py", "numerics.py")   # the modules that compute results


def folder() -> Path | None:
    """The cache folder (None: caching is off)."""
    env = os.environ.get("GRADER_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off") else Path(env) / "experiments"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "grader" / "experiments"


@lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of the source files that compute the experiments' results."""
    here = Path(__file__).resolve().parent
    files = [here / f for f in COMPUTING] + [here.parent / f for f in ("attention.py", "ops.py", "tracing.py", "measure.py")]
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def versions() -> dict[str, str | int]:
    import torch

    from .numerics import tag

    try:
        from importlib.metadata import version
        grader = version("grader")
    except Exception:  # noqa: BLE001 - not installed (a source checkout): the package's own
        import grader as _g
        grader = getattr(_g, "__version__", "unknown")
    return {"torch": torch.__version__, "grader": grader, "code": code_hash(), "kernels": tag(), "format": FORMAT}


def key(what: Mapping[str, object]) -> str:
    """The file name for a result of ``what`` (a JSON-able description) with these versions."""
    text = json.dumps({"what": what, **versions()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load(what: Mapping[str, object]) -> dict[str, Any] | None:
    """The stored result of ``what`` (JSON: a dict of plain data), or None."""
    base = folder()
    if base is None:
        return None
    path = base / f"{key(what)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("what") != what or "result" not in data:
        return None
    result: dict[str, Any] = data["result"]
    return result


def store(what: Mapping[str, object], result: Mapping[str, object]) -> bool:
    """Keep ``result`` for ``what``; False if the folder cannot be written."""
    base = folder()
    if base is None:
        return False
    try:
        base.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=base, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"what": what, "versions": versions(), "result": result}, f)
            os.replace(tmp, base / f"{key(what)}.json")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    return True
