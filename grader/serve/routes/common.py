"""Helpers the routers share."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NoReturn

from fastapi import Request
from fastapi.responses import JSONResponse

from ..errors import APIError

MAX_ROW_ID = 2**31 - 1      # the largest integer id a row has (past it: 422, never an overflow and a 500)

if TYPE_CHECKING:
    from ..app import State


def state(request: Request) -> State:
    st: State = request.app.state.grader
    return st


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


class FastJSON(JSONResponse):
    """JSON without a second validation pass (the objects are the engine's, already plain)."""

    def render(self, content: Any) -> bytes:
        return dumps(content)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise APIError(422, f"{k!r} is given more than once; neither copy counts", location=f"body.{k}")
        seen[k] = v
    return seen


def parse_json(raw: bytes) -> object:
    """A JSON body as an answers file is read: a number with a point or an exponent keeps its
    text (``1.05e6`` stays as written, with its precision), NaN and Infinity are refused, a key
    given twice is an error, nesting is bounded."""
    if not raw.strip():
        raise APIError(400, "the request body is empty; send JSON")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise APIError(400, f"the request body is not UTF-8 (byte {e.start})") from None
    try:
        return json.loads(text, parse_float=str, parse_constant=_reject_constant, object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise APIError(400, f"the request body is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}",
                       location=f"body:{e.lineno}:{e.colno}") from None
    except RecursionError:
        raise APIError(400, "the request body is nested too deeply") from None
    except ValueError as e:         # NaN, Infinity, an integer of more than 4,300 digits
        raise APIError(400, f"the request body cannot be read: {e}") from None


def require_json(request: Request) -> None:
    ctype = request.headers.get("content-type", "")
    if ctype and not ctype.split(";")[0].strip().lower().endswith(("/json", "+json")):
        raise APIError(415, f"send the body as application/json, not {ctype.split(';')[0]}")
