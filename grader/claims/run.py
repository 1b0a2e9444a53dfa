"""Run every claim of a subject: each check in turn, under a per-claim time limit, seeded;
one claim's failure or time-out is that claim's ``error`` verdict and never stops the others.

A claim is checked in three steps:

1. here, its symbolic checks (SymPy, under the claim's time limit: :func:`grader.deadline.call_with_limit`,
   a SIGALRM in the main thread, a stopped helper thread in any other), and the
   measurements its measured checks need are listed and handed to the measuring process
   (:mod:`grader.claims.worker`, where torch lives, through :class:`grader.claims.measurer.Measurer`)
   with what is left of its limit;
2. there, its measurements, under that limit (torch's import is counted to no claim); a claim
   whose measurements run past it, or kill the process, is an error, and the claims after it
   are measured by a fresh process;
3. here, its measured checks' verdicts, from the measurements (what is left of the limit).

Step 1 of every claim comes first, so that the measuring process imports torch and measures
while this one runs the symbolic checks. A run whose claims need no measurement never starts
the measuring process, and torch is never imported in this one.

The measuring process is the library's: :func:`check_paths` (what ``grader check-spec`` runs)
starts one early when the files may need it (its torch import overlaps the loading and the
symbolic checks) and closes it; :func:`run_claims` without a ``measurer`` uses the process's
shared one (:func:`grader.claims.measurer.shared`), started only if a claim needs it.
"""
from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, replace
from collections.abc import Iterable, Sequence
from typing import Any

from grader.deadline import call_with_limit
from grader.errors import OptionError

from .checks import KINDS
from .checks.common import Context, request_key, result
from .limits import DEFAULT_TIMEOUT, MAX_TIMEOUT, check_timeout
from .measurer import MeasureError
from .model import Check, CheckResult, Claim, ClaimResult, Subject, Verdict

# A symbolic check of the text's arithmetic/formula and a measurement of the same thing on mha:
# when one holds and the other is refuted, the claim reports the disagreement as such.
DECISIVE = (Verdict.HOLDS, Verdict.REFUTED)     # the verdicts a symbolic check and a measurement can disagree on
SYMBOLIC_PAIRED = ("identity", "numeric", "dominance", "asymptotic")
MEASURED_PAIRED = ("measure", "compare")


class ClaimTimeout(Exception):
    pass


@dataclass(frozen=True)
class SubjectResult:
    subject: Subject
    results: tuple[ClaimResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)


def needs_measurement(claims: Iterable[Claim]) -> bool:
    """Whether any of these claims runs the real mha (and so imports torch)."""
    return any(KINDS[c.kind].MEASURES for claim in claims for c in claim.checks)


def select(subject: Subject, only: str | None) -> list[Claim]:
    """The claims whose id matches the glob ``only`` (all when None)."""
    return [c for c in subject.claims if only is None or fnmatch.fnmatchcase(c.id, only)]


def combine(checks: Sequence[CheckResult]) -> Verdict:
    """A claim's verdict from its checks: error > refuted > holds; all unverifiable -> unverifiable.
    A demonstration (kind demonstrate) is evidence, not proof: its verdict outranks holds, the
    weakest first (not demonstrated > inconclusive > skipped > demonstrated)."""
    verdicts = [c.verdict for c in checks]
    if not verdicts or Verdict.ERROR in verdicts:
        return Verdict.ERROR
    if all(v == Verdict.UNVERIFIABLE for v in verdicts):
        return Verdict.UNVERIFIABLE
    if Verdict.REFUTED in verdicts:
        return Verdict.REFUTED
    for v in (Verdict.NOT_DEMONSTRATED, Verdict.INCONCLUSIVE, Verdict.SKIPPED, Verdict.DEMONSTRATED):
        if v in verdicts:
            return v
    return Verdict.HOLDS


