"""Tokens of math text: numbers, names, operators, superscripts, brackets, relations.

The lexer accepts the ways people write formulas (``4d²``, ``4·d^2``, ``4*d**2``, ``2 × 10⁶``,
``1,048,576``, ``1.05e6``, ``n ≥ 2d``) and refuses everything else with the column of the first
character it cannot read: quotes (strings), ``.`` outside a number (attribute access), a leading
``_`` (dunders), control and invisible characters, lookalike letters and digits from other
scripts. It never evaluates anything.
"""
from __future__ import annotations

import keyword
import re
import unicodedata
from fractions import Fraction
from collections.abc import Collection
from typing import NamedTuple

from .limits import ParseLimits, fail

class Token(NamedTuple):
    """One token; ``kind`` is NUM NAME SUP OP LP RP COMMA REL or EOF."""

    kind: str
    text: str          # what was written
    value: int | Fraction | str | None  # NUM: int or Fraction; SUP: int; OP/REL/LP/RP: canonical spelling; NAME: name; EOF: None
    offset: int        # index of the first character in the text

    @property
    def word(self) -> str:
        """The value of a NAME, OP, REL, LP or RP token (its name or canonical spelling)."""
        if not isinstance(self.value, str):
            raise TypeError(f"a {self.kind} token has no name")
        return self.value

    @property
    def number(self) -> int | Fraction:
        """The value of a NUM or SUP token."""
        if isinstance(self.value, str) or self.value is None:
            raise TypeError(f"a {self.kind} token is not a number")
        return self.value


OPS = {"+": "+", "-": "-", "\u2212": "-", "\u2013": "-",
       "*": "*", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u2219": "*",
       "/": "/", "\u00f7": "/", "\u2215": "/",
       "^": "^", "\u221a": "sqrt"}
RELS = {"<=": "<=", ">=": ">=", "==": "=", "\u2264": "<=", "\u2265": ">=", "\u2a7d": "<=",
        "\u2a7e": ">=", "<": "<", ">": ">", "=": "="}
OPEN = {"(": ")", "[": "]"}
CLOSE = {")": "(", "]": "["}
SUPERSCRIPTS = {"\u2070": 0, "\u00b9": 1, "\u00b2": 2, "\u00b3": 3, "\u2074": 4, "\u2075": 5,
                "\u2076": 6, "\u2077": 7, "\u2078": 8, "\u2079": 9}
SUP_SIGNS = {"\u207b": -1, "\u207a": 1}
SPACES = " \t\n\r\u00a0\u2009\u202f"

NUMBER = re.compile(r"(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
                    r"|\.(?P<frac2>[0-9]+)(?:[eE](?P<exp2>[+-]?[0-9]+))?")
GROUPED = re.compile(r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+)(?![0-9])(?:\.(?P<frac>[0-9]+))?"
                     r"(?:[eE](?P<exp>[+-]?[0-9]+))?")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
NOT_NUMBERS = {"nan", "inf", "infinity", "infty", "oo", "zoo"}


def _number(text: str, pos: int, m: re.Match[str], limits: ParseLimits) -> Token:
    whole = m.group(0)
    if whole.isdigit() and len(whole) <= limits.max_digits:      # the common case: 4, 512
        return Token("NUM", whole, int(whole), pos)
    gd = m.groupdict()
    whole = (gd.get("int") or "").replace(",", "")
    frac = gd.get("frac") or gd.get("frac2") or ""
    exp_text = gd.get("exp") or gd.get("exp2")
    if len(whole.lstrip("0")) > limits.max_digits or len(frac) > limits.max_digits:
        raise fail(text, pos, f"number too long: at most {limits.max_digits} digits are allowed")
    exp = 0
    if exp_text is not None:
        if len(exp_text.lstrip("+-").lstrip("0")) > 6 or \
                abs(int(exp_text)) + len(whole.lstrip("0")) + len(frac) > limits.max_magnitude:
            raise fail(text, pos, f"exponent too large in {m.group(0)!r}: the number would have more "
                                  f"than {limits.max_magnitude:,.0f} digits")
        exp = int(exp_text)
    digits = int((whole or "0") + frac)
    shift = exp - len(frac)
    value = digits * 10 ** shift if shift >= 0 else Fraction(digits, 10 ** -shift)
    return Token("NUM", m.group(0), value, pos)


