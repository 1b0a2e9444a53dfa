"""A whitelist parser from math text to SymPy: recursive descent over :mod:`.lexer` tokens.

Nothing here calls eval, exec, sympify or parse_expr: each rule builds its SymPy object from
its parts (``sympy.Add``, ``sympy.Mul``, ``sympy.Pow``, a few whitelisted functions) after the
bounds of :class:`~.limits.ParseLimits` have been checked on estimates computed bottom-up
(decimal digits of numbers, polynomial degree, number of terms once expanded).

Grammar (``^`` and superscripts bind tightest and to the right; juxtaposition binds tighter
than ``*`` and ``/``, so ``1/2d`` is ``1/(2·d)``; read_as shows what was understood)::

    relation := sum (REL sum)*                    only with relations=True; a chain is And(...)
    sum      := term (("+" | "-") term)*
    term     := signed (("*" | "/") signed)*      * × · ⋅   / ÷
    signed   := ("-" | "+") signed | implicit
    implicit := power power*                      4d(d+1), 2d, nd², (d+1)(d-1), 4 d_model^2
    power    := postfix (("^" | "**") exponent)?   exponent := ("-" | "+") exponent | power
    postfix  := primary SUPERSCRIPT*              d², 2²⁰, n²d
    primary  := NUMBER | NAME | FUNC "(" args ")" | "(" sum ")" | "[" sum "]" | "√" postfix

A NAME is a symbol, an alias or a defined name of the table; otherwise it is split into known
names by longest match ("nd" is n·d, "bhn" is b·h·n) or refused with a suggestion.

Polynomials are computed as sparse dicts (:mod:`.poly`) and turned into SymPy's canonical
expanded form once, at the end (``4d(d+1)`` gives ``4*d**2 + 4*d``); anything else (division by
a non-constant, roots, logs) is built with SymPy's operations. ``read_as`` renders the parse
tree itself, with explicit operators and the brackets that the precedence needs:
``4d(d+1)`` is read as ``4·d·(d + 1)``, ``1/2d`` as ``1/(2·d)``, ``d_model`` as ``d``.
"""
from __future__ import annotations

import difflib
import math
import re
from fractions import Fraction
from functools import lru_cache

import sympy

from . import poly as P
from .lexer import Token, tokenize
from .limits import ExprError, ParseLimits, fail
from .pretty import RELOPS, render
from .symbols import SymbolTable

LOG2 = math.log10(2)
_RELS = {"<": sympy.StrictLessThan, ">": sympy.StrictGreaterThan, "<=": sympy.LessThan,
         ">=": sympy.GreaterThan, "=": sympy.Equality}
_INT = re.compile(r"-?[0-9]+")
_BAD = (sympy.S.ComplexInfinity, sympy.S.NaN, sympy.S.Infinity, sympy.S.NegativeInfinity)


