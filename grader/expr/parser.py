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

The grammar's rules are here; the nodes and their bounds are :mod:`.nodes`, the operations that
build them (products, powers, names, functions) :mod:`.build`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy

from . import poly as P
from .lexer import Token, tokenize
from .limits import ExprError, ParseLimits, fail, location_of
from .pretty import RELOPS
from .symbols import SymbolTable
from .build import Build
from .nodes import ATOM, PRODUCT, SUM, UNARY, Node, Parsed, decimal_digits, int_node, number_mag, split_names

_RELS = {"<": sympy.StrictLessThan, ">": sympy.StrictGreaterThan, "<=": sympy.LessThan,
         ">=": sympy.GreaterThan, "=": sympy.Equality}








def parse(text: str, table: SymbolTable, *, relations: bool = False,
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












class _Parser(Build):
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

    def enter(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise self.error(f"nested too deeply (at most {self.limits.max_depth} levels)", tok)

    def leave(self) -> None:
        self.depth -= 1



    # -- grammar -------------------------------------------------------------------------------
    def top(self, relations: bool) -> tuple[sympy.Basic | None, str, P.Poly | None]:
        if self.tok.kind == "EOF":
            raise self.error("empty expression")
        first = self.sum()
        if self.tok.kind == "REL":
            if not relations:
                raise self.error(f"a relation ({self.tok.text}) is not expected here: give an expression")
            parts: list[sympy.Basic] = []
            left, shown = first, first.shown
            while self.tok.kind == "REL":
                op = self.advance()
                right = self.sum()
                parts.append(_RELS[op.word](left.expr, right.expr, evaluate=False))
                shown += f" {RELOPS[op.word]} {right.shown}"
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
        while self.tok.kind == "OP" and self.tok.value in ("+", "-"):
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
        while self.tok.kind == "OP" and self.tok.value in ("*", "/"):
            op = self.advance()
            right = self.signed()
            if op.value == "/":
                node = self.divide(node, right, op)
            else:
                node = self.check(self.mul(node, right, f"{node.wrap(PRODUCT)}·{right.wrap(UNARY)}"), op)
        return node



    def signed(self) -> Node:
        if self.tok.kind == "OP" and self.tok.value in ("+", "-"):
            op = self.advance()
            self.enter(op)
            inner = self.signed()
            self.leave()
            if op.value == "+":
                return inner
            return self.negate(inner)
        return self.implicit()


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
        if self.tok.kind == "OP" and self.tok.value in ("+", "-"):
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
            k = int(sup.number)       # a superscript is an integer
            node = self.pow(node, Node(P.const(k), None, str(k), ATOM, decimal_digits(k)), sup)
        return node



    def primary(self) -> Node:
        t = self.tok
        if t.kind == "NUM":
            self.advance()
            value = t.number
            if isinstance(value, int):
                return self.check(int_node(value), t)
            c = value.numerator if value.denominator == 1 else value
            shown = str(c) if isinstance(c, int) else t.text.replace(",", "")
            return self.check(Node(P.const(c), None, shown, ATOM, number_mag(value)), t)
        if t.kind == "NAME":
            if t.value in self.table._by_name:     # the common case: a symbol or an alias
                self.advance()
                return self.name(t)
            if t.value in self.functions:
                return self.call()
            parts = split_names(t.word, self.table)
            if parts is None:
                raise self.error(self.unknown(t.word), t)
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

    def close(self, opener: Token) -> None:
        want = {"(": ")", "[": "]"}[opener.word]
        t = self.tok
        if t.kind == "RP" and t.value == want:
            self.advance()
            return
        if t.kind == "RP":
            raise self.error(f"{t.text!r} does not match {opener.text!r} at column "
                             f"{location_of(self.text, opener.offset).column}")
        if t.kind == "EOF":
            raise self.error(f"{opener.text!r} is never closed", opener)
        raise self.unexpected()



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
        return self.apply(ftok.word, args, ftok)