def _bad_char(text: str, pos: int) -> Exception:
    ch = text[pos]
    code = f"U+{ord(ch):04X}"
    cat = unicodedata.category(ch)
    name = unicodedata.name(ch, "")
    if ch == "\x00":
        return fail(text, pos, "NUL character (U+0000) is not allowed")
    if cat == "Cc":
        return fail(text, pos, f"control character {code} is not allowed")
    if cat in ("Cf", "Co", "Cn", "Cs") or cat.startswith("Z"):
        return fail(text, pos, f"invisible or unassigned character {code} {name} is not allowed".rstrip())
    if ch in "'\"`":
        return fail(text, pos, "quotes are not allowed: write the formula itself, not a string")
    if ch == ".":
        return fail(text, pos, "'.' is only allowed inside a decimal number (no attribute access)")
    if ch == "_":
        return fail(text, pos, "a name cannot start with '_'")
    if ch.isdigit() or ch.isalpha():
        hint = ""
        if ch.isdigit():
            hint = f"; write the digit {unicodedata.digit(ch)}" if unicodedata.digit(ch, None) is not None else ""
        return fail(text, pos, f"unexpected character {ch!r} ({code} {name}){hint}: only ASCII letters "
                               "and digits are allowed in names and numbers")
    if ch == "\u2260" or text.startswith("!=", pos):
        return fail(text, pos, "'≠' (!=) is not supported; use <, >, ≤, ≥ or =")
    if ch == "!":
        return fail(text, pos, "'!' (factorial) is not supported: write the number itself")
    return fail(text, pos, f"unexpected character {ch!r} ({code}{' ' + name if name else ''})")


# The commonest answers are short ASCII formulas (8*n*d**2 + 4*n**2*d): one findall reads them,
# each piece as (spaces before it, integer, name, operator). Anything else in the text (a
# decimal or grouped number, a superscript, a comma, a tab, a character the language does not
# have) leaves a gap, and the text goes through the full loop below.
_FAST = re.compile(r"( *)(?:([0-9]+)(?![0-9.,eE])|([A-Za-z][A-Za-z0-9_]*)|(\*\*|<=|>=|==|[-+*/^()\[\]<>=]))")
_FAST_OPS = {"(": ("LP", "("), "[": ("LP", "["), ")": ("RP", ")"), "]": ("RP", "]"), "**": ("OP", "^"),
             **{op: ("OP", OPS[op]) for op in "+-*/^"}, **{r: ("REL", RELS[r]) for r in ("<", ">", "=", "<=", ">=", "==")}}
_NOT_MATH = frozenset(keyword.kwlist) | {"print", "eval", "exec", "import", "open"}


def fast_tokens(text: str, limits: ParseLimits) -> list[Token] | None:
    """The tokens of a plain ASCII formula (the same as the full loop's), or None."""
    pieces = _FAST.findall(text)
    if len(pieces) >= limits.max_tokens:
        return None
    tokens, pos = [], 0
    for spaces, num, name, op in pieces:
        pos += len(spaces)
        if num:
            if len(num) > limits.max_digits:
                return None
            tokens.append(Token("NUM", num, int(num), pos))
            pos += len(num)
        elif name:
            if name in _NOT_MATH or "__" in name or name.lower() in NOT_NUMBERS:
                return None                 # the full loop says why
            tokens.append(Token("NAME", name, name, pos))
            pos += len(name)
        else:
            kind, value = _FAST_OPS[op]
            tokens.append(Token(kind, op, value, pos))
            pos += len(op)
    if pos != len(text.rstrip(" ")):
        return None                         # the pieces leave a gap: not a plain formula
    tokens.append(Token("EOF", "", None, len(text)))
    return tokens


# 0x200, 0b101, 0o17: another base's literal, refused where it stands (read as 0 times a name
# "x200", it would be a confusing "unknown name", and 0xd with symbols x and d would silently be 0)
_BASED = re.compile(r"(?<![0-9A-Za-z_.])0(?:([xX])([0-9A-Fa-f]+)|([bB])([01]+)|([oO])([0-7]+))(?![0-9A-Za-z_])")
_BASES = {"x": (16, "a hexadecimal"), "b": (2, "a binary"), "o": (8, "an octal")}


