"""`--scheduler`: grading on a real Dask cluster (a `dask scheduler` and two `dask worker`
processes on 127.0.0.1, each worker with a nanny, one thread and a memory limit), compared with
the local pool's results; a worker killed mid-batch; code answers in the workers' sandbox; a
worker whose versions differ refused.

The version mismatch is real, not mocked: the odd worker is started with a PYTHONPATH folder
holding a ``grader-0.0.0.dist-info`` (the metadata an installed grader 0.0.0 would have), so
that the worker's ``importlib.metadata`` finds grader 0.0.0 first, as on a machine where an
older grader is installed; the check reads versions from the metadata, as it would there.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from grade_helpers import as_json, write  # noqa: E402

from grader.bank import load_bank  # noqa: E402
from grader.cluster import ClusterError  # noqa: E402
from grader.cluster.connect import connect  # noqa: E402
from grader.cluster.executor import DaskExecutor  # noqa: E402
from grader.grade.executors import LocalPoolExecutor  # noqa: E402
from grader.reports.grades import render  # noqa: E402
from grader.grade.pool import Failure  # noqa: E402
from grader.grade.run import grade_all  # noqa: E402
from grader.grade.submissions import load_submissions  # noqa: E402

# `python -m dask` is the `dask` command (also where only the packages, not their scripts, are on the path)
DASK = [sys.executable, "-m", "dask"]
START_S = 90.0          # a process may take this long to come up on a loaded machine
ROOT = Path(__file__).resolve().parents[1]


class DaskProcesses:
    """A scheduler and workers started as the user starts them (`dask scheduler`, `dask worker`),
    each in a session of its own so that teardown takes its children too; logs in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: dict[str, subprocess.Popen] = {}
        self.file = folder / "scheduler.json"
        self.address = ""

    def _start(self, name: str, argv: list[str], env: dict | None = None) -> None:
        log = open(self.folder / f"{name}.log", "wb")
        full = dict(os.environ, **(env or {}))
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=full,
                                            start_new_session=True, cwd=self.folder)
        log.close()

    def scheduler(self, port: int = 0) -> str:
        self.file.unlink(missing_ok=True)
        self._start("scheduler", [*DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
                                  "--scheduler-file", str(self.file)])
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.file.exists():
                try:
                    self.address = json.loads(self.file.read_text())["address"]
                    return self.address
                except (ValueError, KeyError):
                    pass
            if self.procs["scheduler"].poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError("the dask scheduler did not start: " + (self.folder / "scheduler.log").read_text()[-2000:])

    def worker(self, name: str, *, env: dict | None = None, resources: str | None = None) -> None:
        argv = [*DASK, "worker", "--scheduler-file", str(self.file), "--host", "127.0.0.1", "--nthreads", "1",
                "--memory-limit", "2GiB", "--no-dashboard", "--name", name,
                "--local-directory", str(self.folder / f"{name}-files")]
        if resources:
            argv += ["--resources", resources]
        self._start(name, argv, env)
        self.wait_for(lambda names: name in names, f"worker {name} to join")

    def names(self) -> dict[str, dict]:
        with distributed.Client(self.address, timeout=30, set_as_default=False) as c:
            return {w["name"]: w for w in c.scheduler_info(n_workers=-1)["workers"].values()}

    def wait_for(self, ok, what: str) -> dict[str, dict]:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            names = self.names()
            if ok(names):
                return names
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {what}")

    def stop(self, name: str, *, kill: bool = False) -> None:
        p = self.procs.pop(name)
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10))[1 if kill else 0:]:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def close(self) -> None:
        for name in [n for n in self.procs if n != "scheduler"] + ["scheduler"]:
            if name in self.procs:
                self.stop(name)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    procs = DaskProcesses(tmp_path_factory.mktemp("dask"))
    try:
        procs.scheduler()
        procs.worker("a")
        procs.worker("b")
        yield procs
    finally:
        procs.close()


