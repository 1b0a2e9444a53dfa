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
import tempfile
from pathlib import Path

from grader.errors import GraderError

MIN_CHARS = 32


def load_or_make(path: str | os.PathLike[str]) -> bytes:
    """The secret in ``path``, made there first if there is no such file; :class:`GraderError`
    saying what is wrong with a file that cannot serve (unreadable, too short, not a file)."""
    p = Path(path)
    if not p.exists():
        # written whole beside it, then linked in place: a server starting beside this one reads
        # either no file or the whole secret, never half of one
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)   # mode 0600
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(secrets.token_hex(32) + "\n")
                os.link(tmp, p)
            except FileExistsError:
                pass        # made by a server starting beside this one: read below
            finally:
                os.unlink(tmp)
        except OSError as e:
            raise GraderError(f"{p}: cannot make the secret file ({e.strerror or e})") from None
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
