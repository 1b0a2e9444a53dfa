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


def test_under_scheduler_the_sandbox_named_is_the_workers(tmp_path, monkeypatch):
    """The workers of ``local:1`` are told (through their environment) to use the weak sandbox
    only; the client is not: a code answer is then refused by the worker, and the one line
    says so, naming the worker, not this machine."""
    pytest.importorskip("distributed")
    from grader.code import code_sandbox
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
