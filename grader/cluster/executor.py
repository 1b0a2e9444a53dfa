""":class:`DaskExecutor`: the check tasks of a grading on a Dask cluster's workers.

The unique tasks go in chunks (as in the local pool: several per worker, so that the workers
stay busy and a lost worker costs little); each chunk runs on a worker in the local pool
(:func:`grader.cluster.remote.run_chunk`), under the same per-answer limits, a hostile answer
blamed as it is locally. A task with limits of its own (a code answer) goes alone in its chunk.
The checker (the prepared specs) goes with every chunk, pickled (tens of kB), and each worker
unpickles it once (:func:`grader.cluster.remote.pack`): a copy scattered to the workers would
be lost with the last worker that held it, and every chunk after it cancelled.

A worker that dies takes no task with it: Dask runs its chunks again elsewhere; a chunk that
killed workers ``distributed.scheduler.allowed-failures`` times is split and each of its tasks
tried alone. A task alone on a worker that died is a suspect (Dask also counts a task that
was only queued on that worker, behind the culprit): the suspects are tried once more at the
end, one at a time, with nothing else on the cluster, and one that kills its worker then is
blamed alone (``Failure("died")``), as the local pool blames it. Every task comes back exactly once (results are keyed by task id).
A lost scheduler, or a worker whose versions are not the client's, ends the run with
:class:`~grader.cluster.ClusterError`: nothing is half-graded.

Code answers are shipped (:class:`grader.cluster.remote.ShippedCode`: the solution's bytes and
the tests' files), so that workers need not share the client's files; a solution the client
cannot read as one (missing, too large, a FIFO) is graded here, in a local check process, which
says why exactly as a worker would.
"""
from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grader.grade.pool import AnswerLimits, Failure, limits_for

from . import ClusterError
from .connect import Cluster, connect
from .remote import WEAK_ENV, ShippedCode, VersionMismatch, pack, run_chunk, test_files, unpack, versions

CHUNK_MAX = 1024        # answers in one chunk at most (a round trip through the scheduler costs more than a pipe)
CHUNKS_PER_SLOT = 4     # chunks per worker thread at least, where there are answers enough
POLL_S = 0.02          # how often the client looks for finished chunks
LOST_S = 20.0           # the client without its scheduler this long: the run fails


