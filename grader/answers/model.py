"""Value objects of answer checking: Tolerance, Mistake, AnswerSpec, Outcome (frozen, picklable).

An :class:`AnswerSpec` is what the grader knows about one problem (kind, reference,
tolerance, the mistakes worth a message); an :class:`Outcome` is what it says about one
answer. Both are plain frozen dataclasses of tuples, strings and numbers, so they hash
(the grader caches outcomes by ``(spec, answer)``) and cross process boundaries.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

from grader.errors import SpecError

if TYPE_CHECKING:
    from grader.expr import SymbolTable

#: an answer as given (text, a number, a list from YAML, ...), or a value written like one (a
#: reference, a mistake): each kind's reader checks what it is, so it is any value here
Raw: TypeAlias = Any

STATUSES = ("correct", "wrong", "invalid", "undecided", "needs_person")
# What an answer counts: which common mistakes make sense for it (a factor 2 is multiply-adds
# only for FLOPs, a factor 4 elements against bytes only for bytes, ...). None: not known.
MEASURES = ("flops", "bytes", "params", "count", "dim", "shape")


def frozen_value(value: Raw) -> Raw:
    """Lists (YAML sequences) as tuples, recursively; mappings as sorted tuples of pairs."""
    if isinstance(value, (list, tuple)):
        return tuple(frozen_value(v) for v in value)
    if isinstance(value, dict):
        return tuple((frozen_value(k), frozen_value(v)) for k, v in value.items())
    return value


@dataclass(frozen=True)
class Tolerance:
    """How far a number may be from the reference: ``|answer - reference| <= abs``, or
    ``<= rel * |reference|``. Exact fractions, so big integers are never rounded."""

    rel: Fraction | None = None
    abs: Fraction | None = None

    @classmethod
    def of(cls, raw: object) -> "Tolerance | None":
        """Read a tolerance as a problem writes it: None; a number (relative); ``{"rel": x}``,
        ``{"abs": x}``; or text: ``"1e-3"`` (relative), ``"1e-3 rel"``, ``"0.5 abs"``, ``"0.1%"``."""
        if raw is None or isinstance(raw, Tolerance):
            return raw
        if isinstance(raw, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in raw):
            raw = dict(raw)
        if isinstance(raw, dict):
            unknown = set(raw) - {"rel", "abs"}
            if unknown or not raw:
                raise SpecError(f"tolerance must be {{rel: x}} or {{abs: x}}, not {raw!r}")
            return cls(rel=_nonneg(raw.get("rel")), abs=_nonneg(raw.get("abs")))
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return cls(rel=_nonneg(raw))
        if isinstance(raw, str):
            m = re.fullmatch(r"\s*([0-9.eE+\-]+)\s*(%|rel|abs)?\s*", raw)
            if m:
                value = _nonneg(m.group(1))
                assert value is not None        # read from text: a number
                if m.group(2) == "%":
                    return cls(rel=value / 100)
                if m.group(2) == "abs":
                    return cls(abs=value)
                return cls(rel=value)
        raise SpecError(f"cannot read tolerance {raw!r}: write 1e-3 (relative), '0.5 abs' or '0.1%'")

    @property
    def exact(self) -> bool:
        """Tolerance 0: only the exact value."""
        return not self.rel and not self.abs

    def allows(self, answer: Fraction, reference: Fraction, margin: Fraction | None = None) -> bool:
        """Whether ``answer`` is within the tolerance of ``reference``; with ``margin``, whether
        every number within ``margin`` of ``answer`` is (an approximated answer)."""
        diff = abs(answer - reference) + (margin or 0)
        if self.abs is not None and diff <= self.abs:
            return True
        return self.rel is not None and diff <= self.rel * abs(reference)

    def __str__(self) -> str:
        parts = []
        if self.rel is not None:
            parts.append(f"{float(self.rel * 100):g}%")
        if self.abs is not None:
            parts.append(f"±{float(self.abs):g}")
        return " or ".join(parts)


def _nonneg(x: object) -> Fraction | None:
    if x is None:
        return None
    try:
        value = Fraction(str(x)) if not isinstance(x, (int, Fraction)) else Fraction(x)
    except (ValueError, ZeroDivisionError):
        raise SpecError(f"tolerance {x!r} is not a number") from None
    if value < 0:
        raise SpecError(f"tolerance {x!r} is negative")
    return value


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and what to say about it.

    ``value`` is written like an answer of the problem's kind (a number, ``"16 MB"``,
    ``"3*d**2"``, ``[64, 128]``, a choice letter) and compared with the same rules as the
    reference; ``credit`` (0..1) is the partial credit it earns."""

    value: Raw
    message: str
    credit: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", frozen_value(self.value))
        credit = float(self.credit)
        if not 0.0 <= credit <= 1.0:
            raise SpecError(f"a mistake's credit must lie in 0..1, not {self.credit!r}")
        object.__setattr__(self, "credit", credit)


