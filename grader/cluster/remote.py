"""What runs on a Dask worker (the worker imports this module: it has grader installed).

- :func:`versions`: what the start-up check compares (grader, its source, torch, Python).
- :func:`run_chunk`: a chunk of check tasks in one of this worker's check processes
  (:class:`grader.grade.processes.ProcessExecutor`: fresh Python processes, since a Dask worker
  is a daemon process with threads and must not fork), each task under the local pool's
  per-answer limits (:class:`ChunkRunner`); a hostile answer that kills or hangs its process
  costs only itself (the chunk is then run again task by task, each alone). Code answers
  arrive as :class:`ShippedCode` (the solution's bytes and its problem's test files, since a
  worker on another machine has neither), are written to a folder of the chunk's own and
  graded in this worker's sandbox (:func:`grader.grade.check.grade_code_task`).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import platform
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any

WEAK_ENV = "GRADER_ALLOW_WEAK_SANDBOX"
VERSION_KEYS = ("grader", "grader source", "torch", "python")


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def source_digest() -> str:
    """A digest of the grader package's Python files: two installs of the same version number
    from different checkouts grade differently, and are told apart by it."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


@functools.cache
def versions() -> dict[str, str]:
    """The versions a client and its workers must share: grader's installed distribution and
    its source, torch's distribution (read from its metadata: torch is not imported), Python's
    major.minor (what pickles between them)."""
    return {"grader": _dist_version("grader"), "grader source": source_digest(),
            "torch": _dist_version("torch"), "python": ".".join(platform.python_version_tuple()[:2])}


@dataclass(frozen=True)
class ShippedCode:
    """A code answer sent to a worker: its problem's index in the checker's ``code``, the
    solution file's name and bytes, the test files (``{name: bytes}``) and, when the problem
    names one test file, its name (else the tests are a folder)."""

    problem: int
    name: str
    source: bytes
    tests: tuple[tuple[str, bytes], ...]
    test_file: str | None
    allow_weak: bool


def test_files(tests: Path) -> tuple[tuple[tuple[str, bytes], ...], str | None]:
    """The files :func:`grader.code.grade.run_tests` copies for ``tests`` (one test file and the helpers
    of its folder, or a folder's ``*.py``), and the one test file's name if it is one."""
    from grader.code.grade import LEFT_OUT
    if tests.is_file():
        files = {tests, *(p for p in tests.parent.glob("*.py")
                          if p.name not in LEFT_OUT and not p.name.startswith("test_"))}
        return tuple((p.name, p.read_bytes()) for p in sorted(files)), tests.name
    return tuple((p.name, p.read_bytes()) for p in sorted(tests.glob("*.py")) if p.name not in LEFT_OUT), None


class Landed:
    """The handler on a worker: the client's checker, and code answers landed in this worker's
    files (``("landed", problem with its tests' folder, solution path, allow weak sandbox)``).
    One per checker (``token``): the check processes keep it between chunks."""

    def __init__(self, checker: Any) -> None:
        self.checker = checker
        token = getattr(checker, "token", None)
        self.token = f"{token}-cluster" if token else None

    def __call__(self, payload: Any) -> Any:
        if _landed(payload):
            from grader.grade.check import grade_code_task
            _, problem, path, allow_weak = payload
            # the client's --allow-weak-sandbox decides, for every code answer alike (this check
            # process inherited the worker's environment, which is put back after)
            before = os.environ.get(WEAK_ENV)
            if allow_weak:
                os.environ[WEAK_ENV] = "1"
            else:
                os.environ.pop(WEAK_ENV, None)
            try:
                return grade_code_task(problem, Path(path))
            finally:
                if before is None:
                    os.environ.pop(WEAK_ENV, None)
                else:
                    os.environ[WEAK_ENV] = before
        return self.checker(payload)

    def limits_for(self, payload: Any, limits: Any) -> Any:
        from grader.grade.pool import limits_for
        if _landed(payload):
            from grader.grade.check import CodeTask
            return limits_for(self.checker, CodeTask(0, payload[2]), limits)
        return limits_for(self.checker, payload, limits)


def _landed(payload: Any) -> bool:
    return isinstance(payload, tuple) and len(payload) == 4 and payload[0] == "landed"


