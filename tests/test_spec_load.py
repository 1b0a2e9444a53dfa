"""Invalid specs: every error of a file at once, each as file:line:column saying what was expected."""
import pytest

from grader.errors import ErrorList, InputError
from grader.claims.load import load_subject, load_subjects
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
    errors = [str(e) for e in info.value.errors]
    assert errors[:3] == [
        f"{p}:4:3: duplicate key 'd' (first at line 3)",
        f"{p}:8:3: duplicate key 'quote' (first at line 7)",
        f"{p}:9:43: duplicate key 'section' (first at line 9)"]
    # ...and the duplicates hide nothing else: the subject has no sources (its mapping starts at
    # line 1, column 10), the claim at line 6 has no expect and no checks
    assert f"{p}:1:10: missing 'sources' (a mapping)" in errors
    assert f"{p}:6:3: missing 'expect' (text)" in errors
    assert f"{p}:6:3: 'checks' must be a non-empty list" in errors


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


def test_a_duplicate_key_hides_no_other_error(tmp_path):
    # the reviewer's file: a duplicate symbol, and below it six more errors
    p = tmp_path / "bad.yaml"
    p.write_text('subject: {id: "x", title: X, sources: {subject: {title: T}}}\n'
                 "symbols:\n"
                 "  d: {positive: true, integer: true}\n"
                 "  h: {positive: true, integer: true}\n"
                 "  d: {positive: true}\n"                                   # line 5: duplicate key
                 "formulas:\n"
                 "  f: 4*zeta^2\n"                                           # line 7: unknown name
                 "claims:\n"
                 "- id: a\n"
                 "  quote: q\n"
                 "  source: {document: subject, section: s, section: t, page: 3}\n"   # line 11
                 "  expect: holds\n"
                 "  checks:\n"
                 "    - {kind: guess, expr: d}\n"                            # line 14: unknown kind
                 "- id: a\n"                                                 # line 15: duplicate claim id
                 "  quote: q\n"
                 "  source: {document: subject, section: s}\n"
                 "  expect: holds\n"
                 "  checks:\n"
                 "    - {kind: identity, lhs: \"q*d\", rhs: d}\n", encoding="utf-8")   # line 20
    errs = errors_of(p)
    name = str(p)
    assert errs[0] == f"{name}:5:3: duplicate key 'd' (first at line 3)"
    # line 11: "  source: {document: subject, section: s, " is 42 characters: 'section' again at 43;
    # "section: t, " is 12 more: 'page' at 55, where it stays when the repeated entry is cut out
    assert errs[1] == f"{name}:11:43: duplicate key 'section' (first at line 11)"
    rest = errs[2:]
    assert any(e.startswith(f"{name}:7:") and "zeta" in e for e in rest)
    assert any(e.startswith(f"{name}:11:55: unknown key 'page' in a source") for e in rest)
    assert any(e.startswith(f"{name}:14:") and "unknown check kind 'guess'" in e for e in rest)
    assert any(e.startswith(f"{name}:15:") and "duplicate claim id 'a' (first at line 9)" in e for e in rest)
    assert any(e.startswith(f"{name}:20:") and "unknown name 'q'" in e for e in rest)
    assert len(errs) == 7


def test_an_empty_file_says_it_is_empty(tmp_path):
    p = tmp_path / "empty.yaml"
    p.write_text("# nothing yet\n", encoding="utf-8")
    assert errors_of(p) == [f"{p}:1:1: the file is empty; a spec is a mapping with 'subject', 'symbols', "
                            f"'claims', ..."]


def test_bias_is_true_or_false_as_yaml_or_as_text(tmp_path):
    # without biases mha(8, 2) has 4·8² = 256 parameters
    p = write_spec(tmp_path,
                   claim("yaml-bool", "holds", ['{kind: measure, quantity: params, at: {d: 8, h: 2}, bias: false, claimed: "256"}']),
                   claim("text", "holds", ['{kind: measure, quantity: params, at: {d: 8, h: 2}, bias: "false", claimed: "256"}']))
    s = load_subject(p)
    assert [c.checks[0]["bias"] for c in s.claims] == [False, False]
    bad = write_spec(tmp_path, claim("maybe", "holds", ['{kind: measure, quantity: params, at: {d: 8, h: 2}, bias: maybe}']),
                     name="bad.yaml")
    (err,) = errors_of(bad)
    assert f":{line_of(bad, 'bias: maybe')}:" in err and "bias must be true or false, got 'maybe'" in err


def test_tolerance_a_number_0_or_more_even_when_yaml_reads_text(tmp_path):
    # YAML 1.1 reads 1e-5 (no decimal point) as text, 1.0e-5 as a number: both are 0.00001
    eq = '{kind: equivalence, a: fused, b: per_head, at: {d: 8, h: 2}, tolerance: %s}'
    p = write_spec(tmp_path, claim("t1", "holds", [eq % "1e-5"]), claim("t2", "holds", [eq % "1.0e-5"]),
                   claim("t3", "holds", [eq % "0"]))
    assert [c.checks[0]["tolerance"] for c in load_subject(p).claims] == [1e-5, 1e-5, 0.0]
    bad = write_spec(tmp_path, claim("neg", "holds", [eq % "-1.0"]), claim("nan", "holds", [eq % ".nan"]),
                     claim("word", "holds", [eq % "tiny"]), name="bad.yaml")
    errs = errors_of(bad)
    assert len(errs) == 3
    for needle, e in zip(("-1.0", ".nan", "tiny"), errs):
        assert f":{line_of(bad, needle)}:" in e and "tolerance must be a number, 0 or more" in e


