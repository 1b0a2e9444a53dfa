"""Reports of ``grader draft`` (its summary) and ``grader check-text`` (text, json, junit). The
JUnit output uses the same XML writing as check-spec's report (ElementTree, and grade.formats'
``xml_safe`` for characters XML cannot hold); kept in this one module so that it can move with
the other report writers."""
from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from .model import Draft, TextCheck

FORMATS = ("text", "json", "junit")


def draft_summary(d: Draft) -> str:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(d.by_kind.items(), key=lambda x: (-x[1], x[0])))
    lines = [f"{len(d.statements)} statements found in {len(d.files)} text(s) ({d.words:,} words): {kinds or 'none'}",
             f"{d.proposed} checks proposed (marked DRAFT), {len(d.symbols)} symbols, {len(d.models)} models"]
    failing = d.failing
    lines.append(f"{len(failing)} statements already failing" + (":" if failing else ""))
    for s in failing:
        lines.append(f"  {s.file}:{s.line}: {s.id}: {s.quote[:100]}")
    if d.unquotable:
        lines.append(f"{d.unquotable} statements left out: no exact quote of them could be found in their file")
    return "\n".join(lines) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def to_text(r: TextCheck) -> str:
    lines = [f"{p.file}:{p.line}: {p.kind}: {p.quote[:200]}\n    the text says {p.says}; the computation gives {p.gives}"
             for p in r.problems]
    lines.append(f"{_plural(len(r.files), 'text')}: {_plural(r.statements, 'statement')}, {r.computed} recomputed, "
                 f"{_plural(len(r.problems), 'inconsistency')}".replace("inconsistencys", "inconsistencies"))
    return "\n".join(lines) + "\n"


def to_json(r: TextCheck) -> str:
    data = {"files": list(r.files), "statements": r.statements, "computed": r.computed,
            "problems": [{"file": p.file, "line": p.line, "section": p.section, "kind": p.kind, "quote": p.quote,
                          "says": p.says, "gives": p.gives} for p in r.problems],
            "summary": {"inconsistencies": len(r.problems), "ok": r.ok}}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def to_junit(r: TextCheck) -> str:
    from grader.grade.formats import xml_safe
    root = ET.Element("testsuites", name="grader check-text", tests=str(max(1, len(r.files))),
                      failures=str(len(r.problems)), errors="0")
    for f in r.files:
        mine = [p for p in r.problems if p.file == f]
        suite = ET.SubElement(root, "testsuite", name=xml_safe(f), tests=str(max(1, len(mine))),
                              failures=str(len(mine)), errors="0")
        if not mine:
            ET.SubElement(suite, "testcase", classname="check-text", name=xml_safe(f"{f}: consistent"))
        for p in mine:
            case = ET.SubElement(suite, "testcase", classname=xml_safe(f"check-text.{p.kind}"),
                                 name=xml_safe(f"{p.file}:{p.line}"), file=xml_safe(p.file), line=str(p.line))
            ET.SubElement(case, "failure", message=xml_safe(f"the text says {p.says}; the computation gives {p.gives}"),
                          type=p.kind).text = xml_safe(p.quote)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render(r: TextCheck, fmt: str) -> str:
    return {"text": to_text, "json": to_json, "junit": to_junit}[fmt](r)