def _land(work: Path, i: int, shipped: ShippedCode, checker: Any) -> tuple[str, Any, str, bool]:
    folder = work / f"answer-{i}"
    (folder / "tests").mkdir(parents=True)
    (folder / "submission").mkdir()
    for name, data in shipped.tests:
        (folder / "tests" / Path(name).name).write_bytes(data)
    solution = folder / "submission" / Path(shipped.name).name
    solution.write_bytes(shipped.source)
    tests = folder / "tests" / shipped.test_file if shipped.test_file else folder / "tests"
    return ("landed", replace(checker.code[shipped.problem], tests=str(tests)), str(solution), shipped.allow_weak)


_checks: dict[str, Any] = {}        # this worker's check processes (one set, kept between chunks)
_lock = threading.Lock()


def _executor() -> Any:
    """This worker's check processes: as many as its threads, started fresh (``python -m``),
    never forked from the worker (which has threads, and is a daemon process)."""
    with _lock:
        ex = _checks.get("ex")
        if ex is None:
            from grader.grade.processes import ProcessExecutor
            try:
                from distributed import get_worker
                n = get_worker().state.nthreads
            except (ImportError, ValueError, AttributeError):
                n = 1
            ex = _checks["ex"] = ProcessExecutor(max(1, n))
        return ex


class ChunkRunner:
    """What a check process runs for a whole chunk: each task in turn under its own limits
    (:class:`grader.grade.pool.Guard`, as a local pool's worker runs them), so that a chunk
    costs one message each way and what the checks warm up (SymPy's and pint's caches) stays
    warm in the check process. A task that kills the process, or hangs it in C code past the
    chunk's deadline, costs the chunk: :func:`run_chunk` then runs its tasks again one by one,
    each alone in a check process, and only the culprit fails (the local pool's blame)."""

    def __init__(self, landed: Landed, limits: Any) -> None:
        self.landed = landed
        self.limits = limits
        self.token = f"{landed.token}-chunks-{hash(limits)}" if landed.token else None

    def __call__(self, tasks: list[tuple[Any, Any]]) -> bytes:
        """The chunk's ``{task id: outcome or Failure}``, pickled here: the Dask worker passes the
        bytes on to the client untouched (one pickling and one unpickling, not three of each)."""
        from grader.grade.pool import limits_for
        guard = _guard()
        return pickle.dumps({tid: guard.run(self.landed, p, limits_for(self.landed, p, self.limits)) for tid, p in tasks},
                            protocol=pickle.HIGHEST_PROTOCOL)


_guards: list[Any] = []


def _guard() -> Any:
    """This check process's Guard for the tasks of a chunk (made once)."""
    if not _guards:
        from grader.grade.pool import Guard
        _guards.append(Guard())
    return _guards[0]


PER_TASK_S = 0.1        # a chunk's deadline: its slowest task's budget, this per task, and CHUNK_S
CHUNK_S = 10.0


def _chunk_limits(handler: Any, tasks: list[tuple[Any, Any]], limits: Any) -> Any:
    """The limits of a whole chunk in its check process: each task is held to its own limits
    by its alarm; past this deadline (a task stuck in C code, where no alarm reaches) the
    process is killed and the chunk's tasks are run again one by one."""
    from grader.grade.pool import AnswerLimits, limits_for
    slowest = max(m.timeout_s + m.grace_s for m in (limits_for(handler, p, limits) for _, p in tasks))
    total = slowest + PER_TASK_S * len(tasks) + CHUNK_S
    return AnswerLimits(timeout_s=total, cpu_s=int(total) + 60, memory_mb=0, grace_s=1.0)


class VersionMismatch(Exception):
    """A worker that joined after the start-up check runs other versions than the client's."""


def check_versions(expected: dict[str, str]) -> None:
    """On a worker, before any task of grade, serve or check-spec: :class:`VersionMismatch`
    (what differs, in one line: ``grader 0.0.0 (client: 0.4.0)``) unless this worker's
    versions are ``expected`` (the client's: a worker may join after the start-up check)."""
    diff = differences(versions(), expected)
    if diff:
        raise VersionMismatch(diff)


