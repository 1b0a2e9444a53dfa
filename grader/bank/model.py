"""The bank's value objects: Problem, Bank, Verification (frozen dataclasses)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Mapping

from grader.errors import Location

KINDS = ("number", "quantity", "expression", "shape", "relation", "choice", "free_text", "code")


def frozen(d=None) -> Mapping:
    """A read-only plain mapping (for fields of frozen dataclasses)."""
    return MappingProxyType(dict(d or {}))


def plain(value):
    """YDict/YList (and nested) as plain dict/list: what crosses process boundaries."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Derive:
    """``derive``: the reference follows from a spec formula (or, for a shape, one per axis; for a
    relation, ``lhs op rhs``) evaluated ``at`` the given sizes."""

    formula: Any                # str, or tuple[str, ...] for a shape
    at: Mapping = field(default_factory=frozen)
    op: str | None = None       # relation kind: ">" etc., with formula = (lhs, rhs)


@dataclass(frozen=True)
class Measure:
    """``measure``: the reference is measured on the real mha (:func:`grader.spec.measure`), at one
    point (``at``: sizes) or, for a formula, at several (``points``); ``axis`` picks one axis of a
    measured shape."""

    quantity: str
    at: Mapping = field(default_factory=frozen)
    points: tuple = ()          # (Mapping, ...): a formula is checked at each
    axis: int | None = None


@dataclass(frozen=True)
class Variant:
    """``variant``: numbers drawn per learner from ``choose`` (name -> candidate values)."""

    seed_from: str
    choose: tuple               # ((name, (value, ...)), ...)


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and what to say about it: a literal ``answer`` or a spec ``formula``."""

    feedback: str
    answer: Any = None
    formula: str | None = None
    at: Mapping = field(default_factory=frozen)
    location: Location | None = None


@dataclass(frozen=True)
class Problem:
    """One exercise: what is asked, how the answer is read, and the verified reference."""

    id: str
    kind: str
    points: float
    prompt: str
    reference: Any
    location: Location | None = None
    subject: str = ""
    source: str = ""
    tolerance: Any = None       # relative tolerance as a number, or "1e-3 abs"/"0.1%": read by grader.answers
    sig_figs: int | None = None
    unit: str | None = None
    choices: tuple = ()         # ((letter, text), ...)
    feedback: Mapping = field(default_factory=frozen)   # correct/wrong/... -> text, written by the author
    mistakes: tuple = ()        # (Mistake, ...)
    derive: Derive | None = None
    measure: Measure | None = None
    variant: Variant | None = None
    partial: tuple = ()         # ((fraction_of_points, answer), ...) for partial credit
    note: str = ""
    solution: str | None = None  # code kind: reference solution (relative to the bank file)
    tests: str | None = None     # code kind: the tests (relative to the bank file)
    attempts: int | None = None  # submissions of it that count (`grader serve`); None: no limit

    def __hash__(self):
        return hash(self.id)

    @property
    def needs_person(self) -> bool:
        """Free text is recorded and reported, not scored."""
        return self.kind == "free_text"


@dataclass(frozen=True)
class Bank:
    """All problems of the loaded bank files, in file order."""

    problems: tuple
    paths: tuple = ()
    spec_path: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "_by_id", {p.id: p for p in self.problems})

    def get(self, problem_id: str) -> Problem | None:
        return self._by_id.get(problem_id)

    def __iter__(self):
        return iter(self.problems)

    def __len__(self):
        return len(self.problems)

    def __contains__(self, problem_id):
        return problem_id in self._by_id

    @property
    def subject(self):
        """The spec subject the references are derived from (loaded once, on first use; a spec
        that cannot be loaded raises the same error each time, without loading it again)."""
        got = self.__dict__.get("_subject")
        if got is None:
            from grader.spec import load_subject
            try:
                got = (load_subject(self.spec_path), None)
            except Exception as e:
                got = (None, e)
            object.__setattr__(self, "_subject", got)
        if got[1] is not None:
            raise got[1]
        return got[0]


@dataclass(frozen=True)
class Verification:
    """The result of checking one reference answer: ``expected`` is the bank's reference,
    ``found`` what the spec (and mha) give."""

    ok: bool
    expected: str
    found: str
    message: str




def with_reference(problem: Problem, reference, prompt: str | None = None) -> Problem:
    """The same problem with another reference (a variant's)."""
    return replace(problem, reference=reference, prompt=prompt if prompt is not None else problem.prompt)


def as_fraction(x) -> Fraction:
    """An exact number from an int, a numeric string ("1048576", "1/2", "1e3"), or a SymPy number."""
    if isinstance(x, bool):
        raise ValueError("not a number")
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, float):
        return Fraction(x)
    p, q = getattr(x, "p", None), getattr(x, "q", None)
    if isinstance(p, int) and isinstance(q, int):
        return Fraction(p, q)
    if getattr(x, "is_Float", False):
        return Fraction(str(x))
    if isinstance(x, str):
        return Fraction(x.replace(",", "").replace("_", "").strip())
    raise ValueError(f"not a number: {x!r}")
