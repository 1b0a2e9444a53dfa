"""`--scheduler ADDR` at the command line: a malformed address is a usage error before anything
is read, connected or started (grade, check-spec, serve), an address nobody listens on is
refused at once in one line, and under `--scheduler` the sandbox named is each worker's, where
code answers run, not the client's."""
from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from grade_helpers import as_json, write

from grader.cli import cli
from grader.cluster import ClusterError
from grader.cluster.connect import parse

# (address, what the one line must say): each a mistake a user makes
MALFORMED = [
    ("foo", "no port"),
    ("127.0.0.1", "no port"),
    ("http://127.0.0.1:8786", "does not speak http://"),
    ("tcp://127.0.0.1:99999", "the port must be 1 to 65535"),
    ("local:0", "N must be 1 to 256"),
    ("local:1000", "N must be 1 to 256"),
    ("local:99999999999999999999", "N must be 1 to 256"),
    ("local:abc", "local:N"),
    ("local", "local:N"),
    ("", "not an address"),
    ("tcp://", "not an address"),
    ("tcp://host:80/path", "not an address"),
]


@pytest.mark.parametrize("address,why", MALFORMED)
def test_a_malformed_address_is_refused_by_parse_naming_what_is_wrong(address, why):
    with pytest.raises(ClusterError) as e:
        parse(address)
    assert why in e.value.message and repr(address) in e.value.message and "\n" not in e.value.message


@pytest.mark.parametrize("address,expected", [
    ("127.0.0.1:8786", ("tcp://127.0.0.1:8786", None)),          # Dask's default transport, said
    ("tcp://scheduler.example.org:8786", ("tcp://scheduler.example.org:8786", None)),
    ("tls://10.0.0.5:8786", ("tls://10.0.0.5:8786", None)),
    ("[::1]:8786", ("tcp://[::1]:8786", None)),
    (" local:4 ", ("local", 4)),
])
def test_a_well_formed_address_is_read(address, expected):
    assert parse(address) == expected


@pytest.mark.parametrize("command", [
    ["grade", "docs/examples/class"],
    ["check-spec", "--only", "s-4-*"],
    ["serve", "--database", "sqlite:///{tmp}/never.db"],
])
@pytest.mark.parametrize("address,why", [("foo", "no port"), ("local:0", "N must be 1 to 256"), ("", "not an address")])
def test_each_command_refuses_a_malformed_address_before_it_starts(command, address, why, tmp_path, monkeypatch):
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[1])
    argv = [a.format(tmp=tmp_path) for a in command] + ["--scheduler", address]
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert why in r.stderr and "Traceback" not in r.output and r.stdout == ""
    assert not (tmp_path / "never.db").exists()        # serve: refused before the database is made


def test_a_refused_connection_is_said_at_once_in_one_line(tmp_path):
    answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/practice-1: 64}\n")
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r, _ = as_json("--scheduler", f"127.0.0.1:{port}", answers)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "connection was refused" in r.stderr
    assert r.stderr.count(str(port)) == 1          # the address named once, not three times


def test_a_refused_cluster_leaves_the_environment_as_it_found_it(tmp_path, monkeypatch):
    # --allow-weak-sandbox is this run's alone: refused at the start, grade puts it back too
    monkeypatch.delenv("GRADER_ALLOW_WEAK_SANDBOX", raising=False)
    answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/practice-1: 64}\n")
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r, _ = as_json("--allow-weak-sandbox", "--scheduler", f"127.0.0.1:{port}", answers)
    assert r.exit_code == 2 and "connection was refused" in r.stderr
    import os
    assert "GRADER_ALLOW_WEAK_SANDBOX" not in os.environ


def test_a_scheduler_lost_while_waiting_for_a_worker_is_said_as_such(tmp_path):
    # not "no worker joined within 30 s": the scheduler itself went away
    pytest.importorskip("distributed")
    import threading
    from test_cluster import DaskProcesses
    from grader.cluster.connect import connect
    procs = DaskProcesses(tmp_path)
    try:
        address = procs.scheduler()
        killer = threading.Timer(3.0, procs.stop, args=("scheduler",), kwargs={"kill": True})
        killer.start()
        try:
            with pytest.raises(ClusterError) as e:
                connect(address, workers_s=60.0)
        finally:
            killer.cancel()
        assert "scheduler" not in procs.procs       # killed while connect waited for a worker
        assert e.value.message.startswith(f"lost the Dask scheduler at {address} while waiting for a worker")
        assert "\n" not in e.value.message
    finally:
        procs.close()


