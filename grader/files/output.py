"""Checks on an --output FILE that the commands make before their work, not after it."""
from __future__ import annotations

import os
from pathlib import Path


def cannot_write(output: str | os.PathLike[str]) -> str | None:
    """Why a report cannot be written to ``output`` (None: it can), found out before a long run:
    the file is opened for appending (which changes nothing in it) and removed again if it is
    new. The reason reads after the path: "--output x/y.json: no such folder 'x'"."""
    path = Path(output)
    if path.is_dir():
        return "is a folder, not a file"
    if not path.parent.is_dir():
        return f"no such folder {str(path.parent)!r}"
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        return f"cannot be written ({e.strerror or e})"
    if not existed:
        path.unlink(missing_ok=True)
    return None
