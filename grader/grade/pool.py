"""Worker processes that check untrusted answers under limits.

Each worker is a process with a soft ``resource.setrlimit`` on its address space
(``RLIMIT_AS``: a memory hog gets MemoryError) and its CPU time (``RLIMIT_CPU``, renewed for
each answer: SIGXCPU), and each answer runs under a wall-clock alarm (SIGALRM: a worker's
main thread). Whatever blocks inside C code past the time-out is killed from outside by the
parent, which replaces the worker and re-sends the rest of its queue. An answer that exceeds
its limits comes back as a :class:`Failure` ("too complex"), never as the batch's failure.
A handler may give a task limits of its own (``handler.limits_for(payload, limits)``: a code
answer's tests run in the sandbox, under the sandbox's limits); such a task goes alone in
its chunk.

Workers are forked *after* the caller has prepared everything they need (the handler, holding
the answer specs), so a task is only ``(task index, payload)``: little to pickle. Forking
copies only the calling thread: the caller should have no other threads (a threaded server
uses :class:`grader.grade.processes.ProcessExecutor`, whose workers are not forked).

The cycle collector's tuning lives here too (:func:`gc_paused`, and ``gc.freeze`` before a
fork): it is the pool's forks and the bulk phases around them that need it; it is never
switched off for the process by anything else.
"""
from __future__ import annotations

import gc
import multiprocessing as mp
import os
import pickle
import resource
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from typing import Any


@dataclass(frozen=True)
class AnswerLimits:
    """Per-answer limits: wall-clock seconds, CPU seconds, extra address space (MiB; 0: none),
    and the grace past the time-out after which the parent kills a worker stuck in C code."""

    timeout_s: float = 2.0
    cpu_s: int = 3
    memory_mb: int = 1024
    grace_s: float = 1.0


@dataclass(frozen=True)
class Failure:
    """An answer that could not be checked: ``reason`` is "timeout", "memory", "died" or "error"."""

    reason: str
    detail: str = ""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Bulk work that makes (almost) no reference cycles, such as reading a class's files or
    scoring it: without this the cycle collector walks the growing heap again and again (a
    fifth of the reading time, half of the scoring). What the work made is then moved out of
    the collector's reach (``gc.freeze``), or the next collections would walk all of it once
    more (a tenth of a class's grading); being free of cycles, it is still freed, by reference
    counting, once dropped (a cycle made in the phase, such as an exception's traceback, waits
    for the next ``gc.unfreeze``: the worker pool's, when it next forks). Never around forking
    workers. The collector is the whole process's: only a command that owns the process (the
    CLI) uses this; the library's API never does (``tune_gc=False``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.enable()


@contextmanager
def maybe_gc_paused(on: bool) -> Iterator[None]:
    """:func:`gc_paused` when ``on``, else nothing."""
    if on:
        with gc_paused():
            yield
    else:
        yield


class _TooComplex(BaseException):
    """Raised by the alarm's signal handler: a BaseException, so that no ``except Exception``
    of the checker mistakes it for an error of its own."""


def _alarm(signum: int, frame: object) -> None:
    raise _TooComplex("cpu" if signum == signal.SIGXCPU else "time")


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def limits_for(handler: Any, payload: Any, limits: AnswerLimits) -> AnswerLimits:
    """The limits of one task: the handler's own for it, if it has any, else ``limits``."""
    own = getattr(handler, "limits_for", None)
    return own(payload, limits) if own is not None else limits


class Guard:
    """Runs tasks in a worker process's main thread under their limits (see the module doc)."""

    def __init__(self) -> None:
        signal.signal(signal.SIGALRM, _alarm)
        signal.signal(signal.SIGXCPU, _alarm)
        self.base_vm = _vm_bytes()
        self.as_hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        self.cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]

    def _memory(self, memory_mb: int) -> None:
        cap = self.as_hard if memory_mb <= 0 else self.base_vm + memory_mb * 2**20
        if self.as_hard != resource.RLIM_INFINITY and memory_mb > 0:
            cap = min(cap, self.as_hard)
        # compared with the process's limit as it is, not with what this Guard set last: another
        # Guard of the same process (a chunk's and its tasks' on a cluster worker) may have changed it
        if resource.getrlimit(resource.RLIMIT_AS)[0] == cap:
            return
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, self.as_hard))
        except (ValueError, OSError):
            pass

    def run(self, handler: Callable[[Any], Any], payload: Any, limits: AnswerLimits) -> Any:
        """``handler(payload)``, or a :class:`Failure` if it exceeds ``limits`` or raises."""
        self._memory(limits.memory_mb)
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime) + limits.cpu_s + 1
        hard = self.cpu_hard
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        except (ValueError, OSError):
            pass
        signal.setitimer(signal.ITIMER_REAL, limits.timeout_s)
        try:
            return handler(payload)
        except _TooComplex as e:
            return Failure("timeout", str(e))
        except MemoryError:
            return Failure("memory")
        except RecursionError:
            return Failure("timeout", "recursion")
        except Exception as e:  # the handler's bug, reported for this answer only
            return Failure("error", f"{type(e).__name__}: {e}"[:300])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)