def test_under_scheduler_the_sandbox_named_is_the_workers(tmp_path, monkeypatch):
    """The workers of ``local:1`` are told (through their environment) to use the weak sandbox
    only; the client is not: a code answer is then refused by the worker, and the one line
    says so, naming the worker, not this machine."""
    pytest.importorskip("distributed")
    from grader.code.grade import code_sandbox
    if not code_sandbox(allow_weak=True).usable:
        pytest.skip("no sandbox at all here")
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    (tmp_path / "right.py").write_bytes((root / "exercises/17-08/code/solution.py").read_bytes())
    answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/code-mha: right.py}\n")
    monkeypatch.setenv("GRADER_SANDBOX", "rlimits")     # the LocalCluster's workers inherit it
    monkeypatch.delenv("GRADER_ALLOW_WEAK_SANDBOX", raising=False)
    r, out = as_json("--scheduler", "local:1", answers)
    assert r.exit_code == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "sandbox" in ln]
    assert len(lines) == 1 and lines[0].startswith("error: on worker tcp://127.0.0.1:"), r.stderr
    assert "--allow-weak-sandbox" in lines[0]
    result = out["submissions"][0]["results"][0]
    assert result["correct"] is not True and "sandbox" in result["feedback"]     # refused by the worker


class Listener:
    """A TCP listener on 127.0.0.1 that is not a Dask scheduler: ``silent`` holds each connection
    and says nothing; ``garbage`` sends bytes no scheduler sends, then closes. Each connection is
    closed at the latest when the listener stops (a context manager, bounded to ``BOUND_S``)."""

    BOUND_S = 60.0

    def __init__(self, kind: str) -> None:
        import threading
        self.kind = kind
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        import time
        held = []
        deadline = time.monotonic() + self.BOUND_S
        try:
            while not self.stop.is_set() and time.monotonic() < deadline:
                try:
                    conn, _ = self.server.accept()
                except socket.timeout:
                    continue
                if self.kind == "garbage":
                    conn.sendall(b"not a dask scheduler\n" * 100)
                    conn.close()
                else:
                    held.append(conn)
        finally:
            for conn in held:
                conn.close()
            self.server.close()

    def __enter__(self) -> "Listener":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.mark.parametrize("kind,connect_s,says", [
    # Dask's client alone would wait for the scheduler's greeting without end
    ("silent", 1.0, "does not answer as a Dask scheduler"),
    # Dask's client alone: a MemoryError (its first frame's length read from the bytes)
    ("garbage", 5.0, "nothing was graded"),
])
def test_a_listener_that_is_no_dask_scheduler_is_refused_in_one_line(kind, connect_s, says):
    pytest.importorskip("distributed")
    from grader.cluster.connect import connect
    with Listener(kind) as listener:
        with pytest.raises(ClusterError) as e:
            connect(f"tcp://127.0.0.1:{listener.port}", connect_s=connect_s)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{listener.port}" in e.value.message
    assert says in e.value.message and "\n" not in e.value.message


@pytest.mark.parametrize("scheme", ["tls", "ucx"])
def test_a_transport_that_dask_cannot_use_here_is_refused_in_one_line(scheme, tmp_path):
    pytest.importorskip("distributed")
    from distributed.comm import registry
    from distributed.security import Security
    if scheme == "tls" and Security().get_connection_args("client").get("ssl_context") is not None:
        pytest.skip("Dask's TLS is configured here")
    if scheme == "ucx":
        try:
            registry.get_backend("ucx").get_connector()
            pytest.skip("Dask's UCX transport is installed here")
        except Exception:  # noqa: BLE001  (the transport cannot connect here: what the test is about)
            pass
    import subprocess
    import sys
    answers = write(tmp_path / "a.yaml", "learner: ann\nanswers: {17-08/practice-1: 64}\n")
    with socket.socket() as s:          # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # a process of its own: what it says up to its exit (Dask's half-made client is cleaned up then)
    r = subprocess.run([sys.executable, "-m", "grader", "grade", "--format", "json", "--scheduler",
                        f"{scheme}://127.0.0.1:{port}", str(answers)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1, r.stderr
    assert f"cannot reach the Dask scheduler at {scheme}://127.0.0.1:{port}" in r.stderr
    assert "nothing was graded" in r.stderr


def test_a_worker_lost_while_it_warms_up_is_said_in_one_line(monkeypatch):
    # the start-up's last step, the workers' warm-up, on a worker that dies meanwhile (as when
    # the scheduler or the worker is stopped while a command starts): one line, nothing graded
    pytest.importorskip("distributed")
    import os
    from grader.cluster import connect as connecting

    def dies() -> None:     # sent by value (a function of this test), run on the worker
        os._exit(1)

    monkeypatch.setattr(connecting, "warm", dies)
    with pytest.raises(ClusterError) as e:
        connecting.connect("local:1")
    assert "local:1" in e.value.message and "nothing was graded" in e.value.message
    assert "\n" not in e.value.message
