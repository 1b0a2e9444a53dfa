"""The 17-10 exercises (inference arithmetic): every reference verified against the spec, right answers
in rates and times graded correct, the course text's slips graded wrong with their own feedback; and a
learner's rate ('151 tokens/s', '153 FLOP/byte', '2,039 GB/s') is read as one unit."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.answers.units import read_quantity, split_unit
from grader.api import close, grade_submission, load_bank, verify_reference
from grader.grade.pool import AnswerLimits

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "exercises" / "17-10"


@pytest.fixture(scope="module")
def bank():
    b = load_bank(BANK)
    yield b
    close(b)


def test_the_bank(bank):
    ids = [p.id for p in bank.problems]
    assert len(ids) == 12 and all(i.startswith("17-10/") for i in ids)
    # 2+2+2+1+2+2+3+2+1+2+1+2 points
    assert sum(p.points for p in bank.problems) == 22
    kinds = {p.kind for p in bank.problems}
    assert kinds == {"quantity", "number", "expression", "choice"}
    for p in bank.problems:
        v = verify_reference(p, bank)
        assert v.ok, (p.id, v.message)


def test_rates_are_one_unit():
    # without the '/' rule the unit was the last run of letters ('s'), and '151 tokens/' no number
    assert split_unit("151 tokens/s") == ("151", "tokens/s")
    assert split_unit("≈153 FLOP/byte") == ("≈153", "FLOP/byte")
    assert split_unit("2,039 GB/s") == ("2,039", "GB/s")
    assert split_unit("16 MiB") == ("16", "MiB")
    assert split_unit("4096/2") == ("4096/2", "")          # a division of numbers stays a number
    # 2,039 GB/s in bytes/s: 2,039·10⁹
    q = read_quantity("2,039 GB/s", "byte / second")
    assert q.value == 2039 * 10**9


RIGHT = {
    "17-10/kv-token-mha": "512 KiB",            # 2·32·32·128·2 = 524,288 bytes
    "17-10/kv-token-gqa": "131,072 bytes",      # 2·32·8·128·2
    "17-10/kv-numbers-formula": "2 L n_kv d_k",
    "17-10/kv-mqa-ratio": 32,
    "17-10/kv-batch": "32 GiB",                 # 16·4096·524,288 = 2^35
    "17-10/weights-bf16": "16.1 GB",            # 8,030,261,248·2 = 16,060,522,496
    "17-10/tokens-fit": "126,882",              # floor(66,523,168,768 / 524,288)
    "17-10/ridge": "≈ 153 FLOP/byte",           # 312·10^12 / 2,039·10^9 = 153.02
    "17-10/bound": "B",
    "17-10/decode-time": "6.6 ms",              # 13,476,831,232 / 2,039·10^9 s = 6.61 ms
    "17-10/tokens-per-s": "151 tokens/s",       # 1 / 6.61 ms
    "17-10/batch-intensity": "b",
}
SLIPS = {   # the course text's own slips, and the usual ones
    "17-10/kv-token-mha": ("256 KiB", "K only"),
    "17-10/kv-mqa-ratio": (64, "the 2 cancels"),
    "17-10/kv-batch": ("32 GB", "GiB"),
    "17-10/weights-bf16": ("16.1 GiB", "GiB"),
    "17-10/tokens-fit": (12688, "decimal slip"),
    "17-10/ridge": ("0.153 FLOP/byte", "10³"),
    "17-10/decode-time": ("66 ms", "decimal slip"),
    "17-10/tokens-per-s": ("15.1 tokens/s", "decimal slip"),
    "17-10/batch-intensity": ("2b", "2 bytes"),
}


def _graded(bank, answers):
    # generous limits: this checks the grades, not the speed (a loaded test machine may be slow)
    out = grade_submission(bank, "t", answers, limits=AnswerLimits(timeout_s=60.0, cpu_s=60))
    assert out.max_score == 22
    return {r.id: r for r in out.results}


def test_right_answers(bank):
    r = _graded(bank, RIGHT)
    assert {k: v.status for k, v in r.items()} == {k: "correct" for k in RIGHT}


def test_slips_get_their_feedback(bank):
    r = _graded(bank, {k: a for k, (a, _) in SLIPS.items()})
    for k, (_, words) in SLIPS.items():
        assert r[k].status == "wrong" and words in r[k].feedback, (k, r[k].feedback)
