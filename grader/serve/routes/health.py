"""``/healthz`` (liveness, no token), ``/readyz`` (readiness, no token) and ``/metrics``
(Prometheus text format, no token).

``/healthz`` is cheap: the process answers, the database can be read, workers are up and their
dispatcher runs. ``/readyz`` proves the pipeline: a canary answer is graded through the worker
pool and the database takes a write, each within ``Settings.ready_timeout_s``; when not, 503 with
the reasons. One check runs at a time and its answer is reused for a second, so that however often
``/readyz`` is asked it adds at most one task to the grading queue at a time.
"""
from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel
from sqlalchemy import text

from ..schemas import Health
from .common import state

if TYPE_CHECKING:
    from ..app import State

router = APIRouter(tags=["service"])
REUSE_S = 1.0       # a readiness answer is reused this long
CANARY = "readiness-canary"


class Ready(BaseModel):
    status: str                 # "ready" | "not ready"
    reasons: list[str]          # empty when ready
    canary_s: float | None      # how long the canary answer took through the pool


@router.get("/healthz", response_model=Health, summary="Is the service up: database, workers, queue")
def healthz(request: Request) -> JSONResponse:
    st = state(request)
    try:
        with st.db.read() as conn:
            conn.execute(text("SELECT 1"))
        rev, db = st.db.revision(), "ok"
    except Exception as e:   # the database is away: say so, 503
        rev, db = None, f"unavailable: {type(e).__name__}"
    pool = getattr(st, "pool", None)
    ready = pool.ready_workers if pool else 0
    body = {"status": "ok" if db == "ok" and ready else "degraded", "database": db, "schema_revision": rev,
            "workers_ready": ready, "queue": pool.depth if pool else 0}
    return JSONResponse(body, status_code=200 if body["status"] == "ok" else 503)


class _Check:
    """One readiness check at a time per application; its answer reused for :data:`REUSE_S`."""

    def __init__(self) -> None:
        self.task: asyncio.Task[tuple[list[str], float | None]] | None = None
        self.last: tuple[float, list[str], float | None] | None = None


_CHECKS: weakref.WeakKeyDictionary[State, _Check] = weakref.WeakKeyDictionary()


@router.get("/readyz", response_model=Ready, summary="Ready to grade: a canary graded through the workers, "
                                                      "the database writable (503 with the reasons when not)")
async def readyz(request: Request) -> JSONResponse:
    st = state(request)
    check = _CHECKS.setdefault(st, _Check())
    if check.last is not None and time.monotonic() - check.last[0] < REUSE_S:
        _, reasons, canary_s = check.last
    else:
        if check.task is None or check.task.done():
            check.task = asyncio.ensure_future(_probe(st))
        reasons, canary_s = await asyncio.shield(check.task)
        check.last = (time.monotonic(), reasons, canary_s)
    st.metrics.ready.set(0 if reasons else 1)
    body = {"status": "not ready" if reasons else "ready", "reasons": reasons, "canary_s": canary_s}
    return JSONResponse(body, status_code=503 if reasons else 200)


async def _probe(st: State) -> tuple[list[str], float | None]:
    limit = st.settings.ready_timeout_s
    reasons: list[str] = []
    canary_s, db_why = await asyncio.gather(_canary(st, limit, reasons), _writable(st, limit))
    if db_why:
        reasons.append(db_why)
    runner = getattr(st, "runner", None)
    if runner is None or not runner.alive:
        reasons.append("the job runner is not running")
    return reasons, canary_s


async def _canary(st: State, limit: float, reasons: list[str]) -> float | None:
    from ..workers import TaskFailed
    pool, engine = getattr(st, "pool", None), getattr(st, "engine", None)
    if pool is None or engine is None:
        reasons.append("the grading workers are not started")
        return None
    if pool.broken:
        reasons.append(f"the grading workers cannot start: {pool.broken}")
        return None
    if not pool.ensure_dispatcher():
        reasons.append("the grading dispatcher is not running")
        return None
    problem = next((p.id for p in engine.problems if p.kind != "code"), None)
    answers = {problem: "0"} if problem else {}
    t0 = time.monotonic()
    fut = pool.submit(("grade", CANARY, answers), limit)
    try:
        await asyncio.wait_for(asyncio.wrap_future(fut), timeout=limit)
    except asyncio.TimeoutError:
        fut.cancel()
        reasons.append(f"a canary answer was not graded through the worker pool within {limit:g} s "
                       f"({pool.depth} task(s) queued or running, {pool.ready_workers} worker(s) ready)")
        return None
    except TaskFailed as e:
        reasons.append(f"a canary answer could not be graded: {e.reason}: {e}")
        return None
    return round(time.monotonic() - t0, 4)


async def _writable(st: State, limit: float) -> str | None:
    db = getattr(st, "db", None)
    if db is None:
        return "the database is not open"
    try:
        with anyio.fail_after(limit):
            why: str | None = await anyio.to_thread.run_sync(db.unwritable, abandon_on_cancel=True)
    except TimeoutError:
        return f"the database did not take a write within {limit:g} s"
    except Exception as e:      # the database away altogether
        return f"the database cannot be written ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})"
    return why


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(request: Request) -> Response:
    st = state(request)
    executor = getattr(st, "executor", None)
    alive = getattr(executor, "processes_alive", None)
    st.metrics.sync(getattr(st, "pool", None), alive() if callable(alive) else None)
    return Response(st.metrics.render(), media_type=CONTENT_TYPE_LATEST)
