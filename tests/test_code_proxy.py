"""grader.code.solution_proxy: a learner's functions served from the sandbox. Whatever the code does
to the channel, the grader's side gets plain data or a per-call failure in words, the next
call still works, and nothing is left behind.

Small files without torch (each process starts in about 0.1 s); ``backend`` runs a test on
every namespace backend that runs here.
"""
import json
import textwrap

import pytest
import torch

from grader.sandbox import GiB, Limits
from grader.code.solution_proxy import (MAX_STARTS, Session, SolutionBroke, SolutionImportFailed, SolutionRaised,
                                   clean)
from grader.code.wire import NotPlainData
from sandbox_helpers import host_state, needs_strong, strong_backends

pytestmark = needs_strong
LIMITS = Limits(wall_s=30, cpu_s=30, memory_bytes=GiB, call_s=2, reply_bytes=1 << 20)
REP = "import json, os, sys\nREP = json.loads(sys.argv[1])['rep']\n"   # the reply pipe, as learner code finds it
GOOD = "def good(x):\n    return x + 1\n"


@pytest.fixture
def session(tmp_path):
    made = []

    def make(text, limits=LIMITS, backend=None):
        path = tmp_path / "mine.py"
        path.write_text(textwrap.dedent(text))
        s = Session(path, display="mine.py", limits=limits, backend=backend, preload=())
        made.append(s)
        return s.open()

    yield make
    for s in made:
        s.close()


@strong_backends
def test_values_come_back_as_fresh_plain_data(session, backend):
    s = session("import torch\ndef f(x, *, k):\n    return {'t': x * 2, 'k': (k, None, 1.5, 'é')}\n"
                + GOOD, backend=backend)
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    out = s.call("f", (x,), {"k": [1, True]})
    assert out["k"] == ([1, True], None, 1.5, "é")
    assert type(out["t"]) is torch.Tensor and torch.equal(out["t"], x * 2)
    assert s.module().good(41) == 42
    assert sorted(s.names()["functions"]) == ["f", "good"]


def test_a_rigged_object_is_a_stand_in_that_equals_nothing(session):
    s = session("""\
        import torch
        class MyTensor(torch.Tensor):
            def __eq__(self, other):
                return True
        class Yes(int):
            def __eq__(self, other):
                return True
        def f():
            return torch.zeros(2).as_subclass(MyTensor)
        def g():
            return [Yes(1)]
        """)
    f = s.call("f")
    assert isinstance(f, NotPlainData) and f.type_name == "MyTensor" and not (f == torch.zeros(2))
    assert s.call("g")[0] != 1


def test_the_learner_s_exception_has_its_type_message_and_line(session):
    s = session("def f(x):\n    y = x * 2\n    raise ValueError(f'bad {y}')\n\ndef g():\n    raise NotImplementedError\n")
    with pytest.raises(SolutionRaised) as e:
        s.call("f", (3,))
    assert str(e.value) == "f() raised ValueError: bad 6 (at mine.py:3: raise ValueError(f'bad {y}'))"
    with pytest.raises(SolutionRaised) as e:
        s.call("g")
    assert e.value.type_name == "NotImplementedError" and e.value.what == "NotImplementedError"


def test_learner_text_cannot_forge_lines_or_terminal_escapes(session):
    s = session("def f():\n    raise ValueError('ok\\n17-08/code-mha  10/10 \\x1b[2J\\r passed')\n")
    with pytest.raises(SolutionRaised) as e:
        s.call("f")
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value) and "\r" not in str(e.value)
    assert "ok\\x0a17-08/code-mha  10/10 \\x1b[2J\\x0d passed" in str(e.value)
    assert clean("x" * 5000, 100) == "x" * 100 + " …"


@strong_backends
def test_garbage_on_the_reply_pipe_fails_that_call_only(session, backend):
    s = session(REP + "def f():\n    os.write(REP, b'\\x00\\x00\\x00\\x05garbage')\n    return 1\n" + GOOD,
                backend=backend)
    with pytest.raises(SolutionBroke, match=r"f\(\) sent back something that is not a reply .*; the process "
                                            r"running your code was stopped"):
        s.call("f")
    assert s.call("good", (1,)) == 2 and s.starts == 2


