"""Every output the documents show is the real one.

A block of README.md or docs/*.md shows output when it is a ```json or ```text block, or a
```console block with lines that are not commands (``$ ...`` and their ``\\`` continuations).
Each such block carries, on one of the two lines above its opening fence, one of:

- ``<!-- docs-output: ID -->``: this test produces the real output and compares (``CHECKS``
  says how, for each ID): a command of the CLI run in a copy of the repository's top level, a
  ``curl`` against the HTTP API sent to a live ``grader serve`` (the one the service's tests
  start, ``tests/serve/serve_helpers.LiveServer``, on the bundled bank), or an engine call;
- ``<!-- docs-output: tested (tests/FILE.py::test_name) -->``: that test compares it (the
  marker's test must exist);
- ``<!-- docs-output: skip (reason) -->``: not compared (a benchmark's timings);
- tests/test_spec_docs.py's ``<!-- output: ... -->`` or ``<!-- file: ... -->``: that test
  compares it.

What a block shows may leave things out, and say so:

- in JSON, ``...`` or ``…`` as an object's last member (more members), as a list's item or
  as the string ``"..."`` (more items; the items shown appear in that order); an object or a
  list without one shows all of it;
- in a string or a line of text, ``…`` or ``...`` stands for any text;
- what changes from run to run is matched by its form: ids (32 hex digits; shown as a hex
  prefix with ``…``), times (ISO 8601), tokens (``grd_`` and 43 characters).

A console command's output is its standard output (what goes to standard error is not
shown). A command shown with no output is run (where it can be) but its output not compared.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "serve"))

from sandbox_helpers import needs_strong  # noqa: E402

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
MARK = re.compile(r"^\s*<!--\s*docs-output:\s*(?:(?P<skip>skip)\b\s*(?:\((?P<why>.*)\))?"
                  r"|tested\s*\((?P<test>tests/[\w/]+\.py)::(?P<function>\w+)\)|(?P<id>[\w-]+))\s*-->\s*$")
SPEC_DOCS = re.compile(r"^\s*<!--\s*(file|output):\s*.+-->\s*$")      # tests/test_spec_docs.py's markers
ELIDED = "\u2026elided\u2026"
ID_SHOWN = re.compile(r"[0-9a-f]{4,32}…?|…")
ID_REAL = re.compile(r"[0-9a-f]{32}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
TOKEN = re.compile(r"grd_[A-Za-z0-9_-]{43}")
VALUE_COMMENT = re.compile(r"^[^#]*\S\s+#\s*(?P<value>-?\d[\d,]*(\.\d+)?)\b")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ------------------------------------------------------------------ reading the documents

class Block:
    def __init__(self, path: Path, line: int, lang: str, body: str, above: list[str]):
        self.path, self.line, self.lang, self.body, self.above = path, line, lang, body, above
        self.name = f"{path.relative_to(ROOT)}:{line}"
        self.mark = next((m for m in map(MARK.match, above) if m), None)
        self.spec_docs = bool(above) and bool(SPEC_DOCS.match(above[-1]))

    @property
    def check_id(self) -> str | None:
        return self.mark.group("id") if self.mark else None

    def shows_output(self) -> bool:
        if self.lang in ("json", "text"):
            return True
        if self.lang == "python":       # a value shown in a comment: `count(m)   # 150,994,944`
            return any(VALUE_COMMENT.search(line) for line in self.body.splitlines())
        return self.lang == "console" and any(out for _, out in console(self.body))


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(m.group("fence")):
            j += 1
        out.append(Block(path, i + 1, m.group("lang").lower(), "\n".join(lines[i + 1:j]), lines[max(0, i - 2):i]))
        i = j + 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in documents() for b in blocks(p)]


def console(body: str) -> list[tuple[str, list[str]]]:
    """The (command, lines of output shown) of a console block; a command is the text after
    ``$ `` and its ``\\`` continuation lines, joined (the comment after it dropped)."""
    out: list[tuple[str, list[str]]] = []
    current = None
    for line in body.splitlines():
        if current is not None:
            current += "\n" + line
            if not line.rstrip().endswith("\\"):
                out.append((current, []))
                current = None
            continue
        if line.startswith("$ "):
            text = line[2:]
            if text.rstrip().endswith("\\"):
                current = text
            else:
                out.append((text, []))
        elif out and line.strip():
            out[-1][1].append(line)
    if current is not None:
        out.append((current, []))
    return [(_strip_comment(c), o) for c, o in out]


def _strip_comment(cmd: str) -> str:
    """The command without a trailing ``# comment`` (outside quotes)."""
    quote, out = None, []
    for i, c in enumerate(cmd):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or cmd[i - 1].isspace()):
            return "".join(out).rstrip()
        out.append(c)
    return cmd.rstrip()


