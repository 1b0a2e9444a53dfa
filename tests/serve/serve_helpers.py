"""Helpers of the service's tests: a live `grader serve` process (real uvicorn on 127.0.0.1),
a throwaway PostgreSQL cluster (initdb + pg_ctl, as the ``postgres`` user when run as root),
a bank with attempts and a small code exercise, accounts."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIRE_PG = os.environ.get("GRADER_TEST_POSTGRES", "").lower() == "require"

CODE_TESTS = '''def test_add(solution):
    assert solution.add(2, 3) == 5


def test_add_negative(solution):
    assert solution.add(-2, 2) == 0
'''
CODE_BANK = '''subject: 17-08
problems:
  - id: 17-08/code-add
    prompt: "Write add(a, b): the sum of two numbers."
    kind: code
    points: 4
    tests: add/
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_bank(folder: Path) -> Path:
    """The bundled bank, with ``attempts: 2`` on quiz-1 and a small code exercise (no torch)."""
    bank = folder / "exercises"
    shutil.copytree(ROOT / "exercises" / "17-08", bank / "17-08", ignore=shutil.ignore_patterns("__pycache__"))
    quiz = bank / "17-08" / "04-quiz.yaml"
    text = quiz.read_text()
    marker = "  - id: 17-08/quiz-1\n"
    assert marker in text
    quiz.write_text(text.replace(marker, marker + "    attempts: 2\n", 1))
    (bank / "17-08" / "07-serve-code.yaml").write_text(CODE_BANK)
    (bank / "17-08" / "add").mkdir()
    (bank / "17-08" / "add" / "test_add.py").write_text(CODE_TESTS)
    return bank


# ------------------------------------------------------------------ PostgreSQL

# A test run killed from outside runs no teardown: this process, started with the server, stops
# it and removes its folder when the run's process is gone (checked each second; bounded in time).
WATCHDOG = """
import os, shutil, subprocess, sys, time
pid, deadline, root, stop = int(sys.argv[1]), time.monotonic() + float(sys.argv[2]), sys.argv[3], sys.argv[4:]
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    time.sleep(1.0)
subprocess.run(stop, capture_output=True, timeout=120)
shutil.rmtree(root, ignore_errors=True)
"""
WATCHDOG_S = 6 * 3600.0     # longer than any test run (CI's is 90 minutes)


class Postgres:
    def __init__(self, bindir: str):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="grader-pg-"))
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            shutil.chown(self.root, self.user)
        self.n = 0
        self.watchdog = None

    def _cmd(self, *argv):
        cmd = [os.path.join(self.bindir, argv[0]), *argv[1:]]
        return ["runuser", "-u", self.user, "--", *cmd] if self.user else cmd

    def _run(self, *argv, check=True):
        return subprocess.run(self._cmd(*argv), capture_output=True, text=True, check=check, timeout=120,
                              cwd=self.root)

    def _stop_command(self):
        return self._cmd("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")

    def start(self):
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        opts = f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 -c max_connections=200"
        self.watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(WATCHDOG_S),
                                          str(self.root), *self._stop_command()],
                                         start_new_session=True, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._run("pg_ctl", "-D", str(data), "-o", opts, "-l", str(self.root / "log"), "-w", "-t", "60", "start")

    def stop(self):
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait(timeout=30)
        subprocess.run(self._stop_command(), capture_output=True, text=True, timeout=120, cwd=self.root)
        shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self) -> str:
        import psycopg
        self.n += 1
        name = f"grader_test_{self.n}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"


def require_postgres() -> None:
    """Skip the test where PostgreSQL cannot run here, or fail it under GRADER_TEST_POSTGRES=require (CI)."""
    import pytest
    why = pg_unavailable()
    if why:
        if REQUIRE_PG:
            pytest.fail(f"GRADER_TEST_POSTGRES=require, but {why}")
        pytest.skip(why)


def pg_unavailable() -> str | None:
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins and not shutil.which("initdb"):
        return "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser to start PostgreSQL as its own user"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed"
    return None


# ------------------------------------------------------------------ the live server

class LiveServer:
    """`python -m grader serve` in a process of its own (its own session, so that everything it
    started can be killed with it)."""

    def __init__(self, database: str, bank: Path, workdir: Path, *args: str):
        self.database, self.bank, self.workdir, self.args = database, bank, workdir, args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.log = workdir / "serve.log"

    def start(self, wait_s: float = 120.0) -> "LiveServer":
        import httpx
        argv = [sys.executable, "-m", "grader", "serve", "--database", self.database, "--port", str(self.port),
                "--exercises", str(self.bank), *self.args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(argv, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"grader serve exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"grader serve did not start in {wait_s:g} s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the server process, then whatever it left in its session."""
        if self.proc is None:
            return
        try:
            self.proc.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self._reap_group()

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._reap_group()

    def _reap_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc = None


def users(database: str, **people) -> dict:
    """Accounts made with grader.serve.accounts: {login: token}; ``role`` per login."""
    from grader.db import Database
    from grader.serve.accounts import add_user
    db = Database(database)
    db.ensure_schema()
    try:
        return {login: add_user(db, login, role).token for login, role in people.items()}
    finally:
        db.dispose()


def stored_submissions(database: str, logins) -> tuple[int, dict, dict]:
    """What the database holds for these learners: (submissions still ``received``, their
    submissions by idempotency key (a key stored twice fails the test), answers per submission)."""
    from sqlalchemy import func, select
    from grader.db import Database
    from grader.db.models import Answer, Submission, User
    db = Database(database)
    try:
        with db.read() as conn:
            received = conn.execute(select(func.count()).select_from(Submission)
                                    .where(Submission.status == "received")).scalar_one()
            rows = conn.execute(select(Submission.id, Submission.idempotency_key, Submission.score,
                                       Submission.status, User.login)
                                .join(User, User.id == Submission.user_id).where(User.login.in_(list(logins)))).all()
            n_answers = dict(conn.execute(select(Answer.submission_id, func.count())
                                          .group_by(Answer.submission_id)).all())
    finally:
        db.dispose()
    by_key: dict = {}
    for row in rows:
        assert row.idempotency_key not in by_key, f"{row.idempotency_key} stored twice"
        by_key[row.idempotency_key] = row
    return received, by_key, n_answers