def differences(theirs: dict[str, str], mine: dict[str, str]) -> str:
    """What differs between a worker's versions and the client's, in one line (``grader 0.0.0
    (client: 0.4.0), torch 2.1.0 (client: 2.13.0)``); "" when nothing does."""
    return ", ".join(f"{k} {theirs.get(k, '?')} (client: {mine.get(k, '?')})" for k in VERSION_KEYS
                     if theirs.get(k) != mine.get(k))


Packed = tuple[str, bytes]      # a checker pickled, and the digest of its bytes


def pack(checker: Any) -> Packed:
    """``checker`` as sent with each chunk (see :func:`unpacked`)."""
    data = pickle.dumps(checker, protocol=pickle.HIGHEST_PROTOCOL)
    return hashlib.sha256(data).hexdigest(), data


_unpacked: OrderedDict[str, Any] = OrderedDict()    # this worker's checkers, by digest, most recent last
CHECKERS_KEPT = 8


def unpacked(packed: Packed) -> Any:
    """The checker of ``packed``, unpickled once per worker (its digest names it)."""
    digest, data = packed
    with _lock:
        checker = _unpacked.get(digest)
        if checker is None:
            checker = _unpacked[digest] = pickle.loads(data)
            while len(_unpacked) > CHECKERS_KEPT:
                _unpacked.popitem(last=False)
        _unpacked.move_to_end(digest)
        return checker


def run_chunk(chunk: list[tuple[Any, Any]], checker: Packed, limits: Any, expected: dict[str, str]) -> bytes | dict[Any, Any]:
    """``{task id: outcome or Failure}`` for a chunk (pickled, as its check process made it, or
    a dict: read it with :func:`unpack`), run in one of this worker's check processes, each task
    under ``limits`` or its own (see the module doc); :class:`VersionMismatch` on a worker whose
    versions are not ``expected`` (:func:`check_versions`)."""
    check_versions(expected)
    handler = unpacked(checker)
    code = any(isinstance(p, ShippedCode) for _, p in chunk)
    with tempfile.TemporaryDirectory(prefix="grader-cluster-") if code else contextlib.nullcontext("") as tmp:
        tasks = [(tid, _land(Path(tmp), i, p, handler) if isinstance(p, ShippedCode) else p)
                 for i, (tid, p) in enumerate(chunk)]
        landed = Landed(handler)
        ex = _executor()
        got = ex.run([(0, tasks)], ChunkRunner(landed, limits), limits=_chunk_limits(landed, tasks, limits))[0]
        if isinstance(got, bytes):
            return got
        # the chunk's process died or hung: each task again, alone, so that only the culprit fails
        alone: dict[Any, Any] = ex.run(tasks, landed, limits=limits)
        return alone


def unpack(got: bytes | dict[Any, Any]) -> dict[Any, Any]:
    """What :func:`run_chunk` returned, as ``{task id: outcome or Failure}`` (unpickled on the
    client: the bytes come from the grader's own check process, as every Dask result does)."""
    out = pickle.loads(got) if isinstance(got, bytes) else got
    if not isinstance(out, dict):
        raise TypeError(f"a chunk's result is a {type(out).__name__}, not a dict")
    return out


def _warm_checks(payload: Any) -> None:
    """What the first checks of a process would load (pint, the unit registry, the expression
    parser and SymPy's equivalence), on text of our own: the first chunk then costs what any
    other does."""
    from grader.units.quantities import factor
    from grader.expr import SymbolTable, equivalent, parse
    factor("MiB", "B")
    try:
        table = SymbolTable.build(symbols={"d": {"positive": True, "integer": True}})
        a = parse("4*d^2 + 4*d", table)
        b = parse("4d(d+1)", table)
        equivalent(a.expr, b.expr, table)
    except Exception:  # noqa: BLE001  (a warm-up only: the checks say what is wrong, if anything)
        pass
    return None


def warm() -> int:
    """Import the checker's modules in this worker (it unpickles the checker before passing it
    on) and start its check processes (each imports them too), so that the first batch waits
    for neither; the number of check processes started."""
    import importlib

    from grader.grade.pool import AnswerLimits
    from grader.grade.processes import PRELOAD
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    ex = _executor()
    ex.run([(i, i) for i in range(ex.workers)], _warm_checks, limits=AnswerLimits(timeout_s=60.0, cpu_s=60))
    return int(ex.workers)
