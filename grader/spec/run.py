"""Run every claim of a subject: each check in turn, under a per-claim time limit, seeded;
one claim's failure or time-out is that claim's ``error`` verdict and never stops the others.

A claim is checked in three steps:

1. here, its symbolic checks (SymPy; a SIGALRM time limit in the main thread), and the
   measurements its measured checks need are listed and handed to the measuring process
   (:mod:`grader.spec.worker`, where torch lives, through :class:`grader.spec.measurer.Measurer`)
   with what is left of its limit;
2. there, its measurements, under that limit (torch's import is counted to no claim); a claim
   whose measurements run past it, or kill the process, is an error, and the claims after it
   are measured by a fresh process;
3. here, its measured checks' verdicts, from the measurements (what is left of the limit).

Step 1 of every claim comes first, so that the measuring process imports torch and measures
while this one runs the symbolic checks. A run whose claims need no measurement never starts
the measuring process, and torch is never imported in this one.
"""
from __future__ import annotations

import fnmatch
import math
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace

from .checks import KINDS
from .checks.common import Context, MeasureError, request_key, result
from .model import ClaimResult, Subject

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 1e6       # seconds (11 days): beyond, the timers' arithmetic overflows
# A symbolic check of the text's arithmetic/formula and a measurement of the same thing on mha:
# when one holds and the other is refuted, the claim reports the disagreement as such.
SYMBOLIC_PAIRED = ("identity", "numeric", "dominance", "asymptotic")
MEASURED_PAIRED = ("measure", "compare")


class ClaimTimeout(Exception):
    pass


@dataclass(frozen=True)
class SubjectResult:
    subject: Subject
    results: tuple

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)


def check_timeout(timeout) -> float | None:
    """A per-claim limit in seconds: a number > 0 and at most MAX_TIMEOUT, or None (no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be a number of seconds > 0 and at most {MAX_TIMEOUT:g}, or None, "
                         f"got {timeout!r}")
    return float(timeout)


@contextmanager
def _time_limit(seconds):
    """SIGALRM-based limit in the main thread (Unix); elsewhere no limit can be imposed.
    Only pure-Python (SymPy) work runs under it: torch is never imported in this process."""
    usable = seconds is not None and hasattr(signal, "setitimer") \
        and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    if seconds <= 0:
        raise ClaimTimeout()

    def fire(signum, frame):
        raise ClaimTimeout()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def needs_measurement(claims) -> bool:
    """Whether any of these claims runs the real mha (and so imports torch)."""
    return any(KINDS[c.kind].MEASURES for claim in claims for c in claim.checks)


def select(subject: Subject, only: str | None):
    """The claims whose id matches the glob ``only`` (all when None)."""
    return [c for c in subject.claims if only is None or fnmatch.fnmatchcase(c.id, only)]


def combine(checks) -> str:
    """A claim's verdict from its checks: error > refuted > holds; all unverifiable -> unverifiable.
    A demonstration (kind demonstrate) is evidence, not proof: its verdict outranks holds, the
    weakest first (not demonstrated > inconclusive > skipped > demonstrated)."""
    verdicts = [c.verdict for c in checks]
    if not verdicts or "error" in verdicts:
        return "error"
    if all(v == "unverifiable" for v in verdicts):
        return "unverifiable"
    if "refuted" in verdicts:
        return "refuted"
    for v in ("not demonstrated", "inconclusive", "skipped", "demonstrated"):
        if v in verdicts:
            return v
    return "holds"


def disagreement(checks) -> str:
    """A sentence when a symbolic check of the text's arithmetic and a measurement on mha reach
    different verdicts: paired by the figure they test when they share one, otherwise only when
    no symbolic check reaches the measurement's verdict (one that agrees is its counterpart)."""
    sym = [c for c in checks if c.kind in SYMBOLIC_PAIRED and c.verdict in ("holds", "refuted")]
    mea = [c for c in checks if c.kind in MEASURED_PAIRED and c.verdict in ("holds", "refuted")]
    for m in mea:
        claimed = m.details.get("claimed")
        pool = [s for s in sym if claimed and s.details.get("claimed") == claimed] or sym
        if not pool or any(s.verdict == m.verdict for s in pool):
            continue
        s = pool[-1]
        return (f"symbolic and measured disagree — measured ({m.kind}) {m.verdict}: {m.summary}; "
                f"symbolic ({s.kind}) {s.verdict}: {s.summary}")
    return ""


def _failed(check, e) -> object:
    where = f" at {check.location}" if check.location else ""
    return result(check.kind, "error", f"{check.kind} check{where} failed: {type(e).__name__}: {e}")


def _timed_out(timeout, where="") -> object:
    return result("timeout", "error", f"time limit of {timeout:g} s exceeded{where}")


@dataclass
class _Pending:
    """A claim after step 1: the results so far (None where a measured check waits)."""

    ctx: Context
    claim: object
    results: list
    seconds: float
    requests: list
    key: int | None = None
    timed_out: bool = False
    extended: float = 0.0     # seconds added to the claim's limit by its checks' budgets


