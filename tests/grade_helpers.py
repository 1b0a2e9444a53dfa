"""Running `grader grade` through the CLI in tests (answer files written into tmp_path)."""
import json
import textwrap

from click.testing import CliRunner

from grader.cli import cli


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def grade(*args, jobs=2):
    return CliRunner().invoke(cli, ["grade", "--jobs", str(jobs), *map(str, args)])


def as_json(*args, jobs=2):
    """(result, the parsed JSON or None); an exception other than click's exit fails the test."""
    r = grade("--format", "json", *args, jobs=jobs)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r, json.loads(r.stdout) if r.stdout.strip() else None
