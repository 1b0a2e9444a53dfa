"""The ``unshare`` backend's first process: builds the sandbox's root, then becomes the learner's.

    unshare --mount --pid --fork --kill-child --net --ipc --uts -- \\
        python -I -S -B init.py '<json spec>'

It runs as root, as PID 1 of a new PID namespace, in a new mount namespace (nothing it mounts
is seen by the host, and everything goes when the namespace's last process ends). It does what
bubblewrap does for :mod:`grader.sandbox`: an empty tmpfs root holding only the mounts of the
spec (read-only binds of what Python and torch need, the run's read-only folder, a private
``/tmp``, a minimal ``/dev`` and a fresh ``/proc``), ``pivot_root`` into it, the old root
detached, the root made read-only; then it drops to the run's unprivileged uid (no groups, no
capabilities, no new privileges, the parent-death signal set again) and ``exec``\\ s the
command. Standard library only: it runs before the grader's packages could be found.
"""
import ctypes
import json
import os
import signal
import sys

TYPE_CHECKING = False       # typing is not imported here at run time (a cost on every sandboxed run)
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
DEVICES = ("null", "zero", "full", "random", "urandom")

libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if x is None else str(x).encode() for x in (source, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _target(root: str, dest: str, is_dir: bool) -> str:
    path = root + dest
    if is_dir:
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, "w").close()
    return path


def _tmpfs(path: str, size: int, mode: int, flags: int = MS_NOSUID | MS_NODEV) -> None:
    mount("tmpfs", path, "tmpfs", flags, f"size={max(size, 4096)},mode={mode:o}")


def build(root: str, mounts: "Iterable[Sequence[Any]]") -> None:
    """``mounts``: grader.sandbox.layout's entries, [kind, dest, source, size, mode], as JSON lists."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    _tmpfs(root, 1 << 20, 0o755, MS_NOSUID)
    for kind, dest, source, size, mode in mounts:
        if kind == "ro":
            path = _target(root, dest, os.path.isdir(source))
            mount(source, path, None, MS_BIND | MS_REC)
            mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        elif kind in ("tmpfs", "hide"):
            path = _target(root, dest, True)
            _tmpfs(path, size, mode)
            if kind == "hide":
                mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, f"size={max(size, 4096)}")
        elif kind == "dir":
            os.chmod(_target(root, dest, True), mode)
        elif kind == "symlink":
            os.makedirs(os.path.dirname(root + dest), exist_ok=True)
            os.symlink(source, root + dest)
        elif kind == "dev":
            path = _target(root, dest, True)
            _tmpfs(path, 1 << 16, 0o755, MS_NOSUID)
            for name in DEVICES:
                mount(f"/dev/{name}", _target(root, f"{dest}/{name}", False), None, MS_BIND)
            for i, name in enumerate(("stdin", "stdout", "stderr")):
                os.symlink(f"/proc/self/fd/{i}", f"{path}/{name}")
            os.symlink("/proc/self/fd", f"{path}/fd")
            _tmpfs(_target(root, f"{dest}/shm", True), size, 0o1777)
        elif kind == "proc":
            mount("proc", _target(root, dest, True), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        else:
            raise ValueError(f"unknown mount kind {kind!r}")
    os.chdir(root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is not None:
        _check(libc.syscall(number, b".", b"."), "pivot_root")
        _check(libc.umount2(b".", MNT_DETACH), "umount old root")
    else:  # no syscall number known here: chroot (no directory of the host stays open)
        os.chroot(".")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)


def drop(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from root to another uid: every capability goes
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")  # cleared by setuid


def main() -> None:
    spec = json.loads(sys.argv[1])
    try:
        build(spec["root"], spec["mounts"])
        drop(spec["uid"])
        os.chdir(spec["cwd"])
        keep = set(spec["keep_fds"]) | {0, 1, 2}
        for fd in os.listdir("/proc/self/fd"):
            if int(fd) not in keep:
                try:
                    os.close(int(fd))
                except OSError:
                    pass
        for kept in keep:
            os.set_inheritable(kept, True)
        os.execve(spec["argv"][0], spec["argv"], dict(os.environ))
    except OSError as e:
        print(f"sandbox: cannot build the sandbox: {e}", file=sys.stderr)
        os._exit(125)


if __name__ == "__main__":
    main()
