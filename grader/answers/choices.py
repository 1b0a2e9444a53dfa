"""Read a multiple-choice answer: the letter (``C``, ``c``, ``(C)``, ``C)``, ``C.``, ``[C]``,
``option C``) or the option's text (case, spacing and a final full stop do not matter).

YAML reads ``yes``/``no``/``true``/``false`` as booleans: they match an option whose text is
yes/no/true/false.
"""
from __future__ import annotations

import re
import unicodedata

from .guard import shorten
from .model import Unreadable

_LETTER = re.compile(r"(?:(?:option|answer|choice)\s+)?[(\[]?\s*([A-Za-z0-9]{1,3})\s*[)\].:]?", re.IGNORECASE)


def normal_text(text: str) -> str:
    """Compared form of an option's text: NFKC, case-folded, spaces collapsed, no final stop."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = " ".join(text.split())
    return text.rstrip(".").strip().strip("\"'“”‘’").strip()


def read_choice(raw: object, choices: tuple[tuple[str, str], ...]) -> str:
    """The letter (key) of the chosen option; :class:`Unreadable` when none fits."""
    keys = [k for k, _ in choices]
    if isinstance(raw, bool):
        want = ("yes", "true", "on") if raw else ("no", "false", "off")
        for key, text in choices:
            if normal_text(text) in want:
                return key
        raise Unreadable(f"{str(raw).lower()} is not one of the choices {', '.join(keys)}")
    if isinstance(raw, (int, float)):
        raw = str(raw)
    if not isinstance(raw, str):
        raise Unreadable(f"expected a choice ({', '.join(keys)}), not {type(raw).__name__}")
    text = raw.strip()
    m = _LETTER.fullmatch(text)
    if m:
        letter = m.group(1)
        for key in keys:
            if key == letter or key.casefold() == letter.casefold():
                return key
    wanted = normal_text(text)
    for key, option in choices:
        if normal_text(option) == wanted:
            return key
    if m and len(m.group(1)) == 1:
        raise Unreadable(f"{m.group(1)} is not one of the choices {', '.join(keys)}")
    raise Unreadable(f"{shorten(text, 40)!r} is neither a choice letter ({', '.join(keys)}) "
                     "nor the text of an option")
