"""The throwaway PostgreSQL of the service's tests goes away with the test run, also when the
run is killed from outside (SIGKILL: no fixture teardown runs)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from serve_helpers import require_postgres

HERE = Path(__file__).resolve().parent
CHILD = """
import glob, os, shutil, signal, sys
sys.path.insert(0, sys.argv[1])
from serve_helpers import Postgres
bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
pg = Postgres(os.path.dirname(bins[-1]) if bins else os.path.dirname(shutil.which("initdb")))
pg.start()
print(pg.port, pg.root, pg.bindir, pg.user or "", flush=True)
os.kill(os.getpid(), signal.SIGKILL)        # a test run killed from outside: no teardown
"""


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def test_a_test_run_killed_from_outside_leaves_no_postgres_server_behind():
    require_postgres()
    child = subprocess.run([sys.executable, "-c", CHILD, str(HERE)], capture_output=True, text=True, timeout=180)
    assert child.returncode == -9, child.stderr
    port_text, root, bindir, user = (child.stdout.split() + [""])[:4]
    port = int(port_text)
    try:
        deadline = time.monotonic() + 60         # the watchdog looks each second
        while time.monotonic() < deadline and (_listening(port) or os.path.exists(root)):
            time.sleep(0.5)
        assert not _listening(port), "the killed run's PostgreSQL server still runs"
        assert not os.path.exists(root), "the killed run's PostgreSQL folder is still there"
    finally:       # whatever the verdict, nothing of this test is left running
        if os.path.exists(os.path.join(root, "data")):
            cmd = [os.path.join(bindir, "pg_ctl"), "-D", os.path.join(root, "data"), "-m", "immediate", "-w", "stop"]
            subprocess.run(["runuser", "-u", user, "--", *cmd] if user else cmd, capture_output=True, timeout=120)
            shutil.rmtree(root, ignore_errors=True)