class DaskExecutor:
    """Runs check tasks on the workers of the Dask scheduler at ``address`` (``tcp://HOST:PORT``
    or ``local:N``; or a connected :class:`~grader.cluster.connect.Cluster`, left open). Connects
    and checks the workers' versions when made (:func:`grader.cluster.connect.connect`)."""

    def __init__(self, address: str | Cluster, *, memory_limit: str | None = None,
                 chunk_max: int = CHUNK_MAX) -> None:
        if isinstance(address, Cluster):
            self.cluster, self._own = address, False
        else:
            self.cluster, self._own = connect(address, memory_limit=memory_limit), True
        self.chunk_max = chunk_max

    def close(self) -> None:
        """Disconnect (and stop the LocalCluster of ``local:N``)."""
        if self._own:
            self.cluster.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, tasks: Sequence[tuple[Any, Any]], handler: Callable[[Any], Any], *, limits: AnswerLimits,
            on_result: Callable[[int], None] | None = None) -> dict[Any, Any]:
        """``{task id: handler(payload) or Failure}`` for each ``(task id, payload)``."""
        tasks = list(tasks)
        if not tasks:
            return {}
        allow_weak = os.environ.get(WEAK_ENV, "").strip().lower() in ("1", "true", "yes")
        remote: list[tuple[Any, Any]] = []
        here: list[tuple[Any, Any]] = []
        for tid, payload in tasks:
            shipped = _ship(handler, payload, allow_weak)
            (here if shipped is None else remote).append((tid, payload if shipped is None else shipped))
        out: dict[Any, Any] = {}
        if here:
            out.update(_here(here, handler, limits, on_result))
        if remote:
            out.update(self._remote(remote, handler, limits, on_result))
        return {tid: out.get(tid, Failure("error", "no result")) for tid, _ in tasks}

    def chunks(self, tasks: list[tuple[Any, Any]], handler: Any, limits: AnswerLimits) -> list[list[tuple[Any, Any]]]:
        """The chunks of ``tasks``: a task with limits of its own alone, the others in runs of
        a size that gives every worker thread several."""
        alone = [[t] for t in tasks if limits_for(handler, _limit_view(t[1]), limits) != limits]
        plain = [t for t in tasks if limits_for(handler, _limit_view(t[1]), limits) == limits]
        size = max(1, min(self.chunk_max, len(plain) // (self.cluster.slots() * CHUNKS_PER_SLOT) or 1))
        return alone + [plain[i:i + size] for i in range(0, len(plain), size)]

    def _remote(self, tasks: list[tuple[Any, Any]], handler: Any, limits: AnswerLimits,
                on_result: Callable[[int], None] | None) -> dict[Any, Any]:
        from concurrent.futures import CancelledError

        from distributed import as_completed
        from distributed.scheduler import KilledWorker
        client = self.cluster.client
        expected = versions()
        run = uuid.uuid4().hex[:8]
        checker = pack(handler)
        pending: dict[Any, list[tuple[Any, Any]]] = {}
        suspects: list[list[tuple[Any, Any]]] = []  # tasks alone on a worker that died, to try once more
        suspected: set[Any] = set()
        count = 0

        def submit(chunks: list[list[tuple[Any, Any]]]) -> None:
            """The chunks, as tasks of the scheduler, in one message (one per chunk costs a round trip each)."""
            nonlocal count
            if not chunks:
                return
            keys = [f"grader-chunk-{run}-{count + i}" for i in range(1, len(chunks) + 1)]
            count += len(chunks)
            futs = client.map(run_chunk, chunks, checker=checker, limits=limits, expected=expected,
                              key=keys, pure=False)
            for fut, chunk in zip(futs, chunks):
                pending[fut] = chunk
                ready.add(fut)

        out: dict[Any, Any] = {}
        ready = as_completed(loop=client.loop)
        try:
            chunks = self.chunks(tasks, handler, limits)
            submit(chunks[:1])      # the first at once: a worker starts on it while the rest are sent
            submit(chunks[1:])
            away_since: float | None = None
            while pending or suspects:
                if not pending:     # the suspects last, one at a time: each then runs with no other task
                    submit([suspects.pop(0)])
                done = ready.next_batch(block=False)
                if not done:
                    time.sleep(POLL_S)
                    if client.status == "running":
                        away_since = None
                    elif away_since is None:
                        away_since = time.monotonic()
                    elif time.monotonic() - away_since > LOST_S:
                        raise ClusterError(f"lost the Dask scheduler at {self.cluster.address} mid-batch; "
                                           "nothing was graded")
                    continue
                for fut in done:
                    chunk = pending.pop(fut)
                    try:
                        got = unpack(fut.result())
                    except KilledWorker:
                        if len(chunk) > 1:      # which of them killed the workers? each alone
                            submit([[t] for t in chunk])
                            continue
                        # alone, on a worker that died: the culprit, or a task that was only queued on
                        # the culprit's worker (Dask counts both); tried again when nothing else runs
                        tid = chunk[0][0]
                        if tid not in suspected:
                            suspected.add(tid)
                            suspects.append(chunk)
                            continue
                        got = {tid: Failure("died", "the check killed the cluster's workers")}
                    except VersionMismatch as e:
                        raise ClusterError(f"a worker of {self.cluster.address} runs {e}; refused, "
                                           "nothing was graded") from None
                    except ClusterError:
                        raise
                    except CancelledError:
                        raise ClusterError(f"lost the Dask scheduler at {self.cluster.address} mid-batch; "
                                           "nothing was graded") from None
                    except Exception as e:  # noqa: BLE001  (the scheduler or a worker gone: the whole run)
                        why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
                        raise ClusterError(f"the Dask cluster at {self.cluster.address} failed mid-batch ({why}); "
                                           "nothing was graded") from None
                    out.update(got)
                    if on_result:
                        on_result(len(got))
        finally:
            if pending:
                try:
                    client.cancel(list(pending))
                except Exception:  # noqa: BLE001  (the scheduler may be gone)
                    pass
        return out


def _limit_view(payload: Any) -> Any:
    """What the handler's ``limits_for`` sees for a payload: a shipped code answer is a code task."""
    if isinstance(payload, ShippedCode):
        from grader.grade.check import CodeTask
        return CodeTask(payload.problem, payload.name)
    return payload


def _ship(handler: Any, payload: Any, allow_weak: bool) -> Any:
    """The payload as sent to a worker (a code answer with its files), or None: graded here."""
    from grader.grade.check import CodeTask
    if not isinstance(payload, CodeTask):
        return payload
    code = getattr(handler, "code", None)
    if code is None:
        return None
    from grader.code.grade import tests_of
    from grader.code.solution_proxy import read_solution
    from grader.errors import GraderError
    problem = code[payload.problem]
    try:
        tests = tests_of(problem)
        if not tests.exists():
            return None
        files, test_file = test_files(tests)
        source = read_solution(Path(payload.path))
    except (GraderError, OSError):
        return None
    return ShippedCode(payload.problem, Path(payload.path).name, source, files, test_file, allow_weak)


def _here(tasks: list[tuple[Any, Any]], handler: Any, limits: AnswerLimits,
          on_result: Callable[[int], None] | None) -> dict[Any, Any]:
    """Tasks graded on the client, in a check process of its own (never forked: the client has threads)."""
    from grader.grade.processes import ProcessExecutor
    ex = ProcessExecutor(1)
    try:
        return ex.run(tasks, handler, limits=limits, on_result=on_result)
    finally:
        ex.close()
