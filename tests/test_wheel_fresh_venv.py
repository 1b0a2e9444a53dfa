"""The wheel as a grading host or a learner installs it: a fresh virtual environment (no
system site packages), the CPU build of torch as the README says, then the built wheel and
nothing else. It grades the bundled code exercise's reference with full marks, with the
course's bank (hidden tests included) and with the wheel's own (visible tests only), and no
run prints torch's "Failed to initialize NumPy" warning.

Slow (an install of torch and every dependency into a new environment: a minute or more).
Skipped, saying why, where the CPU build of torch cannot be installed (no local wheel and no
network); everything after that must work.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_helpers import needs_strong

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "exercises" / "17-08" / "code"
pytestmark = needs_strong       # code answers are graded only in a namespace sandbox


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    pytest.importorskip("hatchling")
    import torch
    tmp = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp / "dist"), str(ROOT)], check=True, capture_output=True)
    (whl,) = (tmp / "dist").glob("grader-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    version = torch.__version__.split("+")[0]
    # the README's CPU-torch step: from a local wheel where pip sees one, else PyTorch's CPU index
    r = subprocess.run([*pip, f"torch=={version}", "--extra-index-url", "https://download.pytorch.org/whl/cpu"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.skip(f"the CPU build of torch {version} cannot be installed here (offline, no local wheel): "
                    f"{r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    r = subprocess.run([*pip, str(whl)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return venv, tmp


def run(venv, *args, cwd):
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run([str(venv / "bin" / "grader"), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_fresh_install_grades_the_reference_with_full_marks(fresh):
    venv, tmp = fresh
    work = tmp / "learner"
    work.mkdir()
    shutil.copyfile(CODE / "solution.py", work / "alice.py")
    (work / "alice.yaml").write_text("learner: alice\nanswers:\n  17-08/code-mha: alice.py\n")
    for bank, n_tests in ((["--exercises", str(ROOT / "exercises")], 60), ([], 43)):
        r = run(venv, "grade", "alice.yaml", "--format", "json", *bank, cwd=work)
        assert r.returncode == 0, r.stderr
        (result,) = json.loads(r.stdout)["submissions"][0]["results"]
        assert (result["score"], result["max_score"], result["correct"]) == (10, 10, True), result["feedback"]
        assert len(result["tests"]) == n_tests       # the wheel's own bank: the visible tests only
        assert "NumPy" not in r.stderr and "numpy" not in r.stderr.lower(), r.stderr


def test_the_fresh_install_imports_torch_without_the_numpy_warning(fresh):
    venv, tmp = fresh
    r = subprocess.run([str(venv / "bin" / "python"), "-c", "import torch, numpy; torch.ones(2).numpy()"],
                       capture_output=True, text=True, timeout=300, cwd=tmp)
    assert r.returncode == 0 and "Failed to initialize NumPy" not in r.stderr, r.stderr