def disagreement(checks: Sequence[CheckResult]) -> str:
    """A sentence when a symbolic check of the text's arithmetic and a measurement on mha reach
    different verdicts: paired by the figure they test when they share one, otherwise only when
    no symbolic check reaches the measurement's verdict (one that agrees is its counterpart)."""
    sym = [c for c in checks if c.kind in SYMBOLIC_PAIRED and c.verdict in DECISIVE]
    mea = [c for c in checks if c.kind in MEASURED_PAIRED and c.verdict in DECISIVE]
    for m in mea:
        claimed = m.details.get("claimed")
        pool = [s for s in sym if claimed and s.details.get("claimed") == claimed] or sym
        if not pool or any(s.verdict == m.verdict for s in pool):
            continue
        s = pool[-1]
        other = _another_quantity(s, m)
        if other:
            return other
        return (f"symbolic and measured disagree — measured ({m.kind}) {m.verdict}: {m.summary}; "
                f"symbolic ({s.kind}) {s.verdict}: {s.summary}")
    return ""


def _another_quantity(s: CheckResult, m: CheckResult) -> str:
    """The precise reading of one disagreement: the text's arithmetic gives its figure (a numeric check
    holds) but the measured quantity is another number — and, where the measurement has a formula,
    that formula is the measured one: the figure is right arithmetic of a different quantity."""
    if not (s.kind == "numeric" and s.verdict == Verdict.HOLDS and m.kind == "measure" and m.verdict == Verdict.REFUTED
            and m.details.get("claimed") and s.details.get("claimed") == m.details.get("claimed")):
        return ""
    from .checks.common import show_values
    from .checks.measured import show
    q, got = m.details.get("quantity", "the quantity"), m.details.get("measured")
    formula, value = m.details.get("formula"), m.details.get("formula_value")
    shown = str(show(got))
    if formula is not None and value != shown:
        return (f"the formula is not the measured quantity: {formula} = {value}, but {q} measures {shown} "
                f"at {show_values(m.details.get('at') or {})}; the text's arithmetic {s.details['expr']} = "
                f"{s.details['computed']} gives its figure {s.details['claimed']}")
    law = f" = {formula}, as the formula says" if formula is not None else ""
    return (f"the text's arithmetic is right but counts another quantity: {s.details['expr']} = "
            f"{s.details['computed']} gives its figure {s.details['claimed']}, while {q} measures {shown}{law} — "
            f"measured (measure) refuted: {m.summary}")


def _failed(check: Check, e: BaseException) -> CheckResult:
    where = f" at {check.location}" if check.location else ""
    return result(check.kind, Verdict.ERROR, f"{check.kind} check{where} failed: {type(e).__name__}: {e}")


def _timed_out(timeout: float | None, where: str = "") -> CheckResult:
    return result("timeout", Verdict.ERROR, f"time limit of {timeout:g} s exceeded{where}")


@dataclass
class _Pending:
    """A claim after step 1: the results so far (None where a measured check waits)."""

    ctx: Context
    claim: Claim
    results: list[CheckResult | None]
    seconds: float
    requests: list[dict[str, Any]]
    key: int | None = None
    timed_out: bool = False
    extended: float = 0.0     # seconds added to the claim's limit by its checks' budgets


def _budget(check: Check) -> float | None:
    """Seconds a check's measurements may take by its kind's ``budget`` (None: the claim's limit)."""
    budget = KINDS[check.kind].budget
    return None if budget is None else budget(check)


def _step1(ctx: Context, claim: Claim, timeout: float | None, measurer: Any) -> _Pending:
    start = time.perf_counter()
    results: list[CheckResult | None] = [None] * len(claim.checks)
    requests: list[dict[str, Any]] = []
    timed_out = False

    def symbolic() -> None:
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

    try:
        call_with_limit(symbolic, timeout, ClaimTimeout)
    except ClaimTimeout:
        timed_out = True
        results = list(results)     # what was done in time (work stopped in another thread may still write)
    p = _Pending(ctx, claim, results, time.perf_counter() - start, requests, timed_out=timed_out)
    if requests and not timed_out:
        budget = None if timeout is None else timeout - p.seconds
        asked = [b for b in (_budget(c) for c in claim.checks) if b is not None]   # the checks' own budgets
        if budget is not None and asked:
            p.extended = max([budget, *asked]) - budget
            budget += p.extended
        p.key = measurer.submit(requests, budget)
    return p


