"""The spec's value objects: a subject, its claims and their checks, and the results.

Everything here is a frozen dataclass; the loader (:mod:`grader.claims.load`) builds
them from YAML and the runner (:mod:`grader.claims.run`) turns claims into results.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Mapping

from grader.errors import Location
from grader.values import frozen_map

__all__ = ["EXPECTATIONS", "VERDICTS", "Verdict", "Check", "CheckResult", "Claim", "ClaimResult", "Constraint", "Document",
           "ModelConfig", "Source", "Subject", "frozen_map"]

class Verdict(StrEnum):
    """A check's or a claim's verdict (a string: equal to its value, written as it in every report)."""

    HOLDS = "holds"
    REFUTED = "refuted"
    ERROR = "error"
    UNVERIFIABLE = "unverifiable"
    # demonstrations (kind: demonstrate): evidence from seeded experiments, not proofs
    DEMONSTRATED = "demonstrated"
    NOT_DEMONSTRATED = "not demonstrated"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"     # the experiment was not run (check-spec --no-train); it is not a verdict


V = Verdict
VERDICTS = (V.HOLDS, V.REFUTED, V.ERROR, V.UNVERIFIABLE)
DEMONSTRATION_VERDICTS = (V.DEMONSTRATED, V.NOT_DEMONSTRATED, V.INCONCLUSIVE, V.SKIPPED)
ALL_VERDICTS = VERDICTS + DEMONSTRATION_VERDICTS
EXPECTATIONS = (V.HOLDS, V.REFUTED, V.UNVERIFIABLE, V.DEMONSTRATED, V.NOT_DEMONSTRATED)


@dataclass(frozen=True)
class Source:
    """Where a claim stands: a document (by key in the subject's sources) and a section."""

    document: str
    section: str = ""

    def __str__(self) -> str:
        return f"{self.document} {self.section}".strip()


@dataclass(frozen=True)
class Document:
    """One source text of a subject."""

    key: str
    title: str
    path: str = ""


@dataclass(frozen=True)
class ModelConfig:
    """Configuration data of a real model, recorded with its citation."""

    key: str
    name: str
    citation: str
    values: Mapping[str, Any] = field(default_factory=frozen_map)
    location: Location | None = None


@dataclass(frozen=True)
class Check:
    """One check of a claim: its kind and its (already validated) parameters.

    ``params`` maps each field of the check to its loaded value; expressions are
    already parsed (sympy) and values already numbers, so running needs no text.
    """

    kind: str
    params: Mapping[str, Any]
    location: Location | None = None

    def __getitem__(self, key: str) -> Any:
        return self.params[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)


@dataclass(frozen=True)
class Claim:
    """A claim as the text states it, where it stands, how it is checked, what the author expects."""

    id: str
    quote: str
    source: Source
    checks: tuple[Check, ...]
    expect: str
    corrected: str = ""
    note: str = ""
    location: Location | None = None
    subject: str = ""


@dataclass(frozen=True)
class Subject:
    """A subject: its sources, symbols (a grader.expr SymbolTable), formulas, models and claims."""

    id: str
    title: str
    documents: Mapping[str, Any]
    table: Any
    formulas: Mapping[str, Any]
    constraints: tuple[Constraint, ...]
    models: Mapping[str, Any]
    claims: tuple[Claim, ...]
    file: str = ""
    aliases: Mapping[str, Any] = field(default_factory=frozen_map)   # other name -> symbol name
    # ``table`` reads learners' answers (symbols, aliases, definitions); ``spec_table`` the spec's own
    # expressions, in which a formula's name stands for the formula too (None: the same as table)
    spec_table: Any = None
    # sources whose quotes could not be checked (no ``path:``, or no file there): one sentence each
    unchecked: tuple[str, ...] = ()

    def canonical(self, name: str) -> str:
        """The symbol a name stands for (d_model -> d)."""
        return str(self.aliases.get(name, name))

    def claim(self, claim_id: str) -> Claim | None:
        return next((c for c in self.claims if c.id == claim_id), None)


@dataclass(frozen=True)
class Constraint:
    """A constraint on the symbols: ``divides`` (a divides b) or a relation."""

    text: str
    kind: str            # "divides" | "relation"
    args: tuple[Any, ...]   # (a, b) sympy exprs for divides; (relation,) otherwise
    location: Location | None = None


@dataclass(frozen=True)
class CheckResult:
    """What one check found: a verdict and its evidence (one line plus details)."""

    kind: str
    verdict: Verdict
    summary: str
    details: Mapping[str, Any] = field(default_factory=frozen_map)
    method: str = ""     # "symbolic" | "measured" | "config" | ""

    def __post_init__(self) -> None:    # a check kind may write its verdict as the string
        object.__setattr__(self, "verdict", Verdict(self.verdict))


@dataclass(frozen=True)
class ClaimResult:
    """The verdict on one claim, with the results of its checks."""

    claim: Claim
    verdict: Verdict
    checks: tuple[CheckResult, ...]
    seconds: float = 0.0
    disagreement: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    @property
    def ok(self) -> bool:
        """The verdict is the expected one (a skipped demonstration is no verdict, so no mismatch)."""
        if not (self.verdict == self.claim.expect or self.verdict == Verdict.SKIPPED):
            return False
        return not self.checks_not_as_expected

    @property
    def checks_not_as_expected(self) -> tuple[CheckResult, ...]:
        """The checks that state what they must give (``expect:``) and gave something else."""
        return tuple(r for r in self.checks if r.details.get("as_expected") is False)

    @property
    def evidence(self) -> str:
        """One line: the first check that decided the verdict, else the first check."""
        if self.disagreement:
            return self.disagreement
        for r in self.checks:
            if r.verdict == self.verdict:
                return r.summary
        return self.checks[0].summary if self.checks else ""
