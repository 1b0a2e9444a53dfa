"""Every documented command works as written: the shell blocks (```sh, ```bash, ```console,
```shell) of README.md and docs/*.md are run from a copy of the repository's top level, after
the README's two set-up commands (the test suite runs after them), with the virtual
environment on PATH, as the README's `source .venv/bin/activate` puts it.

- A block preceded by the line ``<!-- docs-test: skip (reason) -->`` directly above its
  opening fence is not run (several machines, a server that runs until stopped, a long
  benchmark, a GPU); the reason is the skip's.
- In a console block the commands are the lines after ``$ `` (continued by a trailing ``\\``);
  the other lines are their output, not checked. In the other blocks every line is a command
  but comments and blank lines.
- Each command must exit 0; a ``pytest ... --solution`` run may exit 1 (some tests of the
  learner's file failed: that is its result). The commands of a block share one folder, in
  order (a later one may use what an earlier one wrote).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"sh", "bash", "console", "shell"}
SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip\b\s*(?:\((?P<why>.*)\))?.*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
TIMEOUT_S = 300
# commands this test never runs (they would install into, or rebuild, the environment the
# suite runs in): a block holding one must be marked skip
SETUP = re.compile(r"(^|[;&|]\s*)(make\b|scripts/venv\.sh|\S*pip3?\s+install|\S*python3?\s+-m\s+pip\s+install)")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path):
    """(line of the opening fence, language, body, skip reason or None) of each fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group("fence"), i
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        above = lines[start - 1] if start else ""
        skip = SKIP.match(above)
        yield start + 1, m.group("lang").lower(), "\n".join(lines[start + 1:j]), \
            (skip.group("why") or "marked skip") if skip else None
        i = j + 1


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>\w+)\1")


def commands(lang: str, body: str) -> list[str]:
    """The commands of a block, continuation lines and here-documents (``<<'EOF'`` ... ``EOF``) joined."""
    out, current, until = [], None, None
    for line in body.splitlines():
        if until is not None:                   # inside a here-document: its lines as they are
            current += "\n" + line
            if line.strip() == until:
                out.append(current)
                current = until = None
            continue
        if current is not None:                 # continuing the previous command
            current += "\n" + line
            if not line.rstrip().endswith("\\"):
                out.append(current)
                current = None
            continue
        text = line.strip()
        if lang == "console":
            if not text.startswith("$ "):
                continue                        # output
            text = text[2:]
        if not text or text.startswith("#"):
            continue
        doc = HEREDOC.search(text)
        if doc:
            current, until = text, doc.group("word")
        elif text.rstrip().endswith("\\"):
            current = text
        else:
            out.append(text)
    if current is not None:
        out.append(current)
    return out


def cases():
    for path in documents():
        for line, lang, body, skip in blocks(path):
            if lang not in SHELL:
                continue
            name = f"{path.relative_to(ROOT)}:{line}"
            marks = [pytest.mark.skip(reason=f"{name}: {skip}")] if skip else []
            yield pytest.param(name, commands(lang, body), id=name, marks=marks)


def test_the_parser_finds_commands_and_skips():
    # the convention itself (a test that fails if the extraction breaks)
    body = "$ grader exercises   # the bank\nid kind points\n$ grader grade a.yaml \\\n    --format json\n{...}"
    assert commands("console", body) == ["grader exercises   # the bank", "grader grade a.yaml \\\n    --format json"]
    assert commands("sh", "# set-up\nmake test\n\npytest -q") == ["make test", "pytest -q"]
    heredoc = "cat > a.yaml <<'EOF'\nlearner: ann\n# not a comment here\nEOF\ngrader grade a.yaml"
    assert commands("sh", heredoc) == ["cat > a.yaml <<'EOF'\nlearner: ann\n# not a comment here\nEOF", "grader grade a.yaml"]
    assert SKIP.match("<!-- docs-test: skip (starts a server) -->").group("why") == "starts a server"
    assert SETUP.search("make check-spec") and SETUP.search("~/env/bin/pip install x.whl")
    assert not SETUP.search("grader grade docs/examples/alice.yaml")
    found = list(cases())
    assert any("README.md" in p.id for p in found)
    assert all(p.values[1] for p in found if not p.marks), "a shell block without a command"


def scratch(tmp_path: Path) -> Path:
    """A folder that looks like the repository's top level (links to its files and folders):
    commands read the repository's files and write their own next to them, not into it."""
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in (".git",) or entry.name.endswith((".db", ".db-wal", ".db-shm")):
            continue
        (work / entry.name).symlink_to(entry)
    return work


@pytest.mark.parametrize("name, cmds", list(cases()))
def test_documented_commands_work_as_written(name, cmds, tmp_path):
    venv = ROOT / ".venv"
    if not (venv / "bin" / "grader").exists():
        pytest.skip("no .venv: run the README's set-up first")
    work = scratch(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}", VIRTUAL_ENV=str(venv),
               HOME=str(tmp_path))
    env.pop("PYTHONHOME", None)
    for cmd in cmds:
        if SETUP.search(cmd.strip()):
            pytest.fail(f"{name}: `{cmd}` sets up or installs; this test does not run it: mark the block "
                        "<!-- docs-test: skip (reason) -->")
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        allowed = {0, 1} if re.match(r"\s*(\S*/)?pytest\b.*--solution", cmd) else {0}
        assert r.returncode in allowed, (f"{name}: `{cmd}` exited {r.returncode}\n"
                                         f"--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}")
