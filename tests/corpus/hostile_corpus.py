"""The hostile corpus of issue 13, generated from families, each case with its expected outcome.

    python tests/corpus/hostile_corpus.py        # rewrites tests/corpus/expected.json

Three kinds of case, built here deterministically (no randomness) and graded by
tests/test_hostile_corpus.py:

- :func:`answer_cases`: one hostile answer to one problem of the bundled bank, as a learner
  would write it in an answers file. Families: magnitude (huge and tiny numbers in many forms,
  in numbers, quantities, expressions, shapes and relations), exactness (an integer-valued
  problem answered by something a hair off), farming (answers built so that a symbolic check
  might give up), unicode (confusable digits and letters, invisible characters, invalid Unicode),
  injection and types. Every one must get 0 points and a message; ``expect`` lists the statuses
  allowed (``needs_person`` only where the answer is well-formed and genuinely undecided, and
  then it is counted 0 until a person rules).
- :func:`file_cases` (in hostile_files.py): answers files that are hostile as files: special files (FIFO, devices,
  folders, sockets), sizes (sparse, over 16 MiB), YAML (tags, anchors, merge keys, aliases,
  duplicate and null keys, depth), encodings. Each is graded beside a control learner's file,
  which must be graded in full; ``error`` is the message the file gets, ``exit`` the status.
- :func:`spec_cases` (in hostile_files.py): hostile spec files for ``grader check-spec``: numbers beyond the limits,
  sizes beyond what torch or the memory budget allow, special files, YAML, encodings. Each gets
  an error at its location (``where``: a regular expression of file:line:column or file).

Expected outcomes come from the issue and the docs (docs/exercises.md, docs/security.md), not
from running the code; ``expected.json`` records them for review.
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path

from hostile_files import FileCase, SpecCase, build_file, build_spec, file_cases, spec_cases  # noqa: F401

HERE = Path(__file__).parent

NUMBER = "17-08/example-2.params"        # 1,048,576 (4 · 512²), exact
NUMBER_SMALL = "17-08/practice-1"         # 64 (1024 / 16)
FLOPS = "17-08/example-3.total_flops"     # 343,597,383,680, sig_figs 3
COUNT = "17-08/practice-4.count"          # 256 (8 heads × batch 32)
QUANTITY = "17-08/practice-4.bytes"       # 16,777,216 bytes
EXPRESSION = "17-08/params-formula"       # 4d² + 4d
FLOPS_FORMULA = "17-08/flops-formula"     # 8nd² + 4n²d
D_K = "17-08/d_k-formula"                 # d/h
SHAPE = "17-08/example-1.q_i_shape"       # (128, 64)
RELATION = "17-08/crossover"              # n > 2d
CHOICE = "17-08/quiz-1"                   # A
FREE = "17-08/practice-2"                 # free text
VARIANT = "17-08/variant.d_k"             # d/h at the learner's draw

# The control learner: right answers worked out by hand from the prompts (not by the grader).
CONTROL = {
    NUMBER_SMALL: 64,                       # d_k = 1024 / 16
    NUMBER: "4*512^2",                      # 4 · 512² = 1,048,576
    COUNT: 256,                             # 8 heads × batch 32
    QUANTITY: "16 MiB",                     # 256 matrices × 128² × 4 bytes = 2²⁴ bytes
    EXPRESSION: "4d(d+1)",                  # 4d² + 4d
    D_K: "d_model/h",
    SHAPE: "128x64",                        # (n, d_k) = (128, 768/12)
    RELATION: "2d < n",                     # 4n²d > 8nd² ⟺ n > 2d
}
CONTROL_LEARNER = "control"

BAD = ("invalid", "wrong")          # hostile: never correct, never partial


@dataclass(frozen=True)
class AnswerCase:
    id: str
    family: str
    problem: str
    answer: object                  # as the learner writes it (JSON-able; see surrogate files)
    expect: tuple = BAD             # statuses allowed
    says: str = ""                  # a piece of the feedback


# ---------------------------------------------------------------- answers

MAGNITUDES = [
    "1e99999", "1e-99999", "1.0e+99999", "-1e99999", "1E9999", "1e+99999999999", "1e400", "1e-401",
    "10^10^10", "10^(10^10)", "2^(2^30)", "2^2^2^2^2^2", "9**9**9", "9^9^9", "((9^999)^999)^999",
    "exp(1000)", "exp(10000)", "exp(-1000)", "exp(exp(10))", "exp(exp(exp(2)))", "10^401", "10^-401",
    "1/10^999", "10^999*10^999*10^999*10^999*10^999", "9" * 1500, "1" + "0" * 450, "0." + "0" * 450 + "1",
    "2^1000*2^1000", "100!", "factorial(1000)", "Gamma(171)", "sqrt(10^10000)", "log(10^10^10)",
    "1e308*1e308", "2**-99999", "(-10)^99999", "10⁹⁹⁹⁹⁹", "1×10^99999", "1·10⁹⁹⁹⁹", "1 x 10^-99999",
    "1/0", "0/0", "0^-1", "log(0)", "sqrt(-1)", "inf", "nan", "∞", "-∞", "Infinity", ".inf",
]


def _magnitude() -> list:
    out = []
    for i, m in enumerate(MAGNITUDES):
        out.append(AnswerCase(f"magnitude-number-{i}", "magnitude", NUMBER, m))
        out.append(AnswerCase(f"magnitude-quantity-{i}", "magnitude", QUANTITY, f"{m} B"))
        out.append(AnswerCase(f"magnitude-expression-{i}", "magnitude", EXPRESSION, f"4d^2 + 4d + {m}"))
        out.append(AnswerCase(f"magnitude-shape-{i}", "magnitude", SHAPE, f"(128, {m})"))
        out.append(AnswerCase(f"magnitude-relation-{i}", "magnitude", RELATION, f"n > 2d + {m}"))
    for i, m in enumerate(MAGNITUDES[:20]):
        out.append(AnswerCase(f"magnitude-times-d-{i}", "magnitude", D_K, f"{m}*d/h"))
        out.append(AnswerCase(f"magnitude-mib-{i}", "magnitude", QUANTITY, f"{m} MiB"))
    # YAML integers of thousands of digits, and lists with huge axes
    for i, digits in enumerate((401, 1000, 4300)):
        out.append(AnswerCase(f"magnitude-yaml-int-{i}", "magnitude", NUMBER, int("9" * digits),
                              ("invalid",), "number too large"))
        out.append(AnswerCase(f"magnitude-yaml-axis-{i}", "magnitude", SHAPE, [128, int("9" * digits)],
                              ("invalid",), "number too large"))
    return out


EXACTNESS = [
    (NUMBER, "2^20 + exp(-200)", "Not exactly 1,048,576"), (NUMBER, "1048576 + exp(-200)", "Not exactly"),
    (NUMBER, "4*512^2 + exp(-700)", ""), (NUMBER, "2^20*(1 + exp(-100))", "Not exactly"),
    (NUMBER, "2^20 - exp(-500)", "Not exactly"), (NUMBER, "2^20 + sqrt(2)*10^-50", "Not exactly"),
    (NUMBER, "2^20 + log(1 + 10^-300)", "Not exactly"), (NUMBER, "2^20 + 10^-300", ""),
    (NUMBER, "1048576 + 1/10^300", ""), (NUMBER, "1048576.000000000000000001", ""),
    (NUMBER, "1048575.99999999999999999999", ""), (NUMBER, "2^20*(1 + 10^-100)", ""),
    (NUMBER, "1.048576e6 + 1e-30", ""), (NUMBER, "1048576 + 1e-300", ""), (NUMBER, "1,048,576.0000001", ""),
    (NUMBER_SMALL, "64 + exp(-300)", "Not exactly 64"), (NUMBER_SMALL, "2^6 + 10^-200", ""),
    (NUMBER_SMALL, "sqrt(4096 + 10^-100)", "Not exactly"), (NUMBER_SMALL, "64*(1 + exp(-50))", "Not exactly"),
    (COUNT, "256 + exp(-250)", "Not exactly 256"), (COUNT, "2^8 + log(1 + exp(-300))", "Not exactly"),
    (FLOPS, "343597383680 + exp(-100)", "Not exactly"), (FLOPS, "5*2^36 + 10^-90", ""),
    (QUANTITY, "2^24 + exp(-200) B", "Not exactly 16,777,216 bytes"), (QUANTITY, "16777216 + 10^-300 bytes", ""),
    (QUANTITY, "2^24*(1 + exp(-100)) bytes", "Not exactly"), (QUANTITY, "16 + exp(-300) MiB", "Not exactly"),
    (VARIANT, "64 + exp(-300)", ""), (VARIANT, "d/h + exp(-300)", ""),
]


def _exactness() -> list:
    return [AnswerCase(f"exactness-{i}", "exactness", p, a, ("wrong", "invalid"), says)
            for i, (p, a, says) in enumerate(EXACTNESS)]


# answers built so that a symbolic check might give up: provably wrong, at a sample point
FARMING = [
    (EXPRESSION, "4d^2 + 4d + exp(-200)"), (EXPRESSION, "4d^2 + 4d + exp(-200*d)"),
    (EXPRESSION, "4d^2 + 4d + 10^-300"), (EXPRESSION, "4d^2 + 4d + exp(-d^2)"),
    (EXPRESSION, "4d^2 + 4d + log(1 + exp(-300))"), (EXPRESSION, "max(4d^2 + 4d, 4d^2 + 4d + exp(-300))"),
    (EXPRESSION, "(4d^2 + 4d)*(1 + exp(-300))"), (EXPRESSION, "4d^2 + 4d + sqrt(d) - sqrt(d + 10^-300)"),
    (EXPRESSION, "4d^2 + 4d + log(d) - log(d + exp(-300))"), (EXPRESSION, "4d^2 + 4d + exp(-300)*d"),
    (EXPRESSION, "4d^2 + 4d + abs(exp(-300))"), (EXPRESSION, "4d^2 + 4d + exp(-300)/d"),
    (EXPRESSION, "(4d^2 + 4d)^(1 + 10^-300)"), (EXPRESSION, "4d^2 + 4d + sqrt(exp(-600))"),
    (EXPRESSION, "4d^2 + 4d + exp(-300)*exp(-300)"), (EXPRESSION, "4*d^2 + 4*d + log(exp(10^-300))"),
    (FLOPS_FORMULA, "8nd^2 + 4n^2 d + exp(-200)"), (FLOPS_FORMULA, "8nd^2 + 4n^2d + exp(-300*n)"),
    (D_K, "d/h + exp(-200)"), (D_K, "d/h*(1 + exp(-300))"), (D_K, "d/(h + exp(-300))"),
    (RELATION, "n > 2d + exp(300)"), (RELATION, "n > 2d*exp(10^-300) + 10^10"), (RELATION, "n^2 > 4d^2 + 10^9"),
    (RELATION, "n > 3d"), (RELATION, "n > 2d + sqrt(d)"), (RELATION, "log(n) > log(2d) + 1"),
    (RELATION, "n > 2d and d > 10^6"), (RELATION, "n*exp(-300) > 2d*exp(-300) + exp(-299)"),
]
# well-formed and truly undecided by exact, sampling and symbolic paths (over the integers they
# are even the same relation as n > 2d): a person rules; counted 0 until then
UNDECIDED = [
    (RELATION, "n > 2d + exp(-200)"), (RELATION, "n >= 2d + exp(-300)"), (RELATION, "n > 2d*(1 + exp(-300))"),
]


def _farming() -> list:
    # wrong, or refused by the answer rule (a number past its bounds): never "needs a person"
    out = [AnswerCase(f"farming-{i}", "farming", p, a, BAD) for i, (p, a) in enumerate(FARMING)]
    out += [AnswerCase(f"farming-undecided-{i}", "farming", p, a, ("wrong", "needs_person"))
            for i, (p, a) in enumerate(UNDECIDED)]
    return out


UNICODE = [
    (NUMBER_SMALL, "6\uff14", "only ASCII"), (NUMBER_SMALL, "\u0666\u0664", "only ASCII"),
    (NUMBER_SMALL, "\U0001d7d4\U0001d7d2", ""), (NUMBER_SMALL, "64\u200b", "U+200B"),
    (NUMBER_SMALL, "6\u00ad4", "U+00AD"), (NUMBER_SMALL, "\u202e46", "U+202E"), (NUMBER_SMALL, "64\ufffd", "not valid Unicode"),
    (NUMBER_SMALL, "6\u20224", ""), (NUMBER_SMALL, "\u2076\u2074", ""), (NUMBER_SMALL, "sixty-four", ""),
    (NUMBER_SMALL, "LXIV", ""), (NUMBER_SMALL, "0x40", ""), (NUMBER_SMALL, "0o100", ""), (NUMBER_SMALL, "0b1000000", ""),
    (NUMBER_SMALL, "6\u06604", ""), (NUMBER_SMALL, "64\u0301", ""), (NUMBER_SMALL, "\u0036\u20e34", ""),
    (EXPRESSION, "4\u0501^2 + 4\u0501", "U+0501"), (EXPRESSION, "4d\u00b2 + 4\u217e", ""), (EXPRESSION, "4\U0001d451^2+4\U0001d451", ""),
    (EXPRESSION, "4d^2 + 4d\u200d", "U+200D"), (EXPRESSION, "4d^2 +\u2028 4d", ""), (EXPRESSION, "\uff14d^2 + 4d", ""),
    (D_K, "d\u2044h", ""), (D_K, "\u0434/h", ""), (D_K, "d/\u04bb", ""), (D_K, "d\u2215\u200bh", ""),
    (SHAPE, "(128, \uff164)", ""), (SHAPE, "(\u0661\u0662\u0668, 64)", ""), (SHAPE, "128\u00d7\u0666\u0664", ""),
    (SHAPE, "(128,\u200b64)", ""), (RELATION, "n > 2\u0501", ""), (RELATION, "\u0578 > 2d", ""),
    (RELATION, "n \u227b 2d", ""), (QUANTITY, "16 M\u0456B", ""), (QUANTITY, "16 \u039ciB", ""),
    (QUANTITY, "\uff11\uff16 MiB", ""), (CHOICE, "\u0410", ""), (CHOICE, "A\u0338", ""),
    (FREE, "answer \ufffd here", "not valid Unicode"), (FREE, "x" * 10_001, "too long"),
    (FREE, "ok\x00", "U+0000"), (FREE, "\x1b[2J cleared", "U+001B"),
]


def _unicode() -> list:
    return [AnswerCase(f"unicode-{i}", "unicode", p, a, ("invalid",) if p == FREE else BAD, says)
            for i, (p, a, says) in enumerate(UNICODE)]


INJECTION = [
    "__import__('os').system('touch PWNED')", "eval('1')", "exec('x=1')", "lambda: 64", "().__class__",
    "d.__class__", "open('PWNED','w')", "$(touch PWNED)", "`touch PWNED`", "{{7*7}}", "${7*7}", "%s%s%n",
    "'; DROP TABLE grades; --", "<script>alert(1)</script>", "]]><x>", "\\u0000", "64 # 65", "import os",
]


def _injection_and_types() -> list:
    out = []
    for i, a in enumerate(INJECTION):
        for p in (NUMBER_SMALL, EXPRESSION, RELATION, SHAPE):
            out.append(AnswerCase(f"injection-{p.rsplit('/', 1)[1]}-{i}", "injection", p, a))
    for i, (p, a, says) in enumerate([
        (NUMBER_SMALL, {"a": 1}, "not a mapping"), (NUMBER_SMALL, [64], "not a list"), (NUMBER_SMALL, True, "true/false"),
        (SHAPE, [[128], [64]], "flat list"), (SHAPE, list(range(100)), "at most 16 axes"), (SHAPE, [128, -64], "negative"),
        (SHAPE, [128, 64.5], ""), (EXPRESSION, [1, 2], "not a list"), (RELATION, {"n": 2}, "not a mapping"),
        (NUMBER_SMALL, None, "empty answer"), (NUMBER_SMALL, "   ", "empty answer"), (EXPRESSION, "x" * 2001, "too long"),
        (EXPRESSION, "(" * 5000 + "d" + ")" * 5000, "too long"), (EXPRESSION, "(" * 45 + "d" + ")" * 45, "nested too deeply"),
        (EXPRESSION, "d+" * 900 + "d", ""), (EXPRESSION, "-" * 1500 + "d", ""), (RELATION, "n>" * 600 + "d", ""),
        (SHAPE, "(" + "128, " * 100 + "64)", "at most 16 axes"),
    ]):
        out.append(AnswerCase(f"types-{i}", "types", p, a, ("invalid", "wrong"), says))
    return out


def answer_cases() -> list:
    return _magnitude() + _exactness() + _farming() + _unicode() + _injection_and_types()


def yaml_value(value) -> str:
    """``value`` as YAML flow text: strings double-quoted, every character YAML may not hold raw
    (controls, format characters, line separators, surrogates) written as an escape."""
    if isinstance(value, str):
        out = []
        for ch in value:
            code = ord(ch)
            if ch in '"\\':
                out.append("\\" + ch)
            elif 0x20 <= code < 0x7f:
                out.append(ch)
            elif code < 0xa0 or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") \
                    or code in (0xfeff, 0xfffe, 0xffff):
                out.append(f"\\u{code:04x}" if code <= 0xffff else f"\\U{code:08x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_value(k)}: {yaml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def answers_file(cases, control: bool = True, deep_comment: bool = False) -> str:
    """An answers file: one submission per case (``learner: <case id>``) and the control learner."""
    lines = []
    if deep_comment:    # brackets enough to pass the pure-Python composer (which keeps "\\ud800" escapes)
        lines.append("# " + "[" * 2100)
    lines.append("submissions:")
    for c in cases:
        lines.append(f"  - learner: {yaml_value(c.id)}")
        lines.append(f"    answers: {{{yaml_value(c.problem)}: {yaml_value(c.answer)}}}")
    if control:
        lines.append(f"  - learner: {CONTROL_LEARNER}")
        lines.append("    answers:")
        lines.extend(f"      {json.dumps(p)}: {json.dumps(a)}" for p, a in CONTROL.items())
    return "\n".join(lines) + "\n"


SURROGATES = [
    (NUMBER_SMALL, "64\ud800"), (NUMBER_SMALL, "\udc80"), (EXPRESSION, "4d^2 + 4d\udfff"),
    (FREE, "free \ud83d text"), (SHAPE, "(128, 64)\udc00"), (RELATION, "n > 2d\ud801"),
]


def surrogate_cases() -> list:
    """Lone surrogates in answers (written as \\ud800 escapes: the pure-Python YAML composer,
    which a deeply bracketed file goes through, makes them real lone surrogates)."""
    return [AnswerCase(f"surrogate-{i}", "unicode", p, a, ("invalid",), "not valid Unicode")
            for i, (p, a) in enumerate(SURROGATES)]


# ---------------------------------------------------------------- the record

def record() -> dict:
    """Every case with its expected outcome, as data (expected.json)."""
    def short(value):
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return text if len(text) <= 120 else text[:100] + f"… ({len(text):,} characters)"

    answers = [dict(asdict(c), answer=short(c.answer)) for c in answer_cases() + surrogate_cases()]
    files = [dict(asdict(c), content=short(c.content)) for c in file_cases()]
    specs = [dict(asdict(c), content=short(c.content)) for c in spec_cases()]
    return {"answers": answers, "files": files, "specs": specs,
            "total": len(answers) + len(files) + len(specs)}


if __name__ == "__main__":
    data = record()
    (HERE / "expected.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{data['total']} cases: {len(data['answers'])} answers, {len(data['files'])} answers files, "
          f"{len(data['specs'])} spec files")
