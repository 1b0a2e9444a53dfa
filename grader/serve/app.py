"""The FastAPI application: ``create_app(settings)``; its lifespan opens the database (created
if new, refused if its schema is behind), loads the bank, starts the grading workers and the
job runner, and grades what the last run stored but did not grade."""
from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from grader.api.service import VERSION
from grader.db import Database

from . import errors
from .auth import FailureThrottle, RateLimiter, TokenCache
from .errors import APIError
from .limits import BodyLimit, ErrorBackoff
from .metrics import Metrics, MetricsMiddleware
from .settings import Settings

if TYPE_CHECKING:
    from .engine import Engine
    from .jobs import JobExecutor, JobRunner
    from .workers import WorkerPool
    from .lti.runtime import Services as LtiServices

log = logging.getLogger("grader.serve")

DESCRIPTION = """The grading service of `grader`: learners submit answers and get the same grades and
feedback as `grader grade`; instructors see the class. Every request but `/healthz` and `/metrics`
carries `Authorization: Bearer <token>` (tokens: `grader users`). Errors are
`{"error": {"code", "message", "location"}}`."""


class State:
    """What the routes share (``request.app.state.grader``)."""

    # set by the lifespan's start (absent before it: read them with getattr where that may be)
    db: Database
    engine: Engine
    pool: WorkerPool
    runner: JobRunner
    executor: JobExecutor
    lti: LtiServices

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.limiter = RateLimiter(settings.rate, settings.burst)
        self.tokens = TokenCache(settings.token_cache_s)
        self.throttle = FailureThrottle(settings.auth_failures, settings.auth_window_s)
        self._inflight: dict[int, int] = {}
        self._lock = threading.Lock()
        from .shared import SharedRateLimiter, SharedSlots
        self.shared = bool(settings.shared_limits)          # decided at start when None (PostgreSQL: shared)
        self.shared_slots = SharedSlots(settings.guard_lease_s)
        self.shared_limiter = SharedRateLimiter(settings.rate, settings.burst)

    def now(self) -> datetime:
        """The service's clock, UTC: ``Settings.now`` where a test sets one, else the system's.
        Submissions, reviews and assessments' windows all read it."""
        f = self.settings.now
        t = f() if f is not None else datetime.now(timezone.utc)
        return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)

    def worker_args(self) -> tuple[Any, ...]:
        s = self.settings
        return (s.exercises, s.spec, s.timeout_s, s.memory_mb)

    async def rate_wait(self, token_id: int) -> float:
        """0 if this token's request may go on; else the seconds until it may."""
        if not self.shared:
            return self.limiter.take(token_id)
        wait: float = await anyio.to_thread.run_sync(self.shared_limiter.take, self.db, token_id)
        return wait

    @asynccontextmanager
    async def busy(self, user_id: int) -> AsyncIterator[None]:
        """One grading task of a learner at once (on every instance, when shared): one
        learner's slow answers occupy one worker, never all of them."""
        if self.shared:
            holder = await anyio.to_thread.run_sync(self.shared_slots.acquire, self.db, user_id)
            if holder is None:
                raise _still_grading()
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self.shared_slots.release, self.db, user_id, holder)
            return
        with self._lock:
            if self._inflight.get(user_id, 0) >= 1:
                raise _still_grading()
            self._inflight[user_id] = 1
        try:
            yield
        finally:
            with self._lock:
                self._inflight.pop(user_id, None)


def _still_grading() -> APIError:
    return APIError(429, "an earlier request of yours is still being graded; retry when it is answered",
                    headers={"Retry-After": "1"})


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
    if s.shared_limits is None:
        state.shared = state.db.dialect != "sqlite"
    if state.shared:
        state.shared_slots.start(state.db)
    state.engine = Engine(s.exercises, s.spec, s.course)
    state.pool = WorkerPool(worker_init, state.worker_args(), worker_task, processes=s.workers,
                            memory_mb=s.memory_mb)
    state.pool.start()
    _seed_draws(state)
    work = JobWork(state)
    runner_box: list[JobRunner] = []
    state.executor = job_executor(s, on_progress=lambda *a: runner_box[0].progress(*a))
    state.runner = JobRunner(state.db, state.executor, config(s), prepare=work.prepare, finish=work.finish,
                             metrics=state.metrics)
    runner_box.append(state.runner)
    state.runner.recover()
    state.runner.start()
    threading.Thread(target=store.recover, args=(state,), name="grader-recover", daemon=True).start()
    from .lti.runtime import Services
    state.lti = Services(state.db, lambda: state.engine, s.policy, state.now, s.lti_interval_s,
                         timedelta(seconds=s.lti_lease_s))
    state.lti.start()