# ------------------------------------------------------------------ comparing

def parse_shown(text: str):
    """A JSON value as a document shows it: ``...``/``…`` outside strings become an elision
    (a member ``ELIDED: null`` of an object, the item ``ELIDED`` of a list)."""
    out, stack, i, in_str = [], [], 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 2
                continue
            in_str = c != '"'
            i += 1
            continue
        if c == '"':
            in_str = True
        elif c in "{[":
            stack.append(c)
        elif c in "}]":
            stack.pop()
        elif text.startswith("...", i) or c == "…":
            out.append(f'"{ELIDED}": null' if stack and stack[-1] == "{" else f'"{ELIDED}"')
            i += 3 if c == "." else 1
            continue
        out.append(c)
        i += 1
    return json.loads("".join(out))


def text_matches(shown: str, real: str) -> bool:
    if ID_SHOWN.fullmatch(shown) and ID_REAL.fullmatch(real):
        return True
    if TIME.fullmatch(shown) and TIME.fullmatch(real):
        return True
    pattern, pos = "", 0
    for m in re.finditer(TOKEN.pattern + r"|grd_[A-Za-z0-9_-]+…|…|\.\.\.", shown):
        t = m.group()
        pattern += re.escape(shown[pos:m.start()]) + (
            TOKEN.pattern if TOKEN.fullmatch(t) else f"grd_[A-Za-z0-9_-]{{{len(t) - 5}}}…" if t.startswith("grd_")
            else ".*")
        pos = m.end()
    pattern += re.escape(shown[pos:])
    return re.fullmatch(pattern, real, re.S) is not None


def _elided(x) -> bool:
    return x in (ELIDED, "...", "…")


def match(shown, real, where: str = "$") -> list[str]:
    """What of ``shown`` (a document's JSON, with elisions) is not in ``real``."""
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{where}: shown an object, the real output has {real!r}"]
        errors = []
        for key, value in shown.items():
            if key == ELIDED:
                continue
            if key not in real:
                errors.append(f"{where}.{key}: not in the real output")
            else:
                errors += match(value, real[key], f"{where}.{key}")
        if ELIDED not in shown and set(real) - set(shown):
            errors.append(f"{where}: the real output also has {sorted(set(real) - set(shown))} "
                          "(show them, or end the object with …)")
        return errors
    if isinstance(shown, list):
        if not isinstance(real, list):
            return [f"{where}: shown a list, the real output has {real!r}"]
        items = [x for x in shown if not _elided(x)]
        if len(items) == len(shown):
            if len(items) != len(real):
                return [f"{where}: {len(items)} items shown, {len(real)} in the real output"]
            return [e for k, (a, b) in enumerate(zip(items, real)) for e in match(a, b, f"{where}[{k}]")]
        j = 0
        for a in items:         # in order, others between them
            while j < len(real) and match(a, real[j]):
                j += 1
            if j == len(real):
                return [f"{where}: the item shown {a!r} is not in the real output (in that order): {real!r}"[:2000]]
            j += 1
        return []
    if isinstance(shown, str) and isinstance(real, str):
        return [] if text_matches(shown, real) else [f"{where}: shown {shown!r}, real {real!r}"]
    if isinstance(shown, bool) or isinstance(real, bool) or shown is None or real is None:
        return [] if shown is real else [f"{where}: shown {shown!r}, real {real!r}"]
    if isinstance(shown, (int, float)) and isinstance(real, (int, float)) and shown == real:
        return []
    return [f"{where}: shown {shown!r}, real {real!r}"]


