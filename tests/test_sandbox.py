"""grader.sandbox: hostile code is stopped with a clear message, leaves nothing behind, and the
caller goes on — on every backend that runs here.

Plain ``python -c`` programs (no torch), small limits: each case takes well under a second
except the time-outs (2 s each). ``backend`` runs a test on bubblewrap and on the ``unshare``
fallback (where they run: see tests/sandbox_helpers.py); the weak ``rlimits`` backend is
tested for what it still holds.
"""
import os
import sys
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import proc as sandbox_proc
from grader.sandbox import GiB, MiB, Limits, python_argv, run, start
from sandbox_helpers import host_state, needs_strong, strong_backends

SMALL = Limits(wall_s=20, cpu_s=5, memory_bytes=1 * GiB, file_bytes=1 * MiB, processes=32)
ROOT = Path(__file__).resolve().parents[1]


def py(code, limits=SMALL, **kw):
    return run([*python_argv(), "-c", code], limits=limits, **kw)


def test_a_plain_program_runs_and_its_output_comes_back():
    r = py("print('hello'); import sys; print('oops', file=sys.stderr)")
    assert r.ok and r.exit_code == 0 and not r.timed_out and r.killed_by is None
    assert r.stdout == "hello\n"
    assert r.stderr == "oops\n"
    assert r.sandbox == sandbox.backend()


def test_exit_code_is_passed_on():
    r = py("import sys; sys.exit(3)")
    assert r.exit_code == 3 and not r.ok
    assert r.message == "exited with code 3"


@strong_backends
def test_runs_as_an_unprivileged_user_of_its_own_without_capabilities(backend):
    r = py("import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups()); "
           "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])", backend=backend)
    uid, euid, gid, groups, cap = r.stdout.split(maxsplit=4)
    assert int(uid) == int(euid) >= sandbox_proc.UID_BASE or int(uid) == sandbox_proc.NOBODY
    assert int(gid) == int(uid)
    assert groups.strip() == "[]" and cap.strip() == "0000000000000000"


def test_wall_clock_time_out_kills_the_whole_process_group():
    # a child that outlives its parent, marked by a sleep length no other process uses
    code = ("import subprocess, time; subprocess.Popen(['sleep', '73.25']); "
            "print('started', flush=True); time.sleep(60)")
    r = py(code, Limits(wall_s=2, cpu_s=5, memory_bytes=GiB))
    assert r.timed_out and r.killed_by == "SIGKILL" and r.exit_code is None
    assert r.limit == "time"
    assert r.message.startswith("time limit of 2 s exceeded")
    assert r.stdout == "started\n"
    assert host_state("73.25")[1] == set(), "a process of the killed group is still running"


def test_cpu_time_limit():
    r = py("while True: pass", Limits(wall_s=30, cpu_s=1, memory_bytes=GiB))
    assert not r.timed_out
    assert r.killed_by in ("SIGXCPU", "SIGKILL")
    assert r.limit == "cpu"
    assert r.message == "CPU time limit of 1 s exceeded"


def test_memory_hog_gets_memory_error():
    r = py("x = bytearray(4 * 1024 ** 3)")
    assert r.exit_code == 1 and "MemoryError" in r.stderr
    assert r.limit == "memory"
    assert r.message == "memory limit of 1 GiB exceeded"


def test_a_10_mb_write_is_stopped_at_the_file_size_limit():
    r = py("f = open('/tmp/big', 'wb')\nfor _ in range(10): f.write(b'x' * 1_000_000); f.flush()")
    assert r.exit_code == 1 and "File too large" in r.stderr
    assert r.limit == "file size"
    assert r.message == "file size limit of 1 MiB exceeded (a file written was too large)"


@pytest.mark.parametrize("backend", ["auto", "fallback", "rlimits"])
def test_fork_bomb_hits_the_process_limit_and_the_next_run_is_fine(backend):
    name = sandbox.choose(None if backend == "auto" else backend)
    # never run a fork bomb where nothing holds it: it would fill the machine's process table
    if name == "rlimits" and not sandbox.fallback_limits_processes():
        pytest.skip(f"no process limit can be enforced here: {sandbox.describe('rlimits')}")
    bomb = "import os\nwhile True:\n    os.fork()"
    r = py(bomb, Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, processes=16), backend=name)
    assert r.limit == "processes" and not r.timed_out
    assert r.message == "process limit of 16 exceeded (too many processes or threads)"
    after = py("print(6 * 7)", backend=name)
    assert after.ok and after.stdout == "42\n"


