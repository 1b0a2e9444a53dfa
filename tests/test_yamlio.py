"""grader.yamlio: plain data with positions; duplicates, aliases and oversize refused."""
import pytest

from grader import yamlio
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
        ("a: [1\n", "f.yaml:2:1", "invalid YAML"),
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
