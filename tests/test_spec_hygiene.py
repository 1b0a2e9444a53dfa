"""Source hygiene in every spec run: quotes of a source with a path are checked against its text, a
vacuous identity is reported as such."""
import pytest

from grader.errors import ErrorList
from grader.claims.load import load_subject
from grader.claims.run import run_subject

SPEC = """\
subject:
  id: "h-1"
  title: Hygiene
  sources:
    text: {{title: A text, path: {path}}}
    other: {{title: No local copy}}
symbols:
  d: {{positive: true, integer: true}}
  h: {{positive: true, integer: true}}
definitions:
  d_k: d/h
claims:
  - id: c1
    quote: "{quote}"
    source: {{document: text}}
    expect: holds
    checks:
      - {{kind: identity, lhs: "{lhs}", rhs: "{rhs}"}}
  - id: c2
    quote: "anything at all"
    source: {{document: other}}
    expect: holds
    checks:
      - {{kind: identity, lhs: "h*d_k", rhs: "d"}}
"""
TEXT = "Each head has width d_k = d/h.\nSo   h heads of width d_k make\n  d in all.\n"


def write(tmp_path, quote="h heads of width d_k make d in all", lhs="h*d_k", rhs="d", path="src/text.txt"):
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "text.txt").write_text(TEXT, encoding="utf-8")
    p = tmp_path / "specs" / "h.yaml"
    p.parent.mkdir(exist_ok=True)
    p.write_text(SPEC.format(quote=quote, lhs=lhs, rhs=rhs, path=path), encoding="utf-8")
    return p


def test_a_quote_in_the_text_loads_and_the_source_is_found_above_the_spec(tmp_path):
    s = load_subject(write(tmp_path))       # specs/h.yaml finds src/text.txt in the folder above
    assert [c.id for c in s.claims] == ["c1", "c2"]
    s = load_subject(write(tmp_path, quote="Each head has width … make d in all"))
    assert s.claims[0].quote.startswith("Each head")


@pytest.mark.parametrize("quote, message", [
    ("h heads of width d_k make 2d in all", "not found: 'h heads of width d_k make 2d in all'"),
    ("make d in all … Each head has width", "each fragment is there, but not in this order"),
])
def test_a_quote_not_in_the_text_is_an_error_at_the_quote(tmp_path, quote, message):
    p = write(tmp_path, quote=quote)
    with pytest.raises(ErrorList) as e:
        load_subject(p)
    (err,) = [str(x) for x in e.value.errors]
    line = next(i for i, t in enumerate(p.read_text().splitlines(), 1) if "quote:" in t)
    assert f"h.yaml:{line}:" in err and "the quote is not in source 'text' (src/text.txt)" in err and message in err


@pytest.mark.parametrize("lhs, rhs, vacuous", [
    ("d_k*(1*1)", "d_k", True),          # no symbol of the spec written: true whatever d_k means
    ("4*d^2", "4*d^2", True),             # the same text on both sides
    ("h*d_k", "d", False),                # uses the definition: h·(d/h) = d
    ("3*h*(d^2/h)", "3*d^2", False),      # the claim's own symbols, cancelling
])
def test_a_vacuous_identity_is_reported_as_such(tmp_path, lhs, rhs, vacuous):
    r = run_subject(load_subject(write(tmp_path, lhs=lhs, rhs=rhs)), device="cpu").results[0]
    if vacuous:
        assert r.verdict == "error" and r.evidence.startswith(f"vacuous check: {lhs} = {rhs} holds whatever")
    else:
        assert r.verdict == "holds", r.evidence


def test_sources_whose_quotes_cannot_be_checked_are_said_not_silently_accepted(tmp_path):
    s = load_subject(write(tmp_path))       # 'other' has no path: its one quote is not checked
    assert s.unchecked == ("source 'other' has no 'path:', so its 1 quote is not checked against its text",)
    s = load_subject(write(tmp_path, path="src/missing.txt"))
    assert len(s.unchecked) == 2
    assert "source 'text': src/missing.txt is not found beside" in s.unchecked[0]
    assert "its 1 quote" in s.unchecked[0]


def test_check_spec_warns_of_unchecked_sources_on_stderr_and_still_checks(tmp_path):
    from click.testing import CliRunner

    from grader.cli import cli
    p = write(tmp_path, path="src/missing.txt")
    r = CliRunner().invoke(cli, ["check-spec", str(p), "--no-train"])
    assert r.exit_code == 0, r.output
    assert "2 claims: 2 hold" in r.stdout
    assert f"warning: {p}: source 'text': src/missing.txt is not found" in r.stderr
    assert "source 'other' has no 'path:'" in r.stderr
    assert "warning" not in r.stdout