def test_values_meet_the_symbols_assumptions(tmp_path):
    p = write_spec(tmp_path,
                   claim("frac", "holds", ['{kind: measure, quantity: params, at: {d: 8.5, h: 2}, claimed: "288"}']),
                   claim("neg", "holds", ['{kind: numeric, expr: "d^2", at: {d: -8}, claimed: "64"}']),
                   claim("zero-h", "holds", ['{kind: numeric, expr: "d", at: {d: 8, h: 0}, claimed: "8"}']),
                   claim("vary", "holds", ['{kind: invariance, quantity: params, at: {d: 8}, vary: {h: [1, 2.5]}}']))
    errs = errors_of(p)
    text = p.read_text().splitlines()

    def at(needle, message):
        line = line_of(p, needle)
        col = text[line - 1].index(needle.split(": ")[-1]) + 1     # the column of the value itself
        hits = [e for e in errs if e.startswith(f"{p}:{line}:{col}: ") and message in e]
        assert hits, f"no {message!r} at {line}:{col}:\n" + "\n".join(errs)

    at("d: 8.5", "the value of d in at must be an integer (d is declared integer), got 8.5")
    at("d: -8", "the value of d in at must be positive (d is declared positive), got -8")
    at("h: 0", "the value of h in at must be positive (h is declared positive), got 0")
    assert any(f":{line_of(p, '2.5]')}:" in e and "vary.h must be a non-empty list of integers" in e for e in errs)
    assert len(errs) == 4


def test_values_meet_the_constraints_and_give_every_symbol(tmp_path):
    header = HEADER.replace("    values: {d: 1024, h: 16, n_kv: 4}", "    values: {d: 1000, h: 16, n_kv: 4}")
    p = write_spec(tmp_path,
                   # 3 does not divide 10
                   claim("divides", "holds", ['{kind: shapes, at: {d: 10, h: 3, n: 4}, shapes: {Q_i: [4, 3]}}']),
                   claim("numeric", "holds", ['{kind: numeric, expr: "d_k", at: {d: 10, h: 3}, claimed: "3"}']),
                   # 8 divides 256 but 3 does not
                   claim("vary", "holds", ['{kind: invariance, quantity: params, at: {d: 256}, vary: {h: [8, 3]}}']),
                   # d_k = d/h needs h
                   claim("missing", "holds", ['{kind: numeric, expr: "d_k", at: {d: 12}, claimed: "3"}']),
                   claim("no-n", "holds", ['{kind: measure, quantity: flops.total, at: {d: 8, h: 2}}']),
                   claim("no-h", "holds", ['{kind: compare, left: params, right: flops.qk, at: {d: 8, n: 2}, claimed: less}']),
                   claim("formula", "holds", ['{kind: measure, quantity: params, at: {d: 8, h: 2}, formula: "d*n_kv"}']),
                   claim("unmodelled", "holds", ['{kind: config, model: toy, expr: "n", claimed: "1"}']),
                   header=header)
    errs = errors_of(p)

    def has(needle, message):
        hits = [e for e in errs if f":{line_of(p, needle)}:" in e and message in e]
        assert hits, f"no {message!r} on the line of {needle!r}:\n" + "\n".join(errs)

    constraint_line = line_of(p, "  - h divides d")
    has("values: {d: 1000", f"the values of model toy d=1,000, h=16 do not meet the constraint 'h divides d' "
                            f"(line {constraint_line})")          # 16 does not divide 1000
    has("shapes: {Q_i: [4, 3]}", f"the values d=10, h=3 do not meet the constraint 'h divides d' (line {constraint_line})")
    has('expr: "d_k", at: {d: 10, h: 3}', "the values d=10, h=3 do not meet the constraint 'h divides d'")
    has("vary: {h: [8, 3]}", "the values d=256, h=3 (h from vary) do not meet the constraint 'h divides d'")
    has('at: {d: 12}', "a numeric check needs a value for h (the expression uses it); give it in 'at'")
    has("flops.total, at: {d: 8, h: 2}", "a measure check needs a value for n (mha is built and run at these sizes)")
    has("right: flops.qk", "a compare check needs a value for h (mha is built and run at these sizes)")
    has('formula: "d*n_kv"', "a measure check needs a value for n_kv (the formula uses it)")
    has('expr: "n", claimed', "model 'toy' records no value for n, which the expression uses")
    assert len(errs) == 9


def test_mha_needs_h_to_divide_d_even_without_the_constraint(tmp_path):
    header = HEADER.replace("constraints:\n  - h divides d\n", "")
    p = write_spec(tmp_path, claim("m", "holds", ['{kind: measure, quantity: params, at: {d: 10, h: 3}}']), header=header)
    (err,) = errors_of(p)
    assert f":{line_of(p, 'd: 10, h: 3')}:" in err
    assert "a measure check: mha needs h to divide d" in err and "d=10, h=3" in err


def test_messages_use_an_before_a_vowel(tmp_path):
    p = write_spec(tmp_path, claim("a", "holds", ['{kind: identity, lhs: "d"}']),
                   claim("b", "holds", ['{kind: asymptotic, expr: "d", class: O, as: [d]}']),
                   claim("c", "holds", ['{kind: numeric, expr: "d", at: {d: 1}}']))
    errs = errors_of(p)
    assert any("an identity check needs 'rhs' (expr)" in e for e in errs)
    assert any("an asymptotic check needs 'of' (expr)" in e for e in errs)
    assert any("a numeric check needs 'claimed' (figure)" in e for e in errs)
