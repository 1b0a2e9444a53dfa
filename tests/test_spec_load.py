"""Invalid specs: every error of a file at once, each as file:line:column saying what was expected."""
import pytest

from grader.errors import ErrorList, InputError
from grader.spec.load import load_subject, load_subjects
from spec_helpers import HEADER, claim, write_spec


def line_of(path, needle, nth=1):
    """1-based line of the nth line containing needle (worked out from the file, not the loader)."""
    hits = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line]
    return hits[nth - 1]


def errors_of(path):
    with pytest.raises(ErrorList) as info:
        load_subjects([path])
    return [str(e) for e in info.value.errors]


def test_every_error_is_reported_at_once_with_its_line(tmp_path):
    p = write_spec(tmp_path,
                   claim("a", "holds", ['{kind: numeric, expr: "4*zeta^2", at: {d: 2}, claimed: "16"}']),      # unknown symbol
                   claim("b", "holds", ['{kind: identity, lhs: "4*d^^2", rhs: "d"}']),                         # bad expression
                   claim("c", "holds", ['{kind: guess, expr: "d"}']),                                           # unknown kind
                   claim("a", "holds", ['{kind: numeric, expr: "d", at: {q: 2}, claimed: "2"}']),               # dup id, unknown symbol in at
                   claim("e", "holds", ['{kind: measure, quantity: params.total, at: {d: 8, h: 2}}']),          # unknown quantity
                   claim("f", "holds", ['{kind: shapes, at: {d: 8, h: 2, n: 3}, shapes: {Z_i: [3, 4]}}']),      # unknown trace name
                   claim("g", "holds", ['{kind: config, model: gpt9, expr: h, claimed: "1"}']),                 # unknown model
                   claim("h", "refuted", ['{kind: numeric, expr: "d", at: {d: 2}, claimed: "x2"}'], corrected=""))  # bad figure, no corrected
    errs = errors_of(p)
    name = str(p)

    def has(needle, line, text):
        hits = [e for e in errs if e.startswith(f"{name}:{line}:") and text in e]
        assert hits, f"no error containing {text!r} at line {line}; got:\n" + "\n".join(errs)

    has("zeta", line_of(p, "zeta"), "zeta")
    has("d^^2", line_of(p, "d^^2"), "bad lhs")
    has("guess", line_of(p, "kind: guess"), "unknown check kind 'guess'")
    has("- id: a", line_of(p, "- id: a", 2), "duplicate claim id 'a' (first at line " + str(line_of(p, "- id: a")) + ")")
    has("q: 2", line_of(p, "{q: 2}"), "unknown symbol 'q'")
    has("params.total", line_of(p, "params.total"), "unknown quantity 'params.total'")
    has("Z_i", line_of(p, "Z_i"), "unknown trace name 'Z_i'")
    has("gpt9", line_of(p, "gpt9"), "unknown model 'gpt9'")
    has("x2", line_of(p, "x2"), "bad figure 'x2'")
    assert any("needs 'corrected:'" in e for e in errs)
    assert len(errs) >= 10


def test_column_points_at_the_value(tmp_path):
    p = write_spec(tmp_path, claim("a", "holds", ['{kind: guess, expr: "d"}']))
    (err,) = errors_of(p)
    line = line_of(p, "kind: guess")
    col = p.read_text().splitlines()[line - 1].index("guess") + 1
    assert err.startswith(f"{p}:{line}:{col}: unknown check kind 'guess'; expected one of: ")
    assert "identity" in err and "equivalence" in err


def test_duplicate_yaml_key_is_positioned(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text(HEADER.replace("  h: {positive: true, integer: true}\n",
                                "  h: {positive: true, integer: true}\n  d: {positive: true}\n")
                 + "claims: []\n", encoding="utf-8")
    with pytest.raises(ErrorList) as info:
        load_subject(p)
    (err,) = info.value.errors
    assert isinstance(err, InputError)
    assert str(err).startswith(f"{p}:{line_of(p, 'd: {positive: true}', 1)}:")
    assert "duplicate key 'd'" in str(err)


def test_every_duplicate_yaml_key_at_once(tmp_path):
    p = tmp_path / "dups.yaml"
    p.write_text("subject: {id: t, title: T}\n"
                 "symbols:\n"
                 "  d: {positive: true}\n"
                 "  d: {integer: true}\n"
                 "claims:\n"
                 "- id: c1\n"
                 "  quote: one\n"
                 "  quote: two\n"
                 "  source: {document: subject, section: s, section: t}\n", encoding="utf-8")
    with pytest.raises(ErrorList) as info:
        load_subject(p)
    # line 4 col 3 ('d'), line 8 col 3 ('quote'), line 9: 'section' again after "  source: {document:
    # subject, section: s, " = 42 characters, so column 43
    assert [str(e) for e in info.value.errors] == [
        f"{p}:4:3: duplicate key 'd' (first at line 3)",
        f"{p}:8:3: duplicate key 'quote' (first at line 7)",
        f"{p}:9:43: duplicate key 'section' (first at line 9)"]


def test_unknown_alias_target_and_bad_assumption(tmp_path):
    header = HEADER.replace("  d_model: d", "  d_model: dd").replace("  b: {positive: true, integer: true}",
                                                                      "  b: {positive: yes-please}")
    p = write_spec(tmp_path, claim("x", "holds", ['{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}']),
                   header=header)
    errs = errors_of(p)
    assert any(f":{line_of(p, 'd_model: dd')}:" in e and "alias 'd_model' names an unknown symbol 'dd'" in e for e in errs)
    assert any(f":{line_of(p, 'yes-please')}:" in e and "unknown assumption positive" in e for e in errs)


def test_errors_of_several_files_come_together(tmp_path):
    a = tmp_path / "a"
    a.mkdir()
    write_spec(a, claim("x", "holds", ['{kind: guess}']), name="one.yaml")
    write_spec(a, claim("y", "maybe", ['{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}']), name="two.yaml")
    errs = errors_of(a)
    assert any("one.yaml" in e and "unknown check kind" in e for e in errs)
    assert any("two.yaml" in e and "expect must be one of holds, refuted, unverifiable" in e for e in errs)


def test_not_a_mapping_and_empty_folder(tmp_path):
    p = tmp_path / "list.yaml"
    p.write_text("- 1\n- 2\n", encoding="utf-8")
    assert "a spec must be a mapping" in errors_of(p)[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no spec files"):
        load_subjects([empty])


def test_bundled_spec_loads_with_both_texts(tmp_path):
    s = load_subject()
    assert s.id == "17-08"
    docs = {c.source.document for c in s.claims}
    assert docs == {"subject", "article"}
    assert len({c.id for c in s.claims}) == len(s.claims)
    for c in s.claims:
        assert c.quote and c.checks
        if c.expect == "refuted":
            assert c.corrected


def test_expression_error_column_points_into_the_formula(tmp_path):
    p = write_spec(tmp_path, claim("a", "holds", ['{kind: numeric, expr: "4*zeta^2", at: {d: 2}, claimed: "16"}']))
    (err,) = errors_of(p)
    line = line_of(p, "zeta")
    col = p.read_text().splitlines()[line - 1].index("zeta") + 1     # the column of 'z' in the file
    assert err.startswith(f"{p}:{line}:{col}: bad expr '4*zeta^2'")
    assert "zeta" in err
