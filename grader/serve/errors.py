"""Every error is JSON ``{"error": {"code", "message", "location"?}}`` with its HTTP status."""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

log = logging.getLogger("grader.serve")

CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
         409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid", 429: "rate_limited",
         500: "internal", 503: "unavailable"}


class APIError(Exception):
    def __init__(self, status: int, message: str, *, code: str | None = None, location: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.location, self.headers = status, message, location, headers
        self.code = code or CODES.get(status, "error")


def body(code: str, message: str, location: str | None = None) -> dict[str, Any]:
    err: dict[str, str] = {"code": code, "message": message}
    if location:
        err["location"] = location
    return {"error": err}


def response(status: int, code: str, message: str, location: str | None = None,
             headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body(code, message, location), status_code=status, headers=headers)


def not_found(what: str) -> APIError:
    return APIError(404, f"no such {what}")


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc)


def install(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api(request: Request, e: APIError) -> JSONResponse:
        return response(e.status, e.code, e.message, e.location, e.headers)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, e: HTTPException) -> JSONResponse:
        message = e.detail if isinstance(e.detail, str) else CODES.get(e.status_code, "error")
        if e.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path}"
        elif e.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
        return response(e.status_code, CODES.get(e.status_code, "error"), message, headers=getattr(e, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        errors = e.errors()
        first = errors[0] if errors else {"msg": "invalid request", "loc": ()}
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        loc = _where(first.get("loc", ()))
        status, code = 422, "invalid"
        if first.get("type") in ("json_invalid", "model_attributes_type") and tuple(first.get("loc", ()))[:1] == ("body",):
            status, code = 400, "bad_request"
        return response(status, code, f"{first.get('msg', 'invalid')}{more}", loc or None)

    from sqlalchemy.exc import DataError

    @app.exception_handler(DataError)
    async def _data(request: Request, e: DataError) -> JSONResponse:
        """A value the database refuses: text with a NUL character (PostgreSQL's text columns
        take none) where no check came first is the client's error (422), anything else ours."""
        if "NUL" in str(e.orig):
            log.warning("refused on %s %s: text with a NUL character", request.method, request.url.path)
            return response(422, "invalid", "text cannot contain a NUL character (\\u0000)")
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=e)
        return response(500, "internal", "internal error; it was logged")

    @app.exception_handler(Exception)
    async def _internal(request: Request, e: Exception) -> JSONResponse:
        from sqlalchemy.exc import OperationalError
        if isinstance(e, OperationalError):
            log.error("database error on %s %s: %s", request.method, request.url.path, e)
            return response(503, "unavailable", "the database is unavailable; try again later",
                            headers={"Retry-After": "5"})
        log.exception("internal error on %s %s", request.method, request.url.path)
        return response(500, "internal", "internal error; it was logged")
