"""Jobs: code submissions, batches and regrades, run outside the request, kept in the database.

A job is a row (:class:`grader.db.models.Job`): ``queued`` when accepted (committed before the
202), ``running`` while an executor has it, ``done`` or ``failed`` with its result. The
:class:`JobRunner` thread claims queued jobs, hands them to a :class:`JobExecutor` and records
what comes back, with the job's effects (a code grade, a batch's submissions, a regrade's
changes: :mod:`.store`), in one transaction. At start-up, jobs left ``running`` by a crash are
queued again; a job that was started three times without finishing is failed.

:class:`JobExecutor` is the seam for a cluster: :class:`LocalJobExecutor` is a process pool in
`grader serve`; with ``--scheduler`` the jobs run on a Dask cluster
(:class:`grader.cluster.jobs.DaskJobExecutor`, which runs ``engine.run_job`` on a worker and
resolves the future; a job its cluster lost comes back as ``BrokenProcessPool``: queued again).
"""
from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Callable, Protocol

from sqlalchemy import select, update

from sqlalchemy.engine import Connection

from grader.db import Database
from grader.db.models import Job, Record, now

if TYPE_CHECKING:
    from .metrics import Metrics
    from .settings import Settings

JSON = dict[str, Any]
OnProgress = Callable[[str, int, "int | None"], None]

log = logging.getLogger("grader.serve")
MAX_TRIES = 3
JOB_NICE = 10


class JobExecutor(Protocol):
    """Runs ``engine.run_job(kind, job_id, params, data, config)`` somewhere."""

    capacity: int

    def submit(self, kind: str, job_id: str, params: JSON, data: bytes | None, config: JSON) -> Future[Any]: ...

    def close(self) -> None: ...


class LocalJobExecutor:
    """A process pool (forkserver processes) on this machine; progress comes back on a queue."""

    def __init__(self, processes: int = 1, on_progress: Callable[[str, int, int | None], None] | None = None):
        from .workers import context
        self.capacity = max(1, processes)
        self._ctx = context()
        self._progress = self._ctx.Queue()
        self._on_progress = on_progress
        self._pool = self._new_pool()
        self._closed = False
        self._drain = threading.Thread(target=self._drain_progress, name="grader-job-progress", daemon=True)
        self._drain.start()

    def submit(self, kind: str, job_id: str, params: JSON, data: bytes | None, config: JSON) -> Future[Any]:
        from . import engine
        try:
            return self._pool.submit(engine.run_job, kind, job_id, params, data, config)
        except BrokenProcessPool:       # a job process died: a new pool for the next jobs
            self._pool = self._new_pool()
            return self._pool.submit(engine.run_job, kind, job_id, params, data, config)

    def _new_pool(self) -> ProcessPoolExecutor:
        from .lifeline import lifeline
        return ProcessPoolExecutor(self.capacity, mp_context=self._ctx, initializer=_job_process_init,
                                   initargs=(lifeline(), self._progress))

    def processes_alive(self) -> int:
        """Job processes alive now (the pool starts them as jobs come)."""
        procs = getattr(self._pool, "_processes", None) or {}
        return sum(1 for p in list(procs.values()) if p.is_alive())

    def _drain_progress(self) -> None:
        while not self._closed:
            try:
                job_id, done, total = self._progress.get(timeout=0.5)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):
                return
            if self._on_progress:
                try:
                    self._on_progress(job_id, done, total)
                except Exception:   # progress is best effort
                    log.exception("recording a job's progress")

    def close(self) -> None:
        self._closed = True
        for proc in list((getattr(self._pool, "_processes", None) or {}).values()):
            proc.kill()             # a running job is queued again at the next start
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._drain.join(timeout=2)
        self._progress.close()
        self._progress.join_thread()


def _job_process_init(line: Any, progress_queue: Any) -> None:
    """A job process: it dies with the server (:func:`.workers.die_with`), then is the engine's."""
    import os
    from . import engine
    from .lifeline import die_with
    die_with(line)
    os.nice(JOB_NICE)
    engine.job_init(progress_queue)