def lines_match(shown: list[str], real: list[str], what: str) -> list[str]:
    """Lines of text: one shown line per real line (a shown line ``...``/``…``: any lines)."""
    if any(_elided(s.strip()) for s in shown):
        head = next(k for k, s in enumerate(shown) if _elided(s.strip()))
        tail = len(shown) - head - 1
        return (lines_match(shown[:head], real[:head], what)
                + (lines_match(shown[head + 1:], real[len(real) - tail:], what) if tail else []))
    if len(shown) != len(real):
        return [f"{what}: {len(shown)} lines shown, {len(real)} real:\n" + "\n".join(real)]
    return [f"{what}: shown {s!r}, real {r!r}" for s, r in zip(shown, real) if not text_matches(s.rstrip(), r.rstrip())]


def compare(shown_text: str, real_text: str, what: str) -> list[str]:
    shown_text = shown_text.strip()
    if shown_text.startswith(("{", "[")):
        try:
            real = json.loads(real_text)
        except ValueError:
            return [f"{what}: the real output is not JSON: {real_text[:500]!r}"]
        return [f"{what}: {e}" for e in match(parse_shown(shown_text), real)]
    return lines_match(shown_text.splitlines(), real_text.rstrip("\n").splitlines(), what)


# ------------------------------------------------------------------ running: the CLI

def scratch(tmp_path: Path) -> Path:
    """A folder that looks like the repository's top level (links to its entries)."""
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name == ".git" or entry.name.endswith((".db", ".db-wal", ".db-shm", ".secret")):
            continue
        (work / entry.name).symlink_to(entry)
    return work


def cli_env(tmp_path: Path) -> dict:
    venv = ROOT / ".venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}", VIRTUAL_ENV=str(venv),
               HOME=str(tmp_path))
    return env


def needs_venv():
    if not (ROOT / ".venv" / "bin" / "grader").exists():
        pytest.skip("no .venv: run the README's set-up first")


def check_console_cli(block: Block, tmp_path: Path) -> list[str]:
    """Each command of the block in one scratch folder, in order; its standard output
    compared with what the block shows."""
    needs_venv()
    work, env, errors = scratch(tmp_path), cli_env(tmp_path), []
    for cmd, shown in console(block.body):
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        if shown:
            errors += compare("\n".join(shown), r.stdout, f"{block.name}: `{cmd}`")
    return errors


# ------------------------------------------------------------------ running: the HTTP API

