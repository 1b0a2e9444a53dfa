"""The LTI services of a running `grader serve` (``State.lti``): the outbox's sender thread,
the HTTP client and token cache they share, and the roster syncs (on demand; after a launch,
in the background, at most one per LMS course at a time and none within :data:`RESYNC` of the
last)."""
from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from sqlalchemy import select

from grader.db.models import LtiContext

from .ags import ServiceError, SigningKey
from .nrps import Synced, sync
from .outbox import LEASE, Sender, aware
from .passback import Passback

if TYPE_CHECKING:
    from grader.db.database import Database

    from ..engine import Engine

log = logging.getLogger("grader.serve.lti")
RESYNC = timedelta(hours=1)
KEY_TTL = timedelta(seconds=60)


class Services:
    def __init__(self, db: Database, engine: Callable[[], Engine], policy: str, clock: Callable[[], datetime],
                 interval: float = 5.0, lease: timedelta = LEASE) -> None:
        self.db, self.clock = db, clock
        self._key: tuple[SigningKey, datetime] | None = None
        self._lock = threading.Lock()
        self._syncing: set[int] = set()
        self.passback = Passback(self.key)
        instance = f"{os.uname().nodename[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.sender = Sender(db, engine, policy, self.passback, instance=instance, clock=clock, interval=interval,
                             lease=lease)

    def key(self) -> SigningKey:
        """The tool's signing key (grader.serve.lti.keys), read again after a minute (a rotation);
        the system's clock (a key's life is the platforms', not a course's clock)."""
        now = datetime.now(timezone.utc)
        with self._lock:
            if self._key is not None and self._key[1] > now:
                return self._key[0]
        from .keys import signing_key
        with self.db.write() as conn:       # the first key is made here when there is none
            k = signing_key(conn, now)
        got = SigningKey(k.kid, k.private_pem)
        with self._lock:
            self._key = (got, now + KEY_TTL)
        return got

    def start(self) -> None:
        self.sender.start()

    def stop(self) -> None:
        self.sender.stop()
        self.passback.close()

    def roster(self, context_pk: int, actor: str, address: str = "cli") -> Synced:
        return sync(self.db, context_pk, client=self.passback.client, tokens=self.passback.tokens, key=self.key,
                    now=self.clock(), actor=actor, address=address)

    def sync_after_launch_of(self, platform_id: int, context_id: str) -> bool:
        """:meth:`sync_after_launch` of the LMS course a launch named (by its platform and context id)."""
        with self.db.read() as conn:
            pk = conn.execute(select(LtiContext.id).where(LtiContext.platform_id == platform_id,
                                                          LtiContext.context_id == context_id[:255])).scalar()
        return pk is not None and self.sync_after_launch(pk)

    def sync_after_launch(self, context_pk: int) -> bool:
        """A roster sync of the launch's LMS course in the background, unless one runs or ran
        within :data:`RESYNC`, or the course has no memberships URL; True if one was started."""
        with self.db.read() as conn:
            row = conn.execute(select(LtiContext.memberships_url, LtiContext.roster_synced_at)
                               .where(LtiContext.id == context_pk)).first()
        if row is None or not row.memberships_url:
            return False
        if row.roster_synced_at is not None and aware(row.roster_synced_at) + RESYNC > self.clock():
            return False
        with self._lock:
            if context_pk in self._syncing:
                return False
            self._syncing.add(context_pk)

        def run() -> None:
            try:
                self.roster(context_pk, actor="lti-launch", address="service")
            except ServiceError as e:
                log.warning("the roster sync after a launch failed: %s", e.message)
            except Exception:
                log.exception("the roster sync after a launch")
            finally:
                with self._lock:
                    self._syncing.discard(context_pk)
        threading.Thread(target=run, name="grader-lti-roster", daemon=True).start()
        return True
