"""A problem's human title: the bank's ``title:``, or one derived from its prompt.

The derived title is the prompt's first sentence (or, when that is long, its first clause),
with Markdown and math markup stripped (``**``, backquotes, ``$``, ``\\(``, links, headings),
whitespace collapsed, and cut at a word to at most :data:`MAX_DERIVED` characters with an
ellipsis ("…"). It is a fallback: the bundled bank gives every problem a title of its own.
"""
from __future__ import annotations

import re

MAX_DERIVED = 60
MAX_TITLE = 120             # a bank's own title: longer is a load error

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MATH_CMD = re.compile(r"\\(?:mathrm|text|operatorname|mathbf|mathit)\{([^{}]*)\}")
_MARKUP = re.compile(r"(\$\$?|\\[()\[\]]|[*`#>]|^\s*[-+]\s+|~~)", re.M)
_SPACE = re.compile(r"\s+")
_SENTENCE = re.compile(r"(?<=[.?!:])\s")        # "e.g. x" is rare in a prompt's first line; good enough
_CLAUSE = re.compile(r"[,;(—–]\s?")


def plain_text(text: str) -> str:
    """``text`` without Markdown and math markup, on one line."""
    text = _LINK.sub(r"\1", text)
    text = _MATH_CMD.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    return _SPACE.sub(" ", text).strip()


def derive_title(prompt: str, limit: int = MAX_DERIVED) -> str:
    """A title from a prompt: its first sentence, else its first clause, at most ``limit``
    characters (cut at a word, with "…"); the final '.' or ':' dropped, a '?' kept."""
    text = plain_text(prompt)
    if not text:
        return ""
    first = _SENTENCE.split(text, maxsplit=1)[0].strip()
    if len(first) > limit:
        clause = _CLAUSE.split(first, maxsplit=1)[0].strip()
        if 12 <= len(clause) <= limit:
            first = clause
    first = first.rstrip(".:").strip()
    if len(first) <= limit:
        return first
    cut = first[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:-—") + "…"
