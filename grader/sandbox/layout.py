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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SITE = "/sandbox/site"
ROOT_LINKS = ("bin", "lib", "lib64", "sbin", "lib32")
SHM_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Runtime:
    """The interpreter the sandbox runs and what it needs from the host."""

    python: str          # same path inside and outside
    prefixes: tuple      # host folders bound at their own path (besides /usr)
    site: tuple          # (host path, name): torch and its dependencies, at SITE/name
    hidden: tuple        # folders under a bound tree that are covered by an empty tmpfs


def _requirement_name(req: str) -> str | None:
    """The distribution a ``Requires-Dist`` line names, or None for an extra's."""
    name, _, marker = req.partition(";")
    if "extra" in marker:
        return None
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", name)
    return m.group(1) if m else None


def torch_closure() -> list:
    """(host path, name) of the top-level entries of torch and of the distributions it needs."""
    import importlib.metadata as md
    todo, seen, entries = ["torch"], set(), {}
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
            path = Path(dist.locate_file(top))
            if path.exists():
                entries[top] = str(path)
    return sorted((p, n) for n, p in entries.items())


def _site_folders() -> set:
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


def _inside(path: str, trees) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


@lru_cache(maxsize=None)
def runtime() -> Runtime:
    python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    prefixes = []
    for p in {os.path.realpath(sys.base_prefix), os.path.dirname(os.path.dirname(python))}:
        if not _inside(p, ["/usr"]) and not any(_inside(p, [q]) for q in prefixes):
            prefixes.append(p)
    trees = ["/usr", *prefixes, *(str(Path("/", link).resolve()) for link in ROOT_LINKS)]
    hidden = sorted(p for p in _site_folders() if _inside(p, trees))
    return Runtime(python, tuple(sorted(prefixes)), tuple(torch_closure()), tuple(hidden))


def python_argv() -> list:
    """How the sandbox runs Python: the base interpreter, no ``site``, no bytecode written;
    torch comes from ``PYTHONPATH`` (:func:`env`)."""
    return [runtime().python, "-B", "-S"]


def env(namespaced: bool) -> dict:
    if namespaced:
        return {"PYTHONPATH": SITE}
    # the weak backend sees the host: torch from where it is installed
    return {"PYTHONPATH": ":".join(sorted({os.path.dirname(p) for p, _ in runtime().site}))}


def mounts(*, tmp_bytes: int, readable=(), binds=(), hide=()) -> list:
    """The sandbox's file system, in mount order."""
    rt = runtime()
    out = [("ro", "/usr", "/usr", 0, 0)]
    for link in ROOT_LINKS:
        p = Path("/") / link
        if p.is_symlink():
            out.append(("symlink", str(p), os.readlink(p), 0, 0))
        elif p.is_dir():
            out.append(("ro", str(p), str(p), 0, 0))
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
    for p in readable:
        out.append(("ro", str(p), str(p), 0, 0))
    for host, dest in binds:
        out.append(("ro", str(dest), str(host), 0, 0))
    return out


def bwrap_argv(layout: list, *, cwd: str, command: list) -> list:
    """bubblewrap's arguments for ``layout``; ``command`` runs inside."""
    a = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
         "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    made = {"/"}

    def parents(dest):
        nonlocal a
        for parent in reversed(Path(dest).parents):
            if str(parent) not in made:
                a += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))

    for kind, dest, source, size, mode in layout:
        if kind != "symlink":
            parents(dest)
        if kind == "ro":
            a += ["--ro-bind", source, dest]
        elif kind == "tmpfs":
            a += ["--perms", f"{mode:04o}", "--size", str(size), "--tmpfs", dest]
        elif kind == "hide":
            a += ["--perms", f"{mode:04o}", "--size", str(size), "--tmpfs", dest, "--remount-ro", dest]
        elif kind == "dir":
            a += ["--perms", f"{mode:04o}", "--dir", dest]
        elif kind == "symlink":
            a += ["--symlink", source, dest]
        elif kind == "dev":
            a += ["--dev", dest, "--perms", "1777", "--size", str(size), "--tmpfs", f"{dest}/shm"]
        elif kind == "proc":
            a += ["--proc", dest]
        made.add(dest)
    return a + ["--chdir", cwd, "--", *command]
