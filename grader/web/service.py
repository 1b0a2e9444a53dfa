"""The pages' door to the service: its state, its job routes (the same handlers as the API's,
so a page and an API call take one path), and URLs of problem ids."""
from __future__ import annotations

import json
from urllib.parse import quote

from fastapi import Request

from grader.serve.errors import APIError
from grader.serve.routes import jobs as job_routes

from .session import PageError, as_page_error


def state(request: Request):
    return request.app.state.grader


def url(prefix: str, problem_id: str) -> str:
    return prefix + quote(problem_id, safe="/")


def _body(response) -> dict:
    return json.loads(response.body)


async def code_submission(request: Request, problem_id: str, upload, who) -> dict:
    return _body(await job_routes.code_submission(request, problem=problem_id, file=upload, who=who))


async def batch(request: Request, upload, who) -> dict:
    return _body(await job_routes.batch(request, file=upload, who=who))


def regrade(request: Request, who) -> dict:
    return _body(job_routes.regrade(request, who=who))


def job(request: Request, job_id: str, who) -> dict:
    try:
        return _body(job_routes.get_job(job_id[:64], request, who=who))
    except APIError as e:
        raise as_page_error(e) from None


def not_found() -> PageError:
    return PageError(404, "Not found.")
