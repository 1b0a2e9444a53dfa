"""Issue #26, operations: slow and idle clients are cut off (header and body time-outs, a
connection cap); nothing the server started outlives it (SIGKILL included); an unwritable
database is one line at start and a failing readiness check (and a 503, never a 201) while
running; a second server on one SQLite file is refused; /readyz proves the pipeline and
/metrics counts what fails.

Every wait below is bounded; the bounds are generous (they say "eventually", never "fast")."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from serve_helpers import LiveServer, free_port, make_bank, users

ROOT = Path(__file__).resolve().parents[2]


def _closed_by_server(sock: socket.socket, bound_s: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it stayed open ``bound_s``."""
    got = b""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = sock.recv(4096)
        except socket.timeout:
            return None
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk
    return None


@pytest.fixture
def bank(tmp_path):
    return make_bank(tmp_path)


# ------------------------------------------------------------------ slow and idle clients

def test_clients_that_never_finish_their_headers_are_cut_off(tmp_path, bank):
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    users(database, alice="learner")
    server = LiveServer(database, bank, tmp_path, "--rate", "0", "--header-timeout", "2",
                        "--max-connections", "200").start()
    socks: list[socket.socket] = []
    try:
        for _ in range(50):     # slowloris: a request line and one header, never the blank line
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        dribbler = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        dribbler.sendall(b"GET /healthz HTTP/1.1\r\n")
        # an honest request meanwhile is answered
        assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200
        # the dribbler sends a header byte every 0.25 s: activity does not extend the header time-out
        answer = None
        for _ in range(200):                   # at most 200 * 0.25 = 50 s
            try:
                dribbler.sendall(b"X")
            except OSError:
                break
            answer = _closed_by_server(dribbler, 0.25)
            if answer is not None:
                break
        assert answer is not None and (answer == b"" or answer.startswith(b"HTTP/1.1 408")), answer
        # each of the 50 is closed by the server (2 s time-out; 60 s is the generous bound)
        answers = [_closed_by_server(s, 60) for s in socks]
        assert all(a is not None for a in answers), f"{sum(a is None for a in answers)} still open"
        assert all(a.startswith(b"HTTP/1.1 408") for a in answers if a), answers[:3]
        assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200
    finally:
        for s in socks:
            s.close()
        server.stop()


