"""Request bodies are size-limited before they are read: a Content-Length over the limit is
refused at once (413), and a body sent without one is counted as it streams in."""
from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import APIError

UPLOADS = ("/api/v1/batches", "/api/v1/code-submissions")


class BodyLimit:
    def __init__(self, app: ASGIApp, default: int, uploads: dict[str, int]) -> None:
        self.app, self.default, self.uploads = app, default, uploads

    def _limit(self, path: str) -> int:
        return self.uploads.get(path.rstrip("/"), self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self._limit(scope["path"])
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    return await _refuse(send, 400, "bad_request", "Content-Length is not a number")
                if size > limit:
                    return await _refuse(send, 413, "too_large",
                                         f"the request body is {size:,} bytes; at most {limit:,} are accepted")
        seen = {"n": 0}

        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["n"] += len(message.get("body", b""))
                if seen["n"] > limit:       # raised where the route reads its body: a 413 like any APIError
                    raise APIError(413, f"the request body is over {limit:,} bytes")
            return message

        await self.app(scope, counted, send)


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    data = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})
