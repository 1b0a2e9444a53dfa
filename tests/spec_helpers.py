"""Small specs for the spec engine's tests (written into tmp_path), with their source text beside
them (every quote of the claims), so that check-spec checks the quotes as it does for an author."""
import re
import textwrap

HEADER = """\
subject:
  id: "t-1"
  title: Test subject
  sources:
    text: {title: A test text, path: t-source.txt}
symbols:
  d: {positive: true, integer: true}
  h: {positive: true, integer: true}
  n: {positive: true, integer: true}
  b: {positive: true, integer: true}
  n_kv: {positive: true, integer: true}
aliases:
  d_model: d
definitions:
  d_k: d/h
  d_v: d/h
constraints:
  - h divides d
formulas:
  params: 4*d^2 + 4*d
  flops_projections: 8*n*d^2
  flops_attention: 4*n^2*d
  flops: 8*n*d^2 + 4*n^2*d
  attn_params_gqa: 2*d^2 + 2*d*n_kv*d_k
models:
  toy:
    name: Toy model
    citation: "made up for the test"
    values: {d: 1024, h: 16, n_kv: 4}
"""


def claim(cid, expect, checks, corrected="the right statement"):
    """One claim as YAML text; checks: a list of flow-mapping strings."""
    lines = [f"- id: {cid}", f"  quote: \"quote of {cid}\"", "  source: {document: text, section: s1}",
             f"  expect: {expect}"]
    if expect == "refuted":
        lines.append(f"  corrected: \"{corrected}\"")
    lines.append("  checks:")
    lines += [f"    - {c}" for c in checks]
    return "\n".join(lines) + "\n"


def write_spec(tmp_path, *claims, name="t.yaml", header=HEADER):
    p = tmp_path / name
    p.write_text(header + "claims:\n" + "".join(claims), encoding="utf-8")
    quotes = re.findall(r'^\s*-?\s*quote: "(.*)"\s*$', "".join(claims), re.M)
    (tmp_path / "t-source.txt").write_text("\n".join(quotes) + "\n", encoding="utf-8")
    return p


def dedent(s):
    return textwrap.dedent(s)
