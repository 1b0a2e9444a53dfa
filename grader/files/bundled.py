"""Where the bundled subject lives: the repository's spec/ and exercises/, or the
copies inside an installed wheel (grader/_bundled/)."""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]   # grader/


def bundled(name: str) -> Path:
    """Path of the bundled ``spec`` or ``exercises`` folder."""
    inside = _PKG / "_bundled" / name
    if inside.is_dir():
        return inside
    return _PKG.parent / name
