"""How much of a hand-written spec a draft proposes: a hand-written claim counts as proposed when
a drafted claim of the same source quotes the same statement, that is when their quotes, found in
the source's text, overlap on at least half of the hand-written quote and on at least
:data:`MIN_SHARE_OF_DRAFT` of the drafted one (a whole paragraph does not count for each of its
sentences). Used by tests/test_draft_recall.py and the report of issue #28."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .engine import draft_sources
from .model import Statement
from .sources import read_source

MIN_SHARE_OF_HAND = 0.5
MIN_SHARE_OF_DRAFT = 0.3


@dataclass(frozen=True)
class Recall:
    total: int                  # hand-written claims whose source has a path
    covered: int
    drafted: int                # drafted claims of those sources
    compared: int               # covered claims whose drafted checks computed a verdict
    agree: int                  # ... and the verdict is the hand-written spec's expectation
    missed: tuple[str, ...]
    pairs: tuple[tuple[str, str, str], ...] = ()     # (hand-written claim id, its expect, drafted claim id)

    @property
    def recall(self) -> float:
        return self.covered / self.total if self.total else 1.0


def occurrences(quote: str, text: str, limit: int = 20) -> list[list[tuple[int, int]]]:
    """Each place the quote is in the normalised text (a quote may be found more than once)."""
    out: list[list[tuple[int, int]]] = []
    at = 0
    while len(out) < limit:
        sp = spans(quote, text, at)
        if not sp:
            break
        out.append(sp)
        at = sp[0][0] + 1
    return out


def spans(quote: str, text: str, start: int = 0) -> list[tuple[int, int]]:
    """Where the quote's fragments are in the normalised text, in order ([] if not there)."""
    from grader.claims.quotes import GAP, normalise
    out = []
    at = start
    for f in GAP.split(normalise(quote)):
        if not f:
            continue
        k = text.find(f, at)
        if k < 0:
            return []
        out.append((k, k + len(f)))
        at = k + len(f)
    return out


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


def _size(a: list[tuple[int, int]]) -> int:
    return sum(y - x for x, y in a)


def verdict(s: Statement) -> str | None:
    """The drafter's own verdict of a statement: refuted, holds, unverifiable; None if it has none."""
    computed = [c.holds for c in s.checks if c.holds is not None]
    if computed:
        return "refuted" if False in computed else "holds"
    if all(c.kind == "unverifiable" for c in s.checks):
        return "unverifiable"
    return None


def recall_of(spec_file: str) -> Recall:
    """Draft every source of a hand-written spec that has a path, and compare (see the module doc)."""
    from grader.claims.load import load_file
    from grader.claims.quotes import find_source, normalise
    subject = load_file(spec_file)
    paths: dict[str, Path] = {}
    for key, src in subject.documents.items():
        p = getattr(src, "path", None)
        found = find_source(p, spec_file) if p else None
        if found is not None:
            paths[key] = found
    drafted: dict[str, list[tuple[Statement, list[tuple[int, int]]]]] = {}
    texts: dict[str, str] = {}
    for key, path in paths.items():
        src = read_source(str(path))
        texts[key] = normalise(src.raw)
        d = draft_sources([src])
        drafted[key] = [(s, spans(s.quote, texts[key])) for s in d.statements]
    total = covered = compared = agree = 0
    missed = []
    pairs = []
    for claim in subject.claims:
        key = claim.source.document
        if key not in paths:
            continue
        total += 1
        best = None
        for hand in occurrences(claim.quote, texts[key]):
            for s, sp in drafted[key]:
                ov = _overlap(hand, sp)
                if ov and ov >= MIN_SHARE_OF_HAND * _size(hand) and ov >= MIN_SHARE_OF_DRAFT * _size(sp):
                    best = s
                    break
            if best is not None:
                break
        if best is None:
            missed.append(claim.quote)
            continue
        covered += 1
        pairs.append((claim.id, claim.expect, best.id))
        v = verdict(best)
        if v is not None and v != "unverifiable":
            compared += 1
            agree += v == claim.expect
    return Recall(total, covered, sum(len(v) for v in drafted.values()), compared, agree, tuple(missed),
                  tuple(pairs))
