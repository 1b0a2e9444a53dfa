"""Issue 13, piece by piece: the answer rule, exactness, proofs at sample points, files that are
not regular, the memory budget, escaped output, pending points. (The corpus and the fuzzing
run these end to end: tests/test_hostile_corpus.py, tests/test_fuzz.py.)"""
from __future__ import annotations

import json
import os
import threading
from fractions import Fraction

import pytest
import sympy

from grader.answers import AnswerSpec, check_answer
from grader.errors import InputError

NUMBER = AnswerSpec("number", 1048576)


# ---------------------------------------------------------------- the answer rule

@pytest.mark.parametrize("answer, why", [
    ("1e5000", "number too large or too precise"),          # literal: its exponent
    ("exp(1000)", "number too large"),                       # e^1000 ≈ 10^434.3: past 400 digits
    ("exp(-1000)", "number too large"),                      # its size estimated as e^1000's
    ("1/10^999", "number too large"),                        # a denominator of 1000 digits
    ("10^999*10^999*10^999*10^999*10^999", "number too large"),
    ("2^(2^30)", "exponent too large"),
    ("100!", "'!' (factorial) is not supported"),
])
def test_every_number_past_the_rule_is_invalid_with_a_message(answer, why):
    out = check_answer(NUMBER, answer)
    assert out.status == "invalid" and why in out.feedback, out


def test_a_formula_past_the_rule_is_invalid_with_its_column():
    from grader.bank import load_bank
    from grader.grade.check import prepare
    bank = load_bank()
    spec = prepare(bank.get("17-08/params-formula"), bank)
    out = check_answer(spec, "4d^2 + 4d + 1e5000")
    assert out.status == "invalid" and "(column 13)" in out.feedback, out       # 1e5000 starts at column 13
    out = check_answer(spec, "d^100")
    assert out.status == "invalid" and "degree too large" in out.feedback, out


@pytest.mark.parametrize("answer", ["6\uff14", "\u0666\u0664", "\U0001d7d4\U0001d7d2"])
def test_digits_of_other_scripts_are_not_read_as_ascii_digits(answer):
    out = check_answer(AnswerSpec("number", 64), answer)
    assert out.status == "invalid", out


@pytest.mark.parametrize("answer, column", [("64\ud800", 3), ("\ufffd", 1), ("6\udcff4", 2)])
def test_invalid_unicode_is_reported_with_its_column(answer, column):
    out = check_answer(AnswerSpec("number", 64), answer)
    assert out.feedback == f"invalid answer: not valid Unicode at column {column}"


# ---------------------------------------------------------------- exactness

@pytest.mark.parametrize("answer, off", [
    ("2^20 + exp(-200)", "1.38 × 10⁻⁸⁷"),       # e^-200 = 1.3838965... × 10^-87
    ("2^20 - exp(-500)", "7.12 × 10⁻²¹⁸"),      # e^-500 = 7.1245764... × 10^-218
    ("2^20 + log(1 + 10^-300)", "1.00 × 10⁻³⁰⁰"),  # log(1 + x) = x - x²/2 + ...
])
def test_an_integer_problem_wants_the_exact_value(answer, off):
    out = check_answer(NUMBER, answer)
    assert out.status == "wrong" and out.credit == 0.0, out
    assert f"Not exactly 1,048,576" in out.feedback and off in out.feedback, out.feedback


def test_a_value_that_is_not_rational_is_right_only_when_proven_or_within_a_declared_tolerance():
    assert check_answer(AnswerSpec("number", 3), "log(8)/log(2)").status == "correct"      # proven: = 3
    assert check_answer(AnswerSpec("number", 64), "sqrt(4096)").status == "correct"        # rational already
    # sqrt(2) = 1.41421356...: within 0.1% of 1.414, not within 10^-30 of it
    assert check_answer(AnswerSpec("number", "1.414", tolerance={"rel": "1e-3"}), "sqrt(2)").status == "correct"
    assert check_answer(AnswerSpec("number", "1.414", tolerance={"rel": "1e-30"}), "sqrt(2)").status == "wrong"
    # 16 MiB = 2^24 bytes; (2^24)(1 + e^-100) is not
    q = AnswerSpec("quantity", 16777216, unit="byte")
    assert check_answer(q, "sqrt(2)^48 B").status == "correct"
    assert check_answer(q, "2^24*(1 + exp(-100)) B").status == "wrong"


def test_a_tolerance_holds_for_an_approximation_only_with_its_margin():
    from grader.answers.model import Tolerance
    t = Tolerance(abs=Fraction(1, 10))
    assert t.allows(Fraction(11, 10), Fraction(1))                          # exactly 0.1 off
    assert not t.allows(Fraction(11, 10), Fraction(1), Fraction(1, 10**25))  # maybe a hair more


# ---------------------------------------------------------------- proofs at sample points

