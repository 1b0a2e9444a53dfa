"""One router per resource, all under ``/api/v1`` but the health and metrics endpoints."""
from __future__ import annotations

from fastapi import FastAPI

API = "/api/v1"


def install(app: FastAPI) -> None:
    from . import assessments, audit, exercises, health, jobs, lti_services, lti_tool, review, staff, submissions
    app.include_router(health.router)
    app.include_router(lti_tool.router)
    for module in (exercises, submissions, jobs, staff, review, audit, assessments, lti_services):
        app.include_router(module.router, prefix=API)
