"""grader.files.yamlio: plain data with positions; duplicates, aliases and oversize refused."""
import pytest

from grader.files import yamlio
from grader.errors import InputError, Location


def test_positions_of_keys_values_and_items():
    d = yamlio.loads("a: 1\nb:\n  - x\n  - {c: 2}\n", "f.yaml")
    assert d == {"a": 1, "b": ["x", {"c": 2}]}
    assert d.loc_of("a") == Location("f.yaml", 1, 4)
    assert d.key_loc("b") == Location("f.yaml", 2, 1)
    assert d["b"].loc_of(1) == Location("f.yaml", 4, 5)
    assert d["b"][1].loc_of("c") == Location("f.yaml", 4, 9)


@pytest.mark.parametrize(
    "text, where, words",
    [
        ("a: 1\nb: 2\na: 3\n", "f.yaml:3:1", "duplicate key 'a' (first at line 1)"),
        ("a: &x [1]\nb: *x\n", "f.yaml:1:4", "aliases"),
        ("a: [1\n", "f.yaml:1:4", "invalid YAML: '[' is never closed"),   # at the bracket, not past the end
        ("base: {x: 1}\nd:\n  <<: {x: 1}\n", "f.yaml:3:3", "merge keys"),
        ("? [1, 2]\n: 3\n", None, "plain value"),
    ],
)
def test_refused_with_location(text, where, words):
    with pytest.raises(InputError) as e:
        yamlio.loads(text, "f.yaml")
    assert words in str(e.value)
    if where:
        assert str(e.value).startswith(where + ":")


def test_billion_laughs_is_refused_at_the_first_alias():
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i-1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(InputError, match="aliases"):
        yamlio.loads("\n".join(lines), "bomb.yaml")


def test_size_limit_and_encoding(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 200 + "\n")
    with pytest.raises(InputError, match="larger than 100 bytes"):
        yamlio.load_file(big, max_bytes=100)
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(InputError, match="not UTF-8"):
        yamlio.load_file(bad)
    with pytest.raises(InputError, match="cannot read file"):
        yamlio.load_file(tmp_path / "missing.yaml")


def test_json_is_read_too():
    d = yamlio.loads('{"learner": "bob", "answers": {"x": 1}}', "a.json")
    assert d["answers"] == {"x": 1}
    with pytest.raises(InputError, match="duplicate key"):
        yamlio.loads('{"a": 1, "a": 2}', "a.json")


def test_only_plain_data_no_python_tags():
    with pytest.raises(InputError):
        yamlio.loads("a: !!python/object/apply:os.system ['touch x']\n", "f.yaml")


# ---------------------------------------------------------------- answers files

def answers(text):
    return yamlio.loads(text, "a.yaml", answers=True)


@pytest.mark.parametrize("written", [
    "0100",         # YAML 1.1: octal 64
    "1:04",         # YAML 1.1: sexagesimal 64
    "0x100",        # YAML 1.1: hex 256
    "0o100", "1_048_576", "+64", "-0", "064",
    "yes", "no", "on", "off", "y", "n", "True", "FALSE", "Null",
    "1.05e6", "16.80", "2001-12-14",
])
def test_answers_keep_what_the_learner_wrote(written):
    """Only canonical decimal integers, true/false and null are typed; the rest is the text."""
    got = answers(f"x: {written}\n")["x"]
    assert got == written and type(got) is str


@pytest.mark.parametrize("written, value", [
    ("64", 64), ("0", 0), ("-12", -12), ("1048576", 1048576),
    ("true", True), ("false", False), ("null", None), ("~", None), ("", None),
    ('"0100"', "0100"), ("'64'", "64"), ("!!str 64", "64"), ("!!int 64", 64), ("!!int 0100", "0100"),
    ("!!float 1.5", "1.5"), ("!!float 256", 256), ("!!bool true", True), ("!!null ''", None),
])
def test_answers_core_scalars(written, value):
    got = answers(f"x: {written}\n")["x"]
    assert got == value and type(got) is type(value)


def test_answers_nan_and_infinity_are_floats_for_the_guard_to_refuse():
    got = answers("a: .nan\nb: -.inf\nc: .Inf\n")
    assert got["a"] != got["a"] and got["b"] == float("-inf") and got["c"] == float("inf")


