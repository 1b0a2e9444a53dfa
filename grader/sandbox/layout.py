"""What the sandbox's file system holds: the same list of mounts for both namespace backends.

Only what runs Python and torch is there, read-only:

- ``/usr`` and the ``/bin``, ``/lib*`` links; the interpreter's own prefix when it lives
  elsewhere (pyenv, /opt), at its own path (its shared library is found there);
- torch and the packages it declares it needs (their ``Requires-Dist``, extras left out),
  bound one by one at ``/sandbox/site/<name>`` — not the site-packages folder they come from,
  so neither the grader, ``mha``, pytest, the exercises nor the host's site-packages layout
  is there;
- every other site-packages folder under a bound tree (the interpreter's own, Debian's
  ``dist-packages``) is covered by an empty read-only tmpfs, and so is anything the caller
  asks to hide;
- a private ``/tmp`` and ``/dev/shm`` (small tmpfs, gone with the run), a minimal ``/dev``,
  a fresh ``/proc``, and the caller's read-only binds (the run's folder at ``/grade``).

No ``/etc``, ``/home``, ``/root``, ``/var`` or the grader's folders. A mount is a tuple
``(kind, dest, source, size, mode)``: ``ro`` (bind ``source`` read-only), ``tmpfs``, ``hide``
(an empty read-only tmpfs), ``dir``, ``symlink`` (``dest`` -> ``source``), ``dev``, ``proc``.
"""
from __future__ import annotations

import glob
import os
import re
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, cast

SITE = "/sandbox/site"
ROOT_LINKS = ("bin", "lib", "lib64", "sbin", "lib32")
SHM_BYTES = 16 * 1024 * 1024

StrPath = str | os.PathLike[str]
Bind = tuple[StrPath, StrPath]          # (host path, path in the sandbox)
MountKind = Literal["ro", "tmpfs", "hide", "dir", "symlink", "dev", "proc"]
# (kind, path in the sandbox, source: a host path or a link's target (None for the others), size in bytes, mode)
Mount = tuple[MountKind, str, str | None, int, int]


@dataclass(frozen=True)
class Runtime:
    """The interpreter the sandbox runs and what it needs from the host."""

    python: str          # same path inside and outside
    prefixes: tuple[str, ...]           # host folders bound at their own path (besides /usr)
    site: tuple[tuple[str, str], ...]   # (host path, name): torch and its dependencies, at SITE/name
    hidden: tuple[str, ...]             # folders under a bound tree that are covered by an empty tmpfs


def _requirement_name(req: str) -> str | None:
    """The distribution a ``Requires-Dist`` line names, or None for an extra's."""
    name, _, marker = req.partition(";")
    if "extra" in marker:
        return None
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", name)
    return m.group(1) if m else None


def torch_closure() -> list[tuple[str, str]]:
    """(host path, name) of the top-level entries of torch and of the distributions it needs."""
    import importlib.metadata as md
    todo: list[str] = ["torch"]
    seen: set[str] = set()
    entries: dict[str, str] = {}
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        for req in dist.requires or ():
            dep = _requirement_name(req)
            if dep:
                todo.append(dep)
        for f in dist.files or ():
            top = f.parts[0] if f.parts else ""
            if not top or top == ".." or top.endswith(".pth") or top == "__pycache__":
                continue
            # typeshed's SimplePath: a pathlib.Path in fact (cast: no conversion)
            path = Path(cast("os.PathLike[str]", dist.locate_file(top)))
            if path.exists():
                entries[top] = str(path)
    return sorted((p, n) for n, p in entries.items())


def _site_folders() -> set[str]:
    """Folders Python may take packages from: the base interpreter's, the grader's sys.path
    (the standard library left out), Debian's dist-packages."""
    base = {"base": sys.base_prefix, "platbase": sys.base_prefix}
    found = {sysconfig.get_path(k, vars=base) for k in ("purelib", "platlib")}
    stdlib = {sysconfig.get_path(k, vars=base) for k in ("stdlib", "platstdlib")}
    for p in sys.path:
        if p and os.path.isdir(p) and not any(p == s or p.startswith(s + "/lib-dynload") for s in stdlib):
            found.add(p)
    for pattern in ("/usr/lib/python3*/dist-packages", "/usr/local/lib/python3*/dist-packages",
                    "/usr/lib/python3*/site-packages", "/usr/local/lib/python3*/site-packages",
                    "/usr/lib/python3/dist-packages"):
        found.update(glob.glob(pattern))
    return {str(Path(p).resolve()) for p in found if p and os.path.isdir(p)}


