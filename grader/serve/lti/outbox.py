"""The outbox of scores to the LMSs' gradebooks (table ``lti_outbox``, LTI Assignment and Grade
Services), and its sender.

Enqueued by the write paths (a graded submission, a review, a regrade, an extension granted or
revoked, a release) in their own transaction, through :func:`enqueue` and its helpers: one row
per (resource link, learner) whose assessment changed, only where the learner is a member
(``LtiMember``) of the LMS course (context) that placed the link. A new row supersedes any
older one of the same link and learner not sent yet (pending, held or failed). Its timestamp is
the time of the change, made strictly later than the pair's last one.

The score itself is read when the row is sent: grader's final score of the assessment for that
learner (:func:`grader.serve.assessbook.book`: after grader's late penalty; the best or last
attempt per the service's policy; a person's review counting), so what the LMS receives is
always the gradebook's current total. While a person has not graded an answer that counts, the
score goes as ``PendingManual``; while the learner's scores are hidden (``show: after_due``
before the due date, ``on_release`` before the release) nothing is posted: the row waits for
the due date, or is ``held`` until the release enqueues it again.

The sender (:class:`Sender`, one thread per instance) claims due rows with a compare-and-set
update (several instances may share the database), posts outside any transaction, and records
the outcome (a row whose instance died while sending it is taken over once its lease has run
out, and posted again with a timestamp 1 ms later: :func:`_taken_over`; a row tried again
after a timeout or a 5xx goes 1 ms later too): ``sent``; an LMS down, slow or overloaded is tried again with exponential back-off
and full jitter, at most :data:`MAX_ATTEMPTS` times, then ``failed``; a refusal that says the
request is wrong is ``failed`` at once with the LMS's message. Every sent or failed passback is
a line of the audit log. Nothing here runs inside a grading request.
"""
from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.engine import Connection

from grader.db import audit
from grader.db.models import Answer, LtiMember, LtiLink, LtiOutbox

if TYPE_CHECKING:
    from grader.db.database import Database

    from ..engine import Engine
    from .passback import Passback

log = logging.getLogger("grader.serve.lti")

MAX_ATTEMPTS = 8                    # tries of one row before it is failed (a 5xx, a timeout, no answer)
BASE = timedelta(seconds=30)        # the back-off's first step: 30 s, 1, 2, 4 ... minutes
CAP = timedelta(hours=1)            # ... at most an hour between two tries
LEASE = timedelta(minutes=2)        # a claimed row whose instance died is claimed again after this (default)
BATCH = 20                          # rows claimed by one pass
UNSENT = ("pending", "held", "failed")
ACTOR = "lti-outbox"
EPSILON = timedelta(milliseconds=1)


def aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


# ------------------------------------------------------------------ enqueue (the write paths' hook)

def enqueue(conn: Connection, pairs: Iterable[tuple[int, str]], at: datetime, cause: str) -> int:
    """Rows for each (learner id, assessment id) of ``pairs`` whose assessment is linked from an
    LMS course the learner is a member of, in the caller's transaction; the number enqueued.
    One indexed query when no assessment of ``pairs`` is linked (the usual case)."""
    wanted = {(int(u), str(a)) for u, a in pairs if a}
    if not wanted:
        return 0
    links = conn.execute(select(LtiLink.id, LtiLink.context_pk, LtiLink.assessment_id)
                         .where(LtiLink.assessment_id.in_({a for _, a in wanted}))).all()
    if not links:
        return 0
    members = set(conn.execute(select(LtiMember.context_pk, LtiMember.user_id).where(
        LtiMember.context_pk.in_({ln.context_pk for ln in links}),
        LtiMember.user_id.in_({u for u, _ in wanted}))).all())
    n = 0
    for ln in links:
        for uid, aid in sorted(wanted):
            if aid == ln.assessment_id and (ln.context_pk, uid) in members:
                _add(conn, ln.id, uid, aid, at, cause)
                n += 1
    return n


def _add(conn: Connection, link_id: int, user_id: int, assessment_id: str, at: datetime, cause: str) -> None:
    at = aware(at)
    last = conn.execute(select(func.max(LtiOutbox.timestamp)).where(LtiOutbox.link_id == link_id,
                                                                     LtiOutbox.user_id == user_id)).scalar()
    stamp = max(at, aware(last) + EPSILON) if last is not None else at
    conn.execute(update(LtiOutbox).where(LtiOutbox.link_id == link_id, LtiOutbox.user_id == user_id,
                                         LtiOutbox.status.in_(UNSENT)).values(status="superseded"))
    conn.execute(insert(LtiOutbox).values(link_id=link_id, user_id=user_id, assessment_id=assessment_id,
                                          cause=cause[:40], timestamp=stamp, status="pending", attempts=0,
                                          next_at=at, created_at=at))


