"""The secret that signs the pages' session and CSRF values, kept in a file so that a restart of
`grader serve` signs nobody out (a secret made at each start would).

The file is made on first use (256 random bits as hex, readable by its owner alone) and read at
every start after; removing it, or writing another secret into it, signs everyone out at the
next start. It is not in the database: a copy of the database (a backup) holds the tokens'
digests, and with the secret too it could make a session for anyone.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from grader.errors import GraderError

DEFAULT = "grader.secret"   # beside ./grader.db, in the folder the service runs in
MIN_CHARS = 32


def load_or_make(path: str | os.PathLike[str]) -> bytes:
    """The secret in ``path``, made there first if there is no such file; :class:`GraderError`
    saying what is wrong with a file that cannot serve (unreadable, too short, not a file)."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass                # made before (or by a server starting beside this one): read below
    except OSError as e:
        raise GraderError(f"{p}: cannot make the secret file ({e.strerror or e})") from None
    else:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    if not p.is_file():
        raise GraderError(f"{p}: the secret file is not a file")
    try:
        text = p.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise GraderError(f"{p}: cannot read the secret file ({getattr(e, 'strerror', None) or e})") from None
    if len(text) < MIN_CHARS:
        raise GraderError(f"{p}: the secret file holds {len(text)} characters; at least {MIN_CHARS} are needed "
                          "(remove it and a new secret is made)")
    return text.encode("utf-8")
