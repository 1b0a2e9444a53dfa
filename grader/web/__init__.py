"""The web pages of `grader serve`: learners (``/learn``), staff (``/staff``) and course
authors (``/spec``). Server-rendered Jinja2 (autoescaped) with htmx (vendored, no CDN) for the
live parts; every grade, job and table comes through the service's own modules, so the pages
and the API (their JSON twin) cannot disagree. See docs/web.md."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

STATIC = Path(__file__).parent / "static"


def install(app: FastAPI) -> None:
    """Mount the pages, their static files and their error pages on the service's app."""
    from fastapi.responses import RedirectResponse
    from fastapi.staticfiles import StaticFiles

    from . import assessments, learn, lti, review, spec, staff, staff_assessments, staff_lti, stats, viewas
    from fastapi.exceptions import RequestValidationError
    from sqlalchemy.exc import DataError
    from starlette.exceptions import HTTPException

    from grader.serve.errors import APIError

    from .render import page_error, page_or_json
    from .session import PageError

    app.add_exception_handler(PageError, page_error)
    # the service's safety nets (grader.serve.errors.install) answer a page's request as a page
    for caught in (HTTPException, RequestValidationError, APIError, DataError, Exception):
        app.add_exception_handler(caught, page_or_json(app.exception_handlers[caught]))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for module in (learn, assessments, staff_assessments, staff_lti, viewas, stats, staff, review, spec, lti):
        app.include_router(module.router)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/learn", status_code=303)
