"""Run every claim of a subject: each check in turn, under a per-claim time limit, seeded;
one claim's failure or time-out is that claim's ``error`` verdict and never stops the others."""
from __future__ import annotations

import fnmatch
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from .checks import KINDS
from .checks.common import Context, result
from .model import ClaimResult, Subject

DEFAULT_TIMEOUT = 60.0
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


@contextmanager
def _time_limit(seconds):
    """SIGALRM-based limit in the main thread (Unix); elsewhere no limit can be imposed."""
    usable = seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

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
    """A claim's verdict from its checks: error > refuted > holds; all unverifiable -> unverifiable."""
    verdicts = [c.verdict for c in checks]
    if not verdicts or "error" in verdicts:
        return "error"
    if all(v == "unverifiable" for v in verdicts):
        return "unverifiable"
    if "refuted" in verdicts:
        return "refuted"
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


def run_claim(ctx: Context, claim, timeout: float = DEFAULT_TIMEOUT) -> ClaimResult:
    start = time.perf_counter()
    results = []
    try:
        with _time_limit(timeout):
            for check in claim.checks:
                try:
                    results.append(KINDS[check.kind].run(ctx, check))
                except ClaimTimeout:
                    raise
                except Exception as e:  # noqa: BLE001 - one check's failure is its claim's error verdict
                    results.append(result(check.kind, "error",
                                          f"{check.kind} check at {check.location} failed: {type(e).__name__}: {e}"))
    except ClaimTimeout:
        results.append(result("timeout", "error", f"time limit of {timeout:g} s exceeded"))
    return ClaimResult(claim, combine(results), tuple(results), time.perf_counter() - start,
                       disagreement(results))


def run_subject(subject: Subject, *, only: str | None = None, device: str = "auto", seed: int = 0,
                timeout: float = DEFAULT_TIMEOUT) -> SubjectResult:
    """Check every (selected) claim; results in the spec's order."""
    ctx = Context(subject, device, seed)
    return SubjectResult(subject, tuple(run_claim(ctx, c, timeout) for c in select(subject, only)))
