"""Math as course texts write it (Unicode, ASCII, LaTeX), put into the words of the engine's
whitelist parser: products ``·``/``×`` as ``*``, figures with magnitudes ("16.8M") as numbers
whose rounding is remembered, thousands separators dropped, unit words between factors
("8 heads × 3 matrices") left out, LaTeX macros (``\\cdot``, ``\\frac{a}{b}``, ``^{2}``) spelled out.
Nothing here evaluates anything: :func:`grader.expr.parse` reads the result.
"""
from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?")
UNIT_WORDS = frozenset("""heads head matrices matrix params parameters parameter bytes byte items item batch
tokens token layers layer flops flop multiply-adds weights entries dims dimensions elements numbers values
positions rows columns copies blocks experts bits""".split())
RESERVED = frozenset({"O", "E", "I", "S", "N", "Q", "pi", "e", "i", "sqrt", "log", "exp", "ln", "max", "min",
                      "softmax", "sin", "cos", "tan", "abs", "floor", "ceil", "Theta", "Omega", "oo"})
_LATEX = [(re.compile(r"\\(?:cdot|times|ast)\b"), "·"), (re.compile(r"\\approx\b"), "≈"),
          (re.compile(r"\\(?:sim|simeq)\b"), "≈"), (re.compile(r"\\(?:left|right|big|Big|,|;|!|quad)"), " "),
          (re.compile(r"\\(?:leq?|le)\b"), "≤"), (re.compile(r"\\(?:geq?|ge)\b"), "≥"), (re.compile(r"\\in\b"), "∈"),
          (re.compile(r"\\mathbb\{R\}"), "ℝ"), (re.compile(r"\\(?:mathcal|mathrm|text|operatorname)\{([^{}]{0,60})\}"), r"\1"),
          (re.compile(r"\\frac\{([^{}]{0,80})\}\{([^{}]{0,80})\}"), r"(\1)/(\2)"),
          (re.compile(r"\\sqrt\{([^{}]{0,80})\}"), r"√(\1)"), (re.compile(r"\^\{([^{}]{0,40})\}"), r"^(\1)"),
          (re.compile(r"_\{([A-Za-z0-9]{1,20})\}"), r"_\1"), (re.compile(r"\\mathcal\{O\}|\\mathcal O"), "O"),
          (re.compile(r"(?<!\\)\$"), " "), (re.compile(r"\{,\}"), ",")]
_BYTE_UNIT = re.compile(r"\d\s*(?:[kKMGTP]i?B|kB|bits?|TB/s|GB/s)\b")
_SEP = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ROUNDED = re.compile(r"(\d+(?:\.\d+)?)\s?(K|M|B|T|thousand|million|billion)\b")
_SCALE = {"K": 10**3, "thousand": 10**3, "M": 10**6, "million": 10**6, "B": 10**9, "billion": 10**9, "T": 10**12}


def from_latex(text: str) -> str:
    """LaTeX math spelled out in Unicode (a bounded set of macros; the rest is left as is)."""
    if "\\" not in text and "$" not in text:
        return text
    for pattern, repl in _LATEX:
        text = pattern.sub(repl, text)
    return text


def as_formula(text: str) -> tuple[str | None, dict[str, tuple[Fraction, Fraction]]]:
    """The parser's text for a piece of math, and the rounded figures in it ({key: (value, ±)});
    None when it holds something no formula has (words, code)."""
    t = from_latex(text).strip()
    if not t or len(t) > 400 or _BYTE_UNIT.search(t):      # "8 · 2.1 GB": a unit, not symbols G and B
        return None, {}
    t = _SEP.sub("", t)
    rounded: dict[str, tuple[Fraction, Fraction]] = {}

    def sub(m: re.Match[str]) -> str:
        digits, word = m.group(1), m.group(2)
        scale = _SCALE[word]
        places = len(digits.split(".")[1]) if "." in digits else 0
        value = Fraction(digits) * scale
        tol = Fraction(scale, 2 * 10**places)
        if value.denominator != 1:
            return m.group(0)
        key = f"({value.numerator})"
        rounded[key] = (value, tol)
        return key

    t = _ROUNDED.sub(sub, t)
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]*", t) if w.lower() in UNIT_WORDS]
    for w in words:
        t = re.sub(rf"(?<=[\d)\s]){re.escape(w)}\b", "", t)
    t = t.replace("·", "*").replace("×", "*").replace("⋅", "*").replace("−", "-").replace("✓", "")
    t = re.sub(r"\s+", " ", t).strip()
    if not t or re.search(r"[^\w\s*/+\-^()\[\]²³⁴⁵⁶⁷⁸⁹⁰¹√.,]", t):
        return None, {}
    return t, rounded


@lru_cache(maxsize=256)
def table_for(names: tuple[str, ...]) -> Any:
    """A symbol table of the given names (those the parser accepts as symbols), all positive."""
    from grader.expr import SymbolTable
    good = {n: {"positive": True} for n in names if symbol_ok(n)}
    return SymbolTable.build(symbols=good)


@lru_cache(maxsize=4096)
def symbol_ok(name: str) -> bool:
    """Whether a name may be a symbol of a spec (the parser's own rule, and none of its functions)."""
    if not NAME.fullmatch(name) or name in RESERVED or len(name) > 40:
        return False
    from grader.expr import ExprError, SymbolTable
    try:
        SymbolTable.build(symbols={name: {"positive": True}})
    except (ExprError, ValueError):
        return False
    return True