def enqueue_results(conn: Connection, user_id: int, results: Iterable[dict[str, Any]], at: datetime,
                    cause: str = "graded") -> int:
    """A submission's graded results: each names its assessment (``grader.serve.course.mark``)."""
    return enqueue(conn, {(user_id, r["assessment"]) for r in results
                          if isinstance(r, dict) and isinstance(r.get("assessment"), str)}, at, cause)


def enqueue_answers(conn: Connection, answer_ids: Iterable[str], at: datetime, cause: str) -> int:
    """Answers reviewed or regraded: their learners' assessments."""
    ids = list(answer_ids)
    if not ids:
        return 0
    rows = conn.execute(select(Answer.user_id, Answer.assessment_id).where(Answer.id.in_(ids),
                                                                          Answer.assessment_id.is_not(None)))
    return enqueue(conn, {(u, a) for u, a in rows.all() if a}, at, cause)


def enqueue_assessment(conn: Connection, assessment_id: str, at: datetime, cause: str) -> int:
    """Every member of every LMS course linking the assessment (a release)."""
    users = conn.execute(select(LtiMember.user_id).join(LtiLink, LtiLink.context_pk == LtiMember.context_pk)
                         .where(LtiLink.assessment_id == assessment_id)).scalars().all()
    return enqueue(conn, {(u, assessment_id) for u in users}, at, cause)


# ------------------------------------------------------------------ what staff see

def listing(conn: Connection, status: Iterable[str] = ("pending", "held", "sending", "failed"),
            limit: int = 200) -> list[dict[str, Any]]:
    from grader.db.models import LtiContext, User
    q = (select(LtiOutbox.id, LtiOutbox.status, LtiOutbox.assessment_id, LtiOutbox.cause, LtiOutbox.timestamp,
                LtiOutbox.attempts, LtiOutbox.next_at, LtiOutbox.error, LtiOutbox.score_given,
                LtiOutbox.score_maximum, LtiOutbox.grading_progress, LtiOutbox.sent_at, User.login,
                LtiContext.title.label("context"), LtiLink.resource_link_id)
         .join(User, User.id == LtiOutbox.user_id).join(LtiLink, LtiLink.id == LtiOutbox.link_id)
         .join(LtiContext, LtiContext.id == LtiLink.context_pk)
         .where(LtiOutbox.status.in_(list(status))).order_by(LtiOutbox.id.desc()).limit(max(1, min(limit, 1000))))
    return [{"id": r.id, "status": r.status, "assessment": r.assessment_id, "learner": r.login, "cause": r.cause,
             "context": r.context, "resource_link": r.resource_link_id, "timestamp": iso(r.timestamp),
             "attempts": r.attempts, "next_at": iso(r.next_at), "error": r.error, "score_given": r.score_given,
             "score_maximum": r.score_maximum, "grading_progress": r.grading_progress, "sent_at": iso(r.sent_at)}
            for r in conn.execute(q)]


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else aware(dt).astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def resend(conn: Connection, ids: Iterable[int] | None, at: datetime, actor: str, address: str = audit.CLI) -> int:
    """Failed rows (``ids``; None: every failed one), or pending ones waiting out their back-off
    (named in ``ids``: "send now" once the LMS is back), pending again and due now, their tries
    counted anew and a fresh timestamp (later than the pair's last); the number made pending.
    A row held until its scores are released, or being sent, is left alone."""
    q = select(LtiOutbox.id, LtiOutbox.link_id, LtiOutbox.user_id, LtiOutbox.assessment_id).where(
        LtiOutbox.status.in_(("failed",) if ids is None else ("failed", "pending")))
    if ids is not None:
        q = q.where(LtiOutbox.id.in_(list(ids)))
    rows = conn.execute(q).all()
    for r in rows:
        _add(conn, r.link_id, r.user_id, r.assessment_id, at, "resend")
        audit.write(conn, "lti.passback.resend", actor=actor, address=address, target=str(r.id))
    return len(rows)


# ------------------------------------------------------------------ the sender

