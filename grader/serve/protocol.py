"""uvicorn's HTTP protocol (httptools) with the time-outs it lacks, and a connection cap that
refuses at once.

uvicorn has a keep-alive time-out and ``limit_concurrency`` (a 503 once a request's headers are
in), but no time-out on reading a request's headers or body: a client that opens a connection and
sends its headers a byte a minute (slowloris), or never finishes its body, holds the connection
and its memory forever. :class:`TimedHttpProtocol` adds, per connection:

- a **header time-out**: armed when the connection opens (and when a later request on it begins),
  cancelled when that request's headers are complete; when it fires the connection gets a 408 and
  is closed. Bytes dribbling in do not re-arm it: the whole header section must arrive in time.
- a **body time-out**: armed when the headers are complete, cancelled when the body is complete;
  when it fires before the response started, the request is answered 408 and the connection closed
  (the application sees the client as gone).
- a **header size cap**: a request whose header section passes :data:`MAX_HEADER_BYTES` without
  ending is answered 431 and closed (httptools itself sets no bound: within the time-out a fast
  client could fill the server's memory with one endless header).
- a **connection cap**: a connection past ``max_connections`` open ones is answered 503 and closed
  as soon as it is made (uvicorn's own check comes only after the headers, too late for clients
  that never send them).

``protocol_class(header_s, body_s, max_connections)`` makes the class handed to
``uvicorn.Config(http=...)``.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("grader.serve")


def _response(status: bytes) -> bytes:
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"cache-control: no-store\r\ncontent-length: 0\r\n\r\n")


MAX_HEADER_BYTES = 64 * 1024
REQUEST_TIMEOUT = _response(b"408 Request Timeout")
TOO_LARGE = _response(b"431 Request Header Fields Too Large")
UNAVAILABLE = _response(b"503 Service Unavailable")


class TimedHttpProtocol(HttpToolsProtocol):
    header_s: float = 10.0
    body_s: float = 60.0
    max_connections: int = 1000

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0

    # ---------------------------------------------------------------- the connection

    def connection_made(self, transport: asyncio.Transport) -> None:   # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            log.warning("a connection was refused: %d are open (--max-connections %d)",
                        len(self.connections) - 1, self.max_connections)
            self._answer_and_close(UNAVAILABLE)
            return
        self._arm_header()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and not self.transport.is_closing():     # headers still incomplete
            self._header_bytes += len(data)
            if self._header_bytes > MAX_HEADER_BYTES:
                self._answer_and_close(TOO_LARGE)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    # ---------------------------------------------------------------- the parser's callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:      # a later request on a kept-alive connection
            self._arm_header()

    def on_headers_complete(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self._header_bytes = 0
        super().on_headers_complete()
        if self._body_timer is None and not self.transport.is_closing():
            self._body_timer = self.loop.call_later(self.body_s, self._body_timeout)

    def on_message_complete(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        super().on_message_complete()

    # ---------------------------------------------------------------- the timers

    def _arm_header(self) -> None:
        self._header_bytes = 0
        self._header_timer = self.loop.call_later(self.header_s, self._header_timeout)

    def _cancel(self) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        self._answer_and_close(REQUEST_TIMEOUT)

    def _body_timeout(self) -> None:
        self._body_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or cycle is None or cycle.response_started:
            return
        log.warning("a request's body did not arrive in %g s: 408, connection closed", self.body_s)
        cycle.disconnected = True           # the application's next receive() says the client left
        cycle.message_event.set()
        self._answer_and_close(REQUEST_TIMEOUT)

    def _answer_and_close(self, response: bytes) -> None:
        self._cancel()
        try:
            self.transport.write(response)
        finally:
            self.transport.close()


def protocol_class(header_s: float, body_s: float, max_connections: int) -> type[TimedHttpProtocol]:
    """A subclass of :class:`TimedHttpProtocol` with these limits (uvicorn makes one protocol
    object per connection from the class it is given)."""
    return type("GraderHttpProtocol", (TimedHttpProtocol,),
                {"header_s": header_s, "body_s": body_s, "max_connections": max_connections})
