"""A claim's quote against its source text: every spec run checks the quotes of sources that have a
``path`` (a quote that is not in the text is an error at the quote).

A quote is compared with whitespace normalised (line breaks, list indentation and double spaces read
as one space), and a gap written " … " (or " ... ") between fragments that each appear in the text,
in that order; a literal "..." of the text may be quoted as it is. The source's path is looked up
beside the spec file and in each folder above it (a repository's root, or a folder beside the
repository, as the seed texts in shared/).
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

GAP = re.compile(r"\s*(?:…|\.\.\.)\s*")
MAX_SOURCE_BYTES = 16 * 2**20


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def quote_pattern(quote: str) -> re.Pattern[str]:
    """The quote as a pattern: its fragments, in order, with anything between them at a gap."""
    fragments = [f for f in GAP.split(normalise(quote)) if f]
    return re.compile(".*?".join(re.escape(f) for f in fragments), re.S)


@lru_cache(maxsize=8)
def _normalised_text(text: str) -> str:
    """A source's normalised text, computed once per text (a spec quotes one source many times)."""
    return normalise(text)


def appears(quote: str, text: str) -> bool:
    """Whether the quote is in the text (as the module doc says); ``text`` normalised or not."""
    text = _normalised_text(text)
    if normalise(quote) in text:          # the common case, and a literal "..." of the text
        return True
    return bool(quote_pattern(quote).search(text))


def missing_fragments(quote: str, text: str) -> list[str]:
    text = _normalised_text(text)
    return [f for f in GAP.split(normalise(quote)) if f and f not in text]


def find_source(path: str, spec_file: str) -> Path | None:
    """The source file for a spec's ``path:``: beside the spec, or in a folder above it; None if nowhere."""
    p = Path(path)
    if p.is_absolute():
        return p if p.is_file() else None
    try:
        here = Path(spec_file).resolve().parent
    except (OSError, RuntimeError):
        return None
    for folder in (here, *here.parents):
        candidate = folder / p
        if candidate.is_file():
            return candidate
    return None


def read_source(path: Path) -> str:
    """The normalised text of a source file (at most 16 MiB; UTF-8)."""
    with path.open("rb") as f:
        data = f.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"{path.name} is larger than 16 MiB")
    return normalise(data.decode("utf-8"))
