"""``/healthz`` (no token) and ``/metrics`` (Prometheus text format, no token)."""
from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text

from ..schemas import Health
from .common import state

router = APIRouter(tags=["service"])


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


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(request: Request) -> Response:
    st = state(request)
    pool = getattr(st, "pool", None)
    if pool is not None:
        st.metrics.queue_depth.labels("grading").set(pool.depth)
    return Response(st.metrics.render(), media_type=CONTENT_TYPE_LATEST)