class Live:
    """A live `grader serve` on the bundled bank, an instructor ``prof`` and a learner ``alice``;
    curl commands as the documents write them, sent to it."""

    def __init__(self, tmp: Path):
        from grader.db import Database
        from grader.serve.accounts import add_user
        from serve_helpers import LiveServer
        self.tmp = tmp
        database = f"sqlite:///{tmp / 'grader.db'}"
        db = Database(database)         # the accounts as docs/service.md makes them (alice: its roster's)
        db.ensure_schema()
        try:
            self.tokens = {"prof": add_user(db, "prof", "instructor", "Pat Prof", "pat@example.org").token,
                           "alice": add_user(db, "alice", "learner", "Alice Liddell", "alice@example.org").token}
        finally:
            db.dispose()
        # the bundled bank, which has no course: any problem is answered at any time
        self.server = LiveServer(database, ROOT / "exercises", tmp).start()
        import httpx
        self.client = httpx.Client(base_url=self.server.url, timeout=300)
        self.last: dict = {}
        self.previous: list[str] | None = None
        # the files the documents' commands upload
        shutil.copy(ROOT / "exercises" / "17-08" / "code" / "solution.py", tmp / "mine.py")
        shutil.copy(ROOT / "docs" / "examples" / "class" / "bob.yaml", tmp / "class.yaml")

    def close(self):
        self.client.close()
        self.server.stop()

    def variables(self, text: str) -> str:
        for name, who in (("$ALICE_TOKEN", "alice"), ("$TOKEN", "alice"), ("$PROF", "prof")):
            text = text.replace(name, self.tokens[who])
        return text

    def request(self, cmd: str):
        """The response to a curl command (``... -d '{...}'``: the previous command with
        another body); None for a command this cannot send (a variable it does not know)."""
        argv = shlex.split(cmd.replace("\\\n", " "))
        if argv[0] == "...":
            assert self.previous is not None, f"`{cmd}`: nothing before it to repeat"
            new = dict(zip(argv[1::2], argv[2::2]))
            argv = list(self.previous)
            k = argv.index("-d")
            argv[k + 1] = new["-d"]
        assert argv[0] == "curl", f"not a curl command: {cmd}"
        self.previous = argv
        method, headers, data, form, url = "GET", {}, None, {}, None
        args = iter(argv[1:])
        for a in args:
            if a == "-s":
                continue
            if a == "-X":
                method = next(args)
            elif a == "-H":
                key, _, value = next(args).partition(":")
                headers[key.strip()] = self.variables(value.strip())
            elif a == "-d":
                data, method = next(args), ("POST" if method == "GET" else method)
            elif a == "-F":
                key, _, value = next(args).partition("=")
                form[key] = value
            else:
                url = a
        if "$" in "".join([url or "", *headers.values(), data or ""]):
            return None
        path = re.sub(r"^(https?://[^/]+|\.\.\.)", "", url)
        if "…" in path:         # an id the document elides: the last response's
            path = re.sub(r"[0-9a-f]*…", self.last.get("id", ""), path)
        files, fields = {}, {}
        for key, value in form.items():
            if value.startswith("@"):
                name = value[1:]
                files[key] = (name, (self.tmp / name).read_bytes())
            else:
                fields[key] = value
        kw = {"headers": headers}
        if data is not None:
            kw["content"] = data.encode()
        if files or fields:
            kw.update(files=files or None, data=fields or None)
        r = self.client.request(method, path, **kw)
        if r.headers.get("content-type", "").startswith("application/json"):
            self.last = r.json() if isinstance(r.json(), dict) else {}
        return r

    def done(self, r):
        """A job's response, once it is done or failed (the document shows a finished job)."""
        if r.request.method != "GET" or "/jobs/" not in r.request.url.path or r.json().get("status") in ("done", "failed"):
            return r
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            time.sleep(0.5)
            again = self.client.get(r.request.url.path, headers=dict(r.request.headers))
            if again.json().get("status") in ("done", "failed"):
                return again
        raise AssertionError(f"job {r.request.url.path} did not finish: {r.text}")


def check_console_curl(block: Block, live: Live) -> list[str]:
    errors = []
    for cmd, shown in console(block.body):
        r = live.request(cmd)
        assert r is not None or not shown, f"{block.name}: `{cmd}` cannot be sent"
        if r is None:
            continue
        assert r.status_code < 400, f"{block.name}: `{cmd}` answered {r.status_code}: {r.text[:2000]}"
        if shown:
            r = live.done(r)
            errors += compare("\n".join(shown), r.text, f"{block.name}: `{cmd[:80]}`")
    return errors