def test_an_integer_past_pythons_4300_digits_stays_text():
    """int('9' * 4301) raises ValueError in Python 3.11: the answer must not crash the reader."""
    big = "9" * 4301
    got = answers(f"a: {big}\nb: 64\n")
    assert got["a"] == big and type(got["a"]) is str and got["b"] == 64
    assert answers('{"a": %s}' % big)["a"] == big                      # JSON too
    assert answers(f"a: {'9' * 4300}\n")["a"] == int("9" * 4300)       # at the limit: an int


def test_a_huge_integer_in_a_data_file_is_an_error_with_its_place():
    with pytest.raises(InputError) as e:
        yamlio.loads(f"a: 1\nb: {'7' * 5000}\n", "bank.yaml")
    assert str(e.value).startswith("bank.yaml:2:4: integer too large (5,000 digits")


@pytest.mark.parametrize("tagged, tag", [
    ("!!set {a, b}", "!!set"), ("!!binary aGVsbG8=", "!!binary"), ("!!timestamp 2001-12-14", "!!timestamp"),
    ("!!omap [a: 1]", "!!omap"), ("!!pairs [a: 1]", "!!pairs"), ("!!python/object/apply:os.system ['id']", "!!python/"),
    ("!!python/name:os.system ''", "!!python/name"), ("!custom x", "!custom"), ("!!int 0x100", "!!int"),
    ("!!float 1:04", "!!float"), ("!!bool yes", "!!bool"),
])
def test_answers_other_tags_refuse_the_value_at_its_place_not_the_file(tagged, tag):
    got = answers(f"learner: x\nanswers:\n  p: 64\n  q: {tagged}\n")
    assert got["answers"]["p"] == 64
    refused = got["answers"]["q"]
    assert isinstance(refused, yamlio.Refused)
    assert refused.location == Location("a.yaml", 4, 6)
    assert tag in refused.message and refused.source == tagged


@pytest.mark.parametrize("tagged", ["!!set {a, b}", "!!binary aGVsbG8=", "!!omap [a: 1]", "!!python/name:os.system ''"])
def test_data_files_refuse_those_tags_with_their_place(tagged):
    with pytest.raises(InputError) as e:
        yamlio.loads(f"a: 1\nb: {tagged}\n", "f.yaml")
    assert str(e.value).startswith("f.yaml:2:4: tag !!")


def test_answers_duplicate_key_refuses_that_value_only():
    got = answers("learner: x\nanswers:\n  p: 64\n  q: 1\n  p: 63\n")
    assert got["answers"]["q"] == 1
    dup = got["answers"]["p"]
    assert isinstance(dup, yamlio.Refused)
    assert dup.message == "duplicate key 'p' (first at line 3)"
    assert dup.location == Location("a.yaml", 5, 3) and dup.first == Location("a.yaml", 3, 3)
    assert dup.source == "63"
    one_line = answers('{"p": 1, "p": 2}')["p"]
    assert one_line.message == "duplicate key 'p' (first at line 1, column 2)"


def test_answers_aliases_and_merge_keys_still_refuse_the_file():
    with pytest.raises(InputError, match="aliases"):
        answers("a: &x 64\nb: *x\n")
    with pytest.raises(InputError, match="merge keys"):
        answers("a: {x: 1}\nb:\n  <<: {x: 1}\n")
    # an anchor inside a duplicate's value is still seen when it is used again
    with pytest.raises(InputError, match="aliases"):
        answers("a: 1\na: &x [1]\nb: *x\n")


def test_data_files_keep_yaml_1_1_types():
    """The bank and the spec are written by authors and read as before (YAML 1.1)."""
    d = yamlio.loads("a: 0x10\nb: yes\nc: 1.5\nd: 2001-12-14\n", "f.yaml")
    assert d["a"] == 16 and d["b"] is True and d["c"] == 1.5 and str(d["d"]) == "2001-12-14"


@pytest.mark.parametrize("text", [
    "a: " + "[" * 100_000 + "]" * 100_000,
    "a: " + "{b: " * 60_000 + "1" + "}" * 60_000,
    "- " * 100_000 + "x",
])
def test_very_deep_nesting_is_an_error_not_a_crash(text, tmp_path):
    """libyaml's C composer recurses once per level and overflows the stack (a segfault near
    50,000 levels): the reader must say "nested too deeply" instead. Run apart, so that a
    crash fails this test and not the whole run."""
    import subprocess
    import sys
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    code = ("import sys\nfrom grader.files import yamlio\nfrom grader.errors import InputError\n"
            "try:\n    yamlio.load_file(sys.argv[1])\nexcept InputError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.strip() == f"{f}: YAML nested too deeply"
