"""Course texts as the drafter reads them: Markdown, plain text, HTML, LaTeX and the Markdown
cells of a Jupyter notebook, each turned into plain text that remembers, character by character,
where it stands in the file (``offsets``; -1 for a character the conversion made up, such as a
line break for ``<p>`` or ``&amp;`` decoded).

A quote is then built from the file's own characters only: the runs of a plain span that are
contiguous in the file, joined with " … " (the gap that :mod:`grader.claims.quotes` reads), so
every quote the drafter writes is found by check-spec in the file itself.
"""
from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.errors import InputError, Location

MAX_TEXT_BYTES = 4 * 2**20          # a course text; a 10,000-word text is about 70 kB
FORMATS = ("markdown", "text", "html", "latex", "notebook")
_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text", ".html": "html",
             ".htm": "html", ".tex": "latex", ".ipynb": "notebook"}


@dataclass(frozen=True)
class Source:
    """One text: its file's characters (``raw``), its plain text and where each plain character
    comes from (an index into ``raw``, or -1)."""

    path: str
    fmt: str
    raw: str
    plain: str
    offsets: Sequence[int]
    utf8: bool                     # whether check-spec can read the file's quotes (UTF-8 text)

    def line_of(self, i: int) -> int:
        """The 1-based line of the file where plain character ``i`` (or the next real one) is."""
        n = len(self.offsets)
        j = i
        while j < n and self.offsets[j] < 0 and j - i < 200:
            j += 1
        off = self.offsets[j] if j < n and self.offsets[j] >= 0 else 0
        return _line_starts(self.raw).count_before(off)

    def location(self, i: int) -> Location:
        return Location(self.path, self.line_of(i))


class _Lines:
    def __init__(self, raw: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", raw)]

    def count_before(self, off: int) -> int:
        return bisect.bisect_right(self.starts, off)


_LINES_CACHE: dict[int, tuple[str, _Lines]] = {}


def _line_starts(raw: str) -> _Lines:
    hit = _LINES_CACHE.get(id(raw))
    if hit is not None and hit[0] is raw:
        return hit[1]
    lines = _Lines(raw)
    _LINES_CACHE.clear()
    _LINES_CACHE[id(raw)] = (raw, lines)
    return lines


def format_of(path: str, fmt: str | None = None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})", Location(path))
        return fmt
    return _SUFFIXES.get(Path(path).suffix.lower(), "text")


def read_source(path: str, fmt: str | None = None) -> Source:
    """Read a text file (at most 4 MiB, a regular file) and convert it; InputError saying why not."""
    from grader.files.textfiles import decode, read_bytes
    data = read_bytes(path, max_bytes=MAX_TEXT_BYTES)
    try:
        raw, utf8 = data.decode("utf-8"), True
    except UnicodeDecodeError:
        raw, utf8 = decode(data, path), False
    return from_text(raw, path, format_of(path, fmt), utf8=utf8)


def from_text(raw: str, path: str = "<text>", fmt: str = "markdown", *, utf8: bool = True) -> Source:
    if fmt in ("markdown", "text"):
        return Source(path, fmt, raw, raw, range(len(raw)), utf8)
    conv = {"html": _html, "latex": _latex, "notebook": _notebook}[fmt]
    b = _Builder(raw)
    conv(raw, b, path)
    return Source(path, fmt, raw, "".join(b.chars), b.offsets, utf8)


class _Builder:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.chars: list[str] = []
        self.offsets: list[int] = []

    def copy(self, a: int, b: int) -> None:
        self.chars.append(self.raw[a:b])
        self.offsets.extend(range(a, b))

    def add(self, text: str) -> None:
        self.chars.append(text)
        self.offsets.extend([-1] * len(text))


_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": " ", "times": "×",
             "middot": "·", "asymp": "≈", "le": "≤", "ge": "≥", "radic": "√", "sup2": "²", "sup3": "³",
             "hellip": "…", "mdash": "—", "ndash": "–", "minus": "−", "isin": "∈", "rarr": "→"}
_HTML_TOKEN = re.compile(r"<!--.*?-->|<(script|style)\b[^>]*>.*?</\1\s*>|<(/?)([A-Za-z][A-Za-z0-9]*)[^>]*>|&(#?[A-Za-z0-9]{1,10});",
                         re.S | re.I)
