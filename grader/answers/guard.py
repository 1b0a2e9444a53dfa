"""First stage: refuse, cheaply and before any parsing, what cannot be an answer.

A learner's answer is hostile until shown otherwise. It reaches the parsers only if it is
plain data of a bounded size: text (no control characters), a finite number of bounded
magnitude, or, for a shape, a short flat list of integers. Everything else is an
``invalid answer: <why>``.
"""
from __future__ import annotations

import math
import unicodedata

MAX_CHARS = 2_000           # any answer but free text; no formula of a problem comes near it
MAX_FREE_TEXT = 10_000
MAX_ITEMS = 16              # axes of a shape
MAX_INT_DIGITS = 400        # |value| < 10**400: beyond any count of anything
MAX_EXPONENT = 400          # 1e400, 10^400, 10⁴⁰⁰
ALLOWED_SPACE = "\t\n\r"
_BAD_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def screen(raw, kind: str) -> str | None:
    """Why ``raw`` cannot be an answer of ``kind`` (None: it may go on to be read)."""
    if raw is None:
        return "empty answer"
    if isinstance(raw, bool):
        return None if kind in ("choice", "free_text") else "true/false is not an answer here"
    if isinstance(raw, int):
        if kind == "free_text":
            return None
        return None if _int_ok(raw) else f"number too large (more than {MAX_INT_DIGITS} digits)"
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return f"{raw} is not a finite number"
        return None
    if isinstance(raw, str):
        return screen_text(raw, MAX_FREE_TEXT if kind == "free_text" else MAX_CHARS)
    if isinstance(raw, (list, tuple)):
        if kind != "shape":
            return "expected text or a number, not a list"
        if len(raw) > MAX_ITEMS:
            return f"a shape has at most {MAX_ITEMS} axes, not {len(raw):,}"
        for item in raw:
            if isinstance(item, bool) or not isinstance(item, (int, str)):
                what = "a nested list" if isinstance(item, (list, tuple)) else type(item).__name__
                return f"a shape is a flat list of integers, not one holding {what}"
            why = screen(item, "number")
            if why:
                return why
            if isinstance(item, str) and len(item) > 40:
                return "a shape's axis is a short integer"
        return None
    if isinstance(raw, dict):
        return "expected text or a number, not a mapping"
    return f"unsupported value of type {type(raw).__name__}"


def _int_ok(n: int) -> bool:
    # bit_length bounds the digit count without converting a huge int to text
    return n.bit_length() <= MAX_INT_DIGITS * 3.33


def screen_text(text: str, limit: int = MAX_CHARS) -> str | None:
    if len(text) > limit:
        return f"too long ({len(text):,} characters; at most {limit:,})"
    if not text.isprintable():
        for i, ch in enumerate(text):
            if ch not in ALLOWED_SPACE and unicodedata.category(ch) in _BAD_CATEGORIES:
                return f"control character U+{ord(ch):04X} at column {i + 1}"
    if not text.strip():
        return "empty answer"
    return None


def shorten(text: str, limit: int = 80) -> str:
    """Text for a message: one line, cut at ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