class Parsed:
    """What :func:`parse` understood: ``expr`` (SymPy, definitions expanded), ``read_as`` (the
    parse tree rendered with explicit operators: ``4·d·(d + 1)``; defined names as written),
    ``text`` (the input) and ``poly``: the expression as a sparse polynomial (:mod:`.poly`) when
    it is one, else None. ``expr`` is built from ``poly`` on first use: a caller that can work on
    the polynomial never pays for SymPy. Immutable (``poly`` is shared: never change it)."""

    __slots__ = ("_expr", "read_as", "text", "poly")

    def __init__(self, expr, read_as: str, text: str, poly: dict | None = None):
        if expr is None and poly is None:
            raise ValueError("Parsed needs an expression or a polynomial")
        for name, value in (("_expr", expr), ("read_as", read_as), ("text", text), ("poly", poly)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError("Parsed is immutable")

    @property
    def expr(self):
        if self._expr is None:
            object.__setattr__(self, "_expr", P.to_sympy(self.poly))
        return self._expr

    def __eq__(self, other):
        if not isinstance(other, Parsed):
            return NotImplemented
        return (self.text, self.read_as, self.expr) == (other.text, other.read_as, other.expr)

    def __hash__(self):
        return hash((self.text, self.read_as))

    def __repr__(self):
        return f"Parsed(expr={self.expr!r}, read_as={self.read_as!r}, text={self.text!r})"

    def __reduce__(self):
        return (Parsed, (self.expr, self.read_as, self.text, self.poly))


# precedence of a rendered piece: what brackets it needs inside a larger one
SUM, PRODUCT, UNARY, POWER, ATOM = 1, 2, 3, 4, 5
SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class Node:
    """A parsed piece: ``poly`` (sparse polynomial) or ``sym`` (SymPy), its rendering ``shown``
    with precedence ``prec``, and bounds: ``mag`` (decimal digits of its numbers, an upper
    estimate), ``deg`` (total degree), ``terms`` (log10 of the number of terms once expanded),
    ``vars`` (names of the symbols involved)."""

    __slots__ = ("poly", "_sym", "shown", "prec", "mag", "deg", "terms", "vars")

    def __init__(self, poly, sym, shown, prec, mag=0.0, deg=0.0, terms=0.0, vars=frozenset()):
        self.poly, self._sym, self.shown, self.prec = poly, sym, shown, prec
        self.mag, self.deg, self.terms, self.vars = mag, deg, terms, vars

    @property
    def expr(self):
        if self._sym is None:
            self._sym = P.to_sympy(self.poly)
        return self._sym

    def constant(self):
        """Its value when it is a number (int/Fraction, or a SymPy number), else None."""
        if self.poly is not None:
            return P.constant_value(self.poly)
        return self._sym if self._sym.is_number else None

    def wrap(self, prec: int) -> str:
        return self.shown if self.prec >= prec else f"({self.shown})"


def parse(text, table: SymbolTable, *, relations: bool = False,
          limits: ParseLimits = ParseLimits()) -> Parsed:
    """Parse ``text`` into SymPy with the names of ``table``; ExprError (with the column) on
    anything else. ``relations=True`` also accepts ``< > ≤ ≥ <= >= =`` (a chain gives And).
    Results are cached on (text, table, relations, limits)."""
    if not isinstance(text, str):
        raise fail("", 0, f"expected text, got {type(text).__name__}")
    return _parse(text, table, relations, limits)


@lru_cache(maxsize=8192)
def _parse(text: str, table: SymbolTable, relations: bool, limits: ParseLimits) -> Parsed:
    expr, shown, poly = _Parser(text, table, limits).top(relations)
    return Parsed(expr, shown, text, poly)


def _digits(n: int) -> float:
    return abs(n).bit_length() * LOG2


def _number_mag(x) -> float:
    if isinstance(x, Fraction):
        return max(_digits(x.numerator), _digits(x.denominator))
    if isinstance(x, int):
        return _digits(x)
    return max(_digits(int(x.p)), _digits(int(x.q)))


@lru_cache(maxsize=4096)
def _comb_log10(deg: float, nvars: int) -> float:
    """log10 of C(deg + nvars, nvars): the most monomials of total degree <= deg."""
    if nvars == 0:
        return 0.0
    return (math.lgamma(deg + nvars + 1) - math.lgamma(deg + 1) - math.lgamma(nvars + 1)) / math.log(10)


@lru_cache(maxsize=1024)
def _bounds_of(expr) -> tuple:
    """Bounds (mag, deg, terms) of an already-built expression (a definition)."""
    if expr.is_Number:
        return (_number_mag(expr) if expr.is_Rational else 1.0, 0.0, 0.0)
    if expr.is_Symbol:
        return (0.0, 1.0, 0.0)
    parts = [_bounds_of(a) for a in expr.args]
    if expr.is_Add:
        return (max(p[0] for p in parts) + 1, max(p[1] for p in parts),
                math.log10(sum(10 ** p[2] for p in parts)))
    if expr.is_Pow and expr.exp.is_Number:
        k = abs(float(expr.exp))
        return (parts[0][0] * k, parts[0][1] * k, parts[0][2] * k)
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def _as_number(c):
    if isinstance(c, Fraction):
        return sympy.Rational(c.numerator, c.denominator)
    if isinstance(c, int):
        return sympy.Integer(c)
    return c


class _Parser:
    def __init__(self, text: str, table: SymbolTable, limits: ParseLimits):
        self.text, self.table, self.limits = text, table, limits
        self.functions = frozenset(table.functions)
        self.toks: list[Token] = tokenize(text, self.functions, limits)
        self.i = 0
        self.tok: Token = self.toks[0]      # the current token: toks[i]
        self.depth = 0

    # -- helpers ------------------------------------------------------------------------------
    def advance(self) -> Token:
        t = self.tok
        self.i += 1
        self.tok = self.toks[self.i] if self.i < len(self.toks) else t
        return t

    def error(self, message: str, tok: Token | None = None) -> ExprError:
        return fail(self.text, (tok or self.tok).offset, message)

    def enter(self, tok: Token):
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise self.error(f"nested too deeply (at most {self.limits.max_depth} levels)", tok)

    def leave(self):
        self.depth -= 1

    def check(self, node: Node, tok: Token) -> Node:
        lim = self.limits
        if node.mag > lim.max_magnitude:
            raise self.error(f"number too large: about {node.mag:,.0f} digits (at most "
                             f"{lim.max_magnitude:,.0f}); nothing was computed", tok)
        if node.deg > lim.max_degree:
            raise self.error(f"degree too large: about {node.deg:,.0f} (at most {lim.max_degree:,})", tok)
        if node.terms > lim.terms_log10:
            raise self.error(f"too many terms once expanded (more than {lim.max_terms:,})", tok)
        return node

    def finite(self, expr, tok: Token):
        if expr in _BAD or (expr.is_number and expr.is_extended_real is False):
            what = "not a real number" if expr not in _BAD else "not a finite number (division by zero?)"
            raise self.error(f"{what}: {render(expr)}", tok)
        return expr

    # -- grammar -------------------------------------------------------------------------------
    def top(self, relations: bool):
        if self.tok.kind == "EOF":
            raise self.error("empty expression")
        first = self.sum()
        if self.tok.kind == "REL":
            if not relations:
                raise self.error(f"a relation ({self.tok.text}) is not expected here: give an expression")
            parts, left, shown = [], first, first.shown
            while self.tok.kind == "REL":
                op = self.advance()
                right = self.sum()
                parts.append(_RELS[op.value](left.expr, right.expr, evaluate=False))
                shown += f" {RELOPS[op.value]} {right.shown}"
                left = right
            result, poly = (parts[0] if len(parts) == 1 else sympy.And(*parts)), None
        else:
            result, shown, poly = first._sym, first.shown, first.poly   # SymPy built later if needed
        if self.tok.kind != "EOF":
            raise self.unexpected()
        return result, shown, poly

    def unexpected(self) -> ExprError:
        t = self.tok
        if t.kind == "RP":
            return self.error(f"unmatched {t.text!r}")
        if t.kind == "COMMA":
            return self.error("',' outside a function call: thousands separators come in groups of "
                              "three digits (1,048,576); arguments go in a function call (max(a, b))")
        if t.kind == "NUM":
            return self.error(f"missing operator before {t.text!r}")
        return self.error(f"unexpected {t.text!r}")

    def sum(self) -> Node:
        node = self.term()
        while self.tok.kind == "OP" and self.tok.value in "+-":
            op = self.advance()
            right = self.term()
            sign = 1 if op.value == "+" else -1
            if node.poly is not None and right.poly is not None:
                poly, sym = P.add(node.poly, right.poly, sign), None
            else:
                poly, sym = None, node.expr + right.expr if sign > 0 else node.expr - right.expr
            ints = isinstance(node.constant(), int) and isinstance(right.constant(), int)
            mag = max(node.mag, right.mag) + 0.31 if ints else node.mag + right.mag + 0.31
            shown = f"{node.shown} {op.value} {right.wrap(PRODUCT)}"
            node = self.check(Node(poly, sym, shown, SUM, mag, max(node.deg, right.deg),
                                   math.log10(10 ** node.terms + 10 ** right.terms),
                                   node.vars | right.vars), op)
        return node

    def term(self) -> Node:
        node = self.signed()
        while self.tok.kind == "OP" and self.tok.value in "*/":
            op = self.advance()
            right = self.signed()
            if op.value == "/":
                node = self.divide(node, right, op)
            else:
                node = self.check(self.mul(node, right, f"{node.wrap(PRODUCT)}·{right.wrap(UNARY)}"), op)
        return node

    def divide(self, node: Node, right: Node, op: Token) -> Node:
        c = right.constant()
        if c is not None and (c == 0 if not hasattr(c, "is_zero") else c.is_zero):
            raise self.error("division by zero", op)
        shown = f"{node.wrap(PRODUCT)}/{right.wrap(UNARY + 1)}"
        bounds = dict(mag=node.mag + right.mag, deg=node.deg + right.deg, terms=node.terms + right.terms,
                      vars=node.vars | right.vars)
        if node.poly is not None and isinstance(c, (int, Fraction)):
            return self.check(Node(P.scale(node.poly, 1 / Fraction(c)), None, shown, PRODUCT, **bounds), op)
        expr = self.finite(node.expr / right.expr, op)
        return self.check(Node(None, expr, shown, PRODUCT, **bounds), op)

    def mul(self, a: Node, b: Node, shown: str) -> Node:
        if a.poly is not None and b.poly is not None:
            poly, sym = P.mul(a.poly, b.poly), None
        else:
            poly, sym = None, a.expr * b.expr
        names = a.vars | b.vars
        deg = a.deg + b.deg
        return Node(poly, sym, shown, PRODUCT, a.mag + b.mag, deg,
                    min(a.terms + b.terms, _comb_log10(deg, len(names))), names)

    def signed(self) -> Node:
        if self.tok.kind == "OP" and self.tok.value in "+-":
            op = self.advance()
            self.enter(op)
            inner = self.signed()
            self.leave()
            if op.value == "+":
                return inner
            return self.negate(inner)
        return self.implicit()

    @staticmethod
    def negate(inner: Node) -> Node:
        poly = P.scale(inner.poly, -1) if inner.poly is not None else None
        sym = None if poly is not None else -inner.expr
        bare = inner.prec >= PRODUCT and inner.prec != UNARY and not inner.shown.startswith("-")
        shown = inner.shown if bare else f"({inner.shown})"
        return Node(poly, sym, f"-{shown}", UNARY, inner.mag, inner.deg, inner.terms, inner.vars)

    def implicit(self) -> Node:
        node = self.power()
        while self.tok.kind in ("NAME", "LP") or (self.tok.kind == "OP" and self.tok.value == "sqrt"):
            at = self.tok
            right = self.power()
            node = self.check(self.mul(node, right, f"{node.wrap(PRODUCT)}·{right.wrap(UNARY)}"), at)
        if self.tok.kind == "NUM":
            raise self.error(f"missing operator before {self.tok.text!r} (write * between factors)")
        return node

    def power(self) -> Node:
        base = self.postfix()
        if self.tok.kind == "OP" and self.tok.value == "^":
            op = self.advance()
            self.enter(op)
            exponent = self.exponent()
            self.leave()
            return self.pow(base, exponent, op)
        return base

    def exponent(self) -> Node:
        if self.tok.kind == "OP" and self.tok.value in "+-":
            op = self.advance()
            self.enter(op)
            inner = self.exponent()
            self.leave()
            if op.value == "+":
                return inner
            return self.negate(inner)
        return self.power()

    def postfix(self) -> Node:
        node = self.primary()
        while self.tok.kind == "SUP":
            sup = self.advance()
            node = self.pow(node, Node(P.const(sup.value), None, str(sup.value), ATOM, _digits(sup.value)), sup)
        return node

    def pow(self, base: Node, exponent: Node, tok: Token) -> Node:
        lim = self.limits
        e = exponent.constant()
        if e is None:
            return self.symbolic_pow(base, exponent, tok)
        shown_e = str(e) if isinstance(e, int) else None
        if shown_e is not None and _INT.fullmatch(exponent.shown):
            shown = f"{base.wrap(ATOM)}{shown_e.translate(SUP)}"
        else:
            shown = f"{base.wrap(ATOM)}^{exponent.wrap(POWER)}"
        bc = base.constant()
        trivial = bc is not None and bc in (0, 1, -1) and isinstance(e, int)
        if exponent.mag > 6 and not trivial:
            raise self.error(f"exponent too large (about {exponent.mag:,.0f} digits)", tok)
        if isinstance(e, (int, Fraction)):
            k = abs(Fraction(e))
        else:
            k = abs(Fraction(float(sympy.N(e, 15))))
        if k > lim.max_exponent and not trivial:
            raise self.error(f"exponent too large: {exponent.shown} (at most {lim.max_exponent:,})", tok)
        kf = 0.0 if trivial and (bc != 0 or e >= 0) else float(k)
        mag = base.mag * kf + (base.terms * kf if base.vars else 0.0)
        deg = base.deg * math.ceil(kf)
        terms = min(base.terms * math.ceil(kf), _comb_log10(deg, len(base.vars)))
        node = Node(None, None, shown, POWER, mag, deg, terms, base.vars)
        self.check(node, tok)
        if bc is not None and bc == 0 and e < 0:
            raise self.error("division by zero (0 to a negative power)", tok)
        if trivial:             # 1^k, 0^k, (-1)^k for any integer k, however large
            node.poly = P.const(1 if bc == 1 or e == 0 else 0 if bc == 0 else (-1) ** (e % 2))
            return node
        if base.poly is not None and isinstance(e, int) and e >= 0 and terms < 3.5:
            node.poly = P.power(base.poly, e)       # expanded now: at most ~3,000 terms
            return node
        node._sym = self.finite(sympy.Pow(base.expr, _as_number(e)), tok)
        return node

    def symbolic_pow(self, base: Node, exponent: Node, tok: Token) -> Node:
        if base.constant() is None or exponent.deg > 1 or exponent.mag > 3:
            raise self.error("a symbol may only appear in the exponent of a number, to the first "
                             "degree (2^d); write powers of symbols with numbers (d^2)", tok)
        expr = self.finite(sympy.Pow(base.expr, exponent.expr), tok)
        return self.check(Node(None, expr, f"{base.wrap(ATOM)}^{exponent.wrap(POWER)}", POWER,
                               base.mag * 10 ** exponent.mag, base.deg, base.terms, base.vars), tok)

    def primary(self) -> Node:
        t = self.tok
        if t.kind == "NUM":
            self.advance()
            value = t.value
            if isinstance(value, int):
                return self.check(_int_node(value), t)
            c = value.numerator if value.denominator == 1 else value
            shown = str(c) if isinstance(c, int) else t.text.replace(",", "")
            return self.check(Node(P.const(c), None, shown, ATOM, _number_mag(value)), t)
        if t.kind == "NAME":
            if t.value in self.table._by_name:     # the common case: a symbol or an alias
                self.advance()
                return self.name(t)
            if t.value in self.functions:
                return self.call()
            parts = _split(t.value, self.table)
            if parts is None:
                raise self.error(self.unknown(t.value), t)
            if len(parts) > 1:      # "nd²" is n·d²: one NAME token per known name
                pieces, at = [], t.offset
                for part in parts:
                    pieces.append(Token("NAME", part, part, at))
                    at += len(part)
                self.toks[self.i:self.i + 1] = pieces
                t = self.tok = self.toks[self.i]
            self.advance()
            return self.name(t)
        if t.kind == "LP":
            self.advance()
            self.enter(t)
            if self.tok.kind == "RP":
                raise self.error("empty brackets")
            node = self.sum()
            self.close(t)
            self.leave()
            return node
        if t.kind == "OP" and t.value == "sqrt":
            self.advance()
            self.enter(t)
            if self.tok.kind not in ("NUM", "NAME", "LP") and not (self.tok.kind == "OP" and self.tok.value == "sqrt"):
                raise self.error("√ must be followed by a number, a name or brackets")
            arg = self.postfix()
            self.leave()
            return self.apply("sqrt", [arg], t)
        if t.kind == "EOF":
            raise self.error("unexpected end of the expression")
        if t.kind == "REL":
            raise self.error(f"unexpected {t.text!r}: a relation needs an expression on each side")
        if t.kind == "SUP":
            raise self.error(f"superscript {t.text!r} must follow a number, a name or brackets")
        if t.kind == "RP":
            raise self.error(f"unexpected {t.text!r}: an expression is missing before it")
        raise self.unexpected()

    def close(self, opener: Token):
        want = {"(": ")", "[": "]"}[opener.value]
        t = self.tok
        if t.kind == "RP" and t.value == want:
            self.advance()
            return
        if t.kind == "RP":
            raise self.error(f"{t.text!r} does not match {opener.text!r} at column "
                             f"{fail(self.text, opener.offset, '').location.column}")
        if t.kind == "EOF":
            raise self.error(f"{opener.text!r} is never closed", opener)
        raise self.unexpected()

    # -- names and functions ---------------------------------------------------------------
    def name(self, t: Token) -> Node:
        """A symbol or alias (shown by its symbol's name), or a defined name (shown as written)."""
        table = self.table
        if t.value in table._by_name:
            return _symbol_node(table._by_name[t.value])
        definition = table.definition(t.value)
        mag, deg, terms = _bounds_of(definition)
        frac = P.from_sympy(definition)
        poly = frac[0] if frac is not None and frac[1] == P.ONE else None
        return self.check(Node(poly, definition, t.value, ATOM, mag, max(deg, 1.0), terms,
                               frozenset(x.name for x in definition.free_symbols)), t)

    def unknown(self, name: str) -> str:
        table = self.table
        if name in ("sqrt", "log", "exp", "min", "max", "abs", "ln", "O", "Theta"):
            return f"function {name!r} is not allowed here; allowed: {', '.join(table.functions) or 'none'}"
        known = list(table.names())
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else self.tok
        if nxt.kind == "LP" and nxt.value == "(":
            return (f"unknown function {name!r}: the functions allowed are "
                    f"{', '.join(table.functions) or 'none'}")
        msg = f"unknown name {name!r}"
        close = difflib.get_close_matches(name, known + list(table.functions), n=1, cutoff=0.6)
        if not close:
            close = [k for k in known if k.lower() == name.lower()]
        if close:
            msg += f"; did you mean {close[0]}?"
        if known:
            msg += f" (known: {', '.join(known)})"
        else:
            msg += " (no symbols are declared here: only numbers)"
        return msg

    def call(self) -> Node:
        ftok = self.advance()
        if self.tok.kind != "LP" or self.tok.value != "(":
            raise self.error(f"{ftok.value} needs its argument in parentheses: {ftok.value}(...)", ftok)
        lp = self.advance()
        self.enter(lp)
        args = [self.sum()]
        while self.tok.kind == "COMMA":
            self.advance()
            args.append(self.sum())
        self.close(lp)
        self.leave()
        return self.apply(ftok.value, args, ftok)

    def apply(self, name: str, args: list[Node], tok: Token) -> Node:
        arity = {"sqrt": (1, 1), "log": (1, 2), "ln": (1, 1), "exp": (1, 1), "abs": (1, 1),
                 "min": (1, 20), "max": (1, 20), "O": (1, 1), "Theta": (1, 1)}[name]
        if not arity[0] <= len(args) <= arity[1]:
            want = str(arity[0]) if arity[0] == arity[1] else f"{arity[0]} to {arity[1]}"
            raise self.error(f"{name} takes {want} argument{'s' if arity[1] > 1 else ''}, got {len(args)}", tok)
        xs = [a.expr for a in args]
        mag = max(a.mag for a in args)
        deg = max(a.deg for a in args)
        terms = max(a.terms for a in args)
        names = frozenset().union(*(a.vars for a in args))
        shown = f"{name}({', '.join(a.shown for a in args)})"
        if name == "sqrt":
            expr, mag = sympy.sqrt(xs[0]), mag / 2 + 1
            shown = f"√{args[0].wrap(ATOM)}"
        elif name in ("log", "ln"):
            if any(x == 0 for x in xs):
                raise self.error("log(0) is not a finite number", tok)
            expr = sympy.log(*xs)
            mag = math.log10(mag + 2) + 1
        elif name == "exp":
            if mag > 4:
                raise self.error("exp of a number this large is refused", tok)
            expr, mag = sympy.exp(xs[0]), 10 ** mag * 0.44 + 1
        elif name == "abs":
            expr = sympy.Abs(xs[0])
        elif name == "min":
            expr = sympy.Min(*xs)
        elif name == "max":
            expr = sympy.Max(*xs)
        else:  # O, Theta: kept as undefined functions for the spec's asymptotic claims
            expr = sympy.Function(name)(xs[0])
        prec = POWER if name == "sqrt" else ATOM      # (√d)² is not √d²
        node = self.check(Node(None, expr, shown, prec, mag, deg, terms, names), tok)
        self.finite(expr, tok)
        return node


# Leaves shared by every parse (a Node is never changed once built: each rule makes new ones).
@lru_cache(maxsize=256)
def _symbol_node(s) -> Node:
    return Node(P.var(s), s, s.name, ATOM, 0.0, 1.0, 0.0, frozenset((s.name,)))


@lru_cache(maxsize=4096)
def _int_node(c: int) -> Node:
    return Node(P.const(c), None, str(c), ATOM, _number_mag(c))


def _split(word: str, table: SymbolTable):
    """``word`` as a product of known names, longest first ("nd" -> [n, d]); None if impossible."""
    known = table._by_name.keys() | table._defs.keys()
    if word in known:
        return [word]
    return _split_cached(word, frozenset(known))


@lru_cache(maxsize=4096)
def _split_cached(word: str, known: frozenset):
    lengths = sorted({len(k) for k in known}, reverse=True)

    @lru_cache(maxsize=None)
    def go(i: int):
        if i == len(word):
            return ()
        for n in lengths:
            piece = word[i:i + n]
            if len(piece) == n and piece in known:
                rest = go(i + n)
                if rest is not None:
                    return (piece,) + rest
        return None

    out = go(0)
    return list(out) if out is not None else None