def check_json_after_curl(block: Block, live: Live) -> list[str]:
    """A JSON block that is the answer to the curl command of the console block before it."""
    before = [b for b in blocks(block.path) if b.line < block.line and b.lang == "console"][-1]
    (cmd, shown), = console(before.body)
    assert not shown
    r = live.request(cmd)
    assert r is not None and r.status_code < 400, f"{block.name}: `{cmd}`: {r and r.text[:2000]}"
    return compare(block.body, r.text, f"{block.name} (the answer to {before.name})")


# ------------------------------------------------------------------ the other checks

def check_grade_json(block: Block, tmp_path: Path) -> list[str]:
    """docs/exercises.md's `--format json` example is that command's output."""
    needs_venv()
    r = subprocess.run(["bash", "-c", "grader grade docs/examples/alice.yaml docs/examples/bomb.yaml --format json"],
                       cwd=scratch(tmp_path), env=cli_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]        # bomb.yaml is refused: exit 2, the rest graded
    return compare(block.body, r.stdout, block.name)


def check_serve_behind(block: Block, tmp_path: Path) -> list[str]:
    """docs/service.md's migration example: `grader serve` on a database at schema 0001."""
    needs_venv()
    from grader.db import Database
    work = scratch(tmp_path)
    db = Database(f"sqlite:///{work / 'grader.db'}")
    try:
        db.upgrade("0001")
    finally:
        db.dispose()
    errors = []
    for cmd, shown in console(block.body):
        r = subprocess.run(["bash", "-c", cmd], cwd=work, env=cli_env(tmp_path), capture_output=True, text=True,
                           timeout=120)
        if cmd == "grader serve":
            assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
            errors += compare("\n".join(shown), r.stderr, f"{block.name}: `{cmd}` (standard error)")
        else:
            assert r.returncode == 0, (cmd, r.stderr[-2000:])
            errors += compare("\n".join(shown), r.stdout, f"{block.name}: `{cmd}`") if shown else []
    return errors


def check_cluster_versions(block: Block, tmp_path: Path) -> list[str]:
    """docs/cluster.md's refusal of a worker with another grader: the start-up check's own
    message (grader.cluster.connect.Cluster.check_versions), on a client whose worker reports
    grader 0.0.0."""
    from grader.cluster import ClusterError
    from grader.cluster.connect import Cluster
    from grader.cluster.remote import versions

    line = block.body.strip()
    m = re.search(r"worker (\S+) of (\S+) runs", line)

    class Client:
        def run(self, fn, *args):
            return {m.group(1): {**versions(), "grader": "0.0.0"}}

    with pytest.raises(ClusterError) as e:
        Cluster(m.group(2), Client()).check_versions()
    return compare(line, f"error: {e.value.message}", block.name)


def check_budget(block: Block, tmp_path: Path) -> list[str]:
    """docs/spec-language.md's budget error: `grader check-spec` on a spec whose equivalence
    check is far over a 1 GiB budget (its evidence, as the report gives it)."""
    needs_venv()
    m = re.search(r"check at (\S+?):(\d+):(\d+):", block.body)
    name, line, column = m.group(1), int(m.group(2)), int(m.group(3))
    spec = ["subject:", "  id: big", "  title: An equivalence over the budget",
            "  sources: {text: {title: A course text}}",
            "symbols:", "  d: {positive: true, integer: true}", "  h: {positive: true, integer: true}",
            "  n: {positive: true, integer: true}", "  b: {positive: true, integer: true}",
            "claims:", "  - id: big", "    quote: the two layouts compute the same function",
            "    source: {document: text, section: Layouts}", "    expect: holds", "    checks:"]
    spec += ["#"] * (line - 1 - len(spec))
    spec += [" " * (column - 3) + "- {kind: equivalence, a: fused, b: per_head, at: {d: 65536, h: 8, n: 4096, b: 8}}"]
    work = tmp_path / "w"
    work.mkdir()
    (work / name).write_text("\n".join(spec) + "\n")
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "grader"), "check-spec", name, "--memory-budget", "1GiB",
                        "--format", "json"], cwd=work, env=cli_env(tmp_path), capture_output=True, text=True,
                       timeout=300)
    assert r.stdout, r.stderr[-3000:]
    claim, = json.loads(r.stdout)["claims"]
    found = [c["summary"] for c in claim["evidence"]["checks"] if "refused before anything was allocated" in c["summary"]]
    assert found, claim
    return compare(" ".join(block.body.split()), " ".join(found[0].split()), block.name)


