"""Reports of ``grader draft`` (its summary) and ``grader check-text`` (text, json, junit: the
formats :data:`grader.reports.FORMATS` ``["text-check"]``; JUnit by the one writer, :mod:`.junit`)."""
from __future__ import annotations

import json

from grader.draft.model import Draft, TextCheck

from . import junit


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
    suites = []
    for f in r.files:
        mine = [p for p in r.problems if p.file == f]
        suite = junit.Suite({"name": f, "tests": str(max(1, len(mine))), "failures": str(len(mine)), "errors": "0"})
        if not mine:
            suite.cases.append(junit.Case({"classname": "check-text", "name": f"{f}: consistent"}))
        for p in mine:
            case = junit.Case({"classname": f"check-text.{p.kind}", "name": f"{p.file}:{p.line}", "file": p.file,
                               "line": str(p.line)})
            case.add("failure", p.quote, message=f"the text says {p.says}; the computation gives {p.gives}",
                     type=p.kind)
            suite.cases.append(case)
        suites.append(suite)
    return junit.write({"name": "grader check-text", "tests": str(max(1, len(r.files))),
                        "failures": str(len(r.problems)), "errors": "0"}, suites, declaration=junit.GRADES_DECLARATION)


def render(r: TextCheck, fmt: str) -> str:
    return {"text": to_text, "json": to_json, "junit": to_junit}[fmt](r)
