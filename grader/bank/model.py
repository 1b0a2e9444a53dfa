"""The bank's value objects: Problem, Bank, Verification (frozen dataclasses).

A :class:`Bank` also holds what is derived from it (its spec subject, the variants of its
problems, the grader's prepared answer specs): :meth:`Bank.memo`, a thread-safe cache that
lives and dies with the bank, so a reloaded bank never sees what was derived from another.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Iterator, Mapping, TypeVar

from grader.answers.kinds import KINDS as ANSWER_KIND_REGISTRY
from grader.errors import Location

from .rubric import Rubric
from grader.values import frozen_map, plain, to_fraction

KINDS: tuple[str, ...] = tuple(ANSWER_KIND_REGISTRY)    # every answer kind (grader.answers.kinds), code included
T = TypeVar("T")

frozen = frozen_map     # the bank's name for it (grader.values.frozen_map)
__all__ = ["KINDS", "Bank", "Derive", "Measure", "BankMistake", "Problem", "Variant", "Verification",
           "as_fraction", "frozen", "plain", "with_reference"]


@dataclass(frozen=True)
class Derive:
    """``derive``: the reference follows from a spec formula (or, for a shape, one per axis; for a
    relation, ``lhs op rhs``) evaluated ``at`` the given sizes."""

    formula: Any                # str, or tuple[str, ...] for a shape
    at: Mapping[str, Any] = field(default_factory=frozen)
    op: str | None = None       # relation kind: ">" etc., with formula = (lhs, rhs)


@dataclass(frozen=True)
class Measure:
    """``measure``: the reference is measured on the real mha (:func:`grader.claims.measure`), at one
    point (``at``: sizes) or, for a formula, at several (``points``); ``axis`` picks one axis of a
    measured shape."""

    quantity: str
    at: Mapping[str, Any] = field(default_factory=frozen)
    points: tuple[Mapping[str, Any], ...] = ()  # a formula is checked at each
    axis: int | None = None


@dataclass(frozen=True)
class Variant:
    """``variant``: numbers drawn per learner from ``choose`` (name -> candidate values)."""

    seed_from: str
    choose: tuple[tuple[str, tuple[int, ...]], ...]     # ((name, (value, ...)), ...)


@dataclass(frozen=True)
class BankMistake:
    """A known wrong answer as a bank file writes it, and what to say about it: a literal
    ``answer`` or a spec ``formula`` (evaluated at the problem's sizes when the grader prepares
    the problem into :class:`grader.answers.Mistake` objects)."""

    feedback: str
    answer: Any = None
    formula: str | None = None
    at: Mapping[str, Any] = field(default_factory=frozen)
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
    choices: tuple[tuple[str, str], ...] = ()     # ((letter, text), ...)
    feedback: Mapping[str, Any] = field(default_factory=frozen)   # correct/wrong/... -> text, by the author
    mistakes: tuple[BankMistake, ...] = ()
    derive: Derive | None = None
    measure: Measure | None = None
    variant: Variant | None = None
    partial: tuple[tuple[float, Any], ...] = ()   # ((fraction_of_points, answer), ...) for partial credit
    note: str = ""
    solution: str | None = None  # code kind: reference solution (relative to the bank file)
    tests: str | None = None     # code kind: the tests (relative to the bank file)
    attempts: int | None = None  # submissions of it that count (`grader serve`); None: no limit
    title: str = ""             # a short human title (the bank's `title:`, else derived from the prompt)
    rubric: Rubric | None = None  # for the person who grades it (grader/bank/rubric.py)

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def needs_person(self) -> bool:
        """Free text is recorded and reported, not scored (a kind graded by a person)."""
        kind = ANSWER_KIND_REGISTRY.get(self.kind)
        return kind is not None and kind.graded == "person"


@dataclass(frozen=True)
class Bank:
    """All problems of the loaded bank files, in file order."""

    problems: tuple[Problem, ...]
    paths: tuple[str, ...] = ()
    spec_path: str | None = None
    root: str | None = None     # the folder it was loaded from (None: one file); its assessments.yaml

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {p.id: p for p in self.problems})
        object.__setattr__(self, "_lock", threading.RLock())
        object.__setattr__(self, "_memo", {})

    def get(self, problem_id: str) -> Problem | None:
        by_id: dict[str, Problem] = self.__dict__["_by_id"]
        return by_id.get(problem_id)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    def __contains__(self, problem_id: object) -> bool:
        return problem_id in self.__dict__["_by_id"]

    def memo(self, key: Any, make: Callable[..., T], *args: Any) -> T:
        """What ``make(*args)`` gives, made once per bank and key (thread-safe; ``make`` runs
        with the bank's lock held, so it must not wait for another thread that memoizes on this
        bank). What it makes lives and dies with this bank."""
        memo: dict[Any, Any] = self.__dict__["_memo"]
        try:
            return memo[key]            # type: ignore[no-any-return]
        except KeyError:
            pass
        with self.__dict__["_lock"]:
            if key not in memo:
                memo[key] = make(*args)
            return memo[key]            # type: ignore[no-any-return]

    def forget(self, key: Any) -> Any:
        """Drop what was memoized under ``key`` (the next :meth:`memo` makes it again); what it was, or None."""
        with self.__dict__["_lock"]:
            return self.__dict__["_memo"].pop(key, None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without what was derived from it (and its lock): made again where needed."""
        return {"problems": self.problems, "paths": self.paths, "spec_path": self.spec_path, "root": self.root}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)
        self.__post_init__()

    @property
    def subject(self) -> Any:
        """The spec subject the references are derived from (loaded once, on first use; a spec
        that cannot be loaded raises the same error each time, without loading it again)."""
        def load() -> tuple[Any, Exception | None]:
            from grader.claims import load_subject
            try:
                return (load_subject(self.spec_path), None)
            except Exception as e:
                return (None, e)
        got = self.memo("subject", load)
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




def with_reference(problem: Problem, reference: Any, prompt: str | None = None) -> Problem:
    """The same problem with another reference (a variant's)."""
    return replace(problem, reference=reference, prompt=prompt if prompt is not None else problem.prompt)


def as_fraction(x: Any) -> Fraction:
    """An exact number from an int, a numeric string ("1048576", "1/2", "1e3"), or a SymPy number
    (:func:`grader.values.to_fraction`)."""
    return to_fraction(x)