def _step1(ctx, claim, timeout, measurer) -> _Pending:
    start = time.perf_counter()
    results, requests, timed_out = [None] * len(claim.checks), [], False
    try:
        with _time_limit(timeout):
            for i, check in enumerate(claim.checks):
                kind = KINDS[check.kind]
                try:
                    if kind.MEASURES:
                        requests.extend(kind.requests(ctx, check) if kind.requests else [])
                    else:
                        results[i] = kind.run(ctx, check)
                except ClaimTimeout:
                    raise
                except Exception as e:  # noqa: BLE001 - one check's failure is its claim's error verdict
                    results[i] = _failed(check, e)
    except ClaimTimeout:
        timed_out = True
    p = _Pending(ctx, claim, results, time.perf_counter() - start, requests, timed_out=timed_out)
    if requests and not timed_out:
        budget = None if timeout is None else timeout - p.seconds
        asked = [KINDS[c.kind].budget(c) for c in claim.checks if KINDS[c.kind].budget]   # a check's own budget
        if budget is not None and any(b is not None for b in asked):
            p.extended = max([budget] + [b for b in asked if b is not None]) - budget
            budget += p.extended
        p.key = measurer.submit(requests, budget)
    return p


def _step3(p: _Pending, timeout, measurer) -> ClaimResult:
    results, extra, seconds = p.results, [], p.seconds
    timeout = None if timeout is None else timeout + p.extended
    if p.timed_out:
        extra.append(_timed_out(timeout))
    elif any(r is None for r in results):
        measurements, failure = {}, ""
        if p.key is not None:
            outcome = measurer.outcome(p.key)
            seconds += outcome.seconds
            if outcome.failure:
                failure = outcome.failure
                extra.append(_timed_out(timeout, " while measuring") if outcome.timed_out
                             else result("measure", "error", outcome.failure))
            else:
                for request, value in zip(p.requests, outcome.values):
                    if isinstance(value, list):
                        value = tuple(value)
                    measurements[request_key(request)] = value
        if not failure:
            ctx = replace(p.ctx, measurements=measurements)
            start = time.perf_counter()
            try:
                with _time_limit(None if timeout is None else timeout - seconds):
                    for i, check in enumerate(p.claim.checks):
                        if results[i] is None:
                            try:
                                results[i] = KINDS[check.kind].run(ctx, check)
                            except ClaimTimeout:
                                raise
                            except MeasureError as e:
                                results[i] = result(check.kind, "error", f"{check.kind} check at {check.location}: "
                                                                         f"measurement failed: {e}")
                            except Exception as e:  # noqa: BLE001
                                results[i] = _failed(check, e)
            except ClaimTimeout:
                extra.append(_timed_out(timeout))
            seconds += time.perf_counter() - start
    done = tuple(r for r in results if r is not None) + tuple(extra)
    return ClaimResult(p.claim, combine(done), done, seconds, disagreement(done))


def run_claim(ctx: Context, claim, timeout: float | None = DEFAULT_TIMEOUT, measurer=None) -> ClaimResult:
    """Check one claim (see the module doc)."""
    return run_claims([(ctx, claim)], timeout=timeout, measurer=measurer)[0]


def run_claims(pairs, *, timeout: float | None = DEFAULT_TIMEOUT, measurer=None) -> list:
    """Check (context, claim) pairs, in order; measured checks through ``measurer`` (None: the
    shared measuring process, started only if a claim needs it)."""
    timeout = check_timeout(timeout)
    if measurer is None and needs_measurement([c for _, c in pairs]):
        from .measurer import shared
        measurer = shared()
    pending = [_step1(ctx, claim, timeout, measurer) for ctx, claim in pairs]
    return [_step3(p, timeout, measurer) for p in pending]


def run_subjects(subjects, *, only: str | None = None, device: str = "auto", seed: int = 0,
                 timeout: float | None = DEFAULT_TIMEOUT, measurer=None, train: bool = True) -> list:
    """Check every (selected) claim of every subject; a SubjectResult per subject, in order.
    ``train=False``: demonstrations that train a model are skipped (verdict "skipped")."""
    pairs = [(Context(s, device, seed, train=train), c) for s in subjects for c in select(s, only)]
    results = iter(run_claims(pairs, timeout=timeout, measurer=measurer))
    return [SubjectResult(s, tuple(next(results) for _ in select(s, only))) for s in subjects]


def run_subject(subject: Subject, *, only: str | None = None, device: str = "auto", seed: int = 0,
                timeout: float | None = DEFAULT_TIMEOUT, measurer=None, train: bool = True) -> SubjectResult:
    """Check every (selected) claim; results in the spec's order."""
    return run_subjects([subject], only=only, device=device, seed=seed, timeout=timeout, measurer=measurer,
                        train=train)[0]