def check_code_messages(block: Block, tmp_path: Path) -> list[str]:
    """docs/code-exercises.md's messages: the exercise's own checks (mha_checks.py) on the
    broken solutions of tests/broken_solutions/, each imported as the learner's ``mine.py``."""
    import importlib.util
    sys.path.insert(0, str(ROOT / "exercises" / "17-08" / "code"))
    try:
        import mha_checks as mc
    finally:
        sys.path.pop(0)

    def solution(broken: str):
        path = tmp_path / broken / "mine.py"
        path.parent.mkdir()
        shutil.copy(ROOT / "tests" / "broken_solutions" / f"{broken}.py", path)
        spec = importlib.util.spec_from_file_location(f"mine_{broken}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def failure(fn, *args) -> str:
        try:
            fn(*args)
        except (AssertionError, pytest.fail.Exception) as e:     # the checks fail with pytest.fail
            return str(e)
        raise AssertionError(f"{fn.__name__}{args[1:]} passed")

    base = mc.Case("base", d=16, h=4, n_q=6, n_k=6)          # the first case of test_17_08_code.py
    real = [failure(mc.check_parameter_count, solution("params_without_biases"), 512, 8),
            failure(mc.check_multi_head_forward, solution("scaled_by_sqrt_d_model"), base),
            failure(mc.check_attention_weights, solution("k_transposed_twice"), base),
            failure(mc.check_flop_count, solution("flops_multiply_adds"), 128, 512, 8)]
    real = [r.replace(str(tmp_path / b) + "/", "") for r, b in zip(real, ("params_without_biases",
            "scaled_by_sqrt_d_model", "k_transposed_twice", "flops_multiply_adds"))]   # the file as the learner named it
    return lines_match(block.body.splitlines(), [" ".join(r.split()) for r in real], block.name)


def check_python_values(block: Block, tmp_path: Path) -> list[str]:
    """A Python block run statement by statement (``import mha`` done); an expression whose
    line ends with ``# VALUE`` must give that value."""
    import ast

    import mha
    namespace: dict = {"mha": mha}
    lines, errors = block.body.splitlines(), []
    for node in ast.parse(block.body).body:
        source = ast.get_source_segment(block.body, node)
        m = VALUE_COMMENT.match(lines[node.end_lineno - 1])
        if isinstance(node, ast.Expr) and m:
            got = eval(compile(ast.Expression(node.value), block.name, "eval"), namespace)
            shown = float(m.group("value").replace(",", ""))
            if got != shown:
                errors.append(f"{block.name}: `{source}` gives {got!r}, the document shows {m.group('value')}")
        else:
            exec(compile(ast.Module([node], []), block.name, "exec"), namespace)
    return errors


# ------------------------------------------------------------------ the checks, by id

LIVE = {"readme-submit": check_console_curl, "service-submit": check_json_after_curl,
        "service-validate": check_console_curl, "service-code": check_console_curl,
        "service-staff": check_console_curl}
CHECKS = {"service-users-first": check_console_cli, "service-users": check_console_cli,
          "grade-json": check_grade_json, "service-migrate": check_serve_behind,
          "cluster-versions": check_cluster_versions, "budget-error": check_budget,
          "code-messages": check_code_messages, "mha-values": check_python_values}


def test_the_reader_and_the_comparison():
    body = "$ grader users add-learner alice   # a comment\nlearner alice: token grd_x\n$ curl -s a \\\n  -d '{}'\n{...}"
    assert console(body) == [("grader users add-learner alice", ["learner alice: token grd_x"]),
                             ("curl -s a \\\n  -d '{}'", ["{...}"])]
    shown = parse_shown('{"id": "74fc…", "score": 2, "results": [{"a": "x…z", …}, "..."], …}')
    real = {"id": "0" * 32, "score": 2, "results": [{"a": "xyz", "b": 1}, {"a": "q"}], "more": True}
    assert match(shown, real) == []
    assert match(shown, {**real, "score": 3})            # a wrong value
    assert match(parse_shown('{"score": 2}'), {"score": 2, "more": 1})       # not elided: all keys shown
    assert match(parse_shown('[1, 2]'), [1, 2, 3])                           # not elided: every item
    assert match(parse_shown('[2, ...]'), [1, 2, 3]) == []
    assert match(parse_shown('[3, 2, ...]'), [1, 2, 3])                      # order
    assert match(True, 1) and match(1, True)
    assert text_matches("instructor prof: token grd_" + "a" * 43, "instructor prof: token grd_" + "B-" * 21 + "c")
    assert not text_matches("alice,…,2,65,0", "alice,x,2,76,0")
    assert text_matches("tokens: grd_WYVuvB…", "tokens: grd_EPEG_B…") and not text_matches("grd_WYVuvB…", "grd_EPEG…")
    assert lines_match(["a", "…", "z"], ["a", "b", "c", "z"], "x") == []
    assert lines_match(["a"], ["a", "b"], "x")


def test_every_output_block_is_checked():
    found, unchecked = set(), []
    for b in all_blocks():
        if b.check_id:
            assert b.check_id in CHECKS or b.check_id in LIVE, f"{b.name}: no check called {b.check_id!r}"
            found.add(b.check_id)
        elif b.mark and b.mark.group("test"):
            test = ROOT / b.mark.group("test")
            assert test.is_file() and f"def {b.mark.group('function')}(" in test.read_text(encoding="utf-8"), \
                f"{b.name}: no test {b.mark.group('test')}::{b.mark.group('function')}"
        elif b.mark and b.mark.group("skip"):
            assert b.mark.group("why"), f"{b.name}: a docs-output skip needs its reason"
        elif b.shows_output() and not b.spec_docs:
            unchecked.append(b.name)
    assert not unchecked, ("blocks that show output nobody checks (mark them <!-- docs-output: ID --> "
                           f"with a check in tests/test_docs_outputs.py): {unchecked}")
    assert found == set(CHECKS) | set(LIVE), f"checks no block uses: {set(CHECKS) | set(LIVE) - found}"


def _marked(ids) -> list:
    return [pytest.param(b, id=f"{b.check_id}:{b.name}") for b in all_blocks() if b.check_id in ids]


@pytest.mark.parametrize("block", _marked(CHECKS))
def test_output_block_is_real(block, tmp_path):
    errors = CHECKS[block.check_id](block, tmp_path)
    assert not errors, "\n".join(errors)


@needs_strong       # the code submission's job runs the learner's file in the sandbox
def test_the_service_examples_are_real(tmp_path):
    """README's and docs/service.md's requests, in the documents' order, to one live server."""
    live = Live(tmp_path)
    try:
        errors = []
        for b in all_blocks():
            if b.check_id in LIVE:
                errors += LIVE[b.check_id](b, live)
        # docs/service.md's health check, shown in its text: "`GET /healthz`: `{...}`"
        text = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
        m = re.search(r"`GET /healthz`: `(\{.*?\})`", text, re.S)
        assert m, "docs/service.md no longer shows GET /healthz's answer"
        errors += compare(" ".join(m.group(1).split()), live.client.get("/healthz").text, "docs/service.md: GET /healthz")
    finally:
        live.close()
    assert not errors, "\n".join(errors)
