"""mypy --strict passes on all of grader (the files and the options are pyproject.toml's [tool.mypy];
the modules not typed yet are listed there, their own errors not reported)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_strict_passes_on_the_typed_packages(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    cache = ROOT / ".mypy_cache"
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found" in r.stdout
    import tomllib
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "grader" in conf["files"]                                     # all of grader is checked


def test_mha_is_checked_against_torchs_types():
    """mha is among the files checked, and neither it nor torch is skipped as an untyped import."""
    import tomllib
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "mha" in mypy["files"]
    skipped = {m for o in mypy.get("overrides", []) if o.get("follow_imports") == "skip" for m in o["module"]}
    assert not skipped & {"mha", "mha.*", "torch", "torch.*"}


def test_mypy_would_find_an_error(tmp_path):
    """The check can fail: the same options on a file with a type error."""
    pytest.importorskip("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x: int) -> str:\n    return x\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(bad)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Incompatible return value type" in r.stdout


def test_the_attention_mixins_declare_what_they_read_of_it_once():
    """mha.conversions.Conversions and mha.inputs.Inputs read the same attributes of
    MultiHeadAttention: declared once, in mha.ops.AttentionAttributes, not copied into each."""
    from mha.conversions import Conversions
    from mha.inputs import Inputs
    from mha.ops import AttentionAttributes
    assert issubclass(Conversions, AttentionAttributes) and issubclass(Inputs, AttentionAttributes)
    own = [set(vars(c).get("__annotations__", {})) for c in (Conversions, Inputs)]
    assert not own[0] & own[1], own[0] & own[1]
    assert not (own[0] | own[1]) & set(AttentionAttributes.__annotations__)
