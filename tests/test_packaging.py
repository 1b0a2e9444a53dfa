"""The distribution: one wheel with both packages, the console script, the
pytest plugin, and spec/ + exercises/ bundled so an installed wheel works
outside the repository."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    try:
        import hatchling  # noqa: F401
    except ImportError:
        pytest.skip("hatchling is not installed in this environment")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
        check=True, capture_output=True,
    )
    (whl,) = out.glob("grader-*.whl")
    return zipfile.ZipFile(whl)


def test_installed_wheel_works_outside_the_repository(wheel, tmp_path):
    # the wheel alone in a folder of its own (its dependencies from this environment), run from
    # a folder that is not the repository: the bundled spec and bank must come from the wheel
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                    str(site), wheel.filename], check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "HOME": str(tmp_path)}

    def grader(*args):
        code = "import sys, grader.cli; print(grader.__file__, file=sys.stderr); grader.cli.main(sys.argv[1:])"
        return subprocess.run([sys.executable, "-c", code, *args], cwd=elsewhere, env=env,
                              capture_output=True, text=True)

    r = grader("check-spec", "--only", "s-ex1-dk", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0].startswith(str(site))  # the wheel's grader, not the repository's
    assert '"id": "s-ex1-dk"' in r.stdout and '"verdict": "holds"' in r.stdout
    r = grader("exercises", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert '"17-08/example-2.params"' in r.stdout
    # a quantity answer: the units' definitions (grader/units/units.txt) must ship in the wheel
    (elsewhere / "a.yaml").write_text("learner: w\nanswers:\n  17-08/practice-4.bytes: 16 MiB\n")
    r = grader("grade", "a.yaml", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert '"correct": true' in r.stdout, r.stdout
    # the service's migrations ship in the wheel: `grader db upgrade` works outside the repository
    r = grader("db", "upgrade", "--database", str(elsewhere / "g.db"))
    assert r.returncode == 0 and "upgraded from nothing to" in r.stdout, r.stderr


def test_wheel_holds_both_packages_and_bundled_data(wheel):
    names = set(wheel.namelist())
    assert "grader/__init__.py" in names and "mha/__init__.py" in names
    bundled_specs = [n for n in names if n.startswith("grader/_bundled/spec/") and n.endswith(".yaml")]
    bundled_exercises = [n for n in names if n.startswith("grader/_bundled/exercises/")]
    repo_specs = sorted(p.name for p in (ROOT / "spec").glob("*.yaml"))
    assert sorted(Path(n).name for n in bundled_specs) == repo_specs
    assert bundled_exercises, "exercises/ must be bundled"


def test_wheel_carries_no_hidden_test_and_no_reference_solution(wheel):
    # learners install the wheel: the bank's reference solutions and hidden tests stay in the
    # course's folder (the repository has them: the check below would pass on an empty wheel)
    repo = [p.relative_to(ROOT / "exercises").as_posix() for p in (ROOT / "exercises").rglob("*")
            if p.is_file() and (p.name == "solution.py" or "hidden" in p.name)]
    assert repo, "the repository's bank has a solution and hidden tests"
    names = wheel.namelist()
    leaked = [n for n in names if n.rsplit("/", 1)[-1] == "solution.py" or "hidden" in n.rsplit("/", 1)[-1]]
    assert leaked == []
    # what learners do need is there: the visible tests, their checks and the template
    for kept in ("test_17_08_code.py", "mha_checks.py", "template.py"):
        assert f"grader/_bundled/exercises/17-08/code/{kept}" in names


def test_wheel_requires_what_code_grading_needs(wheel):
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [line.split(":", 1)[1].strip().split(";")[0] for line in wheel.read(meta).decode().splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    names = {r.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower() for r in requires}
    assert {"torch", "numpy", "pytest", "pint", "sympy"} <= names


def test_wheel_declares_console_script_and_pytest_plugin(wheel):
    (ep,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    text = wheel.read(ep).decode()
    assert "grader = grader.cli:main" in text
    assert "[pytest11]" in text and "grader.pytest_plugin" in text


def test_help_imports_neither_torch_nor_sympy():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from grader.cli import cli\n"
        "r = CliRunner().invoke(cli, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in ('torch', 'sympy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
