"""The drafter's typed results (frozen dataclasses): what ``grader draft`` and ``grader check-text``
report, what grader.api returns."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Proposed:
    """A check proposed for a statement, as a spec writes it (``fields`` in the spec's order), with
    what the drafter's own computation says of it (``holds``: None when it did not compute it)."""

    kind: str
    fields: tuple[tuple[str, object], ...]
    holds: bool | None = None
    evidence: str = ""


@dataclass(frozen=True)
class Statement:
    """A checkable statement: its exact quote, where it is, its kinds and the checks proposed."""

    id: str
    quote: str
    file: str
    line: int
    section: str
    kinds: tuple[str, ...]
    checks: tuple[Proposed, ...]
    document: str = "text"

    @property
    def failing(self) -> bool:
        return any(c.holds is False for c in self.checks)


@dataclass(frozen=True)
class Problem:
    """An inconsistency check-text found: where, what the text says and what the computation gives."""

    file: str
    line: int
    section: str
    kind: str               # arithmetic, total, formula, shape
    quote: str
    says: str
    gives: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind}: the text says {self.says}; the computation gives {self.gives}"


@dataclass(frozen=True)
class Model:
    key: str
    name: str
    values: tuple[tuple[str, str], ...]     # symbol -> figure, as the text states it


@dataclass(frozen=True)
class Draft:
    """A drafted spec: its statements, symbols and models, and the YAML that check-spec loads."""

    subject: str
    files: tuple[str, ...]
    statements: tuple[Statement, ...]
    symbols: tuple[str, ...]
    models: tuple[Model, ...]
    yaml: str
    words: int
    problems: tuple[Problem, ...] = ()
    unquotable: int = 0     # statements left out: no quote of them check-spec could find

    @property
    def by_kind(self) -> Mapping[str, int]:
        out: dict[str, int] = {}
        for s in self.statements:
            for k in s.kinds:
                out[k] = out.get(k, 0) + 1
        return out

    @property
    def proposed(self) -> int:
        return sum(1 for s in self.statements for c in s.checks if c.kind != "unverifiable")

    @property
    def failing(self) -> tuple[Statement, ...]:
        return tuple(s for s in self.statements if s.failing)


@dataclass(frozen=True)
class TextCheck:
    """What ``grader check-text`` found: the statements read, those recomputed, the inconsistencies."""

    files: tuple[str, ...]
    statements: int
    computed: int
    problems: tuple[Problem, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems
