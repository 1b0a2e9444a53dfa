"""Worked arithmetic as texts write it: chains such as "4d² = 4·512² = 4·262,144 = 1,048,576"
or "2048 · 4096² ≈ 2048 · 16.8M ≈ 34.4B", read and recomputed.

A chain is cut at its relations (=, ≈); each piece is read as a stated figure
(:func:`grader.claims.figures.parse_figure`: separators, K/M/B, ≈, ~, "about", units) or as a
formula through the whitelist parser (:func:`grader.expr.parse`) with the symbols whose values
the text gave earlier ("d_model = 512"); nothing is evaluated otherwise. A figure with a
magnitude or a decimal point carries the text's rounding (half a unit of its last digit), and a
formula over rounded figures ("2048 · 16.8M") carries the rounding through.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .mathtext import NAME, UNIT_WORDS, as_formula, table_for

MAX_CHAIN_TEXT = 400           # characters of one piece of a chain
MAX_VALUE_DIGITS = 60
MAX_RELATIONS = 48             # relations read in one statement (a real one has a handful)          # a figure larger than this is not recomputed (said, not checked)


@dataclass(frozen=True)
class Piece:
    """One member of a chain: its text, the relation before it ('' for the first), and its value
    when it is a number (``tol``: the text's rounding; 0 when exact)."""

    text: str
    rel: str
    formula: str | None = None          # as the parser reads it (ASCII), when it parses
    value: Fraction | None = None
    tol: Fraction = Fraction(0)
    symbolic: bool = False              # a formula in symbols without values
    figure: bool = False                # a stated figure (not a computation)


@dataclass(frozen=True)
class Chain:
    pieces: tuple[Piece, ...]
    start: int                          # offsets in the statement
    end: int


@dataclass(frozen=True)
class Slip:
    """A piece whose value is not the chain's: what the text says, what the computation gives."""

    chain: Chain
    piece: Piece
    expected: Fraction
    says: str
    gives: str


_REL = re.compile(r"\s*(=|≈|≃|~(?=\s*\d))\s*")
_TOKEN = re.compile(r"\d+(?:,\d{3})*(?![\d])(?:\.\d+)?(?:\s?(?:[KMBT]|thousand|million|billion)\b)?|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9{}]+)?(?:\^[A-Za-z0-9]+)?"
                    r"|[·×*⋅/+\-−^²³⁴√()\[\]ᵀ₀-₉]|\s+|.", re.S)
_NUMTOK = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:\s?(?:[KMBT]|thousand|million|billion))?")
_STOP = frozenset("""is of a an the to in on by for and or as at be we it so if per each with all its are has was
not but via from than one two who how why use out our can may any new own see set too yet""".split())
_ASIDE = re.compile(r"\((?=[^()]*[A-Za-z]{4})[^()=]{1,40}\)")
_PER = re.compile(r"\b(?:per|each|a|every|in total|in all)\s+(?:token|layer|head|sequence|step|position|block|batch|query|key)s?\b"
                  r"(?:\s+(?:per|and)\s+(?:token|layer|head|sequence|step|position|block)s?\b)*")
_OPS = set("·×*⋅/+-−^²³⁴√()[]ᵀ") | set("₀₁₂₃₄₅₆₇₈₉")


def _mathy(tok: str, names: frozenset[str]) -> bool:
    if tok.isspace() or tok in _OPS or _NUMTOK.fullmatch(tok):
        return True
    if tok.lower() in UNIT_WORDS:
        return True
    return bool(NAME.fullmatch(tok)) and tok not in _STOP and (tok in names or len(tok) <= 3 or tok in ("sqrt", "O", "log"))


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text[:MAX_CHAIN_TEXT * 4])


def _tail(text: str, names: frozenset[str]) -> str:
    toks = _tokens(text)
    k = len(toks)
    while k > 0 and _mathy(toks[k - 1], names):
        k -= 1
    return "".join(toks[k:]).strip()


def _head(text: str, names: frozenset[str]) -> str:
    toks = _tokens(text)
    k = 0
    while k < len(toks) and _mathy(toks[k], names):
        k += 1
    return "".join(toks[:k]).strip()


def chains(text: str, values: dict[str, Fraction]) -> list[Chain]:
    """The chains of a statement, each piece read (see the module doc)."""
    names = frozenset(values)
    text = _ASIDE.sub(lambda m: " " * len(m.group(0)), text)
    text = _PER.sub(lambda m: " " * len(m.group(0)), text)
    rels: list[re.Match[str]] = []
    for m in _REL.finditer(text):
        if len(rels) >= MAX_RELATIONS:
            break
        rels.append(m)
    out: list[Chain] = []
    if not rels:
        return out
    current: list[Piece] = []
    start = 0
    for i, m in enumerate(rels):
        left = text[(rels[i - 1].end() if i else 0):m.start()]
        if i == 0:
            lt = _tail(left, names)
            start = m.start() - len(left.rstrip()) + len(left.rstrip()) - len(lt) if lt else m.start()
            current = [read_piece(lt, "", values)] if lt else []
        else:
            whole = left.strip()
            head = _head(left, names)
            if head and head == whole:
                current.append(read_piece(head, rels[i - 1].group(1), values))
            else:
                if head:
                    current.append(read_piece(head, rels[i - 1].group(1), values))
                if len(current) >= 2:
                    out.append(Chain(tuple(current), start, rels[i - 1].end() + len(head)))
                lt = _tail(left, names)
                current = [read_piece(lt, "", values)] if lt else []
                start = m.start() - len(lt)
    last = text[rels[-1].end():]
    head = _head(last, names)
    if head:
        current.append(read_piece(head, rels[-1].group(1), values))
        if len(current) >= 2:
            out.append(Chain(tuple(current), max(0, start), rels[-1].end() + len(head)))
    return out


def read_piece(text: str, rel: str, values: dict[str, Fraction]) -> Piece:
    text = text.strip()[:MAX_CHAIN_TEXT]
    fig = _figure(text, rel)
    if fig is not None:
        return Piece(text, rel, None, fig[0], fig[1], figure=True)
    formula, rounded = as_formula(text)
    if formula is None:
        return Piece(text, rel)
    got = evaluate(formula, values)
    if got is None:
        return Piece(text, rel, formula, symbolic=True)
    if not rounded:
        return Piece(text, rel, formula, got)
    lo = evaluate(_shift(formula, rounded, -1), values)
    hi = evaluate(_shift(formula, rounded, 1), values)
    tol = max(abs(x - got) for x in (lo, hi) if x is not None) if (lo is not None or hi is not None) else Fraction(0)
    return Piece(text, rel, formula, got, tol)


def _shift(formula: str, rounded: dict[str, tuple[Fraction, Fraction]], sign: int) -> str:
    for key, (v, t) in rounded.items():
        x = v + sign * t
        formula = formula.replace(key, f"({x.numerator}/{x.denominator})")
    return formula


def _figure(text: str, rel: str) -> tuple[Fraction, Fraction] | None:
    from grader.claims.figures import FigureError, parse_figure
    if not re.fullmatch(r"[~≈]?\s*(?:about\s+)?\d[\d,]*(?:\.\d+)?(?:e\d{1,3})?\s*(?:[A-Za-z]+\s*){0,2}", text):
        return None
    words = text.split()
    for k in range(len(words), 0, -1):
        cand = " ".join(words[:k])
        try:
            f = parse_figure(("≈ " if rel in ("≈", "~") and not cand.startswith(("≈", "~")) else "") + cand)
        except (FigureError, ValueError, ArithmeticError):
            continue
        if len(str(f.value.numerator)) > MAX_VALUE_DIGITS:
            return None
        return f.value, f.tolerance
    return None


def evaluate(formula: str, values: dict[str, Fraction]) -> Fraction | None:
    """The exact value of a formula in the symbols given values; None when it has others, does
    not parse, or is no rational number."""
    from grader.expr import ExprError, parse
    try:
        parsed = parse(formula, table_for(tuple(sorted(values))))
    except (ExprError, ValueError, RecursionError, ArithmeticError):
        return None
    expr = parsed.expr
    try:
        free = expr.free_symbols
        if free:
            subs = {s: values[str(s)] for s in free if str(s) in values}
            if len(subs) != len(free):
                return None
            import sympy
            expr = expr.xreplace({s: sympy.Rational(v.numerator, v.denominator) for s, v in subs.items()})
        if not getattr(expr, "is_Rational", False):
            if getattr(expr, "is_number", False) and getattr(expr, "is_real", False):
                f = expr.evalf(30)
                return Fraction(str(f)) if f.is_Float else None
            return None
        return Fraction(int(expr.p), int(expr.q))
    except (TypeError, ValueError, KeyError, ArithmeticError, RecursionError):
        return None


def slips(chain: Chain) -> list[Slip]:
    """The pieces that disagree with the chain's exact value (its first exact number), each
    within its own rounding; a chain with no exact number compares neighbours."""
    nums = [p for p in chain.pieces if p.value is not None]
    if len(nums) < 2:
        return []
    exact = next((p for p in nums if p.tol == 0 and not p.figure), None) or next((p for p in nums if p.tol == 0), None)
    out = []
    literal = [p for p in nums if not _has_names(p)]
    exact = next((p for p in literal if p.tol == 0 and not p.figure), None) or exact
    if exact is not None and exact.value is not None:
        ref = exact.value
        agreeing = sum(1 for p in literal if p.value is not None and abs(p.value - ref) <= p.tol)
        for p in nums:
            if p is exact or p.value is None:
                continue
            if abs(p.value - ref) > p.tol:
                if _has_names(p) and agreeing >= 2 and not _has_names(exact):
                    continue        # the text put in other values than the ones defined above: not a slip
                out.append(Slip(chain, p, ref, p.text, f"{exact.text} = {show(ref)}"))
        return out
    for a, b in zip(nums, nums[1:]):
        if a.value is not None and b.value is not None and abs(a.value - b.value) > a.tol + b.tol:
            out.append(Slip(chain, b, a.value, b.text, f"{a.text} = {show(a.value)}"))
    return out


def _has_names(p: Piece) -> bool:
    """Whether a piece's value came from values the text gave names (not from its own numbers)."""
    return p.formula is not None and re.search(r"[A-Za-z]", p.formula) is not None


def show(x: Fraction) -> str:
    if x.denominator == 1:
        return f"{x.numerator:,}" if len(str(x.numerator)) <= 40 else f"{float(x):.6g}"
    return f"{float(x):.6g}"