@pytest.fixture(scope="module")
def class_files(tmp_path_factory):
    """A 120-learner class of the bundled bank (right forms, known mistakes, unique guesses)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_grade import class_answers
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    folder = tmp_path_factory.mktemp("class")
    (folder / "class.json").write_text(json.dumps({"submissions": class_answers(load_bank(None), 120, seed=7)}))
    return folder


def test_a_class_graded_on_the_cluster_equals_the_local_pool_exactly(dask_cluster, class_files):
    bank = load_bank(None)
    loaded = load_submissions([class_files])
    local = grade_all(bank, loaded.submissions, executor=LocalPoolExecutor(2))
    progress = []
    with DaskExecutor(dask_cluster.address, chunk_max=16) as ex:
        remote = grade_all(bank, loaded.submissions, executor=ex, progress=lambda k, total: progress.append(k))
    assert local.stats["unique"] > 100
    assert render(remote, "json") == render(local, "json")      # every field, in the same order
    assert sum(progress[1:]) == local.stats["unique"]           # fed by the cluster's completions, each once


def test_the_cli_grades_on_the_cluster_as_it_does_locally(dask_cluster, class_files):
    r_local, local = as_json(class_files)
    r = as_json("--scheduler", dask_cluster.address, class_files)[0]
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == local


def test_a_worker_killed_mid_batch_loses_no_answer(dask_cluster, class_files):
    bank = load_bank(None)
    loaded = load_submissions([class_files])
    local = grade_all(bank, loaded.submissions, executor=LocalPoolExecutor(2))
    before = dask_cluster.names()
    killed: dict = {}
    counts: list[int] = []

    with DaskExecutor(dask_cluster.address, chunk_max=4) as ex:
        client = ex.cluster.client

        def on_progress(k, total):
            counts.append(k)
            if total is None and not killed:        # results are coming in: kill a busy worker
                for addr, keys in client.processing().items():
                    if keys:
                        info = client.scheduler_info(n_workers=-1)["workers"][addr]
                        pid = client.run(os.getpid, workers=[addr])[addr]
                        os.kill(pid, signal.SIGKILL)
                        killed.update(name=info["name"], address=addr, keys=len(keys))
                        break

        remote = grade_all(bank, loaded.submissions, executor=ex, progress=on_progress)
    assert killed and killed["keys"] >= 1                       # it was busy with a chunk when killed
    assert render(remote, "json") == render(local, "json")      # every answer once, the same grades
    assert sum(counts[1:]) == local.stats["unique"]             # no chunk reported twice
    # the nanny brings the killed worker back (another process): the fixture's cluster is whole again
    after = dask_cluster.wait_for(lambda n: killed["name"] in n and n[killed["name"]]["id"] != killed["address"],
                                  "the nanny to restart the killed worker")
    assert set(after) == set(before)


def test_code_solutions_graded_on_the_cluster_equal_the_local_sandbox(dask_cluster, tmp_path):
    code = ROOT / "exercises" / "17-08" / "code"
    shutil.copyfile(code / "solution.py", tmp_path / "right.py")
    shutil.copyfile(ROOT / "tests" / "broken_solutions" / "forgot_w_o.py", tmp_path / "forgot.py")
    (tmp_path / "syntax.py").write_text("def split_heads(x, h:\n")
    answers = write(tmp_path / "answers.yaml", """\
        submissions:
          - learner: ann
            answers: {17-08/code-mha: right.py, 17-08/practice-1: 64}
          - learner: bob
            answers: {17-08/code-mha: forgot.py}
          - learner: cy
            answers: {17-08/code-mha: syntax.py}
          - learner: dee
            answers: {17-08/code-mha: missing.py}
        """)
    r_local, local = as_json(answers)
    r, remote = as_json("--scheduler", dask_cluster.address, answers)
    assert r.exit_code == 0, r.stderr
    statuses = [s["results"][0]["status"] for s in local["submissions"]]
    assert statuses[0] == "correct" and statuses[1] in ("partial", "wrong") and statuses[3] == "invalid"
    assert remote == local


def test_a_worker_with_another_grader_version_is_refused(dask_cluster, tmp_path):
    fake = tmp_path / "site"
    meta = fake / "grader-0.0.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: grader\nVersion: 0.0.0\n")
    path = os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    dask_cluster.worker("old", env={"PYTHONPATH": path})
    try:
        with pytest.raises(ClusterError) as e:
            connect(dask_cluster.address, warm_up=False)
        from importlib.metadata import version
        assert f"runs grader 0.0.0 (client: {version('grader')}); refused" in e.value.message
        assert "source" not in e.value.message and "torch" not in e.value.message    # only what differs
        assert "\n" not in e.value.message
        answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/practice-1: 64}\n")
        r = as_json("--scheduler", dask_cluster.address, answers)[0]
        assert r.exit_code == 2 and "grader 0.0.0" in r.stderr and r.stdout == ""
    finally:
        dask_cluster.stop("old")
        dask_cluster.wait_for(lambda n: "old" not in n, "the old worker to leave")


def test_an_unreachable_scheduler_is_refused_in_one_line(tmp_path):
    answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/practice-1: 64}\n")
    import socket
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = as_json("--scheduler", f"tcp://127.0.0.1:{port}", answers)[0]
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "cannot reach the Dask scheduler" in r.stderr


def test_a_hostile_task_is_blamed_alone_as_in_the_local_pool(dask_cluster):
    # handlers the workers can import: time.sleep (a task past its time limit) and os._exit (a
    # task that kills its check process); each costs only its own task, as in the local pool
    limits = __import__("grader.grade.pool", fromlist=["AnswerLimits"]).AnswerLimits(timeout_s=1.0, cpu_s=2)
    sleepy = [(0, 0), (1, 30), (2, 0), (3, 0)]
    dying = [(0, 3)]
    with DaskExecutor(dask_cluster.address, chunk_max=4) as ex:
        got = (ex.run(sleepy, time.sleep, limits=limits), ex.run(dying, os._exit, limits=limits))
    want = (LocalPoolExecutor(1).run(sleepy, time.sleep, limits=limits),
            LocalPoolExecutor(1).run(dying, os._exit, limits=limits))
    # a failure's detail depends on timing, locally too (the alarm, or the parent's kill past the
    # grace on a loaded machine; a death seen as the exit or as the closed pipe); the grade made
    # of a failure uses its reason only
    def reasons(out):
        return {k: v.reason if isinstance(v, Failure) else v for k, v in out.items()}
    assert reasons(got[0]) == reasons(want[0]) and reasons(got[1]) == reasons(want[1])
    assert got[0][1].reason == "timeout" and got[0][0] is None and got[1][0].reason == "died"


# ------------------------------------------------------------------ check-spec --scheduler

def test_measured_claims_run_on_a_worker_with_the_local_verdicts(dask_cluster):
    from grader.claims.run import check_paths
    local = check_paths(None, only="s-4-*")
    from grader.cluster.claims import DaskMeasurer
    remote = check_paths(None, only="s-4-*", measurer_factory=lambda: DaskMeasurer(dask_cluster.address))
    measured = [c for r in remote for cr in r.results for c in cr.checks if c.method == "measured"]
    assert measured and all("[measured on worker " in c.summary for c in measured)
    assert [(cr.claim.id, cr.verdict) for r in remote for cr in r.results] == \
        [(cr.claim.id, cr.verdict) for r in local for cr in r.results]
    strip = [c.summary.split(" [measured on ")[0] for c in measured]
    assert strip == [c.summary for r in local for cr in r.results for c in cr.checks if c.method == "measured"]


def test_a_gpu_claim_is_refused_without_a_gpu_worker_and_routed_to_one(dask_cluster):
    # No worker declares GPU: --device cuda is refused before anything is measured.
    from grader.errors import OptionError
    from grader.cluster.claims import DaskMeasurer
    from grader.claims.load import load_subjects
    from grader.claims.run import check_claim, check_paths
    from click.testing import CliRunner

    from grader.cli import cli
    r = CliRunner().invoke(cli, ["check-spec", "--scheduler", dask_cluster.address, "--device", "cuda",
                                 "--only", "s-4-*"])
    assert r.exit_code == 2 and "declares a GPU resource" in r.stderr and "--device" in r.stderr, r.output
    assert "Traceback" not in r.output
    # A worker that declares GPU=1 but whose torch sees no CUDA device (none is visible to it,
    # on a GPU machine too): the probe runs there and the run is refused, honestly
    dask_cluster.worker("gpu", resources="GPU=1", env={"CUDA_VISIBLE_DEVICES": ""})
    try:
        with pytest.raises(OptionError) as e:
            check_paths(None, only="s-4-*", device="cuda",
                        measurer_factory=lambda: DaskMeasurer(dask_cluster.address, device="cuda"))
        assert "CUDA is not available on worker gpu at " in e.value.message and "(GPU resource)" in e.value.message
        # a claim measured on the meta device (sizes only) needs no CUDA: sent to the GPU worker,
        # it holds there as it does here, and its evidence names the GPU worker
        subject = load_subjects(None)[0]
        with DaskMeasurer(dask_cluster.address, device="cuda") as m:
            on_gpu = check_claim(subject, "s-4-no-overhead", measurer=m, device="cuda")
        here = check_claim(subject, "s-4-no-overhead")
        assert on_gpu.verdict == here.verdict == "holds"
        assert "[measured on worker gpu at " in on_gpu.checks[0].summary
        assert "(GPU resource)]" in on_gpu.checks[0].summary
    finally:
        dask_cluster.stop("gpu")
        dask_cluster.wait_for(lambda n: "gpu" not in n, "the GPU worker to leave")


def _cuda() -> bool:
    import torch
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(not _cuda(), reason="no CUDA device on this machine")
def test_device_cuda_measures_every_claim_on_the_gpu_worker_with_the_cpu_verdicts(dask_cluster):
    # A real GPU: check-spec --device cuda through a worker that declares GPU=1 gives, claim by
    # claim, the verdicts of a local CPU run; every measured check says it was measured on the GPU
    # worker, and the checks on real numbers (equivalence) say they ran on cuda there.
    from grader.cluster.claims import DaskMeasurer
    from grader.claims.run import check_paths
    local = check_paths(None, device="cpu", train=False)
    dask_cluster.worker("gpu", resources="GPU=1")
    try:
        remote = check_paths(None, device="cuda", train=False,
                             measurer_factory=lambda: DaskMeasurer(dask_cluster.address, device="cuda"))
    finally:
        dask_cluster.stop("gpu")
        dask_cluster.wait_for(lambda n: "gpu" not in n, "the GPU worker to leave")
    # but for the timed demonstrations (17-10's t-bound-measured): skipped on CPU, timed on the GPU worker
    timed = {"t-bound-measured"}

    def untimed(results):
        return [[(cr.claim.id, cr.verdict, [c.verdict for c in cr.checks]) for cr in r.results
                 if cr.claim.id not in timed] for r in results]

    assert untimed(remote) == untimed(local)
    on_gpu = {cr.claim.id: cr for r in remote for cr in r.results if cr.claim.id in timed}
    on_cpu = {cr.claim.id: cr for r in local for cr in r.results if cr.claim.id in timed}
    assert set(on_gpu) == timed and all(cr.verdict == "skipped" for cr in on_cpu.values())
    assert all(cr.verdict == "demonstrated" for cr in on_gpu.values()), {k: cr.evidence for k, cr in on_gpu.items()}
    measured = [c for r in remote for cr in r.results for c in cr.checks if c.method == "measured"]
    assert len(measured) > 50
    assert all(" [measured on worker gpu at " in c.summary and c.summary.endswith("(GPU resource)]")
               for c in measured), [c.summary for c in measured if "(GPU resource)]" not in c.summary][:3]
    on_numbers = [c for c in measured if c.kind == "equivalence"]
    assert on_numbers and all(", cuda: max |" in c.summary for c in on_numbers), [c.summary for c in on_numbers][:3]


# ------------------------------------------------------------------ serve --scheduler

ADD_BANK = '''subject: 17-08
problems:
  - id: 17-08/code-add
    prompt: "Write add(a, b): the sum of two numbers."
    kind: code
    points: 4
    tests: add/
'''
ADD_TESTS = '''def test_add(solution):
    assert solution.add(2, 3) == 5


def test_add_negative(solution):
    assert solution.add(-2, 2) == 0
'''
SLOW_RIGHT = b"import time\n\n\ndef add(a, b):\n    time.sleep(1.5)\n    return a + b\n"
WRONG = b"def add(a, b):\n    return a - b\n"


def test_service_jobs_run_on_the_cluster_and_a_killed_worker_loses_none(dask_cluster, tmp_path):
    from sqlalchemy import insert, select

    from grader.cluster.jobs import DaskJobExecutor
    from grader.db import Database
    from grader.db.models import Job, User, now
    from grader.serve.jobs import JobRunner
    from grader.serve.jobwork import config
    from grader.serve.settings import Settings

    bank = tmp_path / "bank"
    (bank / "add").mkdir(parents=True)
    (bank / "bank.yaml").write_text(ADD_BANK)
    (bank / "add" / "test_add.py").write_text(ADD_TESTS)
    db = Database(f"sqlite:///{tmp_path / 'jobs.db'}")
    db.ensure_schema()
    jobs = {f"job-{i}": SLOW_RIGHT if i % 2 == 0 else WRONG for i in range(4)}
    with db.write() as conn:
        conn.execute(insert(User).values(id=1, login="l", name="", email="", role="learner", created_at=now()))
        for jid, code in jobs.items():
            conn.execute(insert(Job).values(id=jid, kind="code", user_id=1, status="queued", done=0, tries=0,
                                            params={"problem": "17-08/code-add", "filename": "mine.py"},
                                            data=code, created_at=now()))
    recorded: list[str] = []

    def finish(conn, job, result):
        recorded.append(job.id)
        return result

    executor = DaskJobExecutor(dask_cluster.address)
    runner = JobRunner(db, executor, config(Settings(exercises=str(bank))), prepare=None, finish=finish)
    client = executor.cluster.client
    killed = None
    runner.start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            with db.read() as conn:
                rows = dict(conn.execute(select(Job.id, Job.status)).all())
            if all(s in ("done", "failed") for s in rows.values()):
                break
            if killed is None:          # a worker running a job: SIGKILL it
                busy = [a for a, keys in client.processing().items() if any("grader-job-" in k for k in keys)]
                if busy:
                    os.kill(client.run(os.getpid, workers=[busy[0]])[busy[0]], signal.SIGKILL)
                    killed = busy[0]
            time.sleep(0.2)
    finally:
        runner.stop()
        executor.close()
    with db.read() as conn:
        rows = {r.id: r for r in conn.execute(select(Job.id, Job.status, Job.result, Job.error))}
    db.dispose()
    assert killed is not None
    assert sorted(recorded) == sorted(jobs)             # each result stored once
    for jid, code in jobs.items():
        assert rows[jid].status == "done", rows[jid].error
        answer = rows[jid].result["answer"]
        assert answer["status"] == ("correct" if code is SLOW_RIGHT else "wrong"), answer
    dask_cluster.wait_for(lambda n: {"a", "b"} <= set(n), "the nanny to restart the killed worker")


def _add_bank_and_jobs(tmp_path, n):
    from sqlalchemy import insert

    from grader.db import Database
    from grader.db.models import Job, User, now
    bank = tmp_path / "bank"
    (bank / "add").mkdir(parents=True)
    (bank / "bank.yaml").write_text(ADD_BANK)
    (bank / "add" / "test_add.py").write_text(ADD_TESTS)
    db = Database(f"sqlite:///{tmp_path / 'jobs.db'}")
    db.ensure_schema()
    jobs = {f"job-{i}": SLOW_RIGHT if i % 2 == 0 else WRONG for i in range(n)}
    with db.write() as conn:
        conn.execute(insert(User).values(id=1, login="l", name="", email="", role="learner", created_at=now()))
        for jid, code in jobs.items():
            conn.execute(insert(Job).values(id=jid, kind="code", user_id=1, status="queued", done=0, tries=0,
                                            params={"problem": "17-08/code-add", "filename": "mine.py"},
                                            data=code, created_at=now()))
    return bank, db, jobs


def test_service_jobs_survive_a_scheduler_that_dies_and_comes_back(tmp_path):
    # a cluster of its own: its scheduler is killed (SIGKILL) while a job runs, then started
    # again on the same address with a fresh worker; the service's jobs all finish, each once
    from sqlalchemy import select

    from grader.cluster.jobs import DaskJobExecutor
    from grader.db.models import Job
    from grader.serve.jobs import JobRunner
    from grader.serve.jobwork import config
    from grader.serve.settings import Settings

    procs = DaskProcesses(tmp_path)
    try:
        address = procs.scheduler()
        procs.worker("first")
        bank, db, jobs = _add_bank_and_jobs(tmp_path, 2)
        recorded: list[str] = []

        def finish(conn, job, result):
            recorded.append(job.id)
            return result

        executor = DaskJobExecutor(address)
        runner = JobRunner(db, executor, config(Settings(exercises=str(bank))), prepare=None, finish=finish)
        runner.start()
        restarted = False
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                with db.read() as conn:
                    rows = dict(conn.execute(select(Job.id, Job.status)).all())
                if all(s in ("done", "failed") for s in rows.values()):
                    break
                if not restarted and "running" in rows.values():
                    procs.stop("scheduler", kill=True)
                    procs.stop("first")
                    time.sleep(2)
                    procs.scheduler(port=int(address.rsplit(":", 1)[1]))
                    procs.worker("second")
                    restarted = True
                time.sleep(0.3)
        finally:
            runner.stop()
            executor.close()
        with db.read() as conn:
            rows = {r.id: r for r in conn.execute(select(Job.id, Job.status, Job.result, Job.error, Job.tries))}
        db.dispose()
        assert restarted
        assert any(r.tries >= 2 for r in rows.values())     # the job the cluster lost was started again
        assert sorted(recorded) == sorted(jobs)             # each result stored once
        for jid, code in jobs.items():
            assert rows[jid].status == "done", rows[jid].error
            assert rows[jid].result["answer"]["status"] == ("correct" if code is SLOW_RIGHT else "wrong")
    finally:
        procs.close()


def test_a_scheduler_lost_mid_check_spec_ends_it_with_one_line_and_no_verdicts(tmp_path):
    # check-spec as grade: a lost scheduler is not the spec's failure (no claim comes out as an
    # "error" of its own), the run ends with one line and no report
    from grader.cluster.claims import DaskMeasurer
    from grader.claims.run import check_paths
    procs = DaskProcesses(tmp_path)
    try:
        address = procs.scheduler()
        procs.worker("only")

        class KillsTheScheduler(DaskMeasurer):
            def outcome(self, key):
                got = super().outcome(key)
                if "scheduler" in procs.procs:      # after the first claim measured: SIGKILL
                    procs.stop("scheduler", kill=True)
                return got

        with pytest.raises(ClusterError) as e:
            check_paths(None, train=False, measurer_factory=lambda: KillsTheScheduler(address))
        assert "scheduler" not in procs.procs
        assert e.value.message.startswith(f"lost the Dask scheduler at {address}")
        assert "nothing was checked" in e.value.message and "\n" not in e.value.message
    finally:
        procs.close()


def test_a_scheduler_lost_mid_batch_ends_the_grading_with_one_line_and_no_report(tmp_path, class_files):
    bank = load_bank(None)
    loaded = load_submissions([class_files])
    procs = DaskProcesses(tmp_path)
    try:
        address = procs.scheduler()
        procs.worker("only")
        seen: list[int] = []

        def on_progress(k, total):
            seen.append(k)
            if total is None and "scheduler" in procs.procs:
                procs.stop("scheduler", kill=True)          # SIGKILL, mid-batch

        import logging

        class Printed(logging.Handler):     # what Dask's loggers would print on the user's terminal
            def __init__(self) -> None:
                super().__init__(logging.ERROR)
                self.records: list[logging.LogRecord] = []

            def emit(self, record: logging.LogRecord) -> None:
                self.records.append(record)

        printed = Printed()
        loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client")]
        for logger in loggers:
            logger.addHandler(printed)
        try:
            with DaskExecutor(address, chunk_max=2) as ex:
                with pytest.raises(ClusterError) as e:
                    grade_all(bank, loaded.submissions, executor=ex, progress=on_progress)
        finally:
            for logger in loggers:
                logger.removeHandler(printed)
        assert "nothing was graded" in e.value.message and "\n" not in e.value.message
        assert [r.getMessage()[:200] for r in printed.records] == []    # the one line is ours alone
        assert sum(seen[1:]) < len(seen) * 2        # it stopped: far from every answer was reported
    finally:
        procs.close()