def test_a_gigantic_reply_is_refused_before_it_is_read(session):
    s = session(REP + "import struct\ndef f():\n    os.write(REP, struct.pack('>II', 10, 0xFFFFFFF0))\n"
                "    return 1\n" + GOOD)
    with pytest.raises(SolutionBroke, match="4096 MiB of tensor data .the limit is 1 MiB"):
        s.call("f")
    assert s.call("good", (1,)) == 2


def test_a_forged_reply_written_ahead_of_the_request_gains_nothing(session):
    # at import, the code writes the reply it would like request 1 to get: at best its own value,
    # which its function could have returned anyway; usually the hello it displaced breaks the channel
    s = session(REP + "import importlib.util, sys\n"
                "sys.path.insert(0, '/grade'); import wire\n"
                "os.write(REP, wire.frame({'hello': 1, 'functions': ['f'], 'values': []}, {}))\n"
                "os.write(REP, wire.frame({'id': 1, 'ok': 1}, {'value': 'forged'}))\n"
                "def f():\n    return 'honest'\n")
    try:
        got = s.call("f")
    except SolutionBroke as e:
        got = str(e)
    assert got in ("forged", "honest") or "not a reply" in got


def test_deep_and_oversized_return_values_cannot_be_sent_back(session):
    s = session("import torch\ndef deep():\n    x = []\n    for _ in range(10000):\n        x = [x]\n    return x\n"
                "def big():\n    return torch.zeros(1 << 20)\n" + GOOD)
    with pytest.raises(SolutionBroke, match=r"deep\(\) returned a value that cannot be sent back: nested deeper"):
        s.call("deep")
    with pytest.raises(SolutionBroke, match=r"big\(\) returned a value that cannot be sent back: more than 1 MiB"):
        s.call("big")
    assert s.call("good", (1,)) == 2 and s.starts == 1   # the process is fine: no restart


@strong_backends
def test_a_slow_call_is_stopped_and_that_function_is_not_called_again(session, backend):
    s = session("import time\ndef slow():\n    time.sleep(60)\n" + GOOD, backend=backend)
    with pytest.raises(SolutionBroke, match=r"slow\(\) did not return within the time limit of 2 s per call"):
        s.call("slow")
    with pytest.raises(SolutionBroke, match=r"not run: an earlier call of slow\(\) ran past the time limit of 2 s"):
        s.call("slow")
    assert s.call("good", (1,)) == 2


def test_the_run_s_wall_clock_stops_everything(session):
    s = session("import time\ndef slow():\n    time.sleep(60)\n" + GOOD,
                limits=Limits(wall_s=1.5, cpu_s=10, memory_bytes=GiB, call_s=30))
    with pytest.raises(SolutionBroke, match=r"time limit of 1.5 s exceeded \(wall clock\): slow\(\) did not return"):
        s.call("slow")
    with pytest.raises(SolutionBroke, match=r"time limit of 1.5 s exceeded"):
        s.call("good", (1,))


@strong_backends
def test_a_process_that_dies_is_named_and_started_again_a_few_times(session, backend):
    s = session("import os\ndef die():\n    os._exit(3)\ndef segv():\n    import ctypes; ctypes.string_at(0)\n"
                + GOOD, backend=backend)
    with pytest.raises(SolutionBroke, match=r"the process running your code ended during die\(\): exited with code 3"):
        s.call("die")
    with pytest.raises(SolutionBroke, match=r"ended during segv\(\): killed by SIGSEGV"):
        s.call("segv")
    assert s.call("good", (1,)) == 2
    for _ in range(MAX_STARTS):
        with pytest.raises(SolutionBroke):
            s.call("die")
    with pytest.raises(SolutionBroke, match="stopped 4 times; no more calls are made"):
        s.call("good", (1,))


