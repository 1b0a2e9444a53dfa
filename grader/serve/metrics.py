"""Prometheus metrics (prometheus-client), one registry per application: requests, their
latency, grading latency, queue depth, submissions and jobs, the grading pool's health (workers
alive, dispatcher restarts, failed tasks). ``/metrics`` serves them."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .workers import WorkerPool

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.requests = Counter("grader_http_requests", "HTTP requests", ["method", "route", "status"], registry=r)
        self.latency = Histogram("grader_http_request_seconds", "HTTP request latency", ["route"], buckets=BUCKETS,
                                 registry=r)
        self.grading = Histogram("grader_grading_seconds", "Grading latency in the workers", ["kind"],
                                 buckets=BUCKETS, registry=r)
        self.queue_depth = Gauge("grader_queue_depth", "Tasks waiting or running", ["queue"], registry=r)
        self.submissions = Counter("grader_submissions", "Submissions stored", ["source"], registry=r)
        self.jobs = Counter("grader_jobs_finished", "Jobs finished", ["kind", "status"], registry=r)
        self.workers_alive = Gauge("grader_workers_alive", "Worker processes alive", ["pool"], registry=r)
        self.workers_ready = Gauge("grader_workers_ready", "Grading workers ready for a task", registry=r)
        self.dispatcher_restarts = Counter("grader_dispatcher_restarts", "The grading dispatcher recovered from a "
                                           "failure of its own or was started again", registry=r)
        self.tasks_failed = Counter("grader_grading_tasks_failed", "Grading tasks failed (timeout, died, memory, "
                                    "error, closed)", ["reason"], registry=r)
        self.jobs_failed = Counter("grader_jobs_failed", "Jobs failed", ["kind"], registry=r)
        self.ready = Gauge("grader_ready", "1 when the last readiness check passed, else 0", registry=r)
        self._seen: dict[str, int] = {}
        for kind in ("submission", "validate"):     # shown from the start, at zero
            self.grading.labels(kind)
        for queue in ("grading", "jobs"):
            self.queue_depth.labels(queue)
            self.workers_alive.labels(queue)
        for kind in ("code", "batch", "regrade"):
            self.jobs_failed.labels(kind)

    def job_finished(self, kind: str, failed: bool) -> None:
        self.jobs.labels(kind, "failed" if failed else "done").inc()
        if failed:
            self.jobs_failed.labels(kind).inc()

    def sync(self, pool: WorkerPool | None, job_processes: int | None) -> None:
        """The pool's numbers, read when ``/metrics`` is asked (its counters move by what changed)."""
        if pool is not None:
            self.queue_depth.labels("grading").set(pool.depth)
            self.workers_alive.labels("grading").set(pool.alive_workers)
            self.workers_ready.set(pool.ready_workers)
            self._advance(self.dispatcher_restarts, "restarts", pool.restarts)
            for reason, n in list(pool.failed.items()):
                self._advance(self.tasks_failed.labels(reason), "failed:" + reason, n)
        if job_processes is not None:
            self.workers_alive.labels("jobs").set(job_processes)

    def _advance(self, counter: Counter, key: str, total: int) -> None:
        delta = total - self._seen.get(key, 0)
        if delta > 0:
            counter.inc(delta)
            self._seen[key] = total

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every request by its route template (not its path: ids would explode the labels)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        status = {"code": 500}

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, send_status)
        finally:
            name = _template(scope)
            self.metrics.requests.labels(scope["method"], name, str(status["code"])).inc()
            self.metrics.latency.labels(name).observe(time.perf_counter() - t0)


def _template(scope: Scope) -> str:
    """The path with its parameters named (/api/v1/submissions/{submission_id}); "unmatched"
    for a path no route took."""
    if scope.get("route") is None:
        return "unmatched"
    path: str = scope["path"]
    for name, value in (scope.get("path_params") or {}).items():
        value = str(value)
        at = path.rfind(value)
        if value and at >= 0:
            path = path[:at] + "{" + name + "}" + path[at + len(value):]
    return path
