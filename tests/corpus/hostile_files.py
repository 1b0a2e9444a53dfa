"""The hostile answers files and spec files of the corpus (see hostile_corpus.py): what each
file is, how it is made (FIFOs, links to devices, sockets, sparse files: made at test time), and
what grader grade / grader check-spec must say about it."""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path


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
    yaml_cases = [      # (content, error, exit: 2 where the whole file or an answer's key is refused, 0
                        # where grading ran[, the learners still graded])
        ("learner: a\nanswers: &x {17-08/practice-1: 64}\nb: *x\n", "aliases (*name) are not allowed", 2),
        ("a: &a [1, 2]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b]\n",
         "aliases (*name) are not allowed", 2),
        ("base: &b {learner: m}\nsub:\n  <<: *b\n  answers: {17-08/practice-1: 64}\n", "merge keys (<<) are not allowed", 2),
        ("learner: m\nanswers:\n  <<: {17-08/practice-1: 64}\n", "merge keys (<<) are not allowed", 2),
        # a key that is not a plain value: that answer alone is refused, the learner graded (exit 2)
        ("learner: m\nanswers:\n  ? [17-08/practice-1]\n  : 64\n", "not a list ([17-08/practice-1])", 2, ("m",)),
        ("learner: m\nanswers:\n  ? {a: 1}\n  : 64\n", "not a mapping ({a: 1})", 2, ("m",)),
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
    for i, (content, error, exit, *graded) in enumerate(yaml_cases):
        out.append(_yaml_case(i, "yaml", content, error, exit, *graded))
    keys = [    # (content, error[, exit: 2 where an answer is refused for its key, no problem id])
        ("learner: k\nanswers:\n  ~: 64\n  17-08/practice-1: 64\n", "not null", 2),
        ("learner: k\nanswers:\n  null: 64\n  ~: 65\n  17-08/practice-1: 64\n", "not null, given twice", 2),
        ("learner: k\nanswers:\n  '': 64\n  17-08/practice-1: 64\n", "not empty text", 2),
        ("learner: k\nanswers:\n  '   ': 64\n  17-08/practice-1: 64\n", "not empty text", 2),
        ("learner: k\nanswers:\n  42: 64\n  17-08/practice-1: 64\n", "not 42 (a number)", 2),
        ("learner: k\nanswers:\n  true: 64\n  17-08/practice-1: 64\n", "not true (true/false)", 2),
        ('{"learner": "k", "answers": {"": 64, "17-08/practice-1": 64}}\n', "not empty text", 2),
        ("learner: k\nanswers:\n  17-08/practice-1: 64\n  17-08/practice-1: 65\n", "answered more than once"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!set {a: null}\n  17-08/example-1.d_k: 64\n", "tag !!set"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!binary aGVsbG8=\n  17-08/example-1.d_k: 64\n", "tag !!binary"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!timestamp 2001-12-14\n  17-08/example-1.d_k: 64\n", "tag !!timestamp"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!float nan\n  17-08/example-1.d_k: 64\n", "not a !!float"),
        ("learner: k\nanswers:\n  17-08/practice-1: !custom 64\n  17-08/example-1.d_k: 64\n", "tag !custom"),
        ("learner: k\nanswers:\n  17-08/practice-1: !!int 0x40\n  17-08/example-1.d_k: 64\n", "not a !!int"),
        ("learner: k\nanswers:\n  17-08/no-such: 64\n  17-08/practice-1: 64\n", "unknown problem id"),
    ]
    for i, (content, error, *exit) in enumerate(keys):
        out.append(FileCase(f"keys-{i}", "keys", "text", content, error, *(exit or [0]), ("k",)))
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
        f'{{kind: compare, left: flops.attention, right: flops.total, at: {{d: 8, h: 1, n: {2 ** 31}, b: {2 ** 20}}}, claimed: less}}',
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
    # unit attacks (issue #27): unknown units, huge prefixes, dimension tricks, contradicting units
    unit_head = SPEC_HEAD.replace("  b: {positive: true, integer: true}\n",
                                  "  b: {positive: true, integer: true}\n  P: {positive: true, unit: parameters}\n"
                                  "  p: {positive: true, unit: bytes/parameter}\n")
    units = [
        (unit_head, '{kind: numeric, expr: "P", at: {P: 1}, claimed: "1e30 YB"}', "unknown unit 'YB'"),
        (unit_head, '{kind: numeric, expr: "P", at: {P: 1}, claimed: "1e5000 GB"}', "bad figure"),
        (unit_head, '{kind: numeric, expr: "P", at: {P: 1}, claimed: "5 furlongs/fortnight"}', "unknown unit"),
        (unit_head, '{kind: numeric, expr: "P + P*p", at: {P: 1, p: 2}, claimed: "3"}', "dimensions do not agree"),
        (unit_head, '{kind: numeric, expr: "d^P", at: {d: 2, P: 1}, claimed: "2"}', "exponent of a number"),
        (unit_head, '{kind: numeric, expr: "log(P*p)", at: {P: 1, p: 2}, claimed: "2"}', "takes a plain number"),
        (unit_head, '{kind: numeric, expr: "min(P, P*p)", at: {P: 1, p: 2}, claimed: "1"}', "different dimensions"),
        (unit_head, '{kind: numeric, expr: "P*p", at: {P: 1, p: 2}, claimed: "2", unit: FLOP/s}',
         "is not the dimension of its expression"),
        (unit_head, '{kind: numeric, expr: "P*p", at: {P: 1, p: 2}, claimed: "2", unit: "YB^9"}', "power is 1 to 4"),
        (unit_head.replace("unit: parameters", "unit: YB"), '{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}',
         "bad unit of symbol 'P': unknown unit 'YB'"),
        (unit_head.replace("unit: parameters", "unit: \"bytes^99999\""),
         '{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}', "power is 1 to 4"),
        (unit_head.replace("unit: parameters", "unit: \"" + "B*" * 2000 + "B\""),
         '{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}', "at most 64 characters"),
        (unit_head.replace("unit: parameters", "unit: [bytes]"), '{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}',
         "a unit must be text"),
        (unit_head.replace("unit: parameters", "unit: \"__import__('os')\""),
         '{kind: numeric, expr: "d", at: {d: 1}, claimed: "1"}', "not a unit"),
        (unit_head, '{kind: numeric, expr: "P", at: {P: 1e999}, claimed: "1"}', "too large (at most 100 digits)"),
    ]
    for i, (head, check, error) in enumerate(units):
        out.append(SpecCase(f"spec-units-{i}", "units", "text", head + _claim(check), error=error))
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
