"""Prometheus metrics (prometheus-client), one registry per application: requests, their
latency, grading latency, queue depth, submissions and jobs. ``/metrics`` serves them."""
from __future__ import annotations

import time

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
        for kind in ("submission", "validate"):     # shown from the start, at zero
            self.grading.labels(kind)
        for queue in ("grading", "jobs"):
            self.queue_depth.labels(queue)

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
