"""``prepare(spec)``: a spec's reference and mistakes read once per process, by its kind."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from grader.errors import SpecError

from .guard import shorten
from .model import AnswerSpec, Unreadable


@lru_cache(maxsize=4096)
def prepare(spec: AnswerSpec) -> Any:
    """The spec's reference and mistakes, read once per process by its kind's ``prepare``;
    :class:`SpecError` if the reference cannot be read (call it when loading a bank to find
    such errors early)."""
    from .kinds import KINDS
    try:
        read = KINDS[spec.kind].prepare
        if read is None:
            raise TypeError(f"kind {spec.kind!r} reads no reference")
        return read(spec)
    except Unreadable as e:
        raise SpecError(f"reference {shorten(repr(spec.reference), 60)}: {e}") from None