@pytest.mark.parametrize("value, expected", [
    (sympy.log(1 + sympy.Rational(1, 10**300)), 1),                     # SymPy's evalf says 0 here
    (sympy.pi - sympy.Rational(355, 113), -1),                          # π - 355/113 = -2.67 × 10^-7
    (sympy.exp(2) - 7, 1),                                              # e² = 7.389...
    (sympy.sqrt(5) - sympy.sqrt(5 + sympy.Rational(1, 10**300)), -1),
    ((sympy.sqrt(2) + sympy.sqrt(3)) ** 2 - 5 - 2 * sympy.sqrt(6), None),  # exactly 0: no proof either way
    (sympy.log(8) / sympy.log(2) - 3, None),                           # exactly 0
    (sympy.I + 1, None),                                                # not real
])
def test_sign_is_proven_by_intervals_or_not_at_all(value, expected):
    from grader.expr.evaluation import sign
    assert sign(value) == expected


def test_a_relation_is_told_apart_just_beside_the_boundary():
    from grader.bank import load_bank
    from grader.grade.check import prepare
    bank = load_bank()
    spec = prepare(bank.get("17-08/crossover"), bank)
    out = check_answer(spec, "n > 2d + sqrt(d)")
    assert out.status == "wrong", out           # at n = 2d + 1 (d ≥ 1): n > 2d holds, n > 2d + √d does not
    # the same as n > 2d for integers n, d: genuinely undecided, for a person
    assert check_answer(spec, "n > 2d + exp(-200)").status == "undecided"


def test_constant_relations_do_not_make_sympy_factor_for_minutes():
    from grader.bank import load_bank
    from grader.expr import equivalent, parse
    table = load_bank().subject.table
    a = parse("abs(10^-104) <= exp(-508)", table, relations=True).expr
    b = parse("n > 2*d", table, relations=True).expr
    assert equivalent(a, b, table).verdict == "different"       # false everywhere, against n > 2d


# ---------------------------------------------------------------- files

def test_a_fifo_is_refused_without_blocking(tmp_path):
    from grader.files import textfiles
    fifo = tmp_path / "a.yaml"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(pytest.raises(InputError, textfiles.read_bytes, fifo)))
    t.start()
    t.join(10)
    assert done and "a FIFO (named pipe), not a regular file" in str(done[0].value)


def test_a_file_swapped_after_the_stat_is_refused_on_the_descriptor(tmp_path, monkeypatch):
    from grader.files import textfiles
    fifo = tmp_path / "a.yaml"
    os.mkfifo(fifo)
    regular = os.stat(__file__)
    monkeypatch.setattr(textfiles.os, "stat", lambda path: regular)       # as if it was regular a moment ago
    with pytest.raises(InputError, match="a FIFO"):
        textfiles.read_bytes(fifo)


def test_sizes_are_enforced_by_the_read_not_st_size(tmp_path):
    from grader.files import textfiles
    sparse = tmp_path / "s.yaml"
    with open(sparse, "wb") as f:
        f.truncate(3 * 1024 ** 3)                 # 3 GiB, no data
    with pytest.raises(InputError, match="larger than 1,000 bytes"):
        textfiles.read_bytes(sparse, max_bytes=1000)
    status = textfiles.read_bytes("/proc/self/status")     # st_size 0, and text
    assert b"Name:" in status


@pytest.mark.parametrize("raw, text", [
    ("a: 1\n".encode("utf-16"), "a: 1\n"), ("a: 1\n".encode("utf-32"), "a: 1\n"), (b"\xef\xbb\xbfa: 1\n", "a: 1\n"),
])
def test_utf16_and_utf32_with_a_bom_are_read(raw, text):
    from grader.files import textfiles
    assert textfiles.decode(raw) == text


def test_bytes_that_are_not_utf8_refuse_a_data_file_where_they_stand():
    from grader.files import textfiles
    with pytest.raises(InputError) as e:
        textfiles.decode(b"a: 1\nb: x\xff\n", "spec.yaml")
    assert str(e.value) == "spec.yaml:2:5: not UTF-8 text (byte 9)"
    assert textfiles.decode(b"a: x\xff\n", answers=True) == "a: x\ufffd\n"


# ---------------------------------------------------------------- the memory budget

