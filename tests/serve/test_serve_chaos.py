"""Issue #26's chaos test: 16 learners submit for a bounded time while the server is SIGKILLed
three times (restarted on the same database each time), a grading worker is killed and a code
job's process is killed. Afterwards every submission answered 2xx is stored and graded exactly
once (its own score, its own answers, none twice), nothing is left ``received``, every job is
done or failed (never lost, never queued or running) and a done job stored one submission, a
failed one none; and no process of a killed server is left behind.

The same with two `grader serve` instances on one PostgreSQL database, one of them killed: the
learners on it go to the other one (as a proxy would) and come back.

Bounded: about 20 s of load between the kills, plus the server's starts (~15 s each on a
loaded 2-core machine) and at most 90 s to settle."""
from __future__ import annotations

import os
import signal
import threading
import time

import httpx
import psutil
import pytest
from sqlalchemy import func, select

from serve_helpers import LiveServer, make_bank, stored_submissions, users

LEARNERS = [f"chaos-{i:02d}" for i in range(16)]
ANSWERS = [{"17-08/practice-1": 64}, {"17-08/params-formula": "4d^2 + 4d", "17-08/quiz-3": "B"},
           {"17-08/example-1.q_i_shape": [128, 64], "17-08/crossover": "n > 2d", "17-08/practice-1": "65"}]
SCORES = [1, 2, 3]       # by hand: 64 right; the formula right and B wrong; the shape and the relation right
CODE = b"import time\ntime.sleep(1.5)\n\ndef add(a, b):\n    return a + b\n"      # 4 points: both tests pass
N_JOBS = 4
GRACE_S = 5.0            # how long a killed server's processes may take to go


def _session(sid: int) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid:
                found.append(p)
        except (ProcessLookupError, PermissionError, psutil.Error):
            pass
    return found


