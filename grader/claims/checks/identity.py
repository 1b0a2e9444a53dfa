"""`identity`: lhs = rhs for every value of the symbols allowed by their assumptions
(:func:`grader.expr.equivalent`); refuted with a counterexample that meets the constraints."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from .common import evaluate_exact, num, pretty, result, show_values

if TYPE_CHECKING:
    from ..loader import CheckSite
    from ..model import Check, CheckResult
    from .common import Context

NAME = "identity"
FIELDS = {"lhs": ("expr", True), "rhs": ("expr", True)}
MEASURES = False
HELP = "lhs = rhs for every value of the symbols allowed by their assumptions"


def validate(site: CheckSite, params: dict[str, Any]) -> bool:
    """Marks a vacuous check (``params["vacuous"]``): the two sides are the same whatever the spec's
    definitions and formulas mean (each read as an opaque name), and either they are the same text
    or no symbol of the spec is written on them (``d_k*(1*1)`` = ``d_k``) — a check that proves nothing."""
    import re

    import sympy

    from grader.expr import ExprError, SymbolTable, parse
    ld = site.loader
    raw = [site.mapping.get("lhs"), site.mapping.get("rhs")]
    if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in raw):
        return True
    texts = [re.sub(r"\s+", "", str(x)) for x in raw]
    names = list(ld.symbol_list) + [n for n in list(ld.definition_exprs) + list(ld.formulas) if n not in ld.symbol_list]
    try:
        table = SymbolTable.build(symbols={n: ld.assumptions.get(n, {}) for n in names}, aliases=ld.aliases)
        a, b = (parse(str(x), table).expr for x in raw)
    except ExprError:
        return True
    if sympy.simplify(a - b) != 0:
        return True
    written = {s.name for s in a.free_symbols | b.free_symbols}
    if texts[0] == texts[1] or not written & set(ld.symbol_list):
        params["vacuous"] = f"{raw[0]} = {raw[1]}"
    return True


def run(ctx: Context, check: Check) -> CheckResult:
    """lhs = rhs under the symbols' assumptions (grader.expr.equivalent)."""
    import sympy

    from grader.expr import equivalent

    lhs, rhs = check["lhs"], check["rhs"]
    if check.get("vacuous"):
        return result("identity", "error", f"vacuous check: {check['vacuous']} holds whatever the symbols and "
                      f"definitions are (both sides are the same expression, {pretty(lhs)}); it proves nothing "
                      f"about the claim: state the claim's own quantities on each side", "symbolic",
                      lhs=pretty(lhs), rhs=pretty(rhs), vacuous=True)
    eq = equivalent(lhs, rhs, ctx.subject.table, constraints=ctx.subject.constraints)
    if eq.verdict == "equal":
        return result("identity", "holds", f"{pretty(lhs)} = {pretty(rhs)} identically ({eq.method})",
                      "symbolic", lhs=pretty(lhs), rhs=pretty(rhs))
    if eq.verdict == "different":
        used = {s.name for s in (lhs - rhs).free_symbols} | {s.name for s in lhs.free_symbols | rhs.free_symbols}
        cx = {getattr(k, "name", str(k)): v for k, v in (eq.counterexample or {}).items()
              if getattr(k, "name", str(k)) in used}
        if not cx or not satisfies(ctx.subject, cx):
            cx = _counterexample(ctx.subject, lhs, rhs) or cx
        extra = ""
        if cx:
            try:
                a, b = evaluate_exact(lhs, cx), evaluate_exact(rhs, cx)
                extra = f"; at {show_values(cx)}: {num(a)} ≠ {num(b)}"
            except (ValueError, TypeError):
                extra = f"; counterexample {show_values(cx)}"
        return result("identity", "refuted", f"{pretty(lhs)} ≠ {pretty(rhs)}{extra}", "symbolic",
                      lhs=pretty(lhs), rhs=pretty(rhs),
                      counterexample={k: int(v) if sympy.Integer(v) == v else str(v) for k, v in cx.items()})
    return result("identity", "error", f"could not decide {pretty(lhs)} = {pretty(rhs)} ({eq.method})",
                  "symbolic")


def satisfies(subject: Any, values: Any) -> bool:
    """Whether values meet the subject's constraints (h divides d, ...); unknown symbols pass."""
    for c in subject.constraints:
        try:
            if c.kind == "divides":
                a, b = (evaluate_exact(x, values) for x in c.args)
                if b % a != 0:
                    return False
            elif not bool(evaluate_exact(c.args[0], values)):
                return False
        except (ValueError, TypeError, ZeroDivisionError):
            continue
    return True


def _counterexample(subject: Any, lhs: Any, rhs: Any) -> Any:
    """Small values meeting the constraints where lhs ≠ rhs (deterministic search)."""
    syms = sorted((lhs - rhs).free_symbols, key=lambda s: s.name)
    if len(syms) > 4:
        return None
    for vals in itertools.product((1, 2, 4, 8, 64, 512), repeat=len(syms)):
        cx = {s.name: v for s, v in zip(syms, vals)}
        if satisfies(subject, cx) and evaluate_exact(lhs, cx) != evaluate_exact(rhs, cx):
            return cx
    return None