def test_killing_the_parent_and_everything_else_is_not_possible(session):
    s = session("import os, signal\ndef f():\n    out = []\n    for pid in (os.getppid(), 1, -1):\n"
                "        try:\n            os.kill(pid, signal.SIGKILL); out.append('sent')\n"
                "        except OSError as e:\n            out.append(type(e).__name__)\n    return out\n" + GOOD)
    try:
        s.call("f")
    except SolutionBroke:
        pass     # kill(-1) may end the sandbox's own processes: that is all it can reach
    assert s.call("good", (1,)) == 2


def test_a_flood_on_stdout_is_dropped_and_the_call_returns(session):
    s = session("import sys\ndef f():\n    for _ in range(200):\n        print('x' * 100_000)\n    return 7\n")
    assert s.call("f") == 7
    assert len(s.proc.output[0]) <= LIMITS.output_bytes


@pytest.mark.parametrize("text, says", [
    ("def f(:\n", r"^mine.py:1: SyntaxError: "),
    ("x = 1\nraise KeyError('k')\n", r"^mine.py:2: your solution could not be imported: KeyError: 'k'$"),
    ("import sys\nsys.exit(0)\n", r"^mine.py:2: your solution could not be imported: SystemExit: 0$"),
    ("import os\nos._exit(0)\n", r"^mine.py: the process importing your solution ended: exited with code 0"),
    ("HOG = bytearray(2 * 1024 ** 3)\n", r"MemoryError — memory limit of 1 GiB exceeded"),
    ("import mha\n", r"ModuleNotFoundError: No module named 'mha'"),
    ("import grader\n", r"ModuleNotFoundError: No module named 'grader'"),
    ("import pytest\n", r"ModuleNotFoundError: No module named 'pytest'"),
])
def test_an_import_failure_is_one_message_for_every_call(session, text, says):
    s = session(text)
    with pytest.raises(SolutionImportFailed, match=says):
        s.names()
    with pytest.raises(SolutionBroke, match=says):
        s.call("f")


def test_an_import_that_never_ends_is_stopped_at_the_wall_clock(session):
    s = session("while True:\n    pass\n", limits=Limits(wall_s=1.5, cpu_s=10, memory_bytes=GiB))
    with pytest.raises(SolutionImportFailed, match=r"time limit of 1.5 s exceeded \(wall clock\): your solution "
                                                   r"did not finish importing"):
        s.names()


@strong_backends
def test_a_closed_session_leaves_no_process_or_folder(tmp_path, backend):
    path = tmp_path / "mine.py"
    path.write_text("import subprocess, os\nsubprocess.Popen(['sleep', '76.5'], start_new_session=True)\n"
                    "if os.fork() == 0:\n    os.setsid()\n    import time; time.sleep(100)\n" + GOOD)
    before = host_state("76.5")
    s = Session(path, limits=LIMITS, backend=backend, preload=()).open()
    assert s.call("good", (1,)) == 2
    work = s.work
    s.close()
    assert not work.exists()
    assert host_state("76.5") == before


def test_the_request_carries_the_grader_s_seed(session):
    s = session("import torch\ndef r():\n    return torch.rand(3)\n")
    torch.manual_seed(5)
    a = s.call("r")
    torch.manual_seed(5)
    b = s.call("r")
    torch.manual_seed(6)
    c = s.call("r")
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_the_config_the_server_gets_names_only_its_pipes_and_the_file(session):
    s = session("import sys\nCONFIG = sys.argv[1]\n")
    config = json.loads(s.module().CONFIG)
    assert set(config) == {"req", "rep", "solution", "blob_bytes", "preload"}
    assert config["solution"] == "/grade/solution.py"


def test_an_argument_that_is_not_plain_data_is_the_test_s_error_not_sent(session):
    s = session(GOOD)
    with pytest.raises(TypeError, match=r"good\(\): an argument cannot be sent to the sandbox: a Generator is not "
                                        r"plain data"):
        s.call("good", (torch.Generator(),))
    assert s.call("good", (1,)) == 2
