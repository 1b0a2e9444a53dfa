"""A plain text cut into statements: headings give the section, paragraphs and list items are
blocks, blocks are cut into sentences, and a sentence holding two worked computations in a row
("… = 32,768 params 8 heads × 3 matrices × 32,768 = 786,432") is cut between them.

Everything here is linear in the text (bounded regular expressions, no backtracking over a
line); a line longer than :data:`MAX_STATEMENT` is cut into pieces of that size.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_STATEMENT = 2000          # characters; a longer sentence is cut (the rules read each piece)
MAX_HEADING = 90


@dataclass(frozen=True)
class Span:
    """A statement: plain text [start, end) of its source, its section heading, and the text."""

    start: int
    end: int
    section: str
    text: str
    heading: bool = False          # a heading of an empty section, or a line naming a model


_MD_HEADING = re.compile(r"#{1,6}[ \t]+(\S[^\n]{0,200})")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+\S")
_NUMBERED_TITLE = re.compile(r"(?:\d{1,2}(?:\.\d{1,2})*\.?|[A-Z]\.|Example \d+:|Problem \d+|Q\d+:)?\s*[A-Z0-9][^\n]{0,88}")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?✓])[\"')\]]?\s+(?=[A-Z\"(\[*_]|\d+\.\s)")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|vs|etc|al|Fig|fig|Eq|eq|cf|approx|resp|No|Sec|Dr|Mr|Ms)\.|\b[A-Z]\.)$")
_LABEL = re.compile(r"(?<![\w:])((?:[A-Z][a-z][\w-]*|[A-Z])(?:[ -][A-Za-z][\w-]*){0,3}):\s")
_QUIZ = re.compile(r"Q\d{1,3}:")
_MATHY = re.compile(r"[=≈∈²³^()+×·/@<>{}\[\]]|\d[KMB]\b")


def lines_of(text: str) -> list[tuple[int, int]]:
    out = []
    pos = 0
    for m in re.finditer("\n", text):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    return out


def _is_heading(line: str, prev_blank: bool, next_blank: bool) -> str | None:
    s = line.strip()
    m = _MD_HEADING.fullmatch(s)
    if m:
        return m.group(1).strip().strip("#").strip()
    if (prev_blank and next_blank and 0 < len(s) <= MAX_HEADING and not s.endswith((".", ",", ";", "?", "!", ":"))
            and _NUMBERED_TITLE.fullmatch(s) and not _MATHY.search(s) and not line[:1].isspace()
            and not _QUIZ.match(s) and not s.startswith("Correct:") and len(s.split()) <= 12):
        return s
    return None


def blocks(text: str) -> Iterator[tuple[int, int, str, bool]]:
    """(start, end, section, is_heading) of each paragraph, list item and heading."""
    lines = lines_of(text)
    section = ""
    blank = [not text[a:b].strip() for a, b in lines]
    i = 0
    n = len(lines)
    in_fence = False
    while i < n:
        a, b = lines[i]
        line = text[a:b]
        if blank[i]:
            i += 1
            continue
        if _FENCE.match(line):            # a fenced code block is one statement
            j = i + 1
            while j < n and not _FENCE.match(text[lines[j][0]:lines[j][1]]):
                j += 1
            end = lines[min(j, n - 1)][1]
            body_a = lines[i + 1][0] if i + 1 < n else b
            body_b = lines[j - 1][1] if j - 1 > i else body_a
            if body_b > body_a:
                yield body_a, body_b, section, False
            i = j + 1
            in_fence = False
            del end
            continue
        head = _is_heading(line, i == 0 or blank[i - 1], i + 1 >= n or blank[i + 1])
        if head is not None and not in_fence:
            # a heading whose section is empty (the next heading follows) is a statement itself
            section = head[:200]
            yield a, b, section, True
            i += 1
            continue
        if _QUIZ.match(line.strip()):          # a quiz item: the question, its options, "Correct: X)"
            j = i + 1
            while j < n and j - i < 40 and not text[lines[j][0]:lines[j][1]].strip().startswith("Correct:"):
                j += 1
            if j < n and j - i < 40:
                yield a, lines[j][1], section, False
                i = j + 1
                continue
        j = i + 1
        while j < n and not blank[j] and not _LIST_ITEM.match(text[lines[j][0]:lines[j][1]]) \
                and not _MD_HEADING.fullmatch(text[lines[j][0]:lines[j][1]].strip()):
            j += 1
        yield a, lines[j - 1][1], section, False
        i = j


def sentences(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
    """Sentence spans of text[a:b] (quiz items "Q1: … Correct: A)" kept whole)."""
    block = text[a:b]
    if _QUIZ.match(block.lstrip()) and "Correct:" in block:
        yield a, b
        return
    start = 0
    for m in _SENTENCE_END.finditer(block):
        before = block[max(start, m.start() - 8):m.start()]
        if _ABBREV.search(before) or _LIST_NUMBER.fullmatch(block[start:m.start()]):
            continue
        yield a + start, a + m.start()
        start = m.end()
    if start < len(block):
        yield a + start, b


_ROW = re.compile(r"\"[^\"\n]{1,60}\"\s*:\s*[^\n]{1,80}|(?:[\d.,]+[KMB]?\s+){2,}[\d.,]+[KMB]?")
_LIST_NUMBER = re.compile(r"\s*(?:[-*+•]\s*)?\d{1,3}\.")


def split_computations(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
    """Cut a sentence before a label ("Attention matrices:", "Total:") that follows a finished
    computation, and between two computations in a row."""
    s = text[a:b]
    cuts = []
    last_rel = -1
    for m in _LABEL.finditer(s):
        k = m.start()
        prev = s[:k]
        rel = max(prev.rfind("="), prev.rfind("≈"))
        if rel > last_rel and re.search(r"\d", prev[rel:]) and k > 0:
            cuts.append(k)
            last_rel = k
    # "= 32,768 params 8 heads × 3 matrices × 32,768 = 786,432": a new product after a result
    for m in re.finditer(r"[=≈]\s*[\d,.]+[KMBT]?\s+(?:[a-z]+\s+){0,2}(?=\d[\d,]*\s+(?:[a-z]+\s+)?[×x·*]\s*\d[^=≈]{0,80}[=≈])", s):
        cuts.append(m.end())
    pos = 0
    for k in sorted(set(cuts)):
        if k - pos >= 8:
            yield a + pos, a + k
            pos = k
    yield a + pos, b


def statements(text: str) -> Iterator[Span]:
    """Every statement of a plain text, with its section."""
    pending_heading: tuple[int, int, str] | None = None
    for a, b, section, is_heading in blocks(text):
        if is_heading:
            if pending_heading is not None:           # the previous section was empty
                pa, pb, ps = pending_heading
                yield Span(pa, pb, ps, text[pa:pb].strip(), heading=True)
            pending_heading = (a, b, section)
            continue
        pending_heading = None
        rows = lines_of(text[a:b])
        if len(rows) > 1 and sum(bool(_ROW.fullmatch(text[a + x:a + y].strip())) for x, y in rows) * 2 >= len(rows):
            for x, y in rows:           # a table or a config file: one statement per line
                body = text[a + x:a + y]
                if body.strip():
                    lead = len(body) - len(body.lstrip())
                    yield Span(a + x + lead, a + x + lead + len(body.strip()), section, body.strip()[:MAX_STATEMENT])
            continue
        for sa, sb in sentences(text, a, b):
            for ca, cb in split_computations(text, sa, sb):
                for pa in range(ca, cb, MAX_STATEMENT):
                    pb = min(cb, pa + MAX_STATEMENT)
                    raw = text[pa:pb]
                    lead = len(raw) - len(raw.lstrip())
                    body = raw.strip()
                    if body:
                        yield Span(pa + lead, pa + lead + len(body), section, body)
    if pending_heading is not None:
        pa, pb, ps = pending_heading
        yield Span(pa, pb, ps, text[pa:pb].strip(), heading=True)