def test_the_estimate_covers_what_an_equivalence_check_really_allocates():
    """Measured: the peak RSS an equivalence check adds in a fresh process, against the estimate."""
    import subprocess
    import sys
    # the peak RSS is reset to the current one (Linux: "5" to /proc/self/clear_refs) right before
    # the check, so that what torch's import took at its peak does not hide what the check takes
    code = ("import sys\n"
            "from grader.claims.measure import import_torch, equivalence\n"
            "torch = import_torch(); torch.set_num_threads(1)\n"
            "equivalence('fused', 'per_head', {'d': 16, 'h': 2, 'n': 4, 'b': 1}, device='cpu')\n"
            "def kib(key):\n"
            "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(key))\n"
            "try:\n"
            "    open('/proc/self/clear_refs', 'w').write('5')\n"
            "except OSError:\n"
            "    print(-1); sys.exit()\n"
            "base = kib('VmRSS:')\n"
            "equivalence('fused', 'per_head', {'d': 512, 'h': 8, 'n': 512, 'b': 4}, device='cpu')\n"
            "print((kib('VmHWM:') - base) * 1024)\n")
    grown = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    if grown < 0:
        pytest.skip("the peak RSS cannot be reset here (/proc/self/clear_refs)")
    from grader.claims.budget import cost
    estimate = cost({"equivalence": {"a": "fused", "b": "per_head", "values": {"d": 512, "h": 8, "n": 512, "b": 4}}})
    assert 0 < grown <= estimate.bytes, (grown, estimate)
    assert estimate.flops == 2 * (8 * 4 * 512 * 512 ** 2 + 4 * 4 * 512 ** 2 * 512)


def test_over_the_budget_is_refused_with_the_estimate():
    from grader.claims.budget import BudgetError, check, parse_size
    request = {"equivalence": {"a": "fused", "b": "per_head", "values": {"d": 65536, "h": 8, "n": 4096, "b": 8}}}
    with pytest.raises(BudgetError) as e:
        check(request, parse_size("1GiB"))
    assert "refused before anything was allocated: it would need about 436.0 GiB" in str(e.value)
    assert check({"quantity": "flops.total", "at": {"d": 2 ** 20, "h": 1, "n": 2 ** 20}}, 1).bytes == 0   # meta


@pytest.mark.parametrize("text, size", [("2GiB", 2 * 1024 ** 3), ("512 MB", 512 * 10 ** 6), ("1000", 1000)])
def test_memory_budget_sizes(text, size):
    from grader.claims.budget import parse_size
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "0", "-5GiB", "150%", "2 parsecs"])
def test_a_bad_memory_budget_is_a_usage_error(text):
    from click.testing import CliRunner
    from grader.cli import cli
    r = CliRunner().invoke(cli, ["check-spec", "--memory-budget", text, "docs/examples/worked.yaml"])
    assert r.exit_code == 2 and "--memory-budget" in r.output


def test_sizes_no_tensor_can_have_are_a_located_error():
    from grader.errors import ErrorList
    from grader.claims.load import loads
    text = (open("docs/examples/worked.yaml", encoding="utf-8").read()
            .replace("at: {d: 4096, h: 32, n: 2048}", "at: {d: 4096, h: 32, n: 1099511627776}"))
    with pytest.raises(ErrorList) as e:
        loads(text, "w.yaml")
    [err] = [x for x in e.value.errors if "torch can represent" in x.message]
    assert err.location.line and err.location.column


# ---------------------------------------------------------------- output and pending points

def test_a_lone_surrogate_never_costs_the_report(tmp_path):
    from click.testing import CliRunner
    from grader.cli import cli
    f = tmp_path / "eve.yaml"
    f.write_text("# " + "[" * 2100 + "\nlearner: \"eve\\ud800\"\nanswers:\n  17-08/practice-1: \"64\\udc80\"\n"
                 "  17-08/example-1.d_k: 64\n", encoding="utf-8")
    for fmt in ("text", "json", "junit", "gradescope"):
        out = tmp_path / f"out.{fmt}"
        r = CliRunner().invoke(cli, ["grade", "--jobs", "1", "--format", fmt, "--output", str(out), str(f)])
        assert r.exit_code == 0, (fmt, r.output)
        text = out.read_text(encoding="utf-8")
        assert "not valid Unicode at column 3" in text
        if fmt in ("text", "junit"):
            assert "eve\\ud800" in text           # the learner's name, escaped
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    [sub] = data["submissions"]
    assert sub["learner"] == "eve\\ud800"
    assert [r["feedback"] for r in sub["results"]][0] == "invalid answer: not valid Unicode at column 3"


def test_pending_points_stay_in_max_score_in_every_format(tmp_path):
    from click.testing import CliRunner
    from grader.cli import cli
    f = tmp_path / "a.yaml"
    f.write_text("learner: a\nanswers:\n  17-08/practice-1: 64\n  17-08/practice-2: because\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["grade", "--jobs", "1", str(f)])
    from grader.bank import load_bank
    total = sum(p.points for p in load_bank().problems)
    assert f"a ({f}): 1/{total}, 2 points wait for a person (counted 0 until graded)" in r.output
    r = CliRunner().invoke(cli, ["grade", "--jobs", "1", "--format", "gradescope", str(f)])
    data = json.loads(r.output)
    assert (data["score"], data["max_score"]) == (1, total)
    assert "counted 0 until then" in data["output"]
