"""What a sandboxed run may use (:class:`Limits`), and a limit that was hit, in words.

    explain_limit("MemoryError")            -> "memory"
    limit_message("memory", Limits())       -> "memory limit of 3 GiB exceeded"
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MiB = 1024 * 1024
GiB = 1024 * MiB


def size_text(n: int) -> str:
    if n >= GiB and n % GiB == 0:
        return f"{n // GiB} GiB"
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n} bytes"


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use."""

    wall_s: float = 30.0            # wall clock; then the whole process group is killed
    cpu_s: int = 30                 # RLIMIT_CPU, per process
    memory_bytes: int = 3 * GiB     # RLIMIT_AS (torch alone maps ~0.8 GiB of address space)
    file_bytes: int = 1 * MiB       # RLIMIT_FSIZE: largest file a process may write
    processes: int = 64             # RLIMIT_NPROC: processes and threads of the sandbox's uid
    tmp_bytes: int = 64 * MiB       # size of the private /tmp
    output_bytes: int = 256 * 1024  # stdout/stderr kept (each); the rest is dropped
    call_s: float = 10.0            # one call of a learner's function (the solution server)
    reply_bytes: int = 16 * MiB     # tensor data in one reply of the solution server

    def describe(self) -> str:
        return (f"wall {self.wall_s:g} s, CPU {self.cpu_s} s, memory {size_text(self.memory_bytes)}, "
                f"file size {size_text(self.file_bytes)}, {self.processes} processes")


def diagnose(code: int | None, sig: str | None, timed_out: bool, stderr: str, limits: Limits) -> tuple[str | None, str]:
    """(the limit hit or None, how the run ended in words)."""
    if timed_out:
        return "time", (f"time limit of {limits.wall_s:g} s exceeded (wall clock): "
                        "the whole process group was killed")
    if sig == "SIGXCPU":  # RLIMIT_CPU's soft limit (the hard one, 1 s later, is a SIGKILL)
        return "cpu", f"CPU time limit of {limits.cpu_s} s exceeded"
    if sig == "SIGXFSZ":
        return "file size", f"file size limit of {size_text(limits.file_bytes)} exceeded"
    limit = explain_limit(stderr)
    if limit is not None:
        return limit, limit_message(limit, limits)
    if sig is not None:
        return None, f"killed by {sig}"
    if code == 0:
        return None, "ran to the end (exit code 0)"
    return None, f"exited with code {code}"


def explain_limit(text: str) -> str | None:
    """Which sandbox limit an error text shows, if any: "memory", "file size", "processes",
    "network", "files" (a host file that is not in the sandbox) — or None."""
    if re.search(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|DefaultCPUAllocator: can't allocate", text):
        return "memory"
    if re.search(r"\[Errno 27\]|File too large", text):
        return "file size"
    if re.search(r"BlockingIOError: \[Errno 11\]|Resource temporarily unavailable|can't start new thread", text):
        return "processes"
    if re.search(r"\[Errno (101|99|97|111|113|-2|-3)\]|Network is unreachable|Temporary failure in name resolution"
                 r"|Name or service not known|Address family not supported", text):
        return "network"
    if re.search(r"No such file or directory: '/(etc|root|home|work|var|srv|opt|proc/1/)", text):
        return "files"
    return None


def limit_message(limit: str, limits: Limits = Limits()) -> str:
    """The sandbox's words for a limit that was hit."""
    return {
        "time": f"time limit of {limits.wall_s:g} s exceeded (wall clock)",
        "cpu": f"CPU time limit of {limits.cpu_s} s exceeded",
        "memory": f"memory limit of {size_text(limits.memory_bytes)} exceeded",
        "file size": f"file size limit of {size_text(limits.file_bytes)} exceeded (a file written was too large)",
        "processes": f"process limit of {limits.processes} exceeded (too many processes or threads)",
        "network": "network access is not allowed in the sandbox",
        "files": "that file is not available in the sandbox (only your solution is)",
    }[limit]
