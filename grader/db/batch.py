"""Group commit: many small write transactions run as one, with one commit (one fsync).

Under load each request of the service writes twice (the submission, then its grades); on
SQLite every commit is an fsync and writers take turns, so committing each alone caps the
rate. :class:`GroupWriter` runs the writes queued while the last batch committed in one
transaction and resolves every caller's future only after the commit: an acknowledged write
is on disk. If one of them fails, the batch is rolled back and each write runs again in a
transaction of its own, so the failing one alone gets its exception (a write must therefore
be a function of the database only: it may run twice, the first time rolled back).
"""
from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from .database import Database

Write = Callable[[Connection], Any]
Item = tuple[Write, "Future[Any]"]

log = logging.getLogger("grader.db")
MAX_BATCH = 64


class GroupWriter:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._queue: queue.SimpleQueue[Item | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="grader-db-writer", daemon=True)
        self._started = threading.Lock()
        self._stop = False

    def submit(self, fn: Write) -> Future[Any]:
        """``fn(conn)`` in a batch transaction; the future has its result once committed."""
        fut: Future[Any] = Future()
        if self._stop:
            fut.set_exception(RuntimeError("the database is closed"))
            return fut
        if not self._thread.is_alive():
            with self._started:
                if not self._thread.is_alive() and not self._stop:
                    self._thread.start()
        self._queue.put((fn, fut))
        return fut

    def close(self) -> None:
        self._stop = True
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._stop = True
                    break
                batch.append(item)
            self._run(batch)
            if self._stop and self._queue.empty():
                return

    def _run(self, batch: list[Item]) -> None:
        batch = [(fn, fut) for fn, fut in batch if fut.set_running_or_notify_cancel()]
        if not batch:
            return
        results = []
        try:
            with self.db.write() as conn:
                for fn, _ in batch:
                    results.append(fn(conn))
        except Exception as e:
            if len(batch) == 1:
                batch[0][1].set_exception(e)
                return
            for item in batch:          # one at a time: the failing write alone fails
                self._alone(*item)
            return
        for (_, fut), result in zip(batch, results):
            fut.set_result(result)

    def _alone(self, fn: Write, fut: Future[Any]) -> None:
        try:
            with self.db.write() as conn:
                result = fn(conn)
        except Exception as e:
            fut.set_exception(e)
        else:
            fut.set_result(result)
