"""docs/spec-language.md shows what really happens: its worked example is a real file
(docs/examples/worked.yaml) that `grader check-spec` runs with the verdicts and exit status the
document shows, its pasted outputs are the real ones, its YAML samples load, and it lists every
check kind and quantity the engine has.

The blocks are marked in the document:
    <!-- file: PATH -->                       the ```yaml block after it is PATH's text
    <!-- output: grader ARGS... (exit N) -->  the ```text block after it is what the command prints
After changing the engine's messages or the example, regenerate them with
    .venv/bin/python tests/test_spec_docs.py --update
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "spec-language.md"
WORKED = ROOT / "docs" / "examples" / "worked.yaml"
MARKER = re.compile(r"<!-- (file|output): (.+?) -->\n```(\w+)\n(.*?)```", re.S)
EXPECTED_VERDICTS = {"ex3-projections": "refuted", "ex2-verification": "holds",
                     "gpt3-heads": "holds", "cannot-model-all": "unverifiable"}


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def run_grader(args):
    """(exit status, what the command prints) for `grader ARGS` run in the repository root:
    its standard output, or, for an invalid spec (exit 2), its `error:` lines."""
    from grader.cli import main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
                code = 0
            except SystemExit as e:
                code = e.code
    finally:
        os.chdir(cwd)
    if code == 2:
        text = "\n".join(x for x in err.getvalue().splitlines() if x.startswith("error: "))
    else:
        text = out.getvalue()
    return code, _tidy(text)


def _blocks(doc: str):
    for m in MARKER.finditer(doc):
        yield m


def _command(spec: str):
    m = re.fullmatch(r"grader (.+) \(exit (\d+)\)", spec)
    assert m, f"bad output marker {spec!r}: write 'grader ARGS... (exit N)'"
    return shlex.split(m.group(1)), int(m.group(2))


def expected_block(kind: str, spec: str) -> str:
    if kind == "file":
        return (ROOT / spec).read_text(encoding="utf-8")
    args, _ = _command(spec)
    return run_grader(args)[1]


def update(doc_path=DOC) -> None:
    doc = doc_path.read_text(encoding="utf-8")

    def fill(m):
        body = expected_block(m.group(1), m.group(2))
        return f"<!-- {m.group(1)}: {m.group(2)} -->\n```{m.group(3)}\n{body}```"
    doc_path.write_text(MARKER.sub(fill, doc), encoding="utf-8")


# -- the worked example runs, with the verdicts the document shows --------------------------------
def test_worked_example_runs_with_the_documented_verdicts():
    from click.testing import CliRunner

    from grader.cli import cli

    r = CliRunner().invoke(cli, ["check-spec", str(WORKED), "--format", "json"])
    assert r.exit_code == 0, r.output[-3000:]
    data = json.loads(r.output)
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts == EXPECTED_VERDICTS
    ex3 = next(c for c in data["claims"] if c["id"] == "ex3-projections")
    assert "the text's arithmetic is right but counts another quantity" in ex3["evidence"]["disagreement"]
    assert "274,877,906,944" in ex3["evidence"]["summary"]
    assert data["summary"]["unexpected"] == 0


def test_worked_example_text_report_and_exit_status():
    from click.testing import CliRunner

    from grader.cli import cli

    r = CliRunner().invoke(cli, ["check-spec", str(WORKED)])
    assert r.exit_code == 0
    assert "4 claims: 2 hold, 1 refuted, 1 unverifiable, 0 errors; 0 not as expected" in r.output


# -- the document's blocks are the real file and the real outputs --------------------------------
def _marked():
    doc = DOC.read_text(encoding="utf-8")
    return [pytest.param(m.group(1), m.group(2), m.group(4), id=f"{m.group(1)}:{m.group(2)}")
            for m in _blocks(doc)]


def test_the_document_has_its_marked_blocks():
    kinds = [(m.group(1), m.group(2)) for m in _blocks(DOC.read_text(encoding="utf-8"))]
    assert ("file", "docs/examples/worked.yaml") in kinds
    assert sum(k == "output" for k, _ in kinds) >= 3


@pytest.mark.parametrize("kind, spec, shown", _marked())
def test_block_is_real(kind, spec, shown):
    if kind == "output":
        args, code = _command(spec)
        got_code, text = run_grader(args)
        assert got_code == code, f"`grader {' '.join(args)}` exits {got_code}, the document says {code}"
    else:
        text = expected_block(kind, spec)
    assert _tidy(shown) == _tidy(text), (
        f"docs/spec-language.md's block for {spec!r} is not the real one; "
        "run `.venv/bin/python tests/test_spec_docs.py --update`")


def test_yaml_samples_in_the_document_load():
    from grader.claims.load import loads

    doc = DOC.read_text(encoding="utf-8")
    samples = [b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if re.search(r"^subject:", b, re.M)]
    assert len(samples) >= 2
    for text in samples:
        loads(text, "docs/spec-language.md")        # raises ErrorList with every problem


def test_document_lists_every_kind_and_quantity():
    from grader.claims.checks import KINDS
    from grader.claims.measure import quantities

    doc = DOC.read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"`{kind}`" in doc, f"check kind {kind} is not documented"
    for q in quantities():
        if not q.startswith(("shape.", "tensor.")):
            assert f"`{q}`" in doc, f"quantity {q} is not documented"


def test_invalid_examples_are_every_kind_of_error():
    code, text = run_grader(["check-spec", "docs/examples/invalid"])
    assert code == 2
    for what in ("duplicate key 'd'", "expect must be one of", "unknown check kind 'guess'",
                 "duplicate claim id 'total'", "unknown name 'zeta'", "unknown quantity 'flops.everything'",
                 "unknown symbol 'L'", "needs a value for n", "do not meet the constraint 'h divides d'",
                 "unknown document 'article'", "needs 'corrected:'"):
        assert what in text, what
    assert "Traceback" not in text


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
        print(f"updated {DOC}")
    else:
        print(__doc__)