@dataclass(frozen=True)
class AnswerSpec:
    """What the grader knows about one problem.

    - ``kind``: one of :data:`grader.answers.KINDS` (number, quantity, expression, shape, relation,
      choice, free_text, interval; each a module of :mod:`grader.answers.kinds`).
    - ``reference``: the right answer, written as an answer of that kind (int, Fraction,
      decimal text, ``"4*d**2 + 4*d"``, ``(128, 64)``, ``"n > 2*d"``, a choice letter).
    - ``tolerance``: None, a number (relative), ``{"rel": x}``, ``{"abs": x}`` or text.
    - ``sig_figs``: the fewest significant figures an answer may be rounded to (see
      :mod:`grader.answers.compare`).
    - ``unit``: the reference's unit for a quantity (``"byte"``).
    - ``choices``: letter -> text (a mapping or pairs).
    - ``mistakes``: :class:`Mistake` values worth a specific message (and maybe credit).
    - ``feedback``: the author's text for a wrong answer.
    - ``table``: a :class:`grader.expr.SymbolTable` for expressions and relations.
    - ``measures``: what the answer counts (:data:`MEASURES`: flops, bytes, params, count,
      dim, shape), or None; only the derived factor messages that fit it are offered.
    - ``derived``: :class:`Mistake` values derived from the spec (a term missing, biases
      added, d instead of d_k, ...; :mod:`grader.answers.derive`), tried after ``mistakes``.
      A value may also be a SymPy expression or relation in the table's symbols.
    """

    kind: str
    reference: Raw
    tolerance: Tolerance | None = None                  # as given: read by Tolerance.of
    sig_figs: int | None = None
    unit: str | None = None
    choices: tuple[tuple[str, str], ...] | None = None  # as given: a mapping or pairs
    mistakes: tuple[Mistake, ...] = ()                  # as given: Mistake or (value, message[, credit])
    feedback: str | None = None
    table: SymbolTable | None = field(default=None)
    measures: str | None = None
    derived: tuple[Mistake, ...] = ()

    def __post_init__(self) -> None:
        from .kinds import ANSWER_KINDS     # the registry of kinds (grader.answers.kinds)
        if self.kind not in ANSWER_KINDS:
            raise SpecError(f"unknown answer kind {self.kind!r}; expected one of {', '.join(ANSWER_KINDS)}")
        if self.measures is not None and self.measures not in MEASURES:
            raise SpecError(f"unknown measure {self.measures!r}; expected one of {', '.join(MEASURES)}")
        object.__setattr__(self, "reference", frozen_value(self.reference))
        object.__setattr__(self, "tolerance", Tolerance.of(frozen_value(self.tolerance)))
        if self.sig_figs is not None and (isinstance(self.sig_figs, bool) or not isinstance(self.sig_figs, int)
                                          or self.sig_figs < 1):
            raise SpecError(f"sig_figs must be a positive integer, not {self.sig_figs!r}")
        if self.choices is not None:
            pairs = self.choices.items() if isinstance(self.choices, dict) else self.choices
            object.__setattr__(self, "choices", tuple((str(k), str(v)) for k, v in pairs))
        mistakes = tuple(m if isinstance(m, Mistake) else Mistake(*m) for m in (self.mistakes or ()))
        object.__setattr__(self, "mistakes", mistakes)
        derived = tuple(m if isinstance(m, Mistake) else Mistake(*m) for m in (self.derived or ()))
        object.__setattr__(self, "derived", derived)

    def __hash__(self) -> int:
        # computed once: the checker looks a spec up (its prepared reference) for every answer,
        # and hashing a few dozen derived mistakes with big Fractions each time would cost more
        # than the check
        cached = self.__dict__.get("_hash")
        if cached is not None:
            return int(cached)
        try:
            table_key = hash(self.table)
        except TypeError:       # a table that does not hash: identity (per process) is enough
            table_key = id(self.table)
        h = hash((self.kind, self.reference, self.tolerance, self.sig_figs, self.unit, self.choices,
                  self.mistakes, self.feedback, table_key, self.measures, self.derived))
        object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_hash", None)    # string hashes differ between processes: recomputed there
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


@dataclass(frozen=True)
class Outcome:
    """What the grader says about one answer.

    - ``status``: correct, wrong, invalid (not an answer it can read: 0 credit),
      undecided (an equivalence it could not decide: a person checks), needs_person (free text).
    - ``correct``: True / False, or None where a person decides.
    - ``credit``: 0..1 of the problem's points (partial credit from a :class:`Mistake`).
    - ``read_as``: the answer as it was read (``"4·d² + 4·d"``, ``"16,777,216 bytes"``); shells
      print it as "read as …". Empty when nothing could be read.
    - ``feedback``: the most specific message that fits.
    """

    status: str
    correct: bool | None
    credit: float
    read_as: str
    feedback: str

    @classmethod
    def invalid(cls, why: str, read_as: str = "") -> "Outcome":
        return cls("invalid", False, 0.0, read_as, f"invalid answer: {why}")


class Unreadable(ValueError):
    """Raised by the readers: the answer cannot be read as the kind asks (becomes ``invalid``)."""
