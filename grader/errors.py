"""One exception hierarchy for the whole engine; every error carries where it happened.

The shells (CLI, pytest plugin) turn these into messages at the edge; nothing
below them prints or exits.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a file: 1-based line and column, either may be unknown."""

    file: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class GraderError(Exception):
    """Base of every error the engine raises on purpose."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class InputError(GraderError):
    """A file that cannot be read or parsed (bad YAML, duplicate key, alias, too large)."""


class SpecError(GraderError):
    """One problem in a spec or exercise file (unknown symbol, bad expression, ...)."""


class ErrorList(GraderError):
    """Many errors found at once in one or more files; reported together."""

    def __init__(self, errors: list[GraderError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))


class OptionError(GraderError):
    """A request the engine cannot carry out as asked, because of one of its options (``option``:
    its name as the user gave it, e.g. ``--only``): no claim matches, no such device."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


def each(err: GraderError) -> list[GraderError]:
    """The errors ``err`` stands for: its list for an :class:`ErrorList`, else itself."""
    return list(err.errors) if isinstance(err, ErrorList) else [err]