def _inside(path: str, trees: Iterable[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


@lru_cache(maxsize=None)
def runtime() -> Runtime:
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    prefixes: list[str] = []
    for p in {os.path.realpath(sys.base_prefix), os.path.dirname(os.path.dirname(python))}:
        if not _inside(p, ["/usr"]) and not any(_inside(p, [q]) for q in prefixes):
            prefixes.append(p)
    trees = ["/usr", *prefixes, *(str(Path("/", link).resolve()) for link in ROOT_LINKS)]
    hidden = sorted(p for p in _site_folders() if _inside(p, trees))
    return Runtime(python, tuple(sorted(prefixes)), tuple(torch_closure()), tuple(hidden))


def python_argv() -> list[str]:
    """How the sandbox runs Python: the base interpreter, no ``site``, no bytecode written;
    torch comes from ``PYTHONPATH`` (:func:`env`)."""
    return [runtime().python, "-B", "-S"]


def env(namespaced: bool) -> dict[str, str]:
    if namespaced:
        return {"PYTHONPATH": SITE}
    # the weak backend sees the host: torch from where it is installed
    return {"PYTHONPATH": ":".join(sorted({os.path.dirname(p) for p, _ in runtime().site}))}


def mounts(*, tmp_bytes: int, readable: Iterable[StrPath] = (), binds: Iterable[Bind] = (),
           hide: Iterable[StrPath] = ()) -> list[Mount]:
    """The sandbox's file system, in mount order."""
    rt = runtime()
    out: list[Mount] = [("ro", "/usr", "/usr", 0, 0)]
    for link in ROOT_LINKS:
        top = Path("/") / link
        if top.is_symlink():
            out.append(("symlink", str(top), os.readlink(top), 0, 0))
        elif top.is_dir():
            out.append(("ro", str(top), str(top), 0, 0))
    # the private /tmp first: a bound folder that lives under /tmp is made on top of it
    out.append(("tmpfs", "/tmp", None, tmp_bytes, 0o1777))
    out.append(("dev", "/dev", None, SHM_BYTES, 0o755))
    out.append(("proc", "/proc", None, 0, 0))
    for p in rt.prefixes:
        out.append(("ro", p, p, 0, 0))
    trees = ["/usr", *rt.prefixes]
    for p in sorted(set(rt.hidden) | {str(Path(h).resolve()) for h in hide if _inside(str(Path(h).resolve()), trees)}):
        out.append(("hide", p, None, 4096, 0o755))
    out.append(("dir", SITE, None, 0, 0o755))
    for host, name in rt.site:
        out.append(("ro", f"{SITE}/{name}", host, 0, 0))
    for path in readable:
        out.append(("ro", str(path), str(path), 0, 0))
    for bound, dest in binds:
        out.append(("ro", str(dest), str(bound), 0, 0))
    return out


def bwrap_argv(layout: Iterable[Mount], *, cwd: str, command: Iterable[str]) -> list[str]:
    """bubblewrap's arguments for ``layout``; ``command`` runs inside."""
    a = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
         "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    made = {"/"}

    def parents(dest: str) -> None:
        nonlocal a
        for parent in reversed(Path(dest).parents):
            if str(parent) not in made:
                a += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))

    for kind, dest, source, size, mode in layout:
        if kind != "symlink":
            parents(dest)
        if kind == "ro":
            a += ["--ro-bind", cast(str, source), dest]       # "ro" and "symlink" have a source
        elif kind == "tmpfs":
            a += ["--perms", f"{mode:04o}", "--size", str(size), "--tmpfs", dest]
        elif kind == "hide":
            a += ["--perms", f"{mode:04o}", "--size", str(size), "--tmpfs", dest, "--remount-ro", dest]
        elif kind == "dir":
            a += ["--perms", f"{mode:04o}", "--dir", dest]
        elif kind == "symlink":
            a += ["--symlink", cast(str, source), dest]
        elif kind == "dev":
            a += ["--dev", dest, "--perms", "1777", "--size", str(size), "--tmpfs", f"{dest}/shm"]
        elif kind == "proc":
            a += ["--proc", dest]
        made.add(dest)
    return a + ["--chdir", cwd, "--", *command]