def _step3(p: _Pending, timeout: float | None, measurer: Any) -> ClaimResult:
    results, seconds = p.results, p.seconds
    timeout = None if timeout is None else timeout + p.extended
    extra: list[CheckResult] = []
    where = ""
    if p.timed_out:
        extra.append(_timed_out(timeout))
    elif any(r is None for r in results):
        measurements: dict[str, Any] = {}
        failure = ""
        if p.key is not None:
            outcome = measurer.outcome(p.key)
            where = getattr(outcome, "where", "")     # a cluster's worker (grader.cluster.claims)
            seconds += outcome.seconds
            if outcome.failure:
                failure = outcome.failure
                extra.append(_timed_out(timeout, " while measuring") if outcome.timed_out
                             else result("measure", Verdict.ERROR, outcome.failure))
            else:
                for request, value in zip(p.requests, outcome.values):
                    if isinstance(value, list):
                        value = tuple(value)
                    measurements[request_key(request)] = value
        if not failure:
            ctx = replace(p.ctx, measurements=measurements)
            start = time.perf_counter()

            def measured() -> None:
                for i, check in enumerate(p.claim.checks):
                    if results[i] is None:
                        try:
                            results[i] = KINDS[check.kind].run(ctx, check)
                        except ClaimTimeout:
                            raise
                        except MeasureError as e:
                            results[i] = result(check.kind, Verdict.ERROR, f"{check.kind} check at {check.location}: "
                                                                     f"measurement failed: {e}")
                        except Exception as e:  # noqa: BLE001
                            results[i] = _failed(check, e)

            try:
                call_with_limit(measured, None if timeout is None else timeout - seconds, ClaimTimeout)
            except ClaimTimeout:
                extra.append(_timed_out(timeout))
                results = list(results)
            seconds += time.perf_counter() - start
    if where:       # the evidence of what was measured says where
        results = [replace(r, summary=f"{r.summary} [measured on {where}]")
                   if r is not None and KINDS[c.kind].MEASURES else r for r, c in zip(results, p.claim.checks)]
        extra = [replace(r, summary=f"{r.summary} [measured on {where}]") if r.kind == "measure" else r for r in extra]
    results = [_expected(r, c) for r, c in zip(results, p.claim.checks)]
    done = tuple(r for r in results if r is not None) + tuple(extra)
    return ClaimResult(p.claim, combine(done), done, seconds, disagreement(done))


def _expected(r: CheckResult | None, check: Check) -> CheckResult | None:
    """A check that states what it must give (``expect:``, issue #27): its evidence says so, and a
    check that gives another verdict makes its claim not as expected (ClaimResult.ok)."""
    want = check.get("_expect")
    if r is None or not want:
        return r
    ok = r.verdict == want or r.verdict == Verdict.SKIPPED
    from .model import frozen_map
    return replace(r, summary=f"{r.summary} (expected {want}{'' if ok else ' ✗'})",
                   details=frozen_map({**dict(r.details), "expect": want, "as_expected": ok}))


def run_claim(ctx: Context, claim: Claim, timeout: float | None = DEFAULT_TIMEOUT, measurer: Any = None) -> ClaimResult:
    """Check one claim (see the module doc)."""
    return run_claims([(ctx, claim)], timeout=timeout, measurer=measurer)[0]


def run_claims(pairs: Sequence[tuple[Context, Claim]], *, timeout: float | None = DEFAULT_TIMEOUT,
               measurer: Any = None) -> list[ClaimResult]:
    """Check (context, claim) pairs, in order; measured checks through ``measurer`` (None: the
    shared measuring process, started only if a claim needs it)."""
    timeout = check_timeout(timeout)
    if measurer is None and needs_measurement([c for _, c in pairs]):
        from .measurer import shared
        measurer = shared()
    pending = [_step1(ctx, claim, timeout, measurer) for ctx, claim in pairs]
    return [_step3(p, timeout, measurer) for p in pending]


