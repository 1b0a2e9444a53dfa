"""Worker processes that check untrusted answers under limits.

Each worker is a forked process with ``resource.setrlimit`` on its address space
(``RLIMIT_AS``: a memory hog gets MemoryError) and its CPU time (``RLIMIT_CPU``, renewed for
each answer: SIGXCPU), and each answer runs under a wall-clock alarm (SIGALRM). Whatever
blocks inside C code past the time-out is killed from outside by the parent, which replaces
the worker and re-sends the rest of its queue. An answer that exceeds its limits comes back
as a :class:`Failure` ("too complex"), never as the batch's failure.

Workers are forked *after* the caller has prepared everything they need (the answer specs),
so a task is only ``(task id, spec index, raw answer)``: little to pickle.
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
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler


@dataclass(frozen=True)
class Limits:
    """Per-answer limits: wall-clock seconds, CPU seconds, extra address space (MiB)."""

    timeout_s: float = 2.0
    cpu_s: int = 3
    memory_mb: int = 1024
    grace_s: float = 1.0        # past the time-out, the parent kills a worker stuck in C code


@dataclass(frozen=True)
class Failure:
    """An answer that could not be checked: ``reason`` is "timeout", "memory", "died" or "error"."""

    reason: str
    detail: str = ""


class _TooComplex(Exception):
    pass


def _alarm(signum, frame):
    raise _TooComplex("cpu" if signum == signal.SIGXCPU else "time")


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


FLUSH_S = 0.02      # a worker sends its finished results at most this long after the first of them
AHEAD_BYTES = 32 * 1024     # a chunk sent ahead to a busy worker: well under a pipe's buffer


def _worker(conn, handler, limits: Limits, current):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGXCPU, _alarm)
    try:
        cap = _vm_bytes() + limits.memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        done, since = [], time.monotonic()
        for tid, payload in chunk:
            used = resource.getrusage(resource.RUSAGE_SELF)
            soft = int(used.ru_utime + used.ru_stime) + limits.cpu_s + 1
            try:
                resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
            except (ValueError, OSError):
                pass
            current.value = tid         # the parent blames this task if the worker dies or hangs
            signal.setitimer(signal.ITIMER_REAL, limits.timeout_s)
            try:
                out = handler(payload)
            except _TooComplex as e:
                out = Failure("timeout", str(e))
            except MemoryError:
                out = Failure("memory")
            except RecursionError:
                out = Failure("timeout", "recursion")
            except Exception as e:  # the handler's bug, reported for this answer only
                out = Failure("error", f"{type(e).__name__}: {e}"[:300])
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            current.value = -1
            done.append((tid, out))
            if time.monotonic() - since >= FLUSH_S:
                _send(conn, done)
                done, since = [], time.monotonic()
        if done:
            _send(conn, done)


def _send(conn, results: list) -> None:
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
    def __init__(self, ctx, handler, limits):
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
        self.outstanding: deque = deque()   # task indices sent, in order, without a result yet
        self.chunks: deque = deque()        # how many of each chunk sent are still outstanding
        self.since = time.monotonic()

    def kill(self):
        try:
            self.proc.kill()
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=5)
        self.conn.close()


def run_tasks(tasks, handler, *, jobs: int = 2, limits: Limits = Limits(), on_result=None) -> dict:
    """Run ``handler(payload)`` for each ``(tid, payload)`` of ``tasks`` in ``jobs`` workers.

    Returns ``{tid: result or Failure}``. ``on_result(n)`` is called as results arrive.
    The handler must be importable or inherited through fork (it is, on Linux).
    """
    tasks = list(tasks)
    if not tasks:
        return {}
    payloads = [payload for _, payload in tasks]
    results: dict = {}          # task index -> result (the workers see indices, never the tids)
    strikes: set = set()        # tasks requeued once after a death that named no task
    ctx = mp.get_context("fork")
    jobs = max(1, min(jobs, len(tasks)))
    queue = deque(range(len(tasks)))
    chunk = max(1, min(64, len(tasks) // (jobs * 4) or 1))
    slots = [_Slot(ctx, handler, limits) for _ in range(jobs)]
    budget = limits.timeout_s + limits.grace_s

    def feed(slot):
        """Keep one chunk waiting in the worker's pipe behind the one it is on, so that it never
        idles waiting for the parent; only one small enough for the pipe's buffer, so that the
        parent never blocks writing to a busy (or hung) worker."""
        if len(slot.chunks) >= 2 or not queue:
            return
        part = []                   # a task with a strike goes in a chunk of its own
        while queue and len(part) < chunk and not (part and queue[0] in strikes):
            part.append(queue.popleft())
            if part[-1] in strikes:
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

    def record(slot, i, out):
        if slot.outstanding and slot.outstanding[0] == i:
            slot.outstanding.popleft()
            slot.chunks[0] -= 1
            if not slot.chunks[0]:
                slot.chunks.popleft()
        results[i] = out

    def replace(slot, reason, detail=""):
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
                elif s.outstanding and now - s.since > budget:
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