@pytest.mark.skipif(os.geteuid() != 0 or sandbox.pids_parent() is None,
                    reason="needs root and a writable pids cgroup")
def test_weak_backend_as_root_holds_processes_in_a_pids_cgroup_and_removes_it():
    before = set(sandbox.pids_parent().iterdir())
    r = py("import os, time\nfor _ in range(8):\n    if os.fork() == 0:\n        time.sleep(60)\n"
           "print(open('/proc/self/cgroup').read())",
           Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, processes=16), backend="rlimits")
    assert r.ok, r.stderr
    assert "grader-sandbox-" in r.stdout  # the run was inside its own group
    assert "processes capped by a pids cgroup" in r.sandbox
    assert set(sandbox.pids_parent().iterdir()) == before  # the sleepers were killed, the group removed


@strong_backends
def test_no_network(backend):
    r = py("import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)", backend=backend)
    assert r.exit_code == 1 and "Network is unreachable" in r.stderr
    assert r.limit == "network"
    assert r.message == "network access is not allowed in the sandbox"


@strong_backends
def test_etc_passwd_the_host_folders_and_the_grader_are_not_there(backend):
    paths = ("/etc/passwd", "/etc/shadow", "/root/.ssh", str(Path(__file__).resolve()), str(ROOT), "/home",
             "/var/tmp", str(ROOT / "exercises" / "17-08" / "code" / "solution.py"), sys.prefix)
    r = py(f"import os; print([p for p in {paths!r} if os.path.exists(p)]); open('/etc/passwd').read()",
           backend=backend)
    assert r.stdout == "[]\n"
    assert "No such file or directory: '/etc/passwd'" in r.stderr
    assert r.limit == "files"


@strong_backends
def test_only_torch_and_what_it_needs_can_be_imported(backend):
    code = ("import importlib.util as u, sys, os, site\n"
            "print([m for m in ('torch', 'sympy', 'grader', 'mha', 'pytest', 'mha_checks', 'numpy', 'yaml', 'pip') "
            "if u.find_spec(m)])\n"
            "print([p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))])\n"
            "print(sorted(os.listdir(site.getsitepackages()[0])) if os.path.isdir(site.getsitepackages()[0]) "
            "else 'none')")
    r = py(code, backend=backend)
    assert r.ok, r.stderr
    found, site_dirs, base_site = r.stdout.splitlines()
    assert found == "['torch', 'sympy']"      # torch and its declared dependencies; no grader, mha, pytest
    assert site_dirs == "[]"                  # no site-packages folder on the path: one entry per package
    assert base_site in ("[]", "none")        # the interpreter's own site-packages is an empty folder


@strong_backends
def test_system_files_are_read_only_and_tmp_and_shm_are_private(backend):
    marker = f"grader-sandbox-test-{os.getpid()}"
    host_file = Path("/tmp", f"grader-host-only-{os.getpid()}")
    host_file.write_text("host")
    code = (f"open('/tmp/{marker}', 'w').write('x'); open('/dev/shm/{marker}', 'w').write('x'); import os\n"
            "print(sorted(os.listdir('/tmp')))\n"
            "for p in ('/usr/x', '/x', '/sandbox/site/x', '/grade/x'):\n"
            "    try: open(p, 'w')\n"
            "    except OSError as e: print(type(e).__name__)")
    try:
        r = py(code, backend=backend)
    finally:
        host_file.unlink()
    assert r.ok, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == str([marker])   # a fresh tmpfs: only what the code wrote
    assert all(x in ("OSError", "PermissionError", "FileNotFoundError") for x in lines[1:]) and len(lines) == 5
    assert not Path("/tmp", marker).exists() and not Path("/dev/shm", marker).exists()