def run_subjects(subjects: Sequence[Subject], *, only: str | None = None, device: str = "auto", seed: int = 0,
                 timeout: float | None = DEFAULT_TIMEOUT, measurer: Any = None,
                 train: bool = True) -> list[SubjectResult]:
    """Check every (selected) claim of every subject; a SubjectResult per subject, in order.
    ``train=False``: demonstrations that train a model are skipped (verdict "skipped")."""
    pairs = [(Context(s, device, seed, train=train), c) for s in subjects for c in select(s, only)]
    results = iter(run_claims(pairs, timeout=timeout, measurer=measurer))
    return [SubjectResult(s, tuple(next(results) for _ in select(s, only))) for s in subjects]


def run_subject(subject: Subject, *, only: str | None = None, device: str = "auto", seed: int = 0,
                timeout: float | None = DEFAULT_TIMEOUT, measurer: Any = None, train: bool = True) -> SubjectResult:
    """Check every (selected) claim; results in the spec's order."""
    return run_subjects([subject], only=only, device=device, seed=seed, timeout=timeout, measurer=measurer,
                        train=train)[0]


def check_claim(subject: Subject, claim_id: str, *, measurer: Any = None, device: str = "auto", seed: int = 0,
                timeout: float | None = DEFAULT_TIMEOUT, train: bool = True) -> ClaimResult:
    """Check one claim of ``subject`` by its id (KeyError if it has none such)."""
    claim = subject.claim(claim_id)
    if claim is None:
        raise KeyError(f"subject {subject.id} has no claim {claim_id!r}")
    return run_claim(Context(subject, device, seed, train=train), claim, timeout, measurer)


def check_paths(paths: Iterable[str] | None = None, *, only: str | None = None, device: str = "auto",
                seed: int = 0, timeout: float | None = DEFAULT_TIMEOUT, train: bool = True,
                memory_budget: int | None = None, measurer_factory: Any = None) -> list[SubjectResult]:
    """Load the specs at ``paths`` (None or empty: the bundled spec) and check their (selected)
    claims: what ``grader check-spec`` runs. The measuring process is started at once when the
    files may need it, so that torch's import overlaps the loading and the symbolic checks, and
    closed at the end. Raises :class:`grader.errors.ErrorList` for an invalid spec and
    :class:`grader.errors.OptionError` when ``only`` matches no claim or ``device="cuda"`` has none.
    ``memory_budget``: bytes one measurement may need (None: the measuring process's default).
    ``measurer_factory``: makes the measurer instead of a local measuring process (``--scheduler``:
    a Dask cluster's, :class:`grader.cluster.claims.DaskMeasurer`)."""
    from .files import may_measure
    from .measurer import Measurer

    def Measurer_() -> Any:
        if measurer_factory is not None:
            return measurer_factory()
        return Measurer(memory_budget=memory_budget).start()

    paths = list(paths or []) or None
    measurer: Any = None
    if device == "cuda" or (only is None and may_measure(paths)):
        measurer = Measurer_()
    try:
        from .load import load_subjects

        if device == "cuda":
            info = measurer.ready()
            if not info.get("cuda"):
                raise OptionError(info.get("fatal") or "CUDA is not available on this machine", "--device")
        subjects = load_subjects(paths)
        claims = [c for s in subjects for c in select(s, only)]
        if only and not claims:
            raise OptionError(f"no claim id matches {only!r}", "--only")
        if measurer is None and needs_measurement(claims):
            measurer = Measurer_()
        elif measurer is not None and device != "cuda" and not needs_measurement(claims):
            measurer.close()
            measurer = None
        return run_subjects(subjects, only=only, device=device, seed=seed, timeout=timeout, measurer=measurer,
                            train=train)
    finally:
        if measurer is not None:
            measurer.close()


__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "ClaimTimeout", "SubjectResult", "check_claim", "check_paths",
           "check_timeout", "combine", "disagreement", "needs_measurement", "run_claim", "run_claims",
           "run_subject", "run_subjects", "select"]
