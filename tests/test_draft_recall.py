"""The draft of the bundled subjects' texts proposes at least 80% of their hand-written claims
(grader.draft.recall: a claim counts when a drafted claim quotes the same statement)."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader.draft.recall import recall_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (ROOT.parent / "shared" / "seeds").is_dir(), reason="../shared/seeds is not there")
@pytest.mark.parametrize("spec", ["spec/17-08.yaml", "spec/17-09.yaml", "spec/17-10.yaml"])
def test_recall_against_the_hand_written_spec(spec):
    r = recall_of(str(ROOT / spec))
    assert r.total >= 10
    assert r.recall >= 0.8, f"{r.covered}/{r.total}; missed: {list(r.missed)[:5]}"


def test_the_measure_can_fail(tmp_path):
    """A draft that quotes nothing of the text would score 0: the recall is not trivially 1."""
    from grader.draft.recall import _overlap, spans
    text = "alpha beta gamma. delta epsilon."
    assert spans("alpha … gamma", text) == [(0, 5), (11, 16)]
    assert _overlap(spans("alpha beta", text), spans("delta epsilon", text)) == 0