_BLOCK = {"p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "pre", "blockquote", "hr",
          "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "dd", "header", "footer", "title", "body"}


def _html(raw: str, b: _Builder, path: str) -> None:
    pos = 0
    for m in _HTML_TOKEN.finditer(raw):
        b.copy(pos, m.start())
        pos = m.end()
        tag, ent = m.group(3), m.group(4)
        if ent is not None:
            b.add(_entity(ent) or m.group(0))
        elif tag is not None:
            t = tag.lower()
            if t in ("h1", "h2", "h3", "h4", "h5", "h6"):
                b.add("\n\n# " if not m.group(2) else "\n\n")
            elif t in ("td", "th"):
                b.add(" ")
            elif t in _BLOCK:
                b.add("\n\n" if t in ("p", "div", "pre", "table", "section", "article") else "\n")
        else:
            b.add("\n")
    b.copy(pos, len(raw))


def _entity(ent: str) -> str | None:
    if ent.startswith("#"):
        try:
            n = int(ent[2:], 16) if ent[1:2] in ("x", "X") else int(ent[1:])
        except ValueError:
            return None
        return chr(n) if 0 < n < 0x110000 and not 0xD800 <= n < 0xE000 else None
    return _ENTITIES.get(ent)


_TEX_TOKEN = re.compile(r"(?<!\\)%[^\n]*|\\(section|subsection|subsubsection|chapter|paragraph|title)\*?\{([^{}\n]{0,300})\}"
                        r"|\\(begin|end)\{[^{}\n]{0,50}\}|\\(textbf|emph|textit|texttt|text|mathrm|underline)\{"
                        r"|\\(item|maketitle|noindent|par|newline)\b|\\\\")


def _latex(raw: str, b: _Builder, path: str) -> None:
    pos = 0
    depth: list[int] = []            # the text macros whose closing brace is to be dropped
    brace = 0
    for m in _TEX_TOKEN.finditer(raw):
        _copy_braces(raw, b, pos, m.start(), depth)
        pos = m.end()
        if m.group(1):
            b.add("\n\n# ")
            b.copy(m.start(2), m.end(2))
            b.add("\n\n")
        elif m.group(3):
            b.add("\n\n")
        elif m.group(4):
            depth.append(brace)
        elif m.group(5) == "item":
            b.add("\n- ")
        elif m.group(0) in ("\\\\",) or m.group(5):
            b.add("\n")
    _copy_braces(raw, b, pos, len(raw), depth)


def _copy_braces(raw: str, b: _Builder, a: int, z: int, depth: list[int]) -> None:
    """Copy raw[a:z], dropping the closing brace of a text macro (\\textbf{...})."""
    if not depth:
        b.copy(a, z)
        return
    level = 0
    start = a
    for i in range(a, z):
        c = raw[i]
        if c == "{" and (i == 0 or raw[i - 1] != "\\"):
            level += 1
        elif c == "}" and (i == 0 or raw[i - 1] != "\\"):
            if level == 0 and depth:
                b.copy(start, i)
                start = i + 1
                depth.pop()
                if not depth:
                    break
            else:
                level -= 1
    b.copy(start, z)


def _notebook(raw: str, b: _Builder, path: str) -> None:
    try:
        nb = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise InputError(f"not a Jupyter notebook (JSON): {str(e)[:100]}", Location(path)) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise InputError("not a Jupyter notebook: no 'cells' list", Location(path))
    cursor = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        src = cell.get("source", "")
        parts = src if isinstance(src, list) else [src]
        for s in parts:
            if not isinstance(s, str):
                continue
            cursor = _map_json_string(raw, s, cursor, b)
        b.add("\n\n")


def _map_json_string(raw: str, s: str, cursor: int, b: _Builder) -> int:
    """Append ``s``, mapping each character to its place in the JSON text when it is written there
    as itself; an escaped one (\\n, \\", \\u00e9) is made up (-1)."""
    for ascii_only in (False, True):
        enc = json.dumps(s, ensure_ascii=ascii_only)
        at = raw.find(enc, cursor)
        if at >= 0:
            pos = at + 1
            for c in s:
                e = json.dumps(c, ensure_ascii=ascii_only)[1:-1]
                if e == c:
                    b.chars.append(c)
                    b.offsets.append(pos)
                else:
                    b.add(c)
                pos += len(e)
            return at + len(enc)
    b.add(s)
    return cursor


_BAD_QUOTE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff]")
_GAP_TEXT = re.compile(r"\s*(?:…|\.\.\.)\s*")


def quote(src: Source, a: int, b: int, *, limit: int = 600) -> str:
    """The file's own text of the plain span [a, b): its runs contiguous in the file, joined with
    ' … '; at most ``limit`` characters (cut at a word, then ' …' is not added: a quote is a prefix)."""
    from grader.claims.quotes import normalise
    offs = src.offsets
    frags: list[str] = []
    i = a
    total = 0
    while i < b and total < limit:
        if offs[i] < 0:
            i += 1
            continue
        j = i + 1
        while j < b and offs[j] == offs[j - 1] + 1:
            j += 1
        piece = src.raw[offs[i]:offs[j - 1] + 1]
        for part in _BAD_QUOTE.split(piece):
            part = normalise(part)
            if part and not _GAP_TEXT.fullmatch(part):
                frags.append(part)
                total += len(part)
        i = j
    text = " … ".join(frags)
    if len(text) > limit:
        cut = text.rfind(" ", 0, limit)
        text = text[:cut if cut > limit // 2 else limit].rstrip(" …")
    return text


def quote_found(quote_text: str, normalised_raw: str) -> bool:
    """Whether check-spec will find the quote in the file (its fragments, in order)."""
    from grader.claims.quotes import GAP, normalise
    q = normalise(quote_text)
    if not q:
        return False
    if q in normalised_raw:
        return True
    at = 0
    for f in GAP.split(q):
        if not f:
            continue
        k = normalised_raw.find(f, at)
        if k < 0:
            return False
        at = k + len(f)
    return True