def _other_base(text: str) -> None:
    m = _BASED.search(text)
    if m is None:
        return
    prefix, digits = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i))
    base, name = _BASES[prefix.lower()]
    hint = f"; write {int(digits, base)}" if len(digits) <= 16 else ""
    raise fail(text, m.start(), f"{m.group(0)} is {name} number: numbers are read in decimal here{hint}")


def tokenize(text: str, functions: Collection[str] = frozenset(), limits: ParseLimits = ParseLimits()) -> list[Token]:
    """The tokens of ``text`` (ending with an EOF token), or ExprError with the column.

    ``functions`` are the names that take arguments: inside their parentheses "," separates
    arguments; elsewhere it may only be a thousands separator in groups of three (1,048,576).
    """
    if not isinstance(text, str):
        raise fail("", 0, f"expected text, got {type(text).__name__}")
    if len(text) > limits.max_length:
        raise fail(text, limits.max_length, f"text too long: {len(text):,} characters "
                                            f"(at most {limits.max_length:,})")
    if "0" in text:
        _other_base(text)
    if text.isascii():
        fast = fast_tokens(text, limits)
        if fast is not None:
            return fast
    return scan(text, functions, limits)


def scan(text: str, functions: Collection[str], limits: ParseLimits) -> list[Token]:
    """Any text, character by character."""
    tokens: list[Token] = []
    calls: list[bool] = []      # for each open bracket: is it a function call's?
    pos, n = 0, len(text)
    while pos < n:
        ch = text[pos]
        if ch in SPACES:
            pos += 1
            continue
        if len(tokens) >= limits.max_tokens:
            raise fail(text, pos, f"too many tokens (at most {limits.max_tokens})")
        if ch.isascii() and (ch.isdigit() or (ch == "." and pos + 1 < n and text[pos + 1].isascii()
                                              and text[pos + 1].isdigit())):
            m = None
            if not (calls and calls[-1]):
                m = GROUPED.match(text, pos)
            m = m or NUMBER.match(text, pos)
            assert m is not None        # NUMBER matches at any digit, or a point before one
            tokens.append(_number(text, pos, m, limits))
            pos = m.end()
            continue
        if ch.isascii() and ch.isalpha():
            m = NAME.match(text, pos)
            assert m is not None        # NAME matches at any ASCII letter
            name = m.group(0)
            if name in _NOT_MATH:
                raise fail(text, pos, f"{name!r} is Python, not math: only formulas are read here")
            if name.lower() in NOT_NUMBERS:
                raise fail(text, pos, f"{name!r} is not a finite number")
            if "__" in name:
                raise fail(text, pos + name.index("__"), "'__' is not allowed in a name")
            tokens.append(Token("NAME", name, name, pos))
            pos = m.end()
            continue
        if ch in SUPERSCRIPTS or ch in SUP_SIGNS:
            start, sign = pos, 1
            if ch in SUP_SIGNS:
                sign = SUP_SIGNS[ch]
                pos += 1
            digits = ""
            while pos < n and text[pos] in SUPERSCRIPTS:
                digits += str(SUPERSCRIPTS[text[pos]])
                pos += 1
            if not digits:
                raise fail(text, start, "a superscript sign must be followed by superscript digits")
            if len(digits) > 6:
                raise fail(text, start, f"exponent too large: {digits}")
            tokens.append(Token("SUP", text[start:pos], sign * int(digits), start))
            continue
        two = text[pos:pos + 2]
        if two == "**":
            tokens.append(Token("OP", two, "^", pos))
            pos += 2
            continue
        if two in RELS:
            tokens.append(Token("REL", two, RELS[two], pos))
            pos += 2
            continue
        if ch in RELS:
            tokens.append(Token("REL", ch, RELS[ch], pos))
            pos += 1
            continue
        if ch in OPS:
            tokens.append(Token("OP", ch, OPS[ch], pos))
            pos += 1
            continue
        if ch in OPEN:
            prev = tokens[-1] if tokens else None
            calls.append(prev is not None and prev.kind == "NAME" and prev.value in functions)
            tokens.append(Token("LP", ch, ch, pos))
            pos += 1
            continue
        if ch in CLOSE:
            if calls:
                calls.pop()
            tokens.append(Token("RP", ch, ch, pos))
            pos += 1
            continue
        if ch == ",":
            tokens.append(Token("COMMA", ch, ch, pos))
            pos += 1
            continue
        raise _bad_char(text, pos)
    tokens.append(Token("EOF", "", None, n))
    return tokens
