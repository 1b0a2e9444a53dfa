"""Formulas and definitions that use each other, formula names inside expressions, cycles as located
errors, the "known:" list of an unknown name (formulas included), and learners' answers not reading a
formula's name as its formula."""
import pytest

from grader.errors import ErrorList
from grader.claims import evaluate
from grader.claims.load import load_subject, loads
from grader.claims.run import run_subject

SPEC = """\
subject:
  id: "c-1"
  title: Composition
  sources:
    text: {title: A text}
symbols:
  d: {positive: true, integer: true}
  h: {positive: true, integer: true}
  g: {positive: true, integer: true}
  n: {positive: true, integer: true}
definitions:
  kv_width: g*d_k          # uses a definition given after it
  d_k: d/h
  per_head: attn_params/h  # a definition that uses a formula
formulas:
  attn_params: q_and_o + 2*d*kv_width       # uses a formula and a definition
  q_and_o: 2*d^2
  total: 3*attn_params + 4*n*d
claims:
  - id: gqa
    quote: "q"
    source: {document: text}
    expect: holds
    checks:
      # 2·1024² + 2·1024·4·64 = 2,097,152 + 524,288 = 2,621,440; inside arithmetic: + 1 = 2,621,441
      - {kind: numeric, expr: attn_params, at: {d: 1024, h: 16, g: 4}, claimed: "2,621,440"}
      - {kind: numeric, expr: "attn_params + 1", at: {d: 1024, h: 16, g: 4}, claimed: "2,621,441"}
      - {kind: identity, lhs: "h*per_head", rhs: attn_params}
      - {kind: identity, lhs: "total - 3*attn_params", rhs: "4*n*d"}
"""


def test_formulas_and_definitions_use_each_other(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(SPEC, encoding="utf-8")
    s = load_subject(p)
    r = run_subject(s, device="cpu").results[0]
    assert r.verdict == "holds", [c.summary for c in r.checks]
    assert evaluate(s, "attn_params + q_and_o", {"d": 2, "h": 1, "g": 1}) == 8 + 8 + 8   # 2·4 + 2·2·2 + 2·4


def test_a_learners_answer_does_not_read_a_formula_name():
    from grader.expr import ExprError, parse
    s = loads(SPEC, "c.yaml")
    assert str(parse("d_k", s.table).expr) == "d/h"
    with pytest.raises(ExprError):
        parse("attn_params", s.table)      # a learner cannot answer with the formula's name
    assert "per_head" in [n for n, _ in s.table.definitions]   # expanded: it used a formula


def errors(text):
    with pytest.raises(ErrorList) as e:
        loads(text, "c.yaml")
    return [str(x) for x in e.value.errors]


def test_a_cycle_is_an_error_at_each_of_its_names():
    text = SPEC.replace("  q_and_o: 2*d^2", "  q_and_o: total - d").replace("  d_k: d/h", "  d_k: d_k/h")
    errs = errors(text)
    lines = text.splitlines()
    at = {name: next(i for i, t in enumerate(lines, 1) if t.startswith(f"  {name}:")) for name in
          ("attn_params", "q_and_o", "total", "d_k")}
    cyc = [e for e in errs if "part of a cycle" in e]
    assert any(f"c.yaml:{at['d_k']}:" in e and "d_k -> d_k" in e for e in cyc), errs
    for name in ("attn_params", "q_and_o", "total"):
        assert any(f"c.yaml:{at[name]}:" in e and f"formula {name!r}" in e for e in cyc), errs
    assert any("attn_params -> q_and_o -> total -> attn_params" in e or "q_and_o -> total -> attn_params -> q_and_o" in e
               or "total -> attn_params -> q_and_o -> total" in e for e in cyc), errs


def test_known_names_include_formulas_and_a_name_is_defined_once():
    errs = errors(SPEC.replace('expr: "attn_params + 1"', 'expr: "attn_param + 1"')
                  .replace("  total: 3*attn_params", "  d_k: 1\n  total: 3*attn_params"))
    assert any("unknown name 'attn_param'" in e and "attn_params" in e.split("known:")[1]
               and "q_and_o" in e.split("known:")[1] for e in errs), errs
    assert any("formula 'd_k' is already a name" in e for e in errs), errs
