"""`grader serve --scheduler ADDR`: the service's jobs on a Dask cluster (:class:`DaskJobExecutor`).

The :class:`grader.serve.jobs.JobExecutor` seam: each job is one Dask task, which runs it in a
fresh process on the worker (:mod:`grader.serve.jobrun`, :func:`grader.serve.engine.run_job`);
progress comes back as worker events (``log_event``, a topic the client subscribes to). The
database stays the record (:class:`grader.serve.jobs.JobRunner`): a worker that dies is Dask's
to replace (its task runs again elsewhere); a task that killed its workers, or a scheduler
lost, resolves the job's future with :class:`BrokenProcessPool`, which the runner answers by
queueing the job again (tried at most ``MAX_TRIES`` times), and it records each result once
(only a job still ``running`` is recorded). While the scheduler is away, jobs stay queued:
each submission tries to connect again, and one that cannot is refused with
``BrokenProcessPool``, which the runner answers by leaving the job queued.

A worker that joined after the start-up check with other versions than the service's
(:func:`grader.cluster.remote.check_versions`) runs no job: the task says so instead of running
it, the service logs one line naming the worker and what differs, and the job goes back in the
queue (``BrokenProcessPool``, as for a lost worker: bounded by ``MAX_TRIES``); later jobs are
sent only to the other workers (a loose restriction: never stuck waiting for one), and while
every worker is such a one the jobs stay queued.

The bank and spec named by the service's configuration are sent to the workers (their files,
packed once, ``scatter(broadcast=True)``) and landed in a folder of each worker's own, so that
workers need not share the service's files.
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
import threading
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
import time
from typing import Any, Callable

from .connect import Cluster, connect
from .remote import VersionMismatch, check_versions, versions

log = logging.getLogger("grader.serve")
TOPIC = "grader-job-progress"
MAX_PACK = 64 << 20     # a bank or spec sent to the workers, packed
REFUSED_WAIT_S = 5.0    # every worker refused: how long a submission waits for another to join


def _pack(path: str) -> tuple[str, bytes, str]:
    """``(digest, tar bytes, name)`` of a file or folder (Python caches left out)."""
    p = Path(path).resolve()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(str(p), arcname=p.name, filter=lambda t: None if "__pycache__" in t.name else t)
    data = buf.getvalue()
    if len(data) > MAX_PACK:
        raise ValueError(f"{path} is too large to send to the workers ({len(data) >> 20} MiB packed)")
    return hashlib.sha256(data).hexdigest()[:16], data, p.name


_landed: dict[str, str] = {}
_land_lock = threading.Lock()


def _land(packed: tuple[str, bytes, str]) -> str:
    """On a worker: the packed files extracted (once per digest, under the worker's folder)."""
    digest, data, name = packed
    with _land_lock:
        if digest not in _landed:
            try:
                from distributed import get_worker
                base = Path(get_worker().local_directory)
            except (ImportError, ValueError):
                base = Path(tempfile.gettempdir())
            folder = base / f"grader-files-{digest}"
            if not (folder / name).exists():
                folder.mkdir(parents=True, exist_ok=True)
                with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                    tar.extractall(folder, filter="data")
            _landed[digest] = str(folder / name)
        return _landed[digest]


def run_job(kind: str, job_id: str, params: dict[str, Any], data: bytes | None, config: dict[str, Any],
            files: dict[str, Any], expected: dict[str, str]) -> dict[str, Any]:
    """On a worker: the job in a fresh process (:mod:`grader.serve.jobrun`); its result, or
    ``{"__error__": message}`` for the job's own failure, or ``{"__refused__": what differs,
    "__worker__": address}`` (the job not run) on a worker whose versions are not ``expected``."""
    import pickle
    try:
        from distributed import get_worker
        worker: Any = get_worker()
    except (ImportError, ValueError):
        worker = None
    try:
        check_versions(expected)
    except VersionMismatch as e:
        return {"__refused__": str(e), "__worker__": getattr(worker, "address", "this process")}
    config = dict(config)
    for key, packed in files.items():
        config[key] = _land(packed)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-m", "grader.serve.jobrun"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, close_fds=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(pickle.dumps((kind, job_id, params, data, config)))
        proc.stdin.close()
        result: dict[str, Any] | None = None
        for line in proc.stdout:
            msg = json.loads(line)
            if "progress" in msg and worker is not None:
                worker.log_event(TOPIC, [job_id, *msg["progress"]])
            elif "result" in msg:
                result = msg["result"]
            elif "error" in msg:
                result = {"__error__": msg["error"], "__type__": msg.get("type", "Exception")}
        code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if result is None:
        raise RuntimeError(f"the job process died (exit {code})")
    return result


class DaskJobExecutor:
    """Runs the service's jobs on the Dask cluster at ``address`` (see the module doc);
    ``capacity``: the workers' threads when it connected."""

    def __init__(self, address: str | Cluster,
                 on_progress: Callable[[str, int, int | None], None] | None = None) -> None:
        if isinstance(address, Cluster):
            self.cluster, self._own = address, False
        else:
            self.cluster = connect(address, warm_up=False, nothing="the service did not start", quiet=False)
            self._own = True
        self.capacity = self.cluster.slots()
        self._files: dict[tuple[str, str], Any] = {}
        self._refused: set[str] = set()     # workers seen running other versions (no job is sent there)
        self._lock = threading.Lock()
        self._on_progress = on_progress
        if on_progress is not None:
            self.cluster.client.subscribe_topic(TOPIC, self._progress)

    def _progress(self, event: Any) -> None:
        try:
            job_id, done, total = event[1]
            if self._on_progress is not None:
                self._on_progress(job_id, done, total)
        except Exception:   # progress is best effort
            log.exception("recording a job's progress")

    def _shipped(self, config: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("exercises", "spec"):
            path = config.get(key)
            if path:
                if (key, path) not in self._files:
                    self._files[(key, path)] = self.cluster.client.scatter(_pack(path), broadcast=True, hash=False)
                out[key] = self._files[(key, path)]
        return out

    def _client(self) -> Any:
        """The connected client; a new one when the scheduler was lost and is back, else
        :class:`BrokenProcessPool` (the runner keeps the job queued)."""
        client = self.cluster.client
        if client.status == "running":
            return client
        if self.cluster.local is not None:
            raise BrokenProcessPool(f"the Dask cluster {self.cluster.address} is closed")
        from . import ClusterError
        try:
            fresh = connect(self.cluster.address, warm_up=False, nothing="the job stays queued", workers_s=5.0,
                            quiet=False)
        except ClusterError as e:
            raise BrokenProcessPool(e.message) from None
        old, self.cluster = self.cluster, fresh
        self._own = True    # the new connection is this executor's, whoever made the first
        self._files.clear()
        with self._lock:
            self._refused.clear()   # the new connection's start-up check saw every worker
        if self._on_progress is not None:
            fresh.client.subscribe_topic(TOPIC, self._progress)
        try:
            old.close()
        except Exception:  # noqa: BLE001  (the old client's scheduler is gone)
            pass
        return fresh.client

    def _where(self) -> dict[str, Any]:
        """``client.submit``'s restriction: none, or the workers not refused (loosely: should
        they all leave, the job goes to whichever joins); :class:`BrokenProcessPool` (the job
        stays queued) while every worker is a refused one, after waiting ``REFUSED_WAIT_S``
        for another to join."""
        if not self._refused:
            return {}
        deadline = time.monotonic() + REFUSED_WAIT_S
        while True:
            workers = set(self.cluster.workers())
            with self._lock:
                self._refused &= workers        # a refused worker that left is forgotten
                refused = sorted(self._refused)
            good = sorted(workers - set(refused))
            if not refused:
                return {}
            if good:
                return {"workers": good, "allow_other_workers": True}
            if time.monotonic() >= deadline:
                raise BrokenProcessPool(f"every worker of {self.cluster.address} runs other versions than the "
                                        f"service's ({', '.join(refused)}); the job stays queued")
            time.sleep(0.5)

    def _refuse(self, job_id: str, result: dict[str, Any]) -> BrokenProcessPool:
        """A job a worker refused to run (other versions): that worker gets no more jobs; the
        job goes back in the queue."""
        worker = str(result.get("__worker__") or "?")
        with self._lock:
            self._refused.add(worker)
        why = (f"worker {worker} of {self.cluster.address} runs {result['__refused__']}; refused, "
               f"job {job_id} was not run there")
        log.error("%s; it goes back in the queue", why)
        return BrokenProcessPool(why)

    def submit(self, kind: str, job_id: str, params: dict[str, Any], data: bytes | None,
               config: dict[str, Any]) -> Future[Any]:
        fut: Future[Any] = Future()
        client = self._client()
        try:
            where = self._where()
            remote = client.submit(run_job, kind, job_id, params, data, config, self._shipped(config), versions(),
                                   pure=False, key=f"grader-job-{job_id}-{os.urandom(4).hex()}", **where)
        except BrokenProcessPool:
            raise
        except Exception as e:  # noqa: BLE001  (the scheduler went away meanwhile: the job stays queued)
            self._files.clear()
            raise BrokenProcessPool(f"the Dask cluster is away: {type(e).__name__}: {e}") from None

        def done(f: Any) -> None:
            try:
                result = f.result()
            except Exception as e:  # noqa: BLE001  (a worker or the scheduler lost: the job goes back in the queue)
                self._files.clear()     # sent again with the next job (the workers holding them may be gone)
                fut.set_exception(BrokenProcessPool(f"the Dask cluster lost the job: {type(e).__name__}: {e}"))
                return
            if isinstance(result, dict) and "__refused__" in result:
                fut.set_exception(self._refuse(job_id, result))
            elif isinstance(result, dict) and "__error__" in result:
                # the job's own failure, recorded as a job process's is: "TypeName: message"
                failed = type(str(result.get("__type__") or "Exception"), (Exception,), {})
                fut.set_exception(failed(result["__error__"]))
            else:
                fut.set_result(result)
        remote.add_done_callback(done)
        return fut

    def close(self) -> None:
        if self._own:
            self.cluster.close()
