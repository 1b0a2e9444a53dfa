"""Request bodies are size-limited before they are read: a Content-Length over the limit is
refused at once (413), and a body sent without one is counted as it streams in.

A client address that keeps getting refused is answered more slowly (:class:`ErrorBackoff`):
past ``burst`` answers 4xx in ``window_s`` seconds, each further 4xx answer to that address waits
``delay_s`` before it is sent. It costs the server a sleeping coroutine, and it costs a client
that waits for its answers (a script replaying attacks, a scanner, a client in a retry loop)
most of its rate, so the server's one event loop goes to the requests that succeed. A 2xx or 3xx
answer is never delayed: on a shared address (a campus NAT, a proxy), learners whose requests
succeed are not slowed down by another's refusals. A client that does not wait for its answers
is bounded by ``--max-connections`` instead (and the reverse proxy's per-address limits).
"""
from __future__ import annotations

import asyncio
import json
import time

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


class ErrorBackoff:
    """Delay 4xx answers to a client address that had more than ``burst`` of them in the current
    window of ``window_s`` seconds (a fixed window per address, kept for at most ``size``
    addresses: past that, every window starts again). ``delay_s`` 0: nothing is delayed."""

    def __init__(self, app: ASGIApp, burst: int, window_s: float, delay_s: float, size: int = 100_000) -> None:
        self.app, self.burst, self.window_s, self.delay_s, self.size = app, burst, window_s, delay_s, size
        self._seen: dict[str, tuple[float, int]] = {}

    def refused(self, addr: str, now: float) -> int:
        """Count one 4xx answer to ``addr``: how many in its current window."""
        start, n = self._seen.get(addr, (now, 0))
        if now - start >= self.window_s:
            start, n = now, 0
        if len(self._seen) >= self.size and addr not in self._seen:
            self._seen.clear()
        self._seen[addr] = (start, n + 1)
        return n + 1

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.delay_s <= 0:
            return await self.app(scope, receive, send)
        client = scope.get("client")
        addr = str(client[0]) if client else "?"

        async def paced(message: Message) -> None:
            if message["type"] == "http.response.start" and 400 <= int(message["status"]) < 500:
                if self.refused(addr, time.monotonic()) > self.burst:
                    await asyncio.sleep(self.delay_s)
            await send(message)
        await self.app(scope, receive, paced)
