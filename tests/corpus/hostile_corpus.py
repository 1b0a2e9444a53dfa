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
- :func:`file_cases`: answers files that are hostile as files: special files (FIFO, devices,
  folders, sockets), sizes (sparse, over 16 MiB), YAML (tags, anchors, merge keys, aliases,
  duplicate and null keys, depth), encodings. Each is graded beside a control learner's file,
  which must be graded in full; ``error`` is the message the file gets, ``exit`` the status.
- :func:`spec_cases`: hostile spec files for ``grader check-spec``: numbers beyond the limits,
  sizes beyond what torch or the memory budget allow, special files, YAML, encodings. Each gets
  an error at its location (``where``: a regular expression of file:line:column or file).

Expected outcomes come from the issue and the docs (docs/exercises.md, docs/security.md), not
from running the code; ``expected.json`` records them for review.
"""
from __future__ import annotations

import json
import os
import socket
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

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


@dataclass(frozen=True)
class FileCase:
    id: str
    family: str
    make: str                       # how the file is made: see build_file
    content: str = ""
    error: str = ""                 # a piece of the error message about this file
    exit: int = 2                   # grader grade's exit status with this file and the control
    graded: tuple = ()              # learners of this file still graded (partly hostile files)
    via_folder: bool = False        # the file's folder is graded, not the file's path


@dataclass(frozen=True)
class SpecCase:
    id: str
    family: str
    make: str
    content: str = ""
    where: str = r":\d+:\d+"        # the error's location after the file's path (a regex)
    error: str = ""
    runtime: bool = False           # loads; the claim's check is refused when it runs


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


# ---------------------------------------------------------------- answers files

def _yaml_case(i, family, content, error="", exit=2, graded=()):
    return FileCase(f"{family}-{i}", family, "text", content, error, exit, graded)


def file_cases() -> list:
    out = [
        FileCase("special-fifo", "special", "fifo", error="a FIFO (named pipe), not a regular file"),
        FileCase("special-dev-zero", "special", "link:/dev/zero", error="a character device, not a regular file"),
        FileCase("special-dev-urandom", "special", "link:/dev/urandom", error="a character device, not a regular file"),
        FileCase("special-dev-null", "special", "link:/dev/null", error="a character device, not a regular file"),
        FileCase("special-folder-link", "special", "link:.", exit=0, via_folder=True),   # skipped, no loop
        FileCase("special-fifo-in-folder", "special", "fifo", error="a FIFO (named pipe), not a regular file",
                 via_folder=True),
        FileCase("special-dev-zero-in-folder", "special", "link:/dev/zero",
                 error="a character device, not a regular file", via_folder=True),
        FileCase("special-socket", "special", "socket", error="a socket, not a regular file"),
        FileCase("special-link-to-fifo", "special", "link-fifo", error="a FIFO (named pipe), not a regular file"),
        FileCase("special-dangling-link", "special", "link:/nonexistent/grader-corpus", error="cannot read file"),
        FileCase("size-sparse-3g", "size", "sparse", error="file is larger than 16,777,216 bytes"),
        FileCase("size-17mib", "size", "big", error="file is larger than 16,777,216 bytes"),
        FileCase("size-proc-self", "size", "link:/proc/self/status", error="malformed submission", exit=0),
    ]
    yaml_cases = [      # (content, error, exit: 2 where the whole file is refused, 0 where grading ran)
        ("learner: a\nanswers: &x {17-08/practice-1: 64}\nb: *x\n", "aliases (*name) are not allowed", 2),
        ("a: &a [1, 2]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b]\n",
         "aliases (*name) are not allowed", 2),
        ("base: &b {learner: m}\nsub:\n  <<: *b\n  answers: {17-08/practice-1: 64}\n", "merge keys (<<) are not allowed", 2),
        ("learner: m\nanswers:\n  <<: {17-08/practice-1: 64}\n", "merge keys (<<) are not allowed", 2),
        ("learner: m\nanswers:\n  ? [17-08/practice-1]\n  : 64\n", "a mapping key must be a plain value", 2),
        ("learner: m\nanswers:\n  ? {a: 1}\n  : 64\n", "a mapping key must be a plain value", 2),
        ("learner: m\nanswers: " + "[" * 60000 + "]" * 60000 + "\n", "nested too deeply", 2),
        ("learner: m\nanswers:\n" + "".join("  " * k + "- \n" for k in range(1, 3000)), "nested too deeply", 2),
        ("learner: m\nanswers: {17-08/practice-1: 64\n", "invalid YAML", 2),
        ("learner: m\n\tanswers: {}\n", "invalid YAML", 2),
        ("\x00learner: m\n", "invalid YAML", 2),
        ("--- !!python/object/apply:os.system ['touch PWNED']\n", "tag !!python/object/apply:os.system is not allowed", 0),
        ("!!python/object:os.system {learner: m}\n", "tag !!python/object:os.system is not allowed", 0),
        ("learner: m\nanswers: !!python/name:os.system\n", "tag !!python/name:os.system is not allowed", 0),
        ("learner: m\nanswers: !!binary aGVsbG8=\n", "tag !!binary is not allowed", 0),
        ("learner: m\nanswers: !!set {17-08/practice-1: null}\n", "tag !!set is not allowed", 0),
        ("learner: m\nanswers: !!omap [{17-08/practice-1: 64}]\n", "tag !!omap is not allowed", 0),
        ("%YAML 1.1\n%TAG ! tag:evil.example,2024:\n---\nlearner: !x m\n", "is not allowed", 0),
        ("learner: m\nlearner: n\nanswers: {17-08/practice-1: 64}\n", "duplicate key 'learner'", 0),
        ("learner: m\nanswers: {17-08/practice-1: 64}\nanswers: {17-08/practice-1: 64}\n", "duplicate key 'answers'", 0),
        ("[1, 2, 3]\n", "malformed submission", 0),
        ("submissions: {learner: m}\n", "'submissions' must be a list", 0),
        ("submissions:\n  - 42\n  - learner: m\n", "malformed submission", 0),
        ("learner: [m]\nanswers: {17-08/practice-1: 64}\n", "'learner' must be a name or an id", 0),
        ("learner: ''\nanswers: {17-08/practice-1: 64}\n", "'learner' must be a name or an id", 0),
        ("learner: m\nanswers: [64]\n", "'answers' must map problem ids to answers", 0),
    ]
    for i, (content, error, exit) in enumerate(yaml_cases):
        out.append(_yaml_case(i, "yaml", content, error, exit))
    keys = [
        ("learner: k\nanswers:\n  ~: 64\n  17-08/practice-1: 64\n", "not null"),
        ("learner: k\nanswers:\n  null: 64\n  ~: 65\n  17-08/practice-1: 64\n", "not null, given twice"),
        ("learner: k\nanswers:\n  '': 64\n  17-08/practice-1: 64\n", "not empty text"),
        ("learner: k\nanswers:\n  '   ': 64\n  17-08/practice-1: 64\n", "not empty text"),
        ("learner: k\nanswers:\n  42: 64\n  17-08/practice-1: 64\n", "not 42 (a number)"),
        ("learner: k\nanswers:\n  true: 64\n  17-08/practice-1: 64\n", "not true (true/false)"),
        ('{"learner": "k", "answers": {"": 64, "17-08/practice-1": 64}}\n', "not empty text"),
        ("learner: k\nanswers:\n  17-08/practice-1: 64\n  17-08/practice-1: 65\n", "answered more than once"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!set {a: null}\n  17-08/example-1.d_k: 64\n", "tag !!set"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!binary aGVsbG8=\n  17-08/example-1.d_k: 64\n", "tag !!binary"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!timestamp 2001-12-14\n  17-08/example-1.d_k: 64\n", "tag !!timestamp"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!float nan\n  17-08/example-1.d_k: 64\n", "not a !!float"),
        ("learner: k\nanswers:\n  17-08/practice-1: !custom 64\n  17-08/example-1.d_k: 64\n", "tag !custom"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!int 0x40\n  17-08/example-1.d_k: 64\n", "not a !!int"),
        ("learner: k\nanswers:\n  17-08/no-such: 64\n  17-08/practice-1: 64\n", "unknown problem id"),
    ]
    for i, (content, error) in enumerate(keys):
        out.append(FileCase(f"keys-{i}", "keys", "text", content, error, 0, ("k",)))
    enc = [
        ("bytes", b"learner: e\nanswers:\n  17-08/practice-1: \"6\xff4\"\n  17-08/example-1.d_k: 64\n",
         "not valid Unicode at column 2", 0),
        ("bytes", b"learner: e\nanswers:\n  17-08/practice-1: 6\xc0\xaf4\n  17-08/example-1.d_k: 64\n",
         "not valid Unicode at column 2", 0),
        ("bytes", b"learner: e\nanswers:\n  17-08/practice-1: \xed\xa0\x80\n  17-08/example-1.d_k: 64\n",
         "not valid Unicode at column 1", 0),
        ("bytes", b"learner: e\nanswers:\n  17-08/practice-1: \"64\xe9\"\n  17-08/example-1.d_k: 64\n",
         "not valid Unicode at column 3", 0),
        ("bytes", "learner: e\nanswers:\n  17-08/practice-1: 65\n  17-08/example-1.d_k: 64\n".encode("utf-16"), "", 0),
        ("bytes", "learner: e\nanswers:\n  17-08/practice-1: 65\n  17-08/example-1.d_k: 64\n".encode("utf-32"), "", 0),
        ("bytes", b"\xef\xbb\xbflearner: e\nanswers:\n  17-08/practice-1: 65\n  17-08/example-1.d_k: 64\n", "", 0),
        ("bytes", "learner: e\nanswers:\n  17-08/practice-1: 65\n".encode("utf-16-le"), "invalid YAML", 2),
        ("bytes", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "invalid YAML", 2),
        ("bytes", b"\xff" * 4096, "", 0),
    ]
    for i, (make, content, error, exit) in enumerate(enc):
        graded = ("e",) if exit == 0 and b"learner" in content[:40].replace(b"\x00", b"") else ()
        out.append(FileCase(f"encoding-{i}", "encoding", make, content.hex(), error, exit, graded))
    return out


def build_file(case: FileCase, path: Path) -> Path:
    """Make the hostile file of ``case`` at ``path`` (a FIFO, a link, a socket, bytes, ...)."""
    make = case.make
    if make == "text":
        path.write_text(case.content, encoding="utf-8")
    elif make == "bytes":
        path.write_bytes(bytes.fromhex(case.content))
    elif make == "fifo":
        os.mkfifo(path)
    elif make == "link-fifo":
        target = path.with_name(path.name + ".fifo-target")
        os.mkfifo(target)
        path.symlink_to(target)
    elif make.startswith("link:"):
        target = make[len("link:"):]
        path.symlink_to(path.parent if target == "." else target)
    elif make == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif make == "sparse":
        with open(path, "wb") as f:
            f.truncate(3 * 1024 ** 3)
    elif make == "big":
        with open(path, "wb") as f:
            line = b"# " + b"x" * 1021 + b"\n"
            for _ in range(17 * 1024):
                f.write(line)
    else:  # pragma: no cover
        raise ValueError(make)
    return path


# ---------------------------------------------------------------- specs

SPEC_HEAD = """subject:
  id: "hostile"
  title: Hostile spec
  sources:
    subject: {title: "s", path: x.txt}
