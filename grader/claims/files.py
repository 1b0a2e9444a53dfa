"""Which files a spec is, and a cheap look into them — without reading them as YAML, so that
``grader check-spec`` can start its measuring process (torch) as early as possible. Files are
read only through :func:`grader.files.textfiles.read_bytes` (regular files, a bounded read)."""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from grader.errors import GraderError, InputError, Location


def spec_files(paths: Iterable[str | os.PathLike[str]] | None = None) -> list[Path]:
    """The YAML files to load: the bundled spec folder when ``paths`` is empty; a folder gives its
    ``*.yaml``/``*.yml`` files (sorted)."""
    if not paths:
        from grader.files.bundled import bundled
        paths = [bundled("spec")]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            # every entry but a folder: one that is not a regular file (a FIFO, a device, a link
            # to one) is refused by the reader, at its path, with the others' errors
            found = sorted(q for q in p.iterdir() if q.suffix in (".yaml", ".yml") and not q.is_dir())
            if not found:
                raise InputError("no spec files (*.yaml) in this folder", Location(str(p)))
            files.extend(found)
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            raise InputError("no such file or folder", Location(str(p)))
    return files


def may_measure(paths: Iterable[str | os.PathLike[str]] | None = None) -> bool:
    """Whether the spec files under ``paths`` may hold a measured check: a look at their text
    for ``kind: <measured kind>``, cheap enough to start the measuring process (torch) before the
    files are loaded. False when the files cannot be found or read (loading will say why)."""
    from .checks import KINDS

    names = "|".join(sorted(k for k, kind in KINDS.items() if kind.MEASURES))
    pattern = re.compile(r"\bkind\s*:\s*[\"']?(?:%s)\b" % names)
    try:
        files = spec_files(paths)
    except GraderError:
        return False
    from grader.files import textfiles
    for f in files:
        try:       # regular files only, a bounded read: a FIFO or a sparse giant is refused here too
            if pattern.search(textfiles.read_bytes(f).decode("utf-8", "replace")):
                return True
        except GraderError:
            continue
    return False
