"""How the parser builds its nodes: products, quotients, powers, negation, names and
functions, each after its bounds (:class:`~.limits.ParseLimits`) are checked on the estimates
of its parts, and each result checked to be a finite real number. A mixin of
:class:`grader.expr.parser._Parser` (it holds the text, the table, the limits and the tokens)."""
from __future__ import annotations

import difflib
import math
import re
from fractions import Fraction

import sympy

from . import poly as P
from .evaluation import not_real
from .lexer import Token
from .limits import ExprError, ParseLimits
from .nodes import ATOM, POWER, PRODUCT, SUP, UNARY, Node, as_number, bounds_of, comb_log10, symbol_node
from .pretty import render
from .symbols import SymbolTable

_INT = re.compile(r"-?[0-9]+")
_BAD = (sympy.S.ComplexInfinity, sympy.S.NaN, sympy.S.Infinity, sympy.S.NegativeInfinity)


class Build:
    """The node-building operations of the parser (see the module doc)."""

    # what the parser holds, that these operations read
    text: str
    table: SymbolTable
    limits: ParseLimits
    toks: list[Token]
    i: int
    tok: Token

    def error(self, message: str, tok: Token | None = None) -> ExprError:
        raise NotImplementedError       # the parser's: an ExprError at the token's column

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

    def finite(self, expr: sympy.Basic, tok: Token) -> sympy.Basic:
        if expr in _BAD or (expr.is_number and not_real(expr)):
            what = "not a real number" if expr not in _BAD else "not a finite number (division by zero?)"
            raise self.error(f"{what}: {render(expr)}", tok)
        return expr

    def divide(self, node: Node, right: Node, op: Token) -> Node:
        c = right.constant()
        if c is not None and (c == 0 if not hasattr(c, "is_zero") else c.is_zero):
            raise self.error("division by zero", op)
        shown = f"{node.wrap(PRODUCT)}/{right.wrap(UNARY + 1)}"
        mag, deg, terms, names = (node.mag + right.mag, node.deg + right.deg, node.terms + right.terms,
                                  node.vars | right.vars)
        if node.poly is not None and isinstance(c, (int, Fraction)):
            return self.check(Node(P.scale(node.poly, 1 / Fraction(c)), None, shown, PRODUCT, mag, deg, terms,
                                   names), op)
        expr = self.finite(node.expr / right.expr, op)
        return self.check(Node(None, expr, shown, PRODUCT, mag, deg, terms, names), op)

    def mul(self, a: Node, b: Node, shown: str) -> Node:
        if a.poly is not None and b.poly is not None:
            poly, sym = P.mul(a.poly, b.poly), None
        else:
            poly, sym = None, a.expr * b.expr
        names = a.vars | b.vars
        deg = a.deg + b.deg
        return Node(poly, sym, shown, PRODUCT, a.mag + b.mag, deg,
                    min(a.terms + b.terms, comb_log10(deg, len(names))), names)

    @staticmethod
    def negate(inner: Node) -> Node:
        poly = P.scale(inner.poly, -1) if inner.poly is not None else None
        sym = None if poly is not None else -inner.expr
        bare = inner.prec >= PRODUCT and inner.prec != UNARY and not inner.shown.startswith("-")
        shown = inner.shown if bare else f"({inner.shown})"
        return Node(poly, sym, f"-{shown}", UNARY, inner.mag, inner.deg, inner.terms, inner.vars)

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
        else:                   # a real number (finite() refused the others), or a tiny imaginary part
            try:
                k = abs(Fraction(abs(complex(sympy.N(e, 15)))))
            except (TypeError, ValueError, ArithmeticError):
                raise self.error(f"the exponent {exponent.shown} has no value that can be bounded", tok) from None
        if k > lim.max_exponent and not trivial:
            raise self.error(f"exponent too large: {exponent.shown} (at most {lim.max_exponent:,})", tok)
        kf = 0.0 if trivial and (bc != 0 or e >= 0) else float(k)
        mag = base.mag * kf + (base.terms * kf if base.vars else 0.0)
        deg = base.deg * math.ceil(kf)
        terms = min(base.terms * math.ceil(kf), comb_log10(deg, len(base.vars)))
        node = Node(None, None, shown, POWER, mag, deg, terms, base.vars)
        self.check(node, tok)
        if bc is not None and bc == 0 and e < 0:
            raise self.error("division by zero (0 to a negative power)", tok)
        if trivial:             # 1^k, 0^k, (-1)^k for any integer k, however large
            node.poly = P.const(1 if bc == 1 or e == 0 else 0 if bc == 0 else -1 if int(e) % 2 else 1)
            return node
        if base.poly is not None and isinstance(e, int) and e >= 0 and terms < 3.5:
            node.poly = P.power(base.poly, e)       # expanded now: at most ~3,000 terms
            return node
        node._sym = self.finite(sympy.Pow(base.expr, as_number(e)), tok)
        return node

    def symbolic_pow(self, base: Node, exponent: Node, tok: Token) -> Node:
        if base.constant() is None or exponent.deg > 1 or exponent.mag > 3:
            raise self.error("a symbol may only appear in the exponent of a number, to the first "
                             "degree (2^d); write powers of symbols with numbers (d^2)", tok)
        expr = self.finite(sympy.Pow(base.expr, exponent.expr), tok)
        return self.check(Node(None, expr, f"{base.wrap(ATOM)}^{exponent.wrap(POWER)}", POWER,
                               base.mag * 10 ** exponent.mag, base.deg, base.terms, base.vars), tok)

    def name(self, t: Token) -> Node:
        """A symbol or alias (shown by its symbol's name), or a defined name (shown as written)."""
        table = self.table
        if t.word in table._by_name:
            return symbol_node(table._by_name[t.word])
        definition = table.definition(t.word)
        mag, deg, terms = bounds_of(definition)
        frac = P.from_sympy(definition)
        poly = frac[0] if frac is not None and frac[1] == P.ONE else None
        return self.check(Node(poly, definition, t.word, ATOM, mag, max(deg, 1.0), terms,
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

    def extreme(self, name: str, args: list[Node], tok: Token) -> sympy.Basic:
        """min or max of ``args``: real numbers only (SymPy refuses to compare others). An argument
        that is not real for any value of its symbols (√(n/(-1)) = i·√n) is refused here; one that
        is real for some values only (√(d - 10⁴⁰)) is left for the sample points to tell."""
        for a in args:
            x = a.expr
            if x.is_extended_real is False or (x.is_number and not_real(x)):
                raise self.error(f"{name} compares real numbers: {a.shown} is not a real number", tok)
        try:
            return (sympy.Min if name == "min" else sympy.Max)(*(a.expr for a in args))
        except ValueError:      # a number SymPy cannot compare (log(8)/log(2) - 3 is 0 to it)
            raise self.error(f"{name} cannot compare its arguments: {', '.join(a.shown for a in args)}", tok) from None

    def apply(self, name: str, args: list[Node], tok: Token) -> Node:
        arity = {"sqrt": (1, 1), "log": (1, 2), "ln": (1, 1), "exp": (1, 1), "abs": (1, 1),
                 "min": (1, 20), "max": (1, 20), "O": (1, 1), "Theta": (1, 1),
                 "floor": (1, 1), "ceil": (1, 1), "round": (1, 1)}[name]
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
        elif name in ("min", "max"):
            expr = self.extreme(name, args, tok)
        elif name in ("floor", "ceil", "round"):      # exact: SymPy's floor and ceiling
            if xs[0].is_extended_real is False:
                raise self.error(f"{name} takes a real number: {args[0].shown} is not one", tok)
            expr = (sympy.floor(xs[0]) if name == "floor" else sympy.ceiling(xs[0]) if name == "ceil"
                    else sympy.floor(xs[0] + sympy.Rational(1, 2)))          # round: halves up
        else:  # O, Theta: kept as undefined functions for the spec's asymptotic claims
            expr = sympy.Function(name)(xs[0])
        prec = POWER if name == "sqrt" else ATOM      # (√d)² is not √d²
        node = self.check(Node(None, expr, shown, prec, mag, deg, terms, names), tok)
        self.finite(expr, tok)
        return node
