"""The smaller walls of a new user's first hour (issue 15): each with its test."""
import json
import os

from grade_helpers import as_json, grade, write


def test_an_unclosed_brace_points_at_the_brace_not_past_the_end(tmp_path):
    path = write(tmp_path / "a.yaml", "learner: x\nanswers: {17-08/practice-1: 64\n")
    r = grade(path)
    assert r.exit_code == 2
    # line 2, column 10 is the '{' (counted from the text above, independently of the reader)
    line = 2
    column = "answers: {".index("{") + 1
    assert f"a.yaml:{line}:{column}: cannot read answers: invalid YAML: '{{' is never closed" in r.stderr
    assert line <= len(path.read_text().splitlines())


def test_an_unclosed_quote_and_bracket_too(tmp_path):
    q = write(tmp_path / "q.yaml", 'learner: x\nanswers:\n  17-08/practice-1: "64\n')
    b = write(tmp_path / "b.yaml", "learner: x\nanswers: [1\n")
    assert "q.yaml:3:21: cannot read answers: invalid YAML: '\"' is never closed" in grade(q).stderr
    assert "b.yaml:2:10: cannot read answers: invalid YAML: '[' is never closed" in grade(b).stderr


def test_text_mode_input_errors_go_to_stderr(tmp_path):
    write(tmp_path / "c" / "good.yaml", "learner: g\nanswers: {17-08/practice-1: 64}\n")
    write(tmp_path / "c" / "bad.yaml", "learner: b\nanswers: [1\n")
    r = grade(tmp_path / "c")
    assert r.exit_code == 2
    assert "bad.yaml:2:10" in r.stderr and "bad.yaml" not in r.stdout.replace("1 input error", "")
    assert "g (" in r.stdout


def test_files_are_taken_in_natural_order(tmp_path):
    for i in (10, 2, 0, 1, 11):
        write(tmp_path / "c" / f"s{i}.yaml", f"learner: s{i}\nanswers: {{17-08/practice-1: 64}}\n")
    r, data = as_json(tmp_path / "c")
    assert [s["learner"] for s in data["submissions"]] == ["s0", "s1", "s2", "s10", "s11"]


def test_json_locations_are_relative_to_the_working_folder(tmp_path, monkeypatch):
    path = write(tmp_path / "sub" / "a.yaml", "learner: a\nanswers: {17-08/practice-1: 64, 17-08/nope: 1}\n")
    monkeypatch.chdir(tmp_path)
    r, data = as_json(str(path.resolve()))                 # given as an absolute path
    [sub] = data["submissions"]
    assert sub["file"] == os.path.join("sub", "a.yaml")
    assert all(res["location"].startswith(os.path.join("sub", "a.yaml") + ":") for res in sub["results"])


def test_one_submission_is_singular(tmp_path):
    r = grade(write(tmp_path / "a.yaml", "learner: a\nanswers: {17-08/practice-1: 64}\n"))
    assert r.stdout.rstrip().endswith("1 submission, 1 answer graded")


def test_spec_keys_get_did_you_mean(tmp_path):
    import pytest
    from grader.errors import ErrorList
    from grader.claims.load import load_subjects
    from spec_helpers import claim, write_spec
    p = write_spec(tmp_path, claim("a", "holds", ['{kind: numeric, expr: "d", at: {d: 2}, claimed: "2"}']))
    text = p.read_text().replace("expect:", "expekt:", 1)
    p.write_text(text)
    with pytest.raises(ErrorList) as info:
        load_subjects([p])
    assert any("unknown key 'expekt'" in str(e) and "did you mean 'expect'?" in str(e) for e in info.value.errors), \
        [str(e) for e in info.value.errors]
