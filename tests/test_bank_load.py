"""The exercise bank: the required problems exist with their references; invalid bank files
are reported all at once, each at file:line."""
import textwrap

import pytest

from grader.bank import KINDS, load_bank
from grader.errors import ErrorList

# The table, with the arithmetic written out (1 multiply-add = 2 FLOPs, matmuls only).
REQUIRED = {
    "17-08/example-1.d_k": ("number", 768 // 12),                       # 64
    "17-08/example-1.q_i_shape": ("shape", [128, 768 // 12]),
    "17-08/example-1.scores_shape": ("shape", [128, 128]),
    "17-08/example-1.head_shape": ("shape", [128, 64]),
    "17-08/example-1.concat_shape": ("shape", [128, 12 * 64]),
    "17-08/example-1.output_shape": ("shape", [128, 768]),
    "17-08/example-2.params": ("number", 4 * 512 * 512),                # 1,048,576
    "17-08/example-3.projection_flops": ("number", 4 * 2 * 2048 * 4096 * 4096),   # 274,877,906,944
    "17-08/example-3.attention_flops": ("number", 2 * 2 * 2048 * 2048 * 4096),    # 68,719,476,736
    "17-08/example-3.total_flops": ("number", 274877906944 + 68719476736),        # 343,597,383,680
    "17-08/practice-1": ("number", 1024 // 16),
    "17-08/practice-4.count": ("number", 8 * 32),
    "17-08/practice-4.bytes": ("quantity", 8 * 32 * 128 * 128 * 4),    # 16,777,216
    "17-08/params-formula": ("expression", "4*d**2 + 4*d"),
    "17-08/flops-formula": ("expression", "8*n*d**2 + 4*n**2*d"),
    "17-08/d_k-formula": ("expression", "d/h"),
    "17-08/attn-memory-formula": ("expression", "4*b*h*n**2"),
    "17-08/crossover": ("relation", "n > 2*d"),
}


@pytest.fixture(scope="module")
def bank():
    return load_bank()


@pytest.mark.parametrize("pid", sorted(REQUIRED))
def test_required_problem_exists_with_its_reference(bank, pid):
    problem = bank.get(pid)
    assert problem is not None, f"{pid} missing from the bundled bank"
    kind, reference = REQUIRED[pid]
    assert problem.kind == kind
    assert problem.reference == reference
    assert problem.points > 0 and problem.prompt


def test_practice_4_bytes_is_in_bytes(bank):
    assert bank.get("17-08/practice-4.bytes").unit == "byte"


def test_bank_covers_quiz_practice_and_every_kind_but_code(bank):
    ids = {p.id for p in bank}
    assert {f"17-08/quiz-{i}" for i in range(1, 8)} <= ids
    assert {"17-08/practice-2", "17-08/practice-3", "17-08/practice-5"} <= ids
    assert {p.kind for p in bank} >= set(KINDS) - {"code"}
    assert all(p.location and p.location.line for p in bank)
    assert len(ids) == len(bank.problems)


def test_free_text_needs_a_person(bank):
    assert bank.get("17-08/practice-2").needs_person
    assert not bank.get("17-08/practice-1").needs_person


def write(tmp_path, text, name="bank.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_every_error_of_a_bank_file_reported_at_once_with_lines(tmp_path):
    p = write(tmp_path, """\
        subject: 17-08
        problems:
          - id: 17-08/a
            prompt: fine
            kind: number
            reference: 1
            derive: {formula: d, at: {d: 1}}
          - id: bad id
            prompt: x
            kind: number
            reference: 1
          - id: 17-08/a
            prompt: duplicate
            kind: colour
            reference: 1
            colour: red
          - id: 17-08/c
            prompt: which?
            kind: choice
            choices: {A: one, B: two}
            reference: E
        """)
    with pytest.raises(ErrorList) as info:
        load_bank(p)
    text = str(info.value)
    assert f"{p}:8:" in text and "'id' must look like SUBJECT/NAME" in text
    assert f"{p}:14:" in text and "'kind' must be one of" in text
    assert f"{p}:16:" in text and "unknown key 'colour'" in text
    assert "reference 'E' is not one of the choices A, B" in text
    assert "duplicate problem id" not in text or "17-08/a" in text


def test_duplicate_problem_id_across_files(tmp_path):
    body = "subject: x\nproblems:\n  - {id: x/a, prompt: p, kind: choice, choices: {A: a}, reference: A}\n"
    write(tmp_path, body, "one.yaml")
    write(tmp_path, body, "two.yaml")
    with pytest.raises(ErrorList) as info:
        load_bank(tmp_path)
    assert "duplicate problem id 'x/a' (first at" in str(info.value)
    assert "two.yaml:3" in str(info.value)


def test_duplicate_yaml_key_in_a_bank_file(tmp_path):
    p = write(tmp_path, "subject: x\nproblems: []\nproblems: []\n")
    with pytest.raises(ErrorList) as info:
        load_bank(p)
    assert "duplicate key 'problems'" in str(info.value) and ":3:" in str(info.value)


def test_code_folders_are_not_bank_files(tmp_path):
    write(tmp_path, "subject: x\nproblems:\n  - {id: x/a, prompt: p, kind: free_text, reference: r}\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "tests.yaml").write_text("not: a bank\n")
    assert [p.id for p in load_bank(tmp_path)] == ["x/a"]


def test_unknown_keys_anywhere_in_a_problem_are_reported_with_the_known_ones(tmp_path):
    p = write(tmp_path, """\
        subject: 17-08
        problems:
          - id: 17-08/a
            prompt: "parameters?"
            kind: number
            points: 4
            refrence: 64
            reference: 64
            derive: {formula: d, at: {d: 64}, unit: x}
            source: {document: 17-08, sektion: Examples}
            feedback: {wrong: "no", corect: "yes"}
            mistakes:
              - {answer: 128, feedback: "close", credit: 0.5}
              - {answer: 32, feedbak: "half"}
            partial:
              - {answer: 63, credits: 0.5}
        """)
    with pytest.raises(ErrorList) as info:
        load_bank(p)
    got = {str(e.location): e.message for e in info.value.errors}
    assert got[f"{p}:7:5"].startswith("unknown key 'refrence' in a problem; did you mean 'reference'? (known keys: ")
    assert "choices, derive, feedback" in got[f"{p}:7:5"]
    assert got[f"{p}:9:39"] == "unknown key 'unit' in 'derive' (known keys: at, formula)"
    assert got[f"{p}:10:31"].startswith("unknown key 'sektion' in 'source'; did you mean 'section'?")
    assert got[f"{p}:11:29"].startswith("unknown key 'corect' in 'feedback'")
    assert got[f"{p}:13:42"] == ("unknown key 'credit' in a mistake; partial credit is given under the problem's "
                                 "'partial: [{answer, credit}]' (known keys: answer, at, feedback, formula)")
    assert got[f"{p}:14:22"].startswith("unknown key 'feedbak' in a mistake; did you mean 'feedback'?")
    assert got[f"{p}:16:22"] == ("unknown key 'credits' in a 'partial' entry; did you mean 'credit'? "
                                 "(known keys: answer, credit)")


def test_unknown_key_of_a_bank_file_suggests_the_close_one(tmp_path):
    p = write(tmp_path, "subject: x\nproblem:\n  - {id: x/a, prompt: p, kind: free_text, reference: r}\n")
    with pytest.raises(ErrorList) as info:
        load_bank(p)
    assert f"{p}:2:1: unknown key 'problem' in a bank file; did you mean 'problems'?" in str(info.value)


@pytest.mark.parametrize("points, credit", [(".inf", "0.5"), (".nan", "0.5"), ("-.inf", "0.5"), ("1", ".nan"),
                                            ("1", "1.5"), ("1", "half")])
def test_points_and_credits_must_be_finite_numbers(tmp_path, points, credit):
    # YAML reads .inf/.nan as floats: without the check a problem worth inf points (or nan) loads, and a
    # gradebook's totals become inf/nan; a credit is a fraction of the points, 0 to 1 ("half" raised)
    p = write(tmp_path, f"""\
        subject: 17-08
        problems:
          - id: 17-08/a
            prompt: how many?
            kind: number
            reference: 64
            points: {points}
            partial:
              - {{answer: 63, credit: {credit}}}
        """)
    with pytest.raises(ErrorList) as info:
        load_bank(p)
    text = str(info.value)
    if points != "1":
        assert f"{p}:7:13: 'points' must be a finite number >= 0, got" in text
    else:
        assert f"{p}:9:7: 'partial' must be a list of {{answer, credit}}" in text and "from 0 to 1" in text
