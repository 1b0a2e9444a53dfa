"""The FastAPI application: ``create_app(settings)``; its lifespan opens the database (created
if new, refused if its schema is behind), loads the bank, starts the grading workers and the
job runner, and grades what the last run stored but did not grade."""
from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager, contextmanager

import anyio
from fastapi import FastAPI

from grader import __version__
from grader.db import Database

from . import errors
from .auth import RateLimiter, TokenCache
from .errors import APIError
from .limits import BodyLimit
from .metrics import Metrics, MetricsMiddleware
from .settings import Settings

log = logging.getLogger("grader.serve")

DESCRIPTION = """The grading service of `grader`: learners submit answers and get the same grades and
feedback as `grader grade`; instructors see the class. Every request but `/healthz` and `/metrics`
carries `Authorization: Bearer <token>` (tokens: `grader users`). Errors are
`{"error": {"code", "message", "location"}}`."""


class State:
    """What the routes share (``request.app.state.grader``)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.metrics = Metrics()
        self.limiter = RateLimiter(settings.rate, settings.burst)
        self.tokens = TokenCache(settings.token_cache_s)
        self.db = None
        self.engine = None
        self.pool = None
        self.runner = None
        self.executor = None
        self._inflight: dict[int, int] = {}
        self._lock = threading.Lock()

    def worker_args(self) -> tuple:
        s = self.settings
        return (s.exercises, s.spec, s.timeout_s, s.memory_mb)

    @contextmanager
    def busy(self, user_id: int, limit: int = 1):
        """At most ``limit`` grading tasks of one learner at once: one learner's slow answers
        occupy one worker, never all of them."""
        with self._lock:
            n = self._inflight.get(user_id, 0)
            if n >= limit:
                raise APIError(429, "an earlier request of yours is still being graded; retry when it is answered",
                               headers={"Retry-After": "1"})
            self._inflight[user_id] = n + 1
        try:
            yield
        finally:
            with self._lock:
                n = self._inflight.get(user_id, 1) - 1
                if n:
                    self._inflight[user_id] = n
                else:
                    self._inflight.pop(user_id, None)


def _start(state: State) -> None:
    from . import store
    from .engine import Engine, worker_init, worker_task
    from .jobs import JobRunner, job_executor
    from .jobwork import JobWork, config
    from .workers import WorkerPool
    s = state.settings
    state.db = Database(s.database)
    if state.db.ensure_schema() == "created":
        log.warning("created the database %s", state.db.shown)
    state.engine = Engine(s.exercises, s.spec)
    state.pool = WorkerPool(worker_init, state.worker_args(), worker_task, processes=s.workers,
                            memory_mb=s.memory_mb)
    state.pool.start()
    work = JobWork(state)
    runner_box: list = []
    state.executor = job_executor(s, on_progress=lambda *a: runner_box[0].progress(*a))
    state.runner = JobRunner(state.db, state.executor, config(s), prepare=work.prepare, finish=work.finish,
                             metrics=state.metrics)
    runner_box.append(state.runner)
    state.runner.recover()
    state.runner.start()
    threading.Thread(target=store.recover, args=(state,), name="grader-recover", daemon=True).start()


def _stop(state: State) -> None:
    for part in (state.runner, state.executor, state.pool):
        if part is not None:
            try:
                part.stop() if hasattr(part, "stop") else part.close()
            except Exception:
                log.exception("stopping %s", type(part).__name__)
    if state.db is not None:
        state.db.dispose()


def create_app(settings: Settings | None = None, *, extensions: tuple = ()) -> FastAPI:
    """The application; ``extensions``: callables ``install(app)`` that add routes of their own
    (the web pages of :mod:`grader.web`, which the ``serve`` command passes: the service itself
    knows nothing of its pages, so that the pages may import the service and not the reverse)."""
    settings = settings or Settings()
    state = State(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await anyio.to_thread.run_sync(_start, state)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(_stop, state)

    app = FastAPI(title="grader", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  openapi_url="/openapi.json", docs_url="/docs", redoc_url=None)
    app.state.grader = state
    errors.install(app)
    from .routes import install
    install(app)
    for install_extension in extensions:
        install_extension(app)
    app.add_middleware(BodyLimit, default=settings.max_body,
                       uploads={"/api/v1/batches": settings.max_upload,
                                "/api/v1/code-submissions": settings.max_code + 64 * 1024})
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    return app