FLUSH_S = 0.02      # a worker sends its finished results at most this long after the first of them
AHEAD_BYTES = 32 * 1024     # a chunk sent ahead to a busy worker: well under a pipe's buffer


def _worker(conn: Any, handler: Callable[[Any], Any], limits: AnswerLimits, current: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    guard = Guard()
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        done, since = [], time.monotonic()
        for tid, payload in chunk:
            current.value = tid         # the parent blames this task if the worker dies or hangs
            out = guard.run(handler, payload, limits_for(handler, payload, limits))
            current.value = -1
            done.append((tid, out))
            if time.monotonic() - since >= FLUSH_S:
                _send(conn, done)
                done, since = [], time.monotonic()
        if done:
            _send(conn, done)


def _send(conn: Any, results: list[tuple[int, Any]]) -> None:
    """Send finished ``(tid, result)`` pairs as one message; one that cannot be pickled goes
    as a Failure of its own, without losing the others."""
    try:
        conn.send(results)
        return
    except (MemoryError, RecursionError, TypeError, ValueError, AttributeError, pickle.PicklingError):
        pass
    for tid, out in results:
        try:
            conn.send([(tid, out)])
        except (MemoryError, RecursionError, TypeError, ValueError, AttributeError, pickle.PicklingError) as e:
            conn.send([(tid, Failure("error", f"result could not be sent: {type(e).__name__}"))])


class _Slot:
    def __init__(self, ctx: Any, handler: Callable[[Any], Any], limits: AnswerLimits) -> None:
        parent, child = ctx.Pipe(duplex=True)
        self.current = ctx.RawValue("q", -1)    # shared: the index of the task the worker is on, -1 between
        self.proc = ctx.Process(target=_worker, args=(child, handler, limits, self.current), daemon=True)
        # What the parent holds (SymPy, the bank, a class's answers) is moved out of the cycle
        # collector's reach before the fork: a collection in the worker would otherwise walk,
        # and so copy page by page, the whole inherited heap.
        gc.freeze()
        try:
            self.proc.start()
        finally:
            gc.unfreeze()
        child.close()
        self.conn = parent
        self.outstanding: deque[int] = deque()   # task indices sent, in order, without a result yet
        self.chunks: deque[int] = deque()        # how many of each chunk sent are still outstanding
        self.since = time.monotonic()

    def kill(self) -> None:
        try:
            self.proc.kill()
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=5)
        self.conn.close()


