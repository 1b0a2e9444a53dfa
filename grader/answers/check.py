"""check_answer: screen, read, compare, recognise the mistake, say it — one answer at a time.

A pure function of picklable values. The work of each kind is its module's
(:mod:`grader.answers.kinds`): this module screens the answer by the kind's rule, then calls
the kind's checker (:data:`_CHECKERS`, read from the registry). Each process keeps, per spec,
the reference, the author's mistakes and the variants already read (:func:`prepare`, an LRU
cache), so a batch reads them once and a wrong answer is only compared with prepared values:
exact fractions for numbers, fingerprints before any equivalence for expressions (and two
polynomials compared as such, without SymPy), exact sign tests at sample points before any
equivalence for relations.
No answer makes it raise: a hostile or unreadable answer is ``invalid`` (running out of
memory or recursion too: "too complex"); a reference that cannot be read (the author's
error) or a bug here is ``undecided`` with the reason, for a person. Exceptions that are not
errors of checking — a worker's time-limit exception raised by its signal handler,
KeyboardInterrupt — pass through to the caller.
"""
from __future__ import annotations

from grader.errors import SpecError

from .guard import screen
from .kinds import KINDS
from .kinds.number import NumberRef
from .kinds.quantity import QuantityRef
from .model import AnswerSpec, Outcome, Raw, Unreadable
from .prepared import prepare

__all__ = ["check_answer", "prepare", "NumberRef", "QuantityRef"]

#: each kind's checker, by name (from the registry; the one place check_answer dispatches)
_CHECKERS = {name: kind.check for name, kind in KINDS.items() if kind.check is not None}

_BUGS = (TypeError, ValueError, AttributeError, KeyError, IndexError, LookupError, ArithmeticError,
         AssertionError, NotImplementedError, UnicodeError, TimeoutError)


def check_answer(spec: AnswerSpec, raw: Raw) -> Outcome:
    """Grade one answer (text, a number, or a YAML list for a shape) against ``spec``."""
    try:
        kind = KINDS[spec.kind]
        why = screen(raw, kind.screening)
        if why:
            return Outcome.invalid(why)
        if isinstance(raw, str) and kind.graded != "person":
            raw = " ".join(raw.split())     # one space between words: no regex sees long runs
        checker = _CHECKERS.get(spec.kind, kind.check)
        if checker is None:
            raise TypeError(f"kind {spec.kind!r} has no checker")
        outcome: Outcome = checker(spec, raw)
        return outcome
    except Unreadable as e:
        return Outcome.invalid(str(e))
    except SpecError as e:
        return Outcome("undecided", None, 0.0, "", f"cannot grade: the problem's reference is invalid ({e.message})")
    except (RecursionError, MemoryError, OverflowError):
        return Outcome.invalid("too complex to read")
    except _BUGS as e:      # a bug must not cost the learner: a person decides
        return Outcome("undecided", None, 0.0, "", f"cannot grade automatically ({type(e).__name__}); "
                                                   "a person will check this answer")
    # Anything else (a caller's time-limit exception raised from a signal handler,
    # KeyboardInterrupt) is the caller's and goes through.