@strong_backends
def test_nothing_is_left_behind_and_the_grader_cannot_be_signalled(backend):
    me = os.getpid()
    before = host_state("74.5")
    code = ("import os, subprocess, signal, time\n"
            "for d in ('/tmp', '/var/tmp', '/dev/shm'):\n"
            "    try: open(d + '/grader-dropping', 'w').write('x')\n"
            "    except OSError: pass\n"
            "subprocess.Popen(['setsid', 'sleep', '74.5'], start_new_session=True)\n"
            "if os.fork() == 0:\n"
            "    os.setsid(); time.sleep(120)\n"
            f"try: os.kill({me}, signal.SIGKILL); print('killed?')\n"
            "except OSError as e: print(type(e).__name__)\n"
            "try: os.kill(-1, signal.SIGKILL)\n"
            "except OSError: pass\n")
    r = py(code, backend=backend)
    assert r.stdout in ("ProcessLookupError\n", "PermissionError\n", "ProcessLookupError\n"), r
    assert host_state("74.5") == before


@strong_backends
def test_a_started_process_is_served_through_its_pipes_and_ends_with_everything_it_started(backend):
    read, write = os.pipe()
    code = ("import os, subprocess, sys\n"
            "subprocess.Popen(['sleep', '75.5'])\n"
            "os.write(int(sys.argv[1]), b'ready')\n"
            "import time; time.sleep(60)\n")
    p = start([*python_argv(), "-c", code, str(write)], limits=SMALL, pass_fds=(write,), backend=backend)
    os.close(write)
    try:
        assert os.read(read, 5) == b"ready"
        assert p.alive() and host_state("75.5")[1]
    finally:
        p.close()
        os.close(read)
    assert not p.alive()
    assert host_state("75.5")[1] == set()


def test_output_is_capped():
    r = py("print('x' * 1_000_000)", Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, output_bytes=1000))
    assert r.ok and r.truncated
    assert r.stdout.startswith("x" * 1000) and "cut at 1000 bytes" in r.stdout and len(r.stdout) < 1100


def test_report_pipe_carries_results_out():
    r = py("import os; os.write({fd0}, b'result line')", report_fds=1)
    assert r.ok, r.stderr
    assert r.reports == (b"result line",)


def test_the_weak_backend_says_what_it_does_not_prevent_and_still_limits_time():
    r = py("while True: pass", Limits(wall_s=2, cpu_s=10, memory_bytes=GiB), backend="rlimits")
    assert r.timed_out and r.limit == "time"
    assert r.sandbox.startswith(("rlimits+nobody:", "rlimits only:"))
    assert "/etc/passwd" in r.sandbox and "NOT prevented" in r.sandbox and "shared /tmp" in r.sandbox
    ok = py("print('fine')", backend="rlimits")
    assert ok.ok and ok.stdout == "fine\n"


def test_a_backend_forced_by_the_environment_is_used_or_refused(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "rlimits")
    assert sandbox.choose() == "rlimits"
    monkeypatch.setenv("GRADER_SANDBOX", "docker")
    with pytest.raises(sandbox.SandboxUnavailable, match="no such sandbox backend"):
        sandbox.choose()


@needs_strong
def test_the_unshare_fallback_is_chosen_after_bubblewrap():
    assert sandbox.choose(force_fallback=True) == ("unshare" if sandbox.problem("unshare") is None else "rlimits")


def test_explain_limit_reads_error_texts():
    assert sandbox.explain_limit("MemoryError") == "memory"
    assert sandbox.explain_limit("OSError: [Errno 27] File too large") == "file size"
    assert sandbox.explain_limit("BlockingIOError: [Errno 11] Resource temporarily unavailable") == "processes"
    assert sandbox.explain_limit("OSError: [Errno 101] Network is unreachable") == "network"
    assert sandbox.explain_limit("FileNotFoundError: [Errno 2] No such file or directory: '/etc/passwd'") == "files"
    assert sandbox.explain_limit("AssertionError: values differ") is None


def test_signal_names_are_reported():
    r = py("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert r.killed_by == "SIGSEGV" and r.message == "killed by SIGSEGV"
