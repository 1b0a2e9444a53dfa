"""The scheduler's address, the connection, and the start-up check.

``tcp://HOST:PORT`` (or any address Dask's client takes) is a running scheduler; ``local:N``
starts a LocalCluster of N worker processes (one thread each) on this machine for the run.
Before anything is graded, :func:`connect` checks that the scheduler answers, that at least
one worker has joined, and that every worker runs the client's grader (version and source),
torch and Python (:func:`grader.cluster.remote.versions`); otherwise :class:`ClusterError`,
one line naming what differs.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from typing import Any

from . import ClusterError
from .remote import differences, versions, warm

CONNECT_S = 10.0        # how long the scheduler may take to answer
WORKERS_S = 30.0        # how long the first worker may take to join


class Cluster:
    """A connected Dask client (and the LocalCluster it owns, for ``local:N``); a context manager."""

    def __init__(self, address: str, client: Any, local: Any = None, scratch: str | None = None) -> None:
        self.address = address
        self.client = client
        self.local = local
        self.scratch = scratch      # the LocalCluster's workers' folder (removed on close)

    def workers(self) -> dict[str, dict[str, Any]]:
        """The scheduler's workers: ``{address: info}`` (``nthreads``, ``resources``, ...)."""
        return dict(self.client.scheduler_info(n_workers=-1)["workers"])

    def slots(self) -> int:
        """Tasks the workers run at once (their threads, together)."""
        return max(1, sum(int(w.get("nthreads", 1)) for w in self.workers().values()))

    def check_versions(self, nothing: str = "nothing was graded") -> None:
        """:class:`ClusterError` unless every worker's versions are the client's."""
        mine = versions()
        try:
            theirs = self.client.run(versions)
        except Exception as e:  # noqa: BLE001  (a worker that cannot even answer: refused too)
            why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            raise ClusterError(f"the workers of {self.address} cannot report their versions ({why}); "
                               f"refused, {nothing}") from None
        for worker, got in sorted(theirs.items()):
            diff = differences(got, mine)
            if diff:
                raise ClusterError(f"worker {worker} of {self.address} runs {diff}; refused, {nothing}")

    def sandboxes(self, allow_weak: bool) -> dict[str, Any]:
        """Each worker's :class:`grader.code.grade.CodeSandbox` (``allow_weak``: the client's
        ``--allow-weak-sandbox``, sent with every code answer): code answers run there, not here."""
        return dict(self.client.run(_sandbox, allow_weak))

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        finally:
            if self.local is not None:
                try:
                    self.local.close(timeout=10)
                finally:
                    if self.scratch:
                        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")     # the transports Dask's client speaks
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(?P<port>\d{1,5})")


def _sandbox(allow_weak: bool) -> Any:
    """On a worker: whether it can grade code answers (:func:`grader.code.grade.code_sandbox`)."""
    from grader.code.grade import code_sandbox
    return code_sandbox(allow_weak)


def parse(address: str) -> tuple[str, int | None]:
    """``(address, None)`` for a scheduler's address (``[tcp://]HOST:PORT``: tls, ws, wss and ucx
    too), ``("local", N)`` for ``local:N``; :class:`ClusterError` naming what is wrong otherwise
    (no port, another scheme, N out of range), before anything connects."""
    given = address.strip()
    hint = "give tcp://HOST:PORT (a Dask scheduler's address) or local:N (N worker processes here)"
    if given.startswith("local"):
        m = re.fullmatch(r"local:(\d+)", given)
        if not m:
            raise ClusterError(f"--scheduler {address!r}: {hint}")
        n = int(m.group(1)) if len(m.group(1)) <= 4 else 0
        if not 1 <= n <= 256:
            raise ClusterError(f"--scheduler {address!r}: N must be 1 to 256 worker processes")
        return "local", n
    m = _ADDRESS.fullmatch(given)
    if not m:
        rest = given.split("://")[-1]
        why = "no port" if re.fullmatch(r"[A-Za-z0-9._-]+", rest) else "not an address"
        raise ClusterError(f"--scheduler {address!r}: {why}; {hint}")
    if m.group("scheme") and m.group("scheme") not in SCHEMES:
        raise ClusterError(f"--scheduler {address!r}: Dask's client does not speak {m.group('scheme')}://; "
                           f"{hint}")
    if not 1 <= int(m.group("port")) <= 65535:
        raise ClusterError(f"--scheduler {address!r}: the port must be 1 to 65535")
    return given if m.group("scheme") else f"tcp://{given}", None