async def warm_up(app: FastAPI) -> None:
    """What the routing builds on first use, built before anything listens: one request that no
    route takes is sent to the application's router (FastAPI derives each included router's
    matching state on the first request that walks it: ~150 ms with the pages installed, the
    event loop stopped and every request in flight waiting), and the tokenizer that FastAPI's
    first call of an endpoint uses is made ready (~85 ms once). Best effort: a failure is logged."""
    import inspect

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        pass
    path = "/.warm-up/no-such-route"
    scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                    "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
                    "headers": [], "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 0), "state": {}}
    try:
        await app.router(scope, receive, send)
        inspect.getsourcelines(warm_up)
    except Exception:       # noqa: BLE001  (only the warm-up is lost)
        log.exception("warming up the routes")


def freeze_heap() -> None:
    """What start-up made (the app, the bank, SQLAlchemy's and the libraries' modules: about
    150,000 objects that live as long as the process) is moved out of the cycle collector's
    reach (``gc.freeze``). Requests' short-lived objects that outlive a young collection push the
    collector into a full one every few seconds, and a full collection walks the whole heap with
    the event loop stopped: 75-200 ms measured in the server's one process (collecting nothing),
    every request in flight waiting, the largest part of the benchmark's p99. Frozen objects are
    still freed by reference counting; a cycle among them is not collected, and start-up makes
    none that matters. The collector is the process's: ``grader serve`` asks for this
    (``Settings.freeze_heap``); an app made by a test or a library is left as it is."""
    import gc
    gc.collect()        # what start-up left as garbage is freed first, not frozen
    gc.freeze()
    log.info("froze %d objects of the start-up out of the cycle collector's reach", gc.get_freeze_count())


def _seed_draws(state: State) -> None:
    """The variants' draws from a grading worker (it derived them while warming up), so that the
    first learner listing the exercises does not load the spec and SymPy in this process: seconds
    of CPU while every other request waits. Not given (a worker failed): derived here on first use."""
    try:
        state.engine.seed_draws(state.pool.call(("draws",), 30.0))
    except Exception as e:
        log.warning("the variants' draws were not taken from a grading worker (%s): derived on first use", e)


def _stop(state: State) -> None:
    state.shared_slots.stop()
    for name in ("lti", "runner", "executor", "pool"):
        part = getattr(state, name, None)
        if part is not None:
            try:
                part.stop() if hasattr(part, "stop") else part.close()
            except Exception:
                log.exception("stopping %s", type(part).__name__)
    db = getattr(state, "db", None)
    if db is not None:
        db.dispose()


def create_app(settings: Settings | None = None, *,
               extensions: tuple[Callable[[FastAPI], None], ...] = ()) -> FastAPI:
    """The application; ``extensions``: callables ``install(app)`` that add routes of their own
    (the web pages of :mod:`grader.web`, which the ``serve`` command passes: the service itself
    knows nothing of its pages, so that the pages may import the service and not the reverse)."""
    settings = settings or Settings()
    state = State(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(_start, state)
        await warm_up(app)
        if settings.freeze_heap:
            freeze_heap()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(_stop, state)

    app = FastAPI(title="grader", version=VERSION, description=DESCRIPTION, lifespan=lifespan,
                  openapi_url="/openapi.json", docs_url=None, redoc_url=None)
    app.state.grader = state
    _docs(app)
    errors.install(app)
    _client_gone(app)
    from .routes import install
    install(app)
    for install_extension in extensions:
        install_extension(app)
    app.add_middleware(BodyLimit, default=settings.max_body,
                       uploads={"/api/v1/batches": settings.max_upload,
                                "/api/v1/code-submissions": settings.max_code + 64 * 1024})
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ErrorBackoff, burst=settings.error_burst, window_s=settings.error_window_s,
                       delay_s=settings.error_delay_s)
    return app


def _client_gone(app: FastAPI) -> None:
    """A client that left (or whose body did not come within ``--body-timeout``, see
    :mod:`.protocol`) before its body was read: nothing to answer, nothing to log as an error."""
    from fastapi import Request
    from fastapi.responses import Response
    from starlette.requests import ClientDisconnect

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, e: ClientDisconnect) -> Response:
        return Response(status_code=408)


SWAGGER = Path(__file__).parent / "static" / "swagger"     # swagger-ui-dist, vendored (scripts/vendor.sh)


def _docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI from the files vendored with grader (no CDN: it works offline)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    app.mount("/docs/static", StaticFiles(directory=SWAGGER), name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="grader: the API",
                                   swagger_js_url="/docs/static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs/static/swagger-ui.css",
                                   swagger_favicon_url="/docs/static/favicon-32x32.png")


NO_STORE = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]


class SecurityHeaders:
    """Every response but a static file's: ``Cache-Control: no-store`` (grades, tokens and
    answers are nobody's cache's) and ``X-Content-Type-Options: nosniff``, unless the response
    set them itself; no ``server`` header (``grader serve`` also turns off uvicorn's)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith(("/static/", "/docs/static/"))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"server"]
                have = {k.lower() for k, _ in headers}
                extra = [(b"x-content-type-options", b"nosniff")] if static else NO_STORE
                headers += [(k, v) for k, v in extra if k not in have]
                message = {**message, "headers": headers}
            await send(message)
        await self.app(scope, receive, with_headers)
