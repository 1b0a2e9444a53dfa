"""The per-learner guard (one grading request at a time) and the per-token rate limit, held in
the database so that several ``grader serve`` on one PostgreSQL share them (the default
there; on SQLite, where one instance owns the file, they are kept in the process).

Each is one row per key, changed by one ``INSERT ... ON CONFLICT DO UPDATE ... WHERE``, whose
``RETURNING`` says whether it was taken: no read-then-write race between instances. Times are
the wall clock (``time.time()``): instances on several machines need synchronized clocks.
"""
from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import case, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from grader.db import Database
from grader.db.models import LearnerSlot, RateBucket

log = logging.getLogger("grader.serve.shared")


def _insert(db: Database) -> Callable[[Any], Any]:
    return postgresql.insert if db.dialect == "postgresql" else sqlite.insert


def _no_fsync(db: Database, conn: Connection) -> None:
    """On PostgreSQL, this transaction's commit does not wait for the disk: a guard or a bucket
    lost in a crash of the database is harmless, and a request should not wait an fsync."""
    if db.dialect == "postgresql":
        conn.exec_driver_sql("SET LOCAL synchronous_commit = off")


class SharedSlots:
    """One request at a time per key across instances: a row held by the request (its
    ``holder``, named after this instance), deleted when it ends. While this instance holds
    rows, :meth:`start` renews their lease (``lease_s``) every third of it in one statement, so
    a slow grading keeps its slot; the rows of a killed instance are taken over once their
    lease has run out."""

    def __init__(self, lease_s: float) -> None:
        self.lease_s = lease_s
        self._instance = secrets.token_hex(8)
        self._held = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, db: Database) -> None:
        """Renew this instance's leases in a thread until :meth:`stop`."""
        def renew() -> None:
            while not self._stop.wait(self.lease_s / 3):
                if self._held:
                    try:
                        self.renew(db)
                    except Exception:       # the database away a moment: the next round tries again
                        log.exception("renewing the learners' guard rows")
        self._thread = threading.Thread(target=renew, name="grader-guard-lease", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def renew(self, db: Database, now: float | None = None) -> int:
        """Extend the lease of every row this instance holds: how many."""
        now = time.time() if now is None else now
        with db.write() as conn:
            n: int = conn.execute(update(LearnerSlot).where(LearnerSlot.holder.startswith(self._instance + "-"))
                                  .values(expires_at=now + self.lease_s)).rowcount
        return n

    def acquire(self, db: Database, key: int, now: float | None = None) -> str | None:
        """The holder's name if the slot was free (or its lease over); None if it is taken."""
        now = time.time() if now is None else now
        holder = f"{self._instance}-{secrets.token_hex(8)}"
        stmt = _insert(db)(LearnerSlot).values(key=key, holder=holder, expires_at=now + self.lease_s)
        stmt = stmt.on_conflict_do_update(index_elements=[LearnerSlot.key],
                                          set_={"holder": holder, "expires_at": now + self.lease_s},
                                          where=LearnerSlot.expires_at <= now)
        with db.write() as conn:
            _no_fsync(db, conn)
            got = conn.execute(stmt.returning(LearnerSlot.holder)).scalar()
        if got != holder:
            return None
        with self._lock:
            self._held += 1
        return holder

    def release(self, db: Database, key: int, holder: str) -> None:
        with self._lock:
            self._held -= 1
        with db.write() as conn:
            _no_fsync(db, conn)
            conn.execute(delete(LearnerSlot).where(LearnerSlot.key == key, LearnerSlot.holder == holder))


class SharedRateLimiter:
    """The token bucket of :class:`grader.serve.auth.RateLimiter` (``rate`` a second, bursts of
    ``burst``) as a row per token."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = float(rate), float(burst)

    def take(self, db: Database, key: int, now: float | None = None) -> float:
        """0 if the request may go on; else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.time() if now is None else now
        elapsed = case((RateBucket.at < now, now - RateBucket.at), else_=0.0)
        filled = RateBucket.level + elapsed * self.rate
        level = case((filled > self.burst, self.burst), else_=filled)
        stmt = _insert(db)(RateBucket).values(token_id=key, level=self.burst - 1.0, at=now)
        stmt = stmt.on_conflict_do_update(index_elements=[RateBucket.token_id],
                                          set_={"level": level - 1.0, "at": now}, where=level >= 1.0)
        with db.write() as conn:
            _no_fsync(db, conn)
            if conn.execute(stmt.returning(RateBucket.token_id)).first() is not None:
                return 0.0
            row = conn.execute(select(RateBucket.level, RateBucket.at).where(RateBucket.token_id == key)).one()
        left: float = min(self.burst, row.level + max(0.0, now - row.at) * self.rate)
        return max(0.0, (1.0 - left) / self.rate)
