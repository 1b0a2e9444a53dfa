"""The verdict of an equivalence (:class:`Equivalence`) and the time limit of its SymPy steps
(:func:`bounded`), shared by :mod:`.equiv`, :mod:`.sampling` and :mod:`.relations`."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import sympy

T = TypeVar("T")

EQUAL, DIFFERENT, UNDECIDED = "equal", "different", "undecided"


@dataclass(frozen=True)
class Equivalence:
    """``verdict``: "equal", "different" or "undecided"; ``method``: how it was decided
    ("identical", "rational", "sampling", "simplify", "positive factor", ...);
    ``counterexample``: {Symbol: value} where the two differ (values are int or sympy.Rational),
    else None."""

    verdict: str
    method: str
    counterexample: dict[sympy.Symbol, int | sympy.Rational] | None = None

    @property
    def equal(self) -> bool:
        return self.verdict == EQUAL


class _TimeUp(Exception):
    pass


def bounded(fn: Callable[[], T], seconds: float) -> T:
    """``fn()`` under a SIGALRM time limit of ``seconds`` (main thread only); raises TimeoutError
    when it runs out, RuntimeError off the main thread. An outer timer (setitimer) is honoured:
    if it was due first, it is re-armed to fire right after."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        raise RuntimeError("no time limit available off the main thread")

    def fire(signum: int, frame: FrameType | None) -> None:
        raise _TimeUp()

    old_handler = signal.signal(signal.SIGALRM, fire)
    outer, interval = signal.setitimer(signal.ITIMER_REAL, 0)
    mine = seconds if not outer else min(seconds, outer)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, max(mine, 1e-6))
        return fn()
    except _TimeUp:
        raise TimeoutError(f"over {seconds:g}s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if outer:
            left = outer - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), interval)


def within(fn: Callable[[], T], seconds: float) -> T:
    """``fn()`` under :func:`bounded`'s time limit where there is one (the main thread), else as it is."""
    try:
        return bounded(fn, seconds)
    except RuntimeError as e:
        if "main thread" not in str(e):
            raise
        return fn()