def run_tasks(tasks: Sequence[tuple[Any, Any]], handler: Callable[[Any], Any], *, jobs: int = 2,
              limits: AnswerLimits = AnswerLimits(), on_result: Callable[[int], None] | None = None
              ) -> dict[Any, Any]:
    """Run ``handler(payload)`` for each ``(tid, payload)`` of ``tasks`` in ``jobs`` forked workers.

    Returns ``{tid: result or Failure}``. ``on_result(n)`` is called as results arrive.
    The handler is inherited through fork (nothing to pickle).
    """
    tasks = list(tasks)
    if not tasks:
        return {}
    payloads = [payload for _, payload in tasks]
    results: dict[int, Any] = {}    # task index -> result (the workers see indices, never the tids)
    strikes: set[int] = set()       # tasks requeued once after a death that named no task
    ctx = mp.get_context("fork")
    jobs = max(1, min(jobs, len(tasks)))
    queue = deque(range(len(tasks)))
    chunk = max(1, min(64, len(tasks) // (jobs * 4) or 1))
    slots = [_Slot(ctx, handler, limits) for _ in range(jobs)]
    default_budget = limits.timeout_s + limits.grace_s
    own: dict[int, float] = {}  # task index -> its own budget (a task with limits of its own goes alone)
    if getattr(handler, "limits_for", None) is not None:
        for i, payload in enumerate(payloads):
            mine = limits_for(handler, payload, limits)
            if mine != limits:
                own[i] = mine.timeout_s + mine.grace_s

    def budget(slot: _Slot) -> float:
        if not own:
            return default_budget
        return float(max([default_budget] + [own[i] for i in slot.outstanding if i in own]))

    def alone(i: int) -> bool:
        return i in strikes or i in own

    def feed(slot: _Slot) -> None:
        """Keep one chunk waiting in the worker's pipe behind the one it is on, so that it never
        idles waiting for the parent; only one small enough for the pipe's buffer, so that the
        parent never blocks writing to a busy (or hung) worker."""
        if len(slot.chunks) >= 2 or not queue:
            return
        part: list[int] = []        # a task with a strike (or limits of its own) goes in a chunk of its own
        while queue and len(part) < chunk and not (part and alone(queue[0])):
            part.append(queue.popleft())
            if alone(part[-1]):
                break
        data = ForkingPickler.dumps([(i, payloads[i]) for i in part])
        if slot.chunks and len(data) > AHEAD_BYTES:
            queue.extendleft(reversed(part))    # sent when the worker is idle
            return
        if not slot.chunks:
            slot.since = time.monotonic()
        slot.outstanding.extend(part)
        slot.chunks.append(len(part))
        try:
            slot.conn.send_bytes(data)
        except (OSError, ValueError):
            pass  # the worker died: its sentinel reports it below

    def record(slot: _Slot, i: int, out: Any) -> None:
        if slot.outstanding and slot.outstanding[0] == i:
            slot.outstanding.popleft()
            slot.chunks[0] -= 1
            if not slot.chunks[0]:
                slot.chunks.popleft()
        results[i] = out

    def replace(slot: _Slot, reason: str, detail: str = "") -> _Slot:
        """The worker died or hung: the task it was on fails; the rest of its chunks (finished
        but not yet sent, or not started) go back in the queue. A worker that died between
        tasks names none (it died sending results): its tasks go back once, each then alone in
        its chunk, so that a second such death names the one whose result killed it."""
        slot.kill()
        pending = [i for i in slot.outstanding if i not in results]
        if pending:
            on = slot.current.value
            culprit = on if on in pending else pending[0] if strikes.intersection(pending) else None
            if culprit is None:
                strikes.update(pending)
            else:
                results[culprit] = Failure(reason, detail)
                pending.remove(culprit)
                if on_result:
                    on_result(1)
        queue.extendleft(reversed(pending))
        fresh = _Slot(ctx, handler, limits)
        slots[slots.index(slot)] = fresh
        return fresh

    try:
        for s in slots:
            feed(s)
            feed(s)
        while len(results) < len(tasks):
            ready = wait([s.conn for s in slots] + [s.proc.sentinel for s in slots], timeout=0.05)
            now = time.monotonic()
            for s in list(slots):
                if s.conn in ready:
                    try:
                        while s.conn.poll():
                            got = s.conn.recv()
                            for i, out in got:
                                record(s, i, out)
                            s.since = time.monotonic()
                            if on_result:
                                on_result(len(got))
                    except (EOFError, OSError):
                        s = replace(s, "died", "the worker process died")
                        feed(s)
                        continue
                if s.proc.sentinel in ready and not s.proc.is_alive():
                    s = replace(s, "died", f"the worker process died (exit {s.proc.exitcode})")
                elif s.outstanding and now - s.since > budget(s):
                    s = replace(s, "timeout", "killed after the wall-clock limit")
                feed(s)
    finally:
        for s in slots:
            try:
                s.conn.send(None)
            except (OSError, ValueError):
                pass
        for s in slots:
            s.proc.join(timeout=1)
            if s.proc.is_alive():
                s.kill()
    return {tid: results[i] for i, (tid, _) in enumerate(tasks)}
