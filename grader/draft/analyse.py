"""One source text, statement by statement: the values its definitions give (in the text's
order), its chains recomputed, its totals, shapes and formulas compared, and the checks a spec
could make of each statement. Pure: text in, :class:`Analysed` out."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fractions import Fraction

from . import measured, rules
from .arith import Chain, Piece, chains, show, slips
from .mathtext import NAME, from_latex, symbol_ok
from .model import Problem, Proposed
from .segment import Span, statements
from .sources import Source, quote, quote_found

MAX_STATEMENTS = 20000
_TOTAL = re.compile(r"\s*(?:Total|Sum|Overall|Altogether|In total)\b[^:]{0,30}:\s*[≈~]?\s*(\d[\d,.]*\s?[KMBT]?)\b")
_SHAPE_AT = re.compile(r"∈\s*ℝ\^?\(?\s*(\d+)\s*[×x]\s*(\d+)\s*\)?")
TRACE = {"Q": "nd", "K": "nd", "V": "nd", "Q_i": "nk", "K_i": "nk", "V_i": "nk", "head_i": "nk", "S_i": "nn",
         "A_i": "nn", "Concat": "nd", "concat": "nd", "out": "nd", "output": "nd"}
_TRACE_NAME = {"Concat": "concat", "out": "output"}


@dataclass
class Found:
    span: Span
    quote: str
    line: int
    kinds: list[str]
    checks: list[Proposed] = field(default_factory=list)


@dataclass
class Analysed:
    found: list[Found] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    symbols: set[str] = field(default_factory=set)
    models: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    unquotable: int = 0
    words: int = 0
    last_model: str | None = None
    unread: int = 0


def analyse(src: Source) -> Analysed:
    from grader.claims.quotes import normalise
    out = Analysed(words=len(src.plain.split()))
    values: dict[str, Fraction] = {}
    norm_raw = normalise(src.raw) if src.utf8 else ""
    terms: list[tuple[Fraction, Fraction, str]] = []       # (exact, rounded figure, its text) of a section
    section = None
    for k, span in enumerate(statements(src.plain)):
        if k >= MAX_STATEMENTS:
            break
        if span.section != section:
            section, terms = span.section, []
        q = quote(src, span.start, span.end)
        if not q or (src.utf8 and not quote_found(q, norm_raw)):
            out.unquotable += 1
            continue
        f = Found(span, q, src.line_of(span.start), [])
        try:
            _one(src, f, values, terms, out)
        except (ArithmeticError, ValueError, TypeError, RecursionError):
            # a statement the rules cannot read to the end: kept, with nothing proposed
            f.kinds, f.checks = ["judgement"], [Proposed("unverifiable", (("reason", "DRAFT: not read by the rules"),))]
            out.unread += 1
        if f.kinds:
            out.found.append(f)
    out.problems = [p if p.file else replace(p, file=src.path) for p in out.problems]
    return out


def _one(src: Source, f: Found, values: dict[str, Fraction], terms: list[tuple[Fraction, Fraction, str]],
         out: Analysed) -> None:
    text = from_latex(f.span.text)
    if f.span.heading:
        name = rules.model_name(text)
        f.kinds = ["configuration"] if name else ["judgement"]
        reason = (f"DRAFT: names the model {name}; confirm its configuration against a cited source" if name
                  else "DRAFT: the section is empty: it states nothing to check")
        f.checks.append(Proposed("unverifiable", (("reason", reason),)))
        return
    assigned = 0
    for name, rel, fig in rules.assignments(text):
        v = rules.to_fraction(fig)
        if v is not None and symbol_ok(name):
            _assign(values, name, v)
            out.symbols.add(name)
            assigned += 1
    numeric = False
    symbolic_eq = False
    for ch in chains(text, values):
        names, rest = _split_names(ch)
        body = Chain(rest, ch.start, ch.end)
        nums = [p for p in rest if p.value is not None]
        if len(nums) >= 2:
            numeric = True
            _arith(f, body, values, out, src)
        exact = next((p.value for p in nums if p.tol == 0), nums[0].value if nums else None)
        for n in names:
            if exact is not None and symbol_ok(n):
                _assign(values, n, exact)
                out.symbols.add(n)
                assigned += 1
        last = rest[-1] if rest else None
        if last is not None and last.figure and last.tol > 0 and last.value is not None:
            if any(p.tol == 0 for p in nums) and exact is not None:
                terms.append((exact, last.value, last.text))
            else:       # a term stated again ("Value-weighted sum: O(n²d) ≈ 17.2B"): its exact value from before
                same = [t for t in terms if t[2].split()[0] == last.text.split()[0]]
                if same:
                    terms.append((same[0][0], last.value, last.text))
        if _identity(f, rest, out):
            symbolic_eq = True
    if not any(c.kind == "measure" for c in f.checks):
        _measure(f, _lone_figure(text, values), values, out)
    _total(f, text, terms, out)
    _shapes(f, text, values, out)
    _config(f, text, out)
    f.kinds = rules.kinds_of(text, numeric, assigned, symbolic_eq)
    if rules.model_name(text) and "configuration" not in f.kinds:
        f.kinds.insert(0, "configuration")
    if rules.is_table_row(text) and "configuration" not in f.kinds:
        f.kinds.insert(0, "configuration")
    if not any(c.kind != "unverifiable" for c in f.checks) and f.kinds:
        why = ("no computation can decide it" if f.kinds == ["judgement"]
               else f"a {f.kinds[0]} statement the drafter proposes no check for; write one")
        f.checks.append(Proposed("unverifiable", (("reason", f"DRAFT: {why}"),)))


_LONE = re.compile(r"(?:[≈~]|\babout)\s*(\d[\d,]*(?:\.\d+)?\s?(?:[KMBT]\b|MB\b|GB\b)?)")


def _lone_figure(text: str, values: dict[str, Fraction]) -> Piece | None:
    """A rounded figure stated alone ("Value-weighted sum: O(n²d) ≈ 17.2B FLOPs")."""
    from .arith import read_piece
    m = _LONE.search(text[:2000])
    if m is None:
        return None
    p = read_piece(m.group(1), "≈", values)
    return p if p.figure else None


def _assign(values: dict[str, Fraction], name: str, v: Fraction) -> None:
    """A value the text gives a name; d and d_model are one size (mha's d is d_model)."""
    values[name] = v
    if name in ("d", "d_model"):
        values["d_model" if name == "d" else "d"] = v


def _split_names(ch: Chain) -> tuple[list[str], tuple[Piece, ...]]:
    names = []
    pieces = list(ch.pieces)
    while len(pieces) > 1 and NAME.fullmatch(pieces[0].text) and len(pieces[0].text) <= 40:
        names.append(pieces.pop(0).text)
    return names, tuple(pieces)


def _arith(f: Found, body: Chain, values: dict[str, Fraction], out: Analysed, src: Source) -> None:
    bad = slips(body)
    for s in bad:
        out.problems.append(Problem(src.path, f.line, f.span.section, "arithmetic", f.quote,
                                    f"{s.says}", s.gives))
    claimed = next((p for p in reversed(body.pieces) if p.figure and p.value is not None), None)
    for p in body.pieces:
        if p.formula is None or p.value is None or claimed is None or p is claimed:
            continue
        at = _at(p.formula, values)
        if at is None:
            continue
        fig = claimed.text if claimed.rel not in ("≈", "~") or claimed.text.startswith(("≈", "~")) else f"≈ {claimed.text}"
        holds = abs(p.value - (claimed.value or 0)) <= claimed.tol
        fields: list[tuple[str, object]] = [("expr", p.formula)]
        if at:
            fields.append(("at", at))
        fields.append(("claimed", fig))
        f.checks.append(Proposed("numeric", tuple(fields), holds, f"{p.text} = {show(p.value)}"))
    _measure(f, claimed, values, out)


def _measure(f: Found, claimed: Piece | None, values: dict[str, Fraction], out: Analysed) -> None:
    if claimed is None or claimed.value is None or any(c.kind == "measure" for c in f.checks):
        return
    fig = claimed.text if claimed.rel not in ("≈", "~") or claimed.text.startswith(("≈", "~")) else f"≈ {claimed.text}"
    m = measured.propose(from_latex(f.span.text), fig, claimed.value, claimed.tol, values)
    if m is not None:
        f.checks.append(m)
        out.symbols.update(k for k, _ in dict(m.fields)["at"])  # type: ignore[attr-defined]


def _at(formula: str, values: dict[str, Fraction]) -> tuple[tuple[str, str], ...] | None:
    names = sorted(set(re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?", formula)))
    at = []
    for n in names:
        if n not in values or not symbol_ok(n):
            return None
        v = values[n]
        at.append((n, str(v.numerator) if v.denominator == 1 else f"{float(v):.12g}"))
    return tuple(at)


def _identity(f: Found, pieces: tuple[Piece, ...], out: Analysed) -> bool:
    """Two symbolic members of a chain in the same symbols: an identity to check (and, for
    check-text, a formula that is no identity is an inconsistency)."""
    sym = [p for p in pieces if p.symbolic and p.formula and not re.search(r"\bO\(|softmax|sqrt\(", p.formula)]
    found = False
    for a, b in zip(sym, sym[1:]):
        na = set(re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?", a.formula or ""))
        nb = set(re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)?", b.formula or ""))
        if na != nb or not na or not all(symbol_ok(n) for n in na) or len(na) > 6:
            continue
        verdict = _equivalent(a.formula or "", b.formula or "", tuple(sorted(na)))
        if verdict is None:
            continue
        found = True
        out.symbols.update(na)
        if verdict is False:
            out.problems.append(Problem("", f.line, f.span.section, "formula", f.quote, f"{a.text} = {b.text}",
                                        f"{a.formula} and {b.formula} differ (they are not equal for every value)"))
        f.checks.append(Proposed("identity", (("lhs", a.formula), ("rhs", b.formula)), verdict,
                                 f"{a.text} and {b.text}"))
    return found


def _equivalent(a: str, b: str, names: tuple[str, ...]) -> bool | None:
    from grader.expr import ExprError, equivalent, parse
    from .mathtext import table_for
    table = table_for(names)
    try:
        v = equivalent(parse(a, table).expr, parse(b, table).expr, table).verdict
    except (ExprError, ValueError, TypeError, RecursionError, ArithmeticError):
        return None
    return True if v == "equal" else False if v == "different" else None


def _total(f: Found, text: str, terms: list[tuple[Fraction, Fraction, str]], out: Analysed) -> None:
    m = _TOTAL.match(text)
    if not m or len(terms) < 2 or "=" in text:
        return
    total = rules.to_fraction(m.group(1))
    if total is None:
        return
    from grader.claims.figures import FigureError, parse_figure
    try:
        fig = parse_figure("≈ " + m.group(1))
    except (FigureError, ValueError):
        return
    rounded = sum((t[1] for t in terms), Fraction(0))
    exact = sum((t[0] for t in terms), Fraction(0))
    if abs(rounded - fig.value) <= fig.tolerance and abs(exact - fig.value) > fig.tolerance:
        parts = " + ".join(t[2].split()[0] for t in terms)
        out.problems.append(Problem("", f.line, f.span.section, "total", f.quote, m.group(1).strip(),
                                    f"{show(exact)} (the sum of the exact terms; {parts} adds rounded figures)"))
        expr = " + ".join(str(t[0].numerator) for t in terms if t[0].denominator == 1)
        if expr and all(t[0].denominator == 1 for t in terms):
            f.checks.append(Proposed("numeric", (("expr", expr), ("claimed", "≈ " + m.group(1).strip())), False,
                                     f"the exact terms sum to {show(exact)}; {parts} adds rounded figures"))
    terms.clear()


def _shapes(f: Found, text: str, values: dict[str, Fraction], out: Analysed) -> None:
    n, d, h = values.get("n"), values.get("d_model", values.get("d")), values.get("h")
    dk = values.get("d_k") or (d / h if d is not None and h else None)
    if n is None or d is None or h is None or dk is None:
        return
    want = {"n": n, "d": d, "k": dk}
    shapes: dict[str, tuple[int, int]] = {}
    for m in _SHAPE_AT.finditer(text[:4000]):
        seg = text[:m.start()]
        seg = seg[max(seg.rfind(":"), seg.rfind(","), seg.rfind(";")) + 1:]
        seg = seg.split("=")[0]
        names = [t for t in re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_i)?", seg) if t in TRACE]
        if not names and m.start() > 0:
            prev = re.findall(r"[A-Za-z][A-Za-z0-9]*(?:_i)?", text[:m.start()].split(":")[-1])
            names = [t for t in prev if t in TRACE][:3]
        dims = (Fraction(int(m.group(1))), Fraction(int(m.group(2))))
        for name in names:
            exp = tuple(want[c] for c in TRACE[name])
            shapes[_TRACE_NAME.get(name, name)] = (int(dims[0]), int(dims[1]))
            if exp != dims:
                out.problems.append(Problem("", f.line, f.span.section, "shape", f.quote,
                                            f"{name} ∈ ℝ^({dims[0]}×{dims[1]})",
                                            f"({show(exp[0])}×{show(exp[1])}) from n = {show(n)}, d_model = {show(d)}, "
                                            f"h = {show(h)}"))
    if shapes and all(x.denominator == 1 for x in (n, d, h)) and d % h == 0:
        out.symbols.update({"d", "h", "n"})
        at = (("d", str(d)), ("h", str(h)), ("n", str(n)))
        f.checks.append(Proposed("shapes", (("at", at), ("shapes", tuple((k, list(v)) for k, v in shapes.items())))))


def _config(f: Found, text: str, out: Analysed) -> None:
    vals = rules.config_values(text)
    here = rules.model_name(text)
    if here:
        out.last_model = here
    name = here or rules.model_name(f.span.section) or out.last_model
    if not vals or not name:
        return
    key = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "model"
    entry = out.models.setdefault(key, (name, {}))
    for sym, fig in vals.items():
        v = rules.to_fraction(fig)
        if v is None or v.denominator != 1 or v <= 0:
            continue
        entry[1].setdefault(sym, str(v.numerator))
        out.symbols.add(sym)
        f.checks.append(Proposed("config", (("model", key), ("expr", sym), ("claimed", fig)), None,
                                 f"{name}: {sym} = {fig} as the text says; confirm it against a cited source"))