class Server(LiveServer):
    def sigkill(self) -> list[str]:
        """SIGKILL the server's main process only (as the OOM killer or `kill -9` would); what is
        left of its session after GRACE_S (its command lines) is recorded, then removed."""
        pid = self.proc.pid
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        deadline = time.monotonic() + GRACE_S
        while _session(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = []
        for p in _session(pid):
            try:
                left.append(" ".join(p.cmdline())[:120])
            except psutil.Error:
                pass
        self._reap_group()
        return left

    def processes(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)


def _forked(server: Server) -> set[int]:
    """The processes the server forked through its fork server (the grading workers; later, job
    processes too)."""
    found = set()
    for p in server.processes():
        try:
            parent = p.parent()
            if parent and "forkserver" in " ".join(parent.cmdline()):
                found.add(p.pid)
        except psutil.Error:        # gone meanwhile (a worker replaced)
            pass
    return found


def _learner(urls, token, name, acked, errors, stop):
    """Submits one after another; a request cut by a kill (or refused while the server is busy)
    is sent again with the same Idempotency-Key, to the other instance where there is one."""
    at = LEARNERS.index(name) % len(urls)
    clients = [httpx.Client(base_url=u, timeout=30, headers={"Authorization": f"Bearer {token}"}) for u in urls]
    try:
        i = 0
        while not stop.is_set() and i < 10_000:
            key, which = f"{name}-{i}", i % 3
            while not stop.is_set():
                try:
                    r = clients[at].post("/api/v1/submissions", json={"answers": ANSWERS[which]},
                                         headers={"Idempotency-Key": key})
                except httpx.TransportError:
                    errors.append(key)
                    at = (at + 1) % len(urls)
                    time.sleep(0.2)
                    continue
                if r.status_code in (200, 201):
                    acked[key] = (r.json()["id"], which)
                    break
                errors.append((key, r.status_code))
                time.sleep(0.2)
            i += 1
    finally:
        for c in clients:
            c.close()


def _operator_reads(database: str) -> None:
    """Another process reads the database while the server runs (as `grader users list` or a
    report would): it must not take away what the server wrote (an -shm or -wal made anew)."""
    from grader.db import Database
    from grader.db.models import Submission
    db = Database(database)
    try:
        with db.read() as conn:
            conn.execute(select(func.count()).select_from(Submission)).scalar_one()
    finally:
        db.dispose()


def _wait_for(cond, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module", params=["sqlite", "postgresql-two-instances"])
def chaos(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"chaos-{request.param}")
    bank = make_bank(tmp)
    two = request.param != "sqlite"
    database = (request.getfixturevalue("postgres").new_database() if two else f"sqlite:///{tmp / 'grader.db'}")
    tokens = users(database, coder="learner", **{name: "learner" for name in LEARNERS})
    victim = Server(database, bank, tmp, "--rate", "0").start()
    servers = [victim]
    if two:
        (tmp / "b").mkdir()
        servers.append(Server(database, bank, tmp / "b", "--rate", "0").start())
    urls = [s.url for s in servers]
    acked, errors, left, stop = {}, [], [], threading.Event()
    threads = [threading.Thread(target=_learner, args=(urls, tokens[n], n, acked, errors, stop), daemon=True)
               for n in LEARNERS]
    jobs: list[str] = []
    killed = {"worker": None, "job": None}
    try:
        workers = _forked(victim)
        for t in threads:
            t.start()
        _wait_for(lambda: len(acked) >= 50, 60)
        worker = next(iter(workers))
        os.kill(worker, signal.SIGKILL)                 # a grading worker, mid-load
        killed["worker"] = worker
        time.sleep(2)
        with httpx.Client(base_url=victim.url, timeout=60,
                          headers={"Authorization": f"Bearer {tokens['coder']}"}) as c:
            for _ in range(N_JOBS):
                r = c.post("/api/v1/code-submissions", files={"file": ("add.py", CODE)},
                           data={"problem": "17-08/code-add"})
                assert r.status_code == 202, r.text
                jobs.append(r.json()["id"])
        graders = _forked(victim)

        def kill_a_job() -> bool:                       # a code job's process, mid-job (one that
            for pid in sorted(_forked(victim) - graders - workers, reverse=True):   # ends first is passed over)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed["job"] = pid
                return True
            return False
        _wait_for(kill_a_job, 60)
        time.sleep(1)
        for _ in range(3):                              # SIGKILL the server (mid-job the first time)
            _wait_for(lambda: False, 3)
            left.append(victim.sigkill())
            time.sleep(0.5)
            victim.start()
        time.sleep(3)
    except BaseException:
        for s in servers:          # a step that failed leaves no server behind
            s.stop()
        raise
    finally:
        stop.set()
        print(f"chaos {request.param}: killed {killed}; left after each SIGKILL: {left}")
        for t in threads:
            t.join(timeout=60)
    try:
        settled = _settled(servers[-1].url, tokens["coder"], jobs)
    finally:
        for s in servers:
            s.stop()
    # the database is read once the servers are stopped (see test_another_process_reading_...)
    yield {"database": database, "acked": acked, "errors": errors, "left": left, "jobs": jobs, "killed": killed,
           "settled": settled, "alive": [t for t in threads if t.is_alive()]}


def _settled(url: str, coder: str, jobs: list[str], seconds: float = 90) -> bool:
    """Waits (through the API) until every job is done or failed. (A submission left ``received``
    by a kill is graded by the next start, before it answers /healthz; the test checks none is
    left, in the database once the servers have stopped.)"""
    def quiet() -> bool:
        with httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {coder}"}) as c:
            states = [c.get(f"/api/v1/jobs/{j}").json().get("status") for j in jobs]
        return all(s in ("done", "failed") for s in states)
    return _wait_for(quiet, seconds)


def test_every_acknowledged_submission_is_stored_and_graded_exactly_once(chaos):
    assert chaos["alive"] == []
    assert chaos["killed"]["worker"] and len(chaos["left"]) == 3
    assert any(isinstance(e, str) for e in chaos["errors"]), "no request was cut by a kill"
    assert len(chaos["acked"]) >= 100
    received, by_key, n_answers = stored_submissions(chaos["database"], LEARNERS)
    assert received == 0, "submissions left received after the settle period"
    missing = set(chaos["acked"]) - set(by_key)
    assert not missing, f"{len(missing)} acknowledged submissions lost: {sorted(missing)[:5]}"
    for key, (sub_id, which) in chaos["acked"].items():
        row = by_key[key]
        assert row.id == sub_id and row.status == "graded", (key, row)
        assert row.score == SCORES[which], (key, row.score)
        assert n_answers[sub_id] == len(ANSWERS[which]), (key, n_answers[sub_id])


def test_no_job_is_lost_or_graded_twice(chaos):
    from grader.db import Database
    from grader.db.models import Answer, Job, Submission, User
    assert len(chaos["jobs"]) == N_JOBS and chaos["killed"]["job"], chaos["killed"]
    assert chaos["settled"], "the jobs did not finish within the settle period"
    db = Database(chaos["database"])
    try:
        with db.read() as conn:
            jobs = {r.id: r for r in conn.execute(select(Job.id, Job.status, Job.error, Job.result)
                                                  .where(Job.id.in_(chaos["jobs"])))}
            code = conn.execute(select(Submission.id, Answer.result)
                                .join(Answer, Answer.submission_id == Submission.id)
                                .join(User, User.id == Submission.user_id)
                                .where(User.login == "coder", Submission.source == "code")).all()
    finally:
        db.dispose()
    assert set(jobs) == set(chaos["jobs"])
    per_job: dict[str, int] = {}
    for _, result in code:
        jid = (result or {}).get("job_id")
        per_job[jid] = per_job.get(jid, 0) + 1
    for jid, job in jobs.items():
        assert job.status in ("done", "failed"), (jid, job.status)
        if job.status == "done":
            assert per_job.get(jid) == 1, f"job {jid} stored {per_job.get(jid, 0)} submissions"
            assert job.result["score"] == 4
        else:
            assert per_job.get(jid) is None and job.error, (jid, job.error)
    assert sum(per_job.values()) == len(code) and set(per_job) <= set(jobs)


def test_no_process_of_a_killed_server_is_left(chaos):
    assert chaos["left"] == [[], [], []], chaos["left"]


def test_another_process_reading_the_database_loses_no_acknowledged_submission(tmp_path):
    """The chaos test's reads come while the server is busy (a transaction's lock keeps the -wal);
    here the server is idle when an operator's command reads the SQLite file, as `grader users
    list` would: a submission acknowledged after that read is still there after a SIGKILL."""
    bank = make_bank(tmp_path)
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    tokens = users(database, alice="learner")
    server = Server(database, bank, tmp_path, "--rate", "0").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60,
                          headers={"Authorization": f"Bearer {tokens['alice']}"}) as c:
            assert c.post("/api/v1/submissions", json={"answers": ANSWERS[0]}).status_code == 201
            _operator_reads(database)
            r = c.post("/api/v1/submissions", json={"answers": ANSWERS[0]})
            assert r.status_code == 201
            server.sigkill()
            server.start()
            again = c.get(f"/api/v1/submissions/{r.json()['id']}")
        assert again.status_code == 200 and again.json()["score"] == SCORES[0], again.text
    finally:
        server.stop()

