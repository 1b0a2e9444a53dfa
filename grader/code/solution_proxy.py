"""The grader's side of the channel: a learner's solution file as a module whose functions run
in the sandbox, while the tests, the checks and the reference stay here.

    with Session("alice.py", limits=Limits(...)) as s:
        solution = s.module()          # what the `solution` fixture hands a test
        solution.split_heads(x, 4)     # a fresh tensor, built here from the bytes that came back

The sandboxed process (:mod:`grader.code.solution_server`) imports the learner's file and nothing
else of the grader or the exercise. Each call sends the function's name and its arguments as
plain data (:mod:`grader.code.wire`) and reads exactly one reply, within the per-call time limit
(``Limits.call_s``) and the run's wall clock (``Limits.wall_s``), of at most
``Limits.reply_bytes``. A reply is hostile bytes until :func:`grader.code.wire.decode` has built
fresh plain values from it; anything else (an object of the learner's class) arrives as a
:class:`~grader.code.wire.NotPlainData` stand-in that equals nothing.

What the learner's code does is a per-call outcome, never the grader's crash:
:class:`SolutionRaised` (their exception, with their file:line), :class:`SolutionBroke` (no
result: a time-out, the process died, a reply that is not one; the process is stopped and
the next call starts a new one, at most ``MAX_STARTS`` in all) and
:class:`SolutionImportFailed` (the file cannot be imported: every test says why).
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypedDict, cast

from grader import sandbox
from grader.code import wire
from grader.errors import InputError, Location
from grader.sandbox import Running
from grader.sandbox.layout import StrPath
from grader.sandbox.limits import Limits, explain_limit, limit_message

MAX_SOLUTION_BYTES = 1024 * 1024
MAX_STARTS = 4          # the server is started again after a time-out or a crash, this often at most
INSIDE = "/grade"       # the run's read-only folder in the sandbox
SERVER_FILES = ("solution_server.py", "wire.py")


class SolutionRaised(Exception):
    """The learner's function raised: ``what`` ("ValueError: boom"), ``where`` (" (at
    alice.py:12: x = ...)"), ``note`` (" — memory limit of 3 GiB exceeded" where a limit shows)."""

    def __init__(self, function: str, type_name: str, message: str, where: str, note: str = ""):
        self.function, self.type_name, self.message, self.where, self.note = function, type_name, message, where, note
        super().__init__(str(self))

    @property
    def what(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name

    def __str__(self) -> str:
        return f"{self.function}() raised {self.what}{self.where}{self.note}"


class Hello(TypedDict, total=False):
    """The module's names (``functions``, ``values``), or why it could not be imported (``import_error``)."""

    functions: list[str]
    values: list[str]
    import_error: str


class SolutionBroke(Exception):
    """A call that has no result: what happened, in words."""


class SolutionImportFailed(Exception):
    """The solution file could not be imported (or its process never said hello)."""


def clean(text: object, limit: int = 1500) -> str:
    """Learner text made safe to show: control characters (newlines, escape sequences) written
    out as ``\\xNN``, cut at ``limit`` characters."""
    text = str(text)[: limit + 1]
    out = "".join(c if c == " " or unicodedata.category(c)[0] not in "CZ" or c.isprintable()
                  else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in text)
    return out if len(out) <= limit else out[:limit] + " …"


def read_solution(path: StrPath) -> bytes:
    """The learner's file, checked: a regular file (not a directory, FIFO or device), at most
    ``MAX_SOLUTION_BYTES``, UTF-8 text. Raises :class:`~grader.errors.InputError`."""
    path = Path(path)
    where = Location(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputError("no such solution file", where) from None
    except OSError as e:
        raise InputError(f"the solution file cannot be read: {e.strerror}", where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
                "a device or socket"
            raise InputError(f"the solution is {kind}, not a regular file", where)
        if st.st_size > MAX_SOLUTION_BYTES:
            raise InputError(f"the solution file is larger than {MAX_SOLUTION_BYTES // 1024} KiB", where)
        data = os.read(fd, MAX_SOLUTION_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SOLUTION_BYTES:
        raise InputError(f"the solution file is larger than {MAX_SOLUTION_BYTES // 1024} KiB", where)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"the solution file is not UTF-8 text (byte {e.start})", where) from None
    if b"\x00" in data:
        raise InputError("the solution file contains a NUL byte: it is not a Python source file", where)
    return data


class RemoteFunction:
    """A function of the learner's module; calling it calls it in the sandbox."""

    def __init__(self, session: Session, name: str) -> None:
        self._session, self.__name__ = session, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:       # plain data in, plain data out
        return self._session.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<function {self.__name__} of {self._session.display} (in the sandbox)>"


class SolutionModule:
    """The learner's module as the tests see it: its functions (:class:`RemoteFunction`) and
    its other public values (fetched as plain data)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.__file__ = session.display
        self.__name__ = "solution"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        hello = self._session.names()
        if name in hello["functions"]:
            return RemoteFunction(self._session, name)
        if name in hello["values"]:
            return self._session.get(name)
        raise AttributeError(f"your solution has no {name!r}")

    def __dir__(self) -> list[str]:
        hello = self._session.names()
        return sorted(hello["functions"] + hello["values"])

    def __repr__(self) -> str:
        return f"<solution {self._session.display} (in the sandbox: {self._session.description})>"


class Session:
    """One learner file served from the sandbox (started again after a time-out or a crash)."""

    def __init__(self, path: StrPath, *, display: str | None = None, limits: Limits = Limits(),
                 backend: str | None = None, hide: Iterable[StrPath] = (), workdir: StrPath | None = None,
                 preload: Iterable[str] = ("torch",)) -> None:
        self.source = read_solution(path)
        self.display = display or str(path)
        self.limits = limits
        self.backend = sandbox.choose(backend)
        self.description = sandbox.describe(self.backend)
        self.hide = tuple(hide)
        self.preload = [m for m in preload if importlib.util.find_spec(m) is not None]
        self.wire_limits = wire.WireLimits(blob_bytes=limits.reply_bytes)
        self.base = Path(tempfile.mkdtemp(prefix="grader-run-", dir=workdir))
        self.work = self.base / "grade"     # bound read-only at /grade
        self.work.mkdir()
        self._write_work()
        self.deadline = time.monotonic() + limits.wall_s
        self.proc: Running | None = None
        self.starts = 0
        self.seq = 0
        self._hello: Hello | None = None        # the module's names, from the first hello
        self._greeted = False       # the running process has said hello
        self._import_error = ""
        self.banned: dict[str, str] = {}        # function -> why its calls are not made any more
        self.stopped = ""           # why no call is made any more

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write_work(self) -> None:
        here = Path(__file__).resolve().parent
        for name in SERVER_FILES:
            shutil.copyfile(here / name, self.work / name)
        (self.work / "solution.py").write_bytes(self.source)
        for p in self.work.iterdir():
            p.chmod(0o644)
        self.work.chmod(0o755)
        self.base.chmod(0o711)

    def module(self) -> SolutionModule:
        return SolutionModule(self)

    # ------------------------------------------------------------ the process

    def open(self) -> Session:
        """Start the sandboxed process now (its imports overlap the caller's)."""
        if self.proc is None and not self.stopped:
            self._start()
        return self

    def _start(self) -> None:
        if self.starts >= MAX_STARTS:
            raise SolutionBroke(self.stopped or f"not run: the process running your code was stopped "
                                f"{self.starts} times; no more calls are made")
        if time.monotonic() >= self.deadline:
            self._stop(f"not run: time limit of {self.limits.wall_s:g} s exceeded (wall clock)")
        self.starts += 1
        req_r, self.req_w = os.pipe()
        self.rep_r, rep_w = os.pipe()
        config = {"req": req_r, "rep": rep_w, "solution": f"{INSIDE}/solution.py",
                  "blob_bytes": self.limits.reply_bytes, "preload": self.preload}
        argv = [*sandbox.python_argv(), f"{INSIDE}/solution_server.py", json.dumps(config)]
        try:
            self.proc = sandbox.start(argv, limits=self.limits, binds=((str(self.work), INSIDE),), cwd="/tmp",
                                      pass_fds=(req_r, rep_w), backend=self.backend, hide=self.hide,
                                      scratch=str(self.base))
        except BaseException:
            os.close(self.req_w)
            os.close(self.rep_r)
            raise
        finally:
            os.close(req_r)
            os.close(rep_w)
        os.set_blocking(self.req_w, False)
        os.set_blocking(self.rep_r, False)

    def _kill(self) -> None:
        if self.proc is not None:
            for fd in (self.req_w, self.rep_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.proc.close()
            self.proc = None
            self._greeted = False

    def _stop(self, why: str) -> NoReturn:
        self.stopped = why
        self._kill()
        raise SolutionBroke(why)

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self.base, ignore_errors=True)

    def _ended(self) -> str:
        """How the process ended, with the last lines it wrote to stderr."""
        proc = cast(Running, self.proc)        # asked while a process runs (its pipe has just closed)
        try:
            proc.proc.wait(timeout=1)
        except Exception:
            pass
        how = proc.ended()
        tail = [ln for ln in proc.stderr().strip().splitlines() if "Failed to initialize NumPy" not in ln][-2:]
        return how + (f" ({clean(' | '.join(tail), 300)})" if tail else "")

    # ------------------------------------------------------------ the hello

    def names(self) -> Hello:
        """The module's ``functions`` and ``values`` (from the first hello)."""
        if self._hello is None:
            self.hello()
        return cast(Hello, self._hello)         # hello() has set it, or raised

    def hello(self) -> Hello:
        """Make sure the process runs and has said hello; raises :class:`SolutionImportFailed`."""
        if self._import_error:
            raise SolutionImportFailed(self._import_error)
        if self.proc is not None and self._greeted:
            return cast(Hello, self._hello)     # set when the process said hello
        if self.proc is None:
            try:
                self._start()
            except SolutionBroke as e:
                raise SolutionImportFailed(str(e)) from None
        try:
            header, _ = wire.read_frame(self.rep_r, self.deadline, self.wire_limits)
        except wire.WireTimeout:
            self.stopped = (f"time limit of {self.limits.wall_s:g} s exceeded (wall clock): your solution "
                            f"did not finish importing")
            self._kill()
            raise SolutionImportFailed(self.stopped) from None
        except wire.WireError as e:
            why = self._ended() if isinstance(e, wire.WireClosed) else f"it sent {e}"
            self._kill()
            raise SolutionImportFailed(f"{self.display}: the process importing your solution ended: {why}") from None
        hello = self._check_hello(header)
        if "import_error" in hello:
            self._import_error = hello["import_error"]
            self._kill()
            raise SolutionImportFailed(self._import_error)
        self._hello, self._greeted = hello, True
        return hello

    def _check_hello(self, h: dict[str, Any]) -> Hello:
        if set(h) == {"hello", "import_error"} and type(h["import_error"]) is dict:
            e = h["import_error"]
            line = e.get("line") if type(e.get("line")) is int else 0
            place = f"{self.display}:{line}" if line else self.display
            message = clean(e.get("message", ""), 1000)
            what = f"{clean(e.get('type'), 100)}: {message}" if message else clean(e.get("type"), 100)
            if e.get("syntax") is True:
                return {"import_error": f"{place}: SyntaxError: {clean(e.get('message'), 1000)}"}
            return {"import_error": f"{place}: your solution could not be imported: {what}{self._note(what)}"}
        names: dict[str, Any] = {k: h.get(k) for k in ("functions", "values")}
        if set(h) != {"hello", "functions", "values"} or \
                not all(type(v) is list and all(type(x) is str for x in v) for v in names.values()):
            self._kill()
            raise SolutionImportFailed(f"{self.display}: the process importing your solution sent a malformed hello")
        return {"functions": list(names["functions"]), "values": list(names["values"])}

    def _note(self, text: str) -> str:
        limit = explain_limit(text)
        return f" — {limit_message(limit, self.limits)}" if limit else ""

    # ------------------------------------------------------------ calls

    def get(self, name: str) -> Any:
        return self._request(name, {"get": name}, {}, name)

    def call(self, name: str, args: Iterable[Any] = (), kwargs: Mapping[str, Any] | None = None) -> Any:
        """Call the learner's function ``name`` in the sandbox; returns plain data."""
        torch = sys.modules.get("torch")
        seed = int(torch.initial_seed()) % (1 << 63) if torch is not None else 0
        return self._request(name, {"call": name, "seed": seed}, {"args": tuple(args), "kwargs": dict(kwargs or {})},
                             f"{name}()")

    def _request(self, name: str, header: dict[str, object], values: dict[str, object], label: str) -> Any:
        if name in self.banned:
            raise SolutionBroke(f"not run: {self.banned[name]}")
        if self.stopped:
            raise SolutionBroke(self.stopped)
        try:
            self.hello()
        except SolutionImportFailed as e:
            raise SolutionBroke(str(e)) from None
        try:
            data = wire.frame({"id": self.seq + 1, **header}, values, wire.WireLimits(blob_bytes=1 << 30), strict=True)
        except wire.WireError as e:  # the test's own arguments: an exercise's bug, said as such
            raise TypeError(f"{label}: an argument cannot be sent to the sandbox: {e}") from None
        self.seq += 1
        call_deadline = time.monotonic() + self.limits.call_s
        deadline = min(call_deadline, self.deadline)
        try:
            wire.write_all(self.req_w, data, deadline)
            reply, blob = wire.read_frame(self.rep_r, deadline, self.wire_limits)
            return self._answer(name, label, reply, blob)
        except wire.WireTimeout:
            if deadline < call_deadline:
                self._stop(f"time limit of {self.limits.wall_s:g} s exceeded (wall clock): {label} did not "
                           f"return; the process running your code was stopped")
            self.banned[name] = f"an earlier call of {label} ran past the time limit of {self.limits.call_s:g} s"
            why = f"{label} did not return within the time limit of {self.limits.call_s:g} s per call"
        except wire.WireClosed:
            why = f"the process running your code ended during {label}: {self._ended()}"
        except wire.WireError as e:
            why = f"{label} sent back something that is not a reply ({e})"
        self._kill()
        raise SolutionBroke(f"{why}; the process running your code was stopped")

    def _answer(self, name: str, label: str, reply: dict[str, Any], blob: bytes) -> Any:
        keys = set(reply)
        if reply.get("id") != self.seq or type(reply.get("id")) is not int:
            raise wire.WireError("a reply to another request")
        if keys == {"id", "ok", "value"} and reply["ok"] == 1:
            return wire.decode(reply["value"], blob, self.wire_limits)
        if keys == {"id", "raised"} and type(reply["raised"]) is dict:
            r = reply["raised"]
            line = r.get("line") if type(r.get("line")) is int else 0
            source = clean(r.get("source", ""), 200)
            where = f" (at {self.display}:{line}: {source})" if line else ""
            type_name, message = clean(r.get("type"), 100), clean(r.get("message", ""), 1000)
            raise SolutionRaised(label[:-2] if label.endswith("()") else label, type_name, message, where,
                                 self._note(f"{type_name}: {message}"))
        if keys == {"id", "unsendable"} and type(reply["unsendable"]) is str:
            raise SolutionBroke(f"{label} returned a value that cannot be sent back: {clean(reply['unsendable'], 300)}")
        raise wire.WireError("a reply of an unknown form")
