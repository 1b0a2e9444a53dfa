"""A drafted spec as YAML that ``grader check-spec`` loads: the subject, its sources (with
``path:``, so every quote is checked), the symbols inferred, the models the text names (values as
the text states them, for the author to confirm), and one claim per statement, each proposed
check marked ``# DRAFT``. Strings are written double-quoted with every character YAML could
misread escaped, so the file reads back exactly."""
from __future__ import annotations

import os
import re

from .model import Model, Proposed, Statement

_PLAIN_OK = re.compile(r"[\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def q(text: object) -> str:
    """A YAML double-quoted scalar for ``text``."""
    out = ['"']
    for c in str(text):
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif _PLAIN_OK.match(c):
            out.append(c)
        else:
            n = ord(c)
            out.append(f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")
    out.append('"')
    return "".join(out)


def _value(v: object) -> str:
    if isinstance(v, tuple) and v and isinstance(v[0], tuple):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str) and re.fullmatch(r"[0-9]{1,30}", v):
        return v
    return q(v)


def check_line(c: Proposed) -> str:
    body = ", ".join(f"{k}: {_value(v)}" for k, v in c.fields)
    mark = "# DRAFT: review" if c.kind != "unverifiable" else "# DRAFT"
    if c.holds is False:
        mark += " (fails as drafted)"
    return f"      - {{kind: {c.kind}, {body}}}   {mark}"


def source_path(path: str, output: str | None) -> str:
    """The ``path:`` that finds the text from where the spec is written (relative when it can be)."""
    target = os.path.abspath(path)
    if output is None:
        return target
    try:
        return os.path.relpath(target, os.path.dirname(os.path.abspath(output)))
    except ValueError:          # another drive
        return target


def render(subject: str, sources: list[tuple[str, str, str | None]], symbols: list[str], models: list[Model],
           statements: list[Statement]) -> str:
    """The spec's YAML; ``sources``: (key, title, path or None)."""
    lines = ["# Drafted by `grader draft`: every claim and check below is a proposal for the author to review",
             "# (checks marked DRAFT; expect: what the drafter computed, holds where it could not tell). Run: grader check-spec THIS_FILE",
             "subject:", f"  id: {q(subject)}", f"  title: {q('Draft of ' + subject)}", "  sources:"]
    for key, title, path in sources:
        lines.append(f"    {key}: {{title: {q(title)}" + (f", path: {q(path)}}}" if path else "}"))
    lines.append("symbols:" if symbols else "symbols: {}")
    for s in symbols:
        lines.append(f"  {s}: {{positive: true, meaning: {q('DRAFT: inferred from the text')}}}")
    if models:
        lines.append("models:")
        for m in models:
            vals = ", ".join(f"{k}: {v}" for k, v in m.values)
            lines.append(f"  {m.key}:")
            lines.append(f"    name: {q(m.name)}")
            lines.append(f"    citation: {q('DRAFT: values as the text states them; cite the paper or config.json and confirm')}")
            lines.append(f"    values: {{{vals}}}")
    lines.append("claims:" if statements else "claims: []")
    for st in statements:
        lines.append(f"  - id: {st.id}")
        lines.append(f"    quote: {q(st.quote)}")
        lines.append(f"    source: {{document: {st.document}, section: {q(st.section or '(start)')}}}")
        only_unverifiable = all(c.kind == "unverifiable" for c in st.checks)
        failing = [c for c in st.checks if c.holds is False and c.kind != "unverifiable"]
        lines.append(f"    expect: {'unverifiable' if only_unverifiable else 'refuted' if failing else 'holds'}")
        if failing:
            why = "; ".join(c.evidence for c in failing if c.evidence)[:400]
            lines.append(f"    corrected: {q('DRAFT: write the corrected statement. The drafter computed: ' + why)}")
        lines.append(f"    note: {q('DRAFT (' + ', '.join(st.kinds) + f'), line {st.line}: review the quote, the checks and expect')}")
        lines.append("    checks:")
        lines.extend(check_line(c) for c in st.checks)
    return "\n".join(lines) + "\n"