def _refused(where: str, timeout: float) -> str | None:
    """Why a ``tcp://`` scheduler cannot be reached at once (the connection refused, the host
    unknown), or None: Dask's client would otherwise retry until its timeout. A Dask scheduler
    greets each connection first (its handshake): a listener that says nothing within
    ``timeout`` is not one (Dask's client would wait for that greeting without end)."""
    import socket
    m = _ADDRESS.fullmatch(where)
    if not m or (m.group("scheme") or "tcp") != "tcp":
        return None
    try:
        sock = socket.create_connection((m.group("host").strip("[]"), int(m.group("port"))), timeout=timeout)
    except ConnectionRefusedError:
        return "the connection was refused (is `dask scheduler` running there?)"
    except socket.gaierror:
        return f"unknown host {m.group('host')}"
    except OSError:
        return None     # a timeout, no route: Dask's client says it, after its own tries
    try:
        sock.settimeout(timeout)
        try:
            greeting = sock.recv(1)
        except socket.timeout:
            return f"something listens there but does not answer as a Dask scheduler (nothing within {timeout:g} s)"
        except OSError:
            return None     # reset: Dask's client says it, after its own tries
        if not greeting:
            return "something listens there but closed the connection without answering as a Dask scheduler"
    finally:
        sock.close()
    return None


def connect(address: str, *, check: bool = True, connect_s: float = CONNECT_S, workers_s: float = WORKERS_S,
            memory_limit: str | None = None, warm_up: bool = True, nothing: str = "nothing was graded",
            quiet: bool = True) -> Cluster:
    """A :class:`Cluster` for ``address`` (see the module doc); the start-up check unless ``check``
    is false; ``warm_up``: start the workers' check processes now. ``quiet``: Dask's own log
    silenced (a command's user gets one line; a service keeps Dask's log). ``memory_limit``:
    each local worker's (``local:N`` only; None: Dask's default). ``nothing``: how a refusal ends."""
    try:
        import distributed
    except ImportError:
        raise ClusterError("--scheduler needs Dask's distributed package: pip install 'grader[cluster]'") from None
    if quiet:   # a command's user gets one line from us, not Dask's logged tracebacks
        import logging
        # Dask's logging configuration gives its client's logger a level and a handler of its own
        for name in ("distributed", "distributed.client"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    where, n = parse(address)
    local = None
    scratch = None
    failed: str | None = None
    try:
        if n is not None:
            scratch = tempfile.mkdtemp(prefix="grader-dask-")
            local = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                             dashboard_address=None, memory_limit=memory_limit or "auto",
                                             local_directory=scratch)
            where = local.scheduler_address
        else:
            refused = _refused(where, connect_s)
            if refused:
                raise ClusterError(f"cannot reach the Dask scheduler at {address}: {refused}; {nothing}")
        client = distributed.Client(where, timeout=connect_s, set_as_default=False)
    except ClusterError:
        raise
    except Exception as e:  # noqa: BLE001  (a transport not set up here, an answer no scheduler gives: one line)
        if local is not None:
            local.close()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        why = " ".join(str(e).split()) or type(e).__name__
        if isinstance(e, (TimeoutError, OSError)) and "Timed out" in why:
            why = f"no answer within {connect_s:g} s"
        elif not isinstance(e, (OSError, TimeoutError, ValueError)):
            why = f"{type(e).__name__}: {why}"
        failed = why
    if failed is not None:
        # a client whose start failed is left in reference cycles: collected now, while its event
        # loop runs, it closes at once (at exit, its loop stopped, it would wait 20 s, then print a traceback)
        import gc
        gc.collect()
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {failed[:200]}; {nothing}")
    cluster = Cluster(address, client, local, scratch)
    try:
        try:
            client.wait_for_workers(1, timeout=workers_s)
        except (TimeoutError, OSError):
            if client.status != "running":     # the scheduler went away while we waited
                raise ClusterError(f"lost the Dask scheduler at {address} while waiting for a worker to join; "
                                   f"{nothing}") from None
            raise ClusterError(f"no Dask worker joined the scheduler at {address} within {workers_s:g} s; "
                               f"{nothing}") from None
        if check:
            cluster.check_versions(nothing)
        if warm_up:
            try:
                client.run(warm)
            except Exception as e:  # noqa: BLE001  (a worker, or the scheduler, lost meanwhile)
                why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
                raise ClusterError(f"the Dask cluster at {address} failed while its workers started ({why}); "
                                   f"{nothing}") from None
    except BaseException:
        cluster.close()
        raise
    return cluster