symbols:
  d: {positive: true, integer: true}
  h: {positive: true, integer: true}
  n: {positive: true, integer: true}
  b: {positive: true, integer: true}
definitions:
  d_k: d/h
constraints:
  - h divides d
formulas:
  flops: 8*n*d^2 + 4*n^2*d
"""


def _claim(check: str, extra: str = "", cid: str = "c1") -> str:
    return (f"{extra}claims:\n  - id: {cid}\n    quote: \"q\"\n    source: {{document: subject}}\n    expect: holds\n"
            f"    checks:\n      - {check}\n")


def spec_cases() -> list:
    out = []
    big = "9" * 4000
    numbers = [
        ('{kind: numeric, expr: "1e5000", at: {d: 1}, claimed: "1"}', "exponent too large"),
        ('{kind: numeric, expr: "1e-5000*d", at: {d: 1}, claimed: "1"}', "exponent too large"),
        ('{kind: numeric, expr: "10^10^10", at: {d: 1}, claimed: "1"}', "exponent too large"),
        ('{kind: numeric, expr: "9^999*9^999*9^999*9^999*9^999", at: {d: 1}, claimed: "1"}', "number too large"),
        ('{kind: numeric, expr: "exp(10^5)", at: {d: 1}, claimed: "1"}', "exp of a number this large"),
        ('{kind: numeric, expr: "d^5000", at: {d: 2}, claimed: "1"}', "exponent too large"),
        ('{kind: numeric, expr: "(d+n+h+b)^999", at: {d: 2, n: 1, h: 1, b: 1}, claimed: "1"}', "too many terms"),
        (f'{{kind: numeric, expr: "{big}", at: {{d: 1}}, claimed: "1"}}', "text too long"),
        ('{kind: numeric, expr: "d", at: {d: 1}, claimed: "1e5000"}', "bad figure"),
        (f'{{kind: numeric, expr: "d", at: {{d: 1}}, claimed: "{big}"}}', "at most 100 digits"),
        ('{kind: numeric, expr: "d", at: {d: 1}, claimed: 1.0e+5000}', "bad figure"),
        (f'{{kind: numeric, expr: "d", at: {{d: {big}}}, claimed: "1"}}', "too large (at most 100 digits)"),
        (f'{{kind: numeric, expr: "d", at: {{d: 1{"0" * 5000}}}, claimed: "1"}}', "integer too large"),
        ('{kind: numeric, expr: "d", at: {d: 1.0e+308}, claimed: "1"}', "too large (at most 100 digits)"),
        ('{kind: numeric, expr: "d", at: {d: .inf}, claimed: "1"}', "finite"),
        ('{kind: identity, lhs: "1e5000", rhs: "d"}', "exponent too large"),
        ('{kind: dominance, larger: "10^10^10*d", smaller: "d", where: "n < d"}', "exponent too large"),
        ('{kind: asymptotic, expr: "d^1e5000", class: O, of: d, as: [d]}', "exponent too large"),
        ('{kind: measure, quantity: params, at: {d: 1e5000, h: 1}, formula: "4*d^2 + 4*d"}', "must be a number"),
        ('{kind: equivalence, a: fused, b: per_head, at: {d: 8, h: 2, n: 4, b: 2}, seed: 1, tolerance: 1e5000}',
         "must be a number"),
        ('{kind: equivalence, a: fused, b: per_head, at: {d: 8, h: 2, n: 4, b: 2}, seed: ' + big + ', tolerance: 0}',
         "seed must be an integer from 0 to 2^63 - 1"),
    ]
    for i, (check, error) in enumerate(numbers):
        out.append(SpecCase(f"spec-number-{i}", "magnitude", "text", SPEC_HEAD + _claim(check), error=error))
    for i, (extra, error) in enumerate([
        ('  big: 1e5000\n', "exponent too large"), ('  tiny: 10^-5000\n', "exponent too large"),
        ('  deep: ' + "(" * 100 + "d" + ")" * 100 + "\n", "nested too deeply"),
    ]):
        text = SPEC_HEAD + extra + _claim('{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}')
        out.append(SpecCase(f"spec-formula-{i}", "magnitude", "text", text, error=error))
    huge = 2 ** 40
    sizes = [
        f'{{kind: measure, quantity: flops.total, at: {{d: {huge}, h: 1, n: {huge}}}, formula: flops}}',
        f'{{kind: shapes, at: {{d: {huge}, h: 1, n: 8}}, shapes: {{Q_i: [8, {huge}]}}}}',
        f'{{kind: compare, left: params, right: flops.total, at: {{d: 8, h: 1, n: {2 ** 31}, b: {2 ** 20}}}, claimed: less}}',
        f'{{kind: invariance, quantity: params, at: {{d: 8, n: 1}}, vary: {{h: [1, 2]}}}}',
        f'{{kind: measure, quantity: attention.bytes.fp32, at: {{d: 64, h: 64, n: {2 ** 30}, b: 1}}, claimed: "1"}}',
        f'{{kind: measure, quantity: params, at: {{d: {2 ** 31}, h: 1}}, formula: "4*d^2 + 4*d"}}',
    ]
    for i, check in enumerate(sizes):
        if "invariance" in check:   # fine at its sizes: loads, runs, holds (a control among the sizes)
            continue
        out.append(SpecCase(f"spec-size-{i}", "sizes", "text", SPEC_HEAD + _claim(check),
                            error="more than torch can represent"))
    budget = [
        "{kind: equivalence, a: fused, b: per_head, at: {d: 65536, h: 8, n: 4096, b: 8}, seed: 1, tolerance: 1e-5}",
        "{kind: equivalence, a: per_head, b: torch, at: {d: 16384, h: 16, n: 64, b: 2}, seed: 1, tolerance: 1e-5}",
        "{kind: equivalence, a: fused, b: torch, at: {d: 64, h: 64, n: 65536, b: 4}, seed: 1, tolerance: 1e-5}",
        "{kind: equivalence, a: fused, b: single_head, at: {d: 131072, h: 1, n: 2, b: 1}, seed: 1, tolerance: 1e-5}",
        "{kind: equivalence, a: fused, b: per_head, at: {d: 8192, h: 8, n: 8192, b: 64}, seed: 1, tolerance: 1e-5}",
    ]
    for i, check in enumerate(budget):
        out.append(SpecCase(f"spec-budget-{i}", "sizes", "text", SPEC_HEAD + _claim(check, cid=f"budget-{i}"),
                            error="refused before anything was allocated", runtime=True))
    specials = [
        ("fifo", "a FIFO (named pipe), not a regular file"), ("link:/dev/zero", "a character device, not a regular file"),
        ("link:/dev/urandom", "a character device, not a regular file"), ("socket", "a socket, not a regular file"),
        ("sparse", "file is larger than 16,777,216 bytes"), ("big", "file is larger than 16,777,216 bytes"),
        ("link-fifo", "a FIFO (named pipe), not a regular file"),
    ]
    for i, (make, error) in enumerate(specials):
        out.append(SpecCase(f"spec-special-{i}", "special", make, where="", error=error))
    for i, (text, error) in enumerate([
        (SPEC_HEAD + "x: &a [1, 2]\ny: *a\n", "aliases (*name) are not allowed"),
        (SPEC_HEAD.replace("formulas:\n", "formulas:\n  <<: {a: d}\n"), "merge keys (<<) are not allowed"),
        ("subject: " + "[" * 60000 + "]" * 60000 + "\n", "YAML nested too deeply"),
        (SPEC_HEAD + "claims: !!python/object/apply:os.system ['touch PWNED']\n", "not allowed"),
        (SPEC_HEAD + "claims: !!binary aGVsbG8=\n", "not allowed"),
        (SPEC_HEAD.replace("  h: {positive: true, integer: true}\n", "  d: {positive: true}\n"), "duplicate key 'd'"),
        (SPEC_HEAD + "claims: [\n", "invalid YAML"),
    ]):
        out.append(SpecCase(f"spec-yaml-{i}", "yaml", "text", text, error=error,
                            where="" if "nested" in error else r":\d+:\d+"))
    for i, (raw, error) in enumerate([
        ((SPEC_HEAD + "# caf\xe9\n").encode("latin-1"), "not UTF-8 text"),
        (SPEC_HEAD.encode() + b"claims: [\xff]\n", "not UTF-8 text"),
        (b"\x00" * 64, "invalid YAML"),
        (SPEC_HEAD.encode("utf-16-le"), "invalid YAML"),
    ]):
        out.append(SpecCase(f"spec-encoding-{i}", "encoding", "bytes", raw.hex(), error=error))
    return out


def build_spec(case: SpecCase, path: Path) -> Path:
    return build_file(FileCase(case.id, case.family, case.make, case.content), path)


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