def job_executor(settings: Settings, on_progress: Callable[[str, int, int | None], None] | None = None) -> JobExecutor:
    """The service's job executor: ``settings.job_executor(on_progress)`` when the service was
    given one (``--scheduler``: a Dask cluster's, :class:`grader.cluster.jobs.DaskJobExecutor`),
    else :class:`LocalJobExecutor`."""
    make = getattr(settings, "job_executor", None)
    if make is not None:
        executor: JobExecutor = make(on_progress)
        return executor
    return LocalJobExecutor(settings.job_workers, on_progress=on_progress)


class JobRunner:
    """Claims queued jobs (oldest first), runs them, records them. ``finish(conn, job, result)``
    applies a finished job's effects in the transaction that marks it done."""

    def __init__(self, db: Database, executor: JobExecutor, config: JSON, *,
                 prepare: Callable[[Record], JSON] | None,
                 finish: Callable[[Connection, Record, JSON], JSON] | None, metrics: Metrics | None = None) -> None:
        self.db, self.executor, self.config = db, executor, config
        self._prepare, self._finish, self.metrics = prepare, finish, metrics
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._running: dict[str, Future[Any]] = {}
        self._done: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="grader-jobs", daemon=True)

    def recover(self) -> int:
        """Jobs left running by a crash or a stop: queued again. Returns how many."""
        with self.db.write() as conn:
            n: int = conn.execute(update(Job).where(Job.status == "running")
                                  .values(status="queued", started_at=None)).rowcount
        if n:
            log.warning("%d job(s) left running by the last run were queued again", n)
        return n

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        """The runner's thread is running (it claims and records jobs)."""
        return self._thread.is_alive()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def _write(self, fn: Callable[[Connection], Any]) -> Any:
        """``fn(conn)`` through the database's group commit (on SQLite, the jobs' bookkeeping shares
        its fsync with the requests' writes instead of holding the one writer for each), waited for."""
        return self.db.submit_write(fn).result()

    def _requeue(self, jid: str) -> None:
        self._write(lambda conn: conn.execute(update(Job).where(Job.id == jid, Job.status == "running")
                                              .values(status="queued", started_at=None)))

    def progress(self, job_id: str, done: int, total: int | None) -> None:
        self._write(lambda conn: conn.execute(update(Job).where(Job.id == job_id, Job.status == "running")
                                              .values(done=done, total=total)))

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._collect()
                while len(self._running) < self.executor.capacity and self._claim():
                    pass
                self._gauge()
            except Exception:   # the database away for a moment: try again
                log.exception("job runner")
            self._wake.wait(0.5)
            self._wake.clear()

    def _gauge(self) -> None:
        if self.metrics is not None:
            with self.db.read() as conn:
                from sqlalchemy import func
                n = conn.execute(select(func.count()).select_from(Job).where(Job.status == "queued")).scalar_one()
            self.metrics.queue_depth.labels("jobs").set(n)

    def _claim(self) -> bool:
        def claim(conn: Connection) -> tuple[Record | None, bool]:
            row = conn.execute(select(Job.id, Job.kind, Job.user_id, Job.problem_id, Job.params, Job.data, Job.tries)
                               .where(Job.status == "queued").order_by(Job.created_at, Job.id).limit(1)
                               .with_for_update(skip_locked=True)).first()
            if row is None:
                return None, False
            if row.tries >= MAX_TRIES:
                conn.execute(update(Job).where(Job.id == row.id).values(
                    status="failed", finished_at=now(),
                    error=f"gave up: started {row.tries} times without finishing (it may crash its process)"))
                return row, True
            conn.execute(update(Job).where(Job.id == row.id).values(status="running", started_at=now(),
                                                                     tries=row.tries + 1))
            return row, False
        row, gave_up = self._write(claim)
        if row is None:
            return False
        if gave_up:
            if self.metrics is not None:
                self.metrics.job_finished(row.kind, failed=True)
            return True
        jid: str = row.id
        try:
            params = self._prepare(row) if self._prepare else (row.params or {})
            fut = self.executor.submit(row.kind, row.id, params, row.data, self.config)
        except BrokenProcessPool as e:  # the executor is away (a cluster's scheduler): the job waits for it
            log.error("job %s could not be started (%s); it stays queued", row.id, e)
            self._write(lambda conn: conn.execute(update(Job).where(Job.id == row.id, Job.status == "running")
                                                  .values(status="queued", started_at=None, tries=row.tries)))
            return False
        except Exception as e:
            log.exception("starting job %s", row.id)
            self._record(row.id, None, f"could not start: {type(e).__name__}: {e}")
            return True
        self._running[jid] = fut

        def done(_: Future[Any]) -> None:
            self._done.put(jid)
            self._wake.set()
        fut.add_done_callback(done)
        return True

    def _collect(self) -> None:
        while True:
            try:
                jid = self._done.get_nowait()
            except queue.Empty:
                return
            fut = self._running.pop(jid, None)
            if fut is None:
                continue
            try:
                result = fut.result()
            except BrokenProcessPool:   # its process died (killed, out of memory): tried again later
                log.error("the process running job %s died; the job is queued again", jid)
                self._requeue(jid)
                continue
            except Exception as e:
                self._record(jid, None, f"{type(e).__name__}: {e}"[:2000])
                continue
            if isinstance(result, dict) and result.get("not_run"):
                self._not_run(jid, str(result["not_run"]))
                continue
            self._record(jid, result, None)

    def _not_run(self, jid: str, cause: str) -> None:
        """A code job whose tests never ran (the runner crashed, its folder went missing, the
        grader's own processes ran out of memory, no sandbox): the grader's failure, not the
        learner's answer. Queued again, up to :data:`MAX_TRIES` runs; then failed, with its cause
        for staff. Never stored as a score, never counted as an attempt."""
        def mark(conn: Connection) -> int | None:
            tries: int | None = conn.execute(select(Job.tries).where(Job.id == jid, Job.status == "running")).scalar()
            if tries is None:
                return None
            if tries < MAX_TRIES:
                conn.execute(update(Job).where(Job.id == jid, Job.status == "running").values(
                    status="queued", started_at=None,
                    error=f"grading could not be done this time (the grader's fault, not your answer's); "
                          f"it will be retried: {cause}"[:2000]))
            else:
                conn.execute(update(Job).where(Job.id == jid, Job.status == "running").values(
                    status="failed", finished_at=now(), result=None,
                    error=f"grading could not be done (the grader's fault, not your answer's; nothing was recorded "
                          f"and no attempt was used; staff can see why and you may submit again): {cause}"[:2000]))
            return tries
        tries = self._write(mark)
        if tries is None:
            return
        if tries < MAX_TRIES:
            log.error("job %s: the tests did not run (%s); it is queued again (run %d of %d)",
                      jid, cause, tries, MAX_TRIES)
            return
        log.error("job %s: the tests did not run in %d runs (%s); it is failed", jid, tries, cause)
        if self.metrics is not None:
            self.metrics.job_finished("code", failed=True)

    def _record(self, jid: str, result: JSON | None, error: str | None) -> None:
        def record(conn: Connection) -> tuple[Record | None, str | None]:
            job = conn.execute(select(Job.id, Job.kind, Job.user_id, Job.problem_id, Job.params, Job.status)
                               .where(Job.id == jid)).first()
            if job is None or job.status != "running":
                return None, None
            out, why = result, error
            if why is None:
                try:
                    with conn.begin_nested():       # its effects whole, or none of them
                        out = self._finish(conn, job, out or {}) if self._finish else out
                except Exception as e:
                    log.exception("recording job %s", jid)
                    why, out = f"could not record the result: {type(e).__name__}: {e}"[:2000], None
            values: dict[str, object] = dict(status="failed" if why else "done", finished_at=now(), result=out,
                                             error=why)
            if not why:
                values["done"] = conn.execute(select(Job.total).where(Job.id == jid)).scalar() or 1
            conn.execute(update(Job).where(Job.id == jid).values(**values))
            return job, why
        job, why = self._write(record)
        if job is not None and self.metrics is not None:
            self.metrics.job_finished(job.kind, failed=bool(why))
