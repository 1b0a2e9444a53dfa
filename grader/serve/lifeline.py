"""The processes `grader serve` starts die with it, however it ends (SIGKILL included).

The grading workers and the job processes are started by multiprocessing's fork server: their
parent is the fork server, not the server, and the fork server ends only once every child of
its has closed the pipe that each of them holds (they may start processes through it): so a
parent-death signal alone leaves them all alive when the server is killed. Instead each holds a
*lifeline* (:func:`lifeline`), the read end of a pipe whose write end only the server's process
holds and never sends anywhere; :func:`die_with` watches it in a thread and kills the process at
end-of-file. Then the fork server and multiprocessing's resource tracker end too, their last
users gone; a job process's code runner ends when its pipe closes, the sandbox has its own
``PR_SET_PDEATHSIG``.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from multiprocessing.connection import Connection


def die_with_parent() -> None:
    """Linux: this process is killed when the one that started it dies (a worker's is the fork
    server, which ends when the service does), so a killed service leaves no workers behind."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


_LIFELINE: list[Connection] = []      # [read end, write end], made once in the server's process


def lifeline() -> Connection:
    """The read end of a pipe whose write end only the server's process holds (it is never sent
    anywhere): it reads end-of-file when the server ends, however it ends. Handed to the
    processes the fork server starts (:func:`die_with`). Their parent is the fork server, not the
    server, so ``PR_SET_PDEATHSIG`` alone is not enough: the fork server ends only when all its
    children closed its own pipe, which each of them holds."""
    if not _LIFELINE:
        r, w = mp.Pipe(duplex=False)
        _LIFELINE.extend((r, w))
    return _LIFELINE[0]


def die_with(line: Connection) -> None:
    """In a process the fork server started: a thread that kills this process when the server
    ends (``line`` from :func:`lifeline` reads end-of-file)."""
    def watch() -> None:
        try:
            while True:
                line.recv_bytes()
        except (EOFError, OSError):
            pass
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=watch, name="grader-lifeline", daemon=True).start()
