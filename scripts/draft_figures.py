"""The figures of issue #28 for a hand-written spec: the draft's recall of its claims, the number
of drafted claims, and how many drafted claims that check-spec decides (holds or refuted) get the
verdict the hand-written spec expects; and what check-text reports on its texts.

    .venv/bin/python scripts/draft_figures.py spec/17-08.yaml spec/17-09.yaml spec/17-10.yaml tests/data/ffn-hand.yaml

It drafts the spec's sources into a temporary folder and runs `grader check-spec --no-train
--format json` on the draft (the measured checks need torch, on the meta device).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.draft.engine import check_sources, draft_sources
from grader.draft.recall import recall_of
from grader.draft.sources import read_source
from grader.claims.load import load_file
from grader.claims.quotes import find_source


def main(specs: list[str]) -> None:
    for spec in specs:
        subject = load_file(spec)
        paths = [find_source(d.path, spec) for d in subject.documents.values() if d.path]
        sources = [read_source(str(p)) for p in paths if p is not None]
        r = recall_of(spec)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "draft.yaml"
            verdicts: dict[str, str] = {}
            for src in sources:             # one draft per source: the claim ids recall_of pairs
                out.write_text(draft_sources([src], output=str(out)).yaml, encoding="utf-8")
                report = Path(tmp) / "report.json"
                subprocess.run([sys.executable, "-m", "grader", "check-spec", str(out), "--no-train", "--format", "json",
                                "-o", str(report)], check=False, capture_output=True)
                verdicts.update({c["id"]: c["verdict"] for c in json.loads(report.read_text())["claims"]})
        decided = [(hid, expect, verdicts.get(did)) for hid, expect, did in r.pairs
                   if verdicts.get(did) in ("holds", "refuted")]
        agree = sum(1 for _, expect, v in decided if v == expect)
        tc = check_sources(sources)
        print(f"{spec}: recall {r.covered}/{r.total} = {r.recall:.1%}; {r.drafted} claims drafted; "
              f"check-spec decides {len(decided)} of the matched drafted claims, {agree} as the hand-written spec expects")
        for hid, expect, v in decided:
            if v != expect:
                print(f"    differs: {hid}: hand-written expects {expect}, the draft's checks give {v}")
        print(f"    check-text: {len(tc.problems)} inconsistencies")
        for p in tc.problems:
            print(f"    {p}")


if __name__ == "__main__":
    main(sys.argv[1:])
