"""check-spec's measured claims on a Dask cluster: :class:`DaskMeasurer`.

The same interface as :class:`grader.claims.measurer.Measurer` (``start``, ``ready``, ``submit``,
``outcome``, ``close``), so :func:`grader.claims.run.check_paths` uses it unchanged: the symbolic
checks stay in this process; each claim's measurements go to a worker as one task, where the
worker's own measuring process (:class:`~grader.claims.measurer.Measurer`, torch in a process of
its own, under the claim's time limit) makes them. A claim measured on a GPU device
(``--device cuda``) goes only to a worker that declares a ``GPU`` resource
(``dask worker --resources GPU=1``); with no such worker it is refused before anything runs.
Each outcome says where it was measured (``Measured.where``), and the claim's evidence says so.
A worker that joined after the start-up check with other versions than the client's measures
nothing (:func:`grader.cluster.remote.check_versions`): the run ends with
:class:`~grader.cluster.ClusterError` naming the worker and what differs, never with a verdict
measured there. A scheduler lost mid-run ends it the same way (one line, nothing was checked):
a lost scheduler is not a claim's error.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from grader.errors import OptionError
from grader.claims.measurer import Measurements

from . import ClusterError
from .connect import Cluster, connect
from .remote import VersionMismatch, check_versions, versions

GPU = "GPU"


@dataclass
class Measured(Measurements):
    """:class:`~grader.claims.measurer.Measurements`, and the worker that made them."""

    where: str = ""


_measurers: dict[Any, Any] = {}     # on a worker: its measuring process, per memory budget
_lock = threading.Lock()


def _here() -> str:
    try:
        from distributed import get_worker
        w = get_worker()
    except (ImportError, ValueError):
        return "this process"
    gpu = " (GPU resource)" if w.state.total_resources.get(GPU) else ""
    return f"worker {w.name} at {w.address}{gpu}"


def _measurer(memory_budget: int | None) -> Any:
    from grader.claims.measurer import Measurer
    with _lock:
        m = _measurers.get(memory_budget)
        if m is None or m._closed or m._fatal:
            m = _measurers[memory_budget] = Measurer(memory_budget=memory_budget).start()
        return m


def _same_versions(expected: dict[str, str]) -> None:
    """On a worker: :class:`VersionMismatch` naming this worker and what differs, unless its
    versions are ``expected``."""
    try:
        check_versions(expected)
    except VersionMismatch as e:
        raise VersionMismatch(f"{_here()} runs {e}") from None


def measure(requests: list[Any], budget: float | None, memory_budget: int | None,
            expected: dict[str, str]) -> Measured:
    """On a worker: one claim's measurements by the worker's measuring process (nothing
    measured on a worker whose versions are not ``expected``: :class:`VersionMismatch`)."""
    _same_versions(expected)
    m = _measurer(memory_budget)
    out = m.outcome(m.submit(requests, budget))
    return Measured(values=out.values, failure=out.failure, timed_out=out.timed_out, seconds=out.seconds,
                    where=_here())


def info(memory_budget: int | None, expected: dict[str, str]) -> dict[str, Any]:
    """On a worker: what its measuring process says when ready (``cuda``, ``torch``), and where
    (:class:`VersionMismatch` on a worker whose versions are not ``expected``)."""
    _same_versions(expected)
    return dict(_measurer(memory_budget).ready(), where=_here())


def asks_gpu(requests: Any) -> bool:
    """Whether any measurement names a CUDA device."""
    if isinstance(requests, dict):
        return any((k == "device" and isinstance(v, str) and v.startswith("cuda")) or asks_gpu(v)
                   for k, v in requests.items())
    if isinstance(requests, (list, tuple)):
        return any(asks_gpu(r) for r in requests)
    return False


class DaskMeasurer:
    """Measures claims on the workers of the scheduler at ``address`` (see the module doc).
    ``device``: check-spec's ``--device`` (``cuda``: every claim on a GPU worker)."""

    def __init__(self, address: str | Cluster, *, device: str = "auto", memory_budget: int | None = None) -> None:
        if isinstance(address, Cluster):
            self.cluster, self._own = address, False
        else:
            self.cluster, self._own = connect(address, warm_up=False, nothing="nothing was checked"), True
        self.device = device
        self.memory_budget = memory_budget
        self._futures: dict[int, Any] = {}
        self._next = 0

    def start(self) -> DaskMeasurer:
        return self

    def gpu_workers(self) -> list[str]:
        return [a for a, w in self.cluster.workers().items() if (w.get("resources") or {}).get(GPU)]

    def _resources(self, gpu: bool) -> dict[str, float] | None:
        if not gpu:
            return None
        if not self.gpu_workers():
            raise OptionError(f"no worker of {self.cluster.address} declares a GPU resource "
                              "(start one with: dask worker ADDR --resources GPU=1)", "--device")
        return {GPU: 1}

    def ready(self, timeout: float | None = None) -> dict[str, Any]:
        """What a worker's measuring process says (a GPU worker's when ``device`` is cuda):
        ``cuda`` false there is refused by check-spec as it is locally."""
        gpu = self.device == "cuda"
        fut = self.cluster.client.submit(info, self.memory_budget, versions(), resources=self._resources(gpu),
                                         pure=False)
        try:
            got = dict(fut.result(timeout=timeout))
        except VersionMismatch as e:
            raise self._end(f"{e}; refused, nothing was checked") from None
        if gpu and not got.get("cuda"):
            got["fatal"] = (f"CUDA is not available on {got.get('where')}: it declares a GPU resource, "
                            "but torch there sees no CUDA device")
        return got

    def submit(self, requests: list[Any], budget: float | None = None) -> int:
        key = self._next
        self._next += 1
        try:
            resources = self._resources(self.device == "cuda" or asks_gpu(requests))
        except OptionError as e:
            self._futures[key] = Measured(failure=e.message)
            return key
        self._futures[key] = self.cluster.client.submit(measure, requests, budget, self.memory_budget, versions(),
                                                        resources=resources, pure=False)
        return key

    def outcome(self, key: int) -> Measurements:
        from concurrent.futures import CancelledError
        fut = self._futures.pop(key)
        if isinstance(fut, Measured):
            return fut
        try:
            out: Measurements = fut.result()
            return out
        except ClusterError:
            raise
        except VersionMismatch as e:
            raise self._end(f"{e}; refused, nothing was checked") from None
        except CancelledError:      # Dask cancels every pending claim when the scheduler is lost
            raise self._end(f"lost the Dask scheduler at {self.cluster.address} mid-run; nothing was checked") from None
        except Exception as e:  # noqa: BLE001  (the worker, or the cluster, failed this claim)
            return Measured(failure=f"measuring on the Dask cluster at {self.cluster.address} failed: "
                                    f"{type(e).__name__}: {str(e)[:200]}")

    def _end(self, message: str) -> ClusterError:
        """The run's end (a worker measures with other versions, the scheduler is lost): the
        claims not yet measured are cancelled, no verdict is given."""
        pending = [f for f in self._futures.values() if not isinstance(f, Measured)]
        self._futures.clear()
        try:
            self.cluster.client.cancel(pending)
        except Exception:  # noqa: BLE001  (the scheduler may be gone: nothing more is measured anyway)
            pass
        return ClusterError(message)

    def close(self) -> None:
        if self._own:
            self.cluster.close()

    def __enter__(self) -> DaskMeasurer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
