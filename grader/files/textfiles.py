"""Read a file's text safely: regular files only (a FIFO, a device, a socket or a folder, or a
link to one, is refused before it is opened for reading, and again on the opened descriptor),
read with a bound rather than trusting ``st_size``; UTF-8, or UTF-16/32 with a byte order mark.
In an answers file, bytes that are not text become U+FFFD, which the answer rule reports per
answer; elsewhere they refuse the file. (Re-exported by :mod:`grader.files.yamlio`, their first home.)"""
from __future__ import annotations

import codecs
import os
import stat

from grader.errors import InputError, Location

DEFAULT_MAX_BYTES = 16 * 1024 * 1024


_NOT_REGULAR = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
READ_CHUNK = 1 << 20


def _not_regular(mode: int) -> str | None:
    for test, what in _NOT_REGULAR:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "a special file"


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of one regular file, at most ``max_bytes``; every failure is an InputError.

    A FIFO, a device, a socket or a folder (or a symbolic link to one) is refused before it is
    opened for reading (``stat``), and again on the descriptor once opened (``fstat``: a file
    swapped in between is refused too); it is opened non-blocking, so that even then no FIFO
    can hang the reader. The size is enforced by the read itself (at most ``max_bytes`` + 1
    bytes are read), never taken from ``st_size``: /proc files and sparse files lie about it."""
    where = Location(str(path))
    try:
        kind = _not_regular(os.stat(path).st_mode)
        if kind:
            raise InputError(f"{kind}, not a regular file: only regular files are read", where)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", where) from None
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind:
            raise InputError(f"{kind}, not a regular file: only regular files are read", where)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(READ_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise InputError(f"file is larger than {max_bytes:,} bytes", where)
        return b"".join(chunks)
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", where) from None
    finally:
        os.close(fd)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def decode(raw: bytes, name: str = "<input>", *, answers: bool = False) -> str:
    """Text of a file's bytes: UTF-8, or UTF-16/UTF-32 with a byte order mark (the BOM dropped).
    Bytes that are not valid in that encoding refuse a data file (with the byte's line and
    column); in an answers file each becomes U+FFFD, which the answer rule reports where it
    stands (``invalid answer: not valid Unicode at column 12``), so that the file's other
    answers are still read."""
    encoding, start = "utf-8", 0
    for bom, enc in _BOMS:
        if raw.startswith(bom):
            encoding, start = enc, len(bom)
            break
    body = raw[start:]
    if answers:
        return body.decode(encoding, "replace")
    try:
        return body.decode(encoding)
    except UnicodeDecodeError as e:
        good = body[:e.start].decode(encoding, "replace")
        line = good.count("\n") + 1
        column = len(good) - (good.rfind("\n") + 1) + 1
        raise InputError(f"not {encoding.upper().replace('-LE', '').replace('-BE', '')} text (byte {start + e.start})",
                         Location(name, line, column)) from None


def read_text(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES, answers: bool = False) -> str:
    """A regular file's text (:func:`read_bytes`, then :func:`decode`)."""
    return decode(read_bytes(path, max_bytes=max_bytes), str(path), answers=answers)
