"""grader.sandbox: hostile code is stopped with a clear message, and the caller goes on.

Plain ``python -c`` programs (no torch), small limits: each case takes well under a second
except the time-outs (2 s each).
"""
import os
import sys
from pathlib import Path

import pytest

from grader import sandbox
from grader.sandbox import GiB, MiB, Limits, run

BWRAP = sandbox.backend() == "bubblewrap"
needs_bwrap = pytest.mark.skipif(not BWRAP, reason=f"bubblewrap does not run here: {sandbox.backend()}")
SMALL = Limits(wall_s=20, cpu_s=5, memory_bytes=1 * GiB, file_bytes=1 * MiB, processes=32)
PY = sys.executable


def py(code, limits=SMALL, **kw):
    return run([PY, "-c", code], limits=limits, **kw)


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


@needs_bwrap
def test_runs_as_an_unprivileged_user_without_capabilities():
    r = py("import os; print(os.getuid(), os.geteuid(), os.getgid(), os.getgroups()); "
           "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])")
    uid, euid, gid, groups, cap = r.stdout.split(maxsplit=4)
    assert int(uid) == int(euid) >= sandbox.UID_BASE or int(uid) == sandbox.NOBODY
    assert int(gid) != 0
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
    left = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and b"73.25" in (p / "cmdline").read_bytes():
                left.append(p.name)
        except OSError:
            pass
    assert left == [], "a process of the killed group is still running"


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


@pytest.mark.parametrize("force_fallback", [False, True], ids=["default", "fallback"])
def test_fork_bomb_hits_the_process_limit_and_the_next_run_is_fine(force_fallback):
    # never run a fork bomb where nothing holds it: it would fill the machine's process table
    if not sandbox.limits_processes(force_fallback):
        pytest.skip(f"no process limit can be enforced here: {sandbox._fallback_description()}")
    bomb = "import os\nwhile True:\n    os.fork()"
    r = py(bomb, Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, processes=16), force_fallback=force_fallback)
    assert r.limit == "processes" and not r.timed_out
    assert r.message == "process limit of 16 exceeded (too many processes or threads)"
    after = py("print(6 * 7)", force_fallback=force_fallback)
    assert after.ok and after.stdout == "42\n"


@pytest.mark.skipif(os.geteuid() != 0 or sandbox.pids_parent() is None,
                    reason="needs root and a writable pids cgroup")
def test_fallback_as_root_holds_processes_in_a_pids_cgroup_and_removes_it():
    before = set(sandbox.pids_parent().iterdir())
    r = py("import os, time\nfor _ in range(8):\n    if os.fork() == 0:\n        time.sleep(60)\n"
           "print(open('/proc/self/cgroup').read())",
           Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, processes=16), force_fallback=True)
    assert r.ok, r.stderr
    assert "grader-sandbox-" in r.stdout  # the run was inside its own group
    assert "processes capped by a pids cgroup" in r.sandbox
    assert set(sandbox.pids_parent().iterdir()) == before  # the sleepers were killed, the group removed


@needs_bwrap
def test_no_network():
    r = py("import socket; socket.create_connection(('1.1.1.1', 80), timeout=3)")
    assert r.exit_code == 1 and "Network is unreachable" in r.stderr
    assert r.limit == "network"
    assert r.message == "network access is not allowed in the sandbox"


@needs_bwrap
def test_etc_passwd_and_the_host_folders_are_not_there():
    r = py("import os; print([os.path.exists(p) for p in ('/etc/passwd', '/etc/shadow', '/root/.ssh', "
           f"{str(Path(__file__).resolve())!r}, '/work/shared', '/home')]); open('/etc/passwd').read()")
    assert r.stdout == "[False, False, False, False, False, False]\n"
    assert "No such file or directory: '/etc/passwd'" in r.stderr
    assert r.limit == "files"


@needs_bwrap
def test_system_files_are_read_only_and_tmp_is_private():
    marker = f"grader-sandbox-test-{os.getpid()}"
    host_file = Path("/tmp", f"grader-host-only-{os.getpid()}")
    host_file.write_text("host")
    code = (f"open('/tmp/{marker}', 'w').write('x'); import os; print(sorted(os.listdir('/tmp')))\n"
            "for p in ('/usr/x', '" + sys.prefix + "/x'):\n"
            "    try: open(p, 'w')\n"
            "    except OSError as e: print(type(e).__name__)")
    try:
        r = py(code)
    finally:
        host_file.unlink()
    assert r.ok, r.stderr
    lines = r.stdout.splitlines()
    # /tmp is a fresh tmpfs: only what the code wrote, plus the read-only parents of bound
    # folders that live under /tmp (a virtualenv made in /tmp, say)
    bound_under_tmp = {Path(p).relative_to("/tmp").parts[0] for p in sandbox._python_roots()
                       if Path("/tmp") in Path(p).parents}
    assert lines[0] == str(sorted({marker} | bound_under_tmp))
    assert host_file.name not in lines[0]
    assert lines[1:] and all(x in ("OSError", "PermissionError") for x in lines[1:]) and len(lines) == 3
    assert not Path("/tmp", marker).exists()


def test_output_is_capped():
    r = py("print('x' * 1_000_000)", Limits(wall_s=20, cpu_s=5, memory_bytes=GiB, output_bytes=1000))
    assert r.ok and r.truncated
    assert r.stdout.startswith("x" * 1000) and "cut at 1000 bytes" in r.stdout and len(r.stdout) < 1100


def test_report_pipe_carries_results_out():
    r = py("import os; os.write({fd0}, b'result line')", report_fds=1)
    assert r.ok, r.stderr
    assert r.reports == (b"result line",)


def test_fallback_says_what_it_does_not_prevent_and_still_limits_time():
    r = run([PY, "-c", "while True: pass"], limits=Limits(wall_s=2, cpu_s=10, memory_bytes=GiB),
            force_fallback=True)
    assert r.timed_out and r.limit == "time"
    assert r.sandbox.startswith(("rlimits+nobody:", "rlimits only:"))
    assert "/etc/passwd" in r.sandbox and "NOT prevented" in r.sandbox
    ok = run([PY, "-c", "print('fine')"], limits=SMALL, force_fallback=True)
    assert ok.ok and ok.stdout == "fine\n"


def test_explain_limit_reads_error_texts():
    assert sandbox.explain_limit("MemoryError") == "memory"
    assert sandbox.explain_limit("OSError: [Errno 27] File too large") == "file size"
    assert sandbox.explain_limit("BlockingIOError: [Errno 11] Resource temporarily unavailable") == "processes"
    assert sandbox.explain_limit("OSError: [Errno 101] Network is unreachable") == "network"
    assert sandbox.explain_limit("FileNotFoundError: [Errno 2] No such file or directory: '/etc/passwd'") == "files"
    assert sandbox.explain_limit("AssertionError: values differ") is None
