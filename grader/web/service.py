"""The pages' door to the service: its state, its job routes (the same handlers as the API's,
so a page and an API call take one path), and URLs of problem ids."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import Request, UploadFile
from fastapi.responses import Response

from grader.serve.auth import Principal
from grader.serve.errors import APIError
from grader.serve.routes import jobs as job_routes

from .session import PageError, as_page_error

if TYPE_CHECKING:
    from grader.serve.app import State


def state(request: Request) -> State:
    st: State = request.app.state.grader
    return st


def url(prefix: str, problem_id: str) -> str:
    return prefix + quote(problem_id, safe="/")


def _body(response: Response) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(bytes(response.body))
    return out


async def code_submission(request: Request, problem_id: str, upload: UploadFile, who: Principal) -> dict[str, Any]:
    return _body(await job_routes.code_submission(request, problem=problem_id, file=upload, who=who))


async def batch(request: Request, upload: UploadFile, who: Principal) -> dict[str, Any]:
    return _body(await job_routes.batch(request, file=upload, who=who))


def regrade(request: Request, who: Principal) -> dict[str, Any]:
    return _body(job_routes.regrade(request, who=who))


def job(request: Request, job_id: str, who: Principal) -> dict[str, Any]:
    try:
        return _body(job_routes.get_job(job_id[:64], request, who=who))
    except APIError as e:
        raise as_page_error(e) from None


def not_found() -> PageError:
    return PageError(404, "Not found.")