def backoff(attempts: int, rng: random.Random) -> timedelta:
    """Full jitter: uniform in [0, min(CAP, BASE x 2^(attempts-1))], at least a second."""
    ceiling = min(CAP.total_seconds(), BASE.total_seconds() * 2.0 ** max(0, attempts - 1))
    return timedelta(seconds=max(1.0, ceiling * rng.random()))


@dataclass
class Outcome:
    sent: list[int] = field(default_factory=list)
    retried: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)


class Sender:
    """Claims due rows and posts them (:meth:`run_once`); :meth:`start` runs it every
    ``interval`` seconds in a thread until :meth:`stop`. ``passback`` makes the posts (the
    HTTP side, :class:`grader.serve.lti.passback.Passback`)."""

    def __init__(self, db: Database, engine: Callable[[], Engine], policy: str, passback: Passback, *,
                 instance: str, clock: Callable[[], datetime], interval: float = 5.0,
                 rng: random.Random | None = None, lease: timedelta = LEASE) -> None:
        self.db, self.engine, self.policy, self.passback = db, engine, policy, passback
        self.instance, self.clock, self.interval, self.lease = instance[:64], clock, interval, lease
        self.rng = rng or random.Random()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def claim(self, now: datetime, limit: int = BATCH) -> list[int]:
        """Due rows taken for this instance: each by a conditional update that only one instance
        can win (pending and due, or sending with an expired lease: :func:`_taken_over`)."""
        fresh = (LtiOutbox.status == "pending") & (LtiOutbox.next_at <= now)
        stale = (LtiOutbox.status == "sending") & (LtiOutbox.claimed_until < now)
        with self.db.read() as conn:
            ids = conn.execute(select(LtiOutbox.id).where(or_(fresh, stale))
                               .order_by(LtiOutbox.next_at, LtiOutbox.id).limit(limit)).scalars().all()
        mine = []
        took = {"status": "sending", "claimed_by": self.instance, "claimed_until": now + self.lease}
        for i in ids:
            with self.db.write() as conn:
                if conn.execute(update(LtiOutbox).where(LtiOutbox.id == i, fresh).values(**took)).rowcount:
                    mine.append(i)
                elif conn.execute(update(LtiOutbox).where(LtiOutbox.id == i, stale).values(**took)).rowcount \
                        and _taken_over(conn, i):
                    mine.append(i)
        return mine

    def run_once(self, now: datetime | None = None) -> Outcome:
        """One pass: claim what is due at ``now`` (default: the clock) and post it."""
        now = now or self.clock()
        out = Outcome()
        for i in self.claim(now):
            try:
                self._one(i, now, out)
            except Exception as e:          # a bug must not stop the sender: the row is tried again
                log.exception("passback %s", i)
                self._retry(i, now, f"{type(e).__name__}: {e}"[:500], out)
        return out

    def _one(self, i: int, now: datetime, out: Outcome) -> None:
        from .ags import ServiceError
        from .passback import Hidden
        try:
            with self.db.read() as conn:
                job = self.passback.prepare(conn, self.engine(), self.policy, i, now)
        except ServiceError as e:
            self._finish(i, now, None, e.message, out)
            return
        if isinstance(job, Hidden):
            with self.db.write() as conn:
                conn.execute(update(LtiOutbox).where(LtiOutbox.id == i, LtiOutbox.claimed_by == self.instance).values(
                    status="pending" if job.until else "held", next_at=job.until or now, claimed_by=None,
                    claimed_until=None))
            out.waiting.append(i)
            return
        try:
            self.passback.post(job, now)
        except ServiceError as e:
            if e.retry:
                self._retry(i, now, e.message, out, job)
            else:
                self._finish(i, now, job, e.message, out)
            return
        self._finish(i, now, job, None, out)

    def _retry(self, i: int, now: datetime, error: str, out: Outcome, job: Any = None) -> None:
        with self.db.write() as conn:
            _learned(conn, job)
            r = conn.execute(select(LtiOutbox.attempts, LtiOutbox.link_id, LtiOutbox.user_id, LtiOutbox.timestamp)
                             .where(LtiOutbox.id == i)).one()
            tries = r.attempts + 1
            if _has_newer(conn, i, r.link_id, r.user_id):   # enqueued while this one was being sent: it replaces it
                conn.execute(update(LtiOutbox).where(LtiOutbox.id == i).values(
                    status="superseded", attempts=tries, error=error, claimed_by=None, claimed_until=None))
                out.retried.append(i)
                return
            if tries >= MAX_ATTEMPTS:
                conn.execute(update(LtiOutbox).where(LtiOutbox.id == i).values(
                    status="failed", attempts=tries, error=f"{error} (after {tries} tries)", claimed_by=None,
                    claimed_until=None))
                _audit(conn, i, "failed", {"error": error, "attempts": tries})
                out.failed.append(i)
                return
            # a timeout or a 5xx may come after the LMS stored the score: the next try goes 1 ms
            # later, so that an LMS refusing a timestamp it already holds takes it (as _taken_over)
            conn.execute(update(LtiOutbox).where(LtiOutbox.id == i, LtiOutbox.status == "sending").values(
                status="pending", attempts=tries, error=error, next_at=now + backoff(tries, self.rng),
                claimed_by=None, claimed_until=None, timestamp=aware(r.timestamp) + EPSILON))
        out.retried.append(i)

    def _finish(self, i: int, now: datetime, job: Any, error: str | None, out: Outcome) -> None:
        score = job.score if job is not None else {}
        with self.db.write() as conn:
            _learned(conn, job)
            tries = conn.execute(select(LtiOutbox.attempts).where(LtiOutbox.id == i)).scalar_one() + 1
            conn.execute(update(LtiOutbox).where(LtiOutbox.id == i).values(
                status="failed" if error else "sent", attempts=tries, error=error, sent_at=None if error else now,
                claimed_by=None, claimed_until=None, score_given=score.get("scoreGiven"),
                score_maximum=score.get("scoreMaximum"), grading_progress=score.get("gradingProgress")))
            _audit(conn, i, "failed" if error else "sent", {**({"error": error} if error else {}), **score})
        (out.failed if error else out.sent).append(i)

    # -------------------------------------------------------------- the thread

    def start(self) -> None:
        if self._thread is None and self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name="grader-lti-outbox", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        # a pass every ``interval`` seconds, the first one interval after the start: a row left
        # by a stopped instance waits that long, and nothing races the first requests served
        while not self._stop.wait(self.interval):
            try:
                self.run_once()
            except Exception:
                log.exception("the LTI outbox's pass")