def test_a_body_that_never_arrives_is_a_408(tmp_path, bank):
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    token = users(database, alice="learner")["alice"]
    server = LiveServer(database, bank, tmp_path, "--rate", "0", "--body-timeout", "2").start()
    try:
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        with s:
            s.sendall(b"POST /api/v1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"answers\":")
            answer = _closed_by_server(s, 60)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408"), answer
        r = httpx.post(server.url + "/api/v1/submissions", json={"answers": {"17-08/practice-1": 64}},
                       headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert r.status_code == 201, r.text          # the service goes on
        assert "Traceback" not in server.log.read_text()     # a client gone is not an internal error
    finally:
        server.stop()


def test_connections_past_the_cap_are_refused(tmp_path, bank):
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    users(database)
    server = LiveServer(database, bank, tmp_path, "--max-connections", "5", "--header-timeout", "60").start()
    idle = []
    try:
        for _ in range(5):
            idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        status = None
        for _ in range(50):         # the server accepts the 5 (bounded: 50 tries, 0.2 s apart)
            try:
                status = httpx.get(server.url + "/healthz", timeout=10).status_code
            except httpx.TransportError:
                status = "closed"
            if status != 200:
                break
            time.sleep(0.2)
        assert status in (503, "closed"), status
        for s in idle:
            s.close()
        for _ in range(50):
            with contextlib.suppress(httpx.TransportError):
                status = httpx.get(server.url + "/healthz", timeout=10).status_code
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200
        # an endless header section, sent fast: cut at 64 KiB (431), not by the 60 s header time-out
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as big:
            big.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            with contextlib.suppress(OSError):
                for _ in range(64):             # 64 * 4 KiB = 256 KiB at most
                    big.sendall(b"a" * 4096)
            answer = _closed_by_server(big, 30)
        # closed (a reset may swallow the 431: the server closed with unread bytes)
        assert answer is not None and (answer == b"" or answer.startswith(b"HTTP/1.1 431")), answer
    finally:
        server.stop()


# ------------------------------------------------------------------ no orphans

def _descendants(pid: int) -> list:
    import psutil
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_a_sigkilled_server_leaves_no_process(tmp_path, bank):
    psutil = pytest.importorskip("psutil")
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    token = users(database, coder="learner")["coder"]
    server = LiveServer(database, bank, tmp_path, "--rate", "0", "--workers", "1").start()
    procs = []
    try:
        with httpx.Client(base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as c:
            job = c.post("/api/v1/code-submissions", files={"file": ("add.py", b"def add(a, b):\n    return a + b\n")},
                         data={"problem": "17-08/code-add"})
            assert job.status_code == 202, job.text
            for _ in range(600):        # the job process, the code runner, the sandbox: started by now
                status = c.get(f"/api/v1/jobs/{job.json()['id']}").json()["status"]
                if status in ("done", "failed"):
                    break
                time.sleep(0.2)
            assert status == "done"
        procs = _descendants(server.proc.pid)
        names = " ".join(" ".join(p.cmdline()) for p in procs)
        assert "forkserver" in names and "grader.code.runner" in names, names   # what is checked below
        server.proc.send_signal(signal.SIGKILL)        # the server alone (not its session)
        server.proc.wait(timeout=30)
        survivors = procs
        for _ in range(100):                            # at most 20 s
            survivors = [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
            if not survivors:
                break
            time.sleep(0.2)
        assert not survivors, "left alive: " + "; ".join(f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in survivors)
    finally:
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
        server.kill()


# ------------------------------------------------------------------ the database

def _grader(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def test_a_second_server_on_one_sqlite_file_is_refused(tmp_path, bank):
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    users(database)
    server = LiveServer(database, bank, tmp_path).start()
    try:
        r = _grader("serve", "--database", database, "--port", str(free_port()), "--exercises", str(bank),
                    cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "another grader serve" in lines[0] and "PostgreSQL" in lines[0], r.stderr
        assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200     # the first goes on
    finally:
        server.stop()


@contextlib.contextmanager
def immutable(path: Path):
    """``chattr +i``: even root cannot write it (root ignores chmod). Skips where unsupported."""
    chattr = shutil.which("chattr")
    if not chattr or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (it needs e2fsprogs and a filesystem with attributes)")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], capture_output=True)


def test_an_unwritable_database_at_start_is_one_line_and_exit_2(tmp_path, bank):
    path = tmp_path / "grader.db"
    users(f"sqlite:///{path}")
    with immutable(path):
        r = _grader("serve", "--database", str(path), "--port", str(free_port()), "--exercises", str(bank),
                    cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be written" in lines[0] and str(path) in lines[0], r.stderr
    folder = tmp_path / "ro"
    folder.mkdir()
    with immutable(folder):         # a folder where the file (and its -wal, -shm) cannot be made
        r = _grader("serve", "--database", str(folder / "new.db"), "--port", str(free_port()),
                    "--exercises", str(bank), cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot" in lines[0] and str(folder) in lines[0], r.stderr


@pytest.fixture
def app_client(tmp_path, bank):
    """The application in this process (its workers in their own), readiness within 3 s."""
    from fastapi.testclient import TestClient
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    tokens = users(database, alice="learner")
    app = create_app(Settings(database=database, exercises=str(bank), workers=1, ready_timeout_s=3.0, rate=0))
    with TestClient(app, raise_server_exceptions=False) as client:   # a 503 of the handler, as served
        client.headers["Authorization"] = f"Bearer {tokens['alice']}"
        yield app, client, tmp_path / "grader.db"


def _ready(client, want: int):
    """/readyz until it answers ``want`` (its answer is reused for a second): at most 30 tries."""
    r = None
    for _ in range(30):
        r = client.get("/readyz")
        if r.status_code == want:
            return r
        time.sleep(0.5)
    raise AssertionError(f"/readyz never answered {want}: {r.status_code} {r.text}")


def test_readiness_and_submissions_when_the_database_cannot_be_written(app_client):
    app, client, path = app_client
    assert _ready(client, 200).json() == {"status": "ready", "reasons": [], "canary_s": pytest.approx(0, abs=3)}
    with immutable(path):
        r = _ready(client, 503)
        assert any("cannot be written" in why for why in r.json()["reasons"]), r.json()
        s = client.post("/api/v1/submissions", json={"answers": {"17-08/practice-1": 64}})
        assert s.status_code == 503, s.text            # never a 201 that is not stored
    _ready(client, 200)
    s = client.post("/api/v1/submissions", json={"answers": {"17-08/practice-1": 64}})
    assert s.status_code == 201, s.text


def test_readiness_fails_while_the_dispatcher_is_stuck_and_names_why(app_client):
    app, client, _ = app_client
    pool = app.state.grader.pool
    _ready(client, 200)
    step = pool._step
    pool._step = lambda: time.sleep(0.05)       # the dispatcher hands nothing over (as issue #26's item 1)
    try:
        r = _ready(client, 503)
        assert any("canary answer was not graded" in why for why in r.json()["reasons"]), r.json()
        assert "grader_ready 0.0" in client.get("/metrics").text
    finally:
        del pool._step
    _ready(client, 200)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")     # the SystemExit below
def test_metrics_count_failed_jobs_and_tasks_and_dispatcher_restarts(app_client):
    from sqlalchemy import insert, select
    from grader.db.models import Job, User
    from grader.serve.jobs import MAX_TRIES
    from grader.serve.workers import TaskFailed

    def value(name: str) -> float:
        for line in client.get("/metrics").text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return 0.0

    app, client, _ = app_client
    st = app.state.grader
    assert value('grader_jobs_failed_total{kind="batch"}') == 0
    assert value('grader_workers_alive{pool="grading"}') == 1
    with st.db.write() as conn:     # a job started MAX_TRIES times already: the runner fails it
        uid = conn.execute(select(User.id).where(User.login == "alice")).scalar_one()
        conn.execute(insert(Job).values(id="j-failing", kind="batch", user_id=uid, status="queued",
                                        tries=MAX_TRIES, params={}))
    st.runner.wake()
    for _ in range(100):
        if value('grader_jobs_failed_total{kind="batch"}') == 1:
            break
        time.sleep(0.2)
    assert value('grader_jobs_failed_total{kind="batch"}') == 1
    assert value('grader_jobs_finished_total{kind="batch",status="failed"}') == 1
    # a grading task that cannot be handed to a worker (too deep to pickle) fails alone: counted
    deep: object = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(TaskFailed):
        st.pool.submit(("validate", "17-08/practice-1", deep), 10).result(timeout=30)
    assert value('grader_grading_tasks_failed_total{reason="error"}') == 1
    # the dispatcher thread ended (anything not an Exception): started again on the next task, counted
    assert value("grader_dispatcher_restarts_total") == 0
    pool = st.pool
    pool._step = lambda: (_ for _ in ()).throw(SystemExit)     # ends the thread
    for _ in range(100):
        if not pool.dispatcher_alive:
            break
        time.sleep(0.05)
    del pool._step
    assert not pool.dispatcher_alive
    assert pool.submit(("validate", "17-08/practice-1", "64"), 10).result(timeout=30)["ok"] is True
    assert value("grader_dispatcher_restarts_total") == 1
    _ready(client, 200)