def _taken_over(conn: Connection, i: int) -> bool:
    """A row whose instance died while sending it (SIGKILL, a crash, a lost machine): its post
    may have reached the LMS, and the LMS may refuse a second post with the same timestamp
    (lti1p3platform: 409, "old timestamp"; the AGS spec lets it ignore a score not later than
    the last one), which would fail the row though the score is there. So a newer row of the
    same link and learner replaces it (``superseded``: that one carries the gradebook's current
    score); else it is posted again 1 ms later than its own timestamp (a row enqueued after
    that is later still, :func:`_add`). True: this instance posts it now."""
    r = conn.execute(select(LtiOutbox.link_id, LtiOutbox.user_id, LtiOutbox.timestamp)
                     .where(LtiOutbox.id == i)).one()
    if _has_newer(conn, i, r.link_id, r.user_id):
        conn.execute(update(LtiOutbox).where(LtiOutbox.id == i).values(
            status="superseded", claimed_by=None, claimed_until=None,
            error="its instance stopped while sending it; a newer score replaces it"))
        return False
    conn.execute(update(LtiOutbox).where(LtiOutbox.id == i).values(timestamp=aware(r.timestamp) + EPSILON))
    return True


def _has_newer(conn: Connection, i: int, link_id: int, user_id: int) -> bool:
    """Whether a row of the same link and learner was enqueued after row ``i`` (it carries the
    gradebook's newer score, and supersedes ``i``)."""
    return conn.execute(select(LtiOutbox.id).where(LtiOutbox.link_id == link_id, LtiOutbox.user_id == user_id,
                                                   LtiOutbox.id > i).limit(1)).first() is not None


def _learned(conn: Connection, job: Any) -> None:
    """The line item found or created for a link is kept on it (the next passback posts there)."""
    if job is not None and job.created_lineitem and job.lineitem_url:
        conn.execute(update(LtiLink).where(LtiLink.id == job.link_id, LtiLink.lineitem_url.is_(None))
                     .values(lineitem_url=job.lineitem_url[:1000]))


def _audit(conn: Connection, i: int, what: str, detail: dict[str, Any]) -> None:
    r = conn.execute(select(LtiOutbox.assessment_id, LtiOutbox.user_id, LtiOutbox.link_id)
                     .where(LtiOutbox.id == i)).one()
    audit.write(conn, "lti.passback" if what == "sent" else f"lti.passback.{what}", actor=ACTOR, address="service", target=f"{r.assessment_id}:{r.user_id}",
                detail={"outbox": i, "link": r.link_id, **detail})
