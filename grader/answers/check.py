"""check_answer: screen, read, compare, recognise the mistake, say it — one answer at a time.

A pure function of picklable values. Each process keeps, per spec, the reference, the
author's mistakes and the variants (derived from the spec, then the factors that fit what the
answer measures) already read (:func:`prepare`, an LRU cache), so a batch reads them once and
a wrong answer is only compared with prepared values: exact fractions for numbers,
fingerprints before any equivalence for expressions (and two polynomials compared as such,
without SymPy), exact sign tests at sample points before
any equivalence for relations.
No answer makes it raise: a hostile or unreadable answer is ``invalid`` (running out of
memory or recursion too: "too complex"); a reference that cannot be read (the author's
error) or a bug here is ``undecided`` with the reason, for a person. Exceptions that are not
errors of checking — a worker's time-limit exception raised by its signal handler,
KeyboardInterrupt — pass through to the caller.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from grader.errors import SpecError
from grader.values import to_fraction

from . import feedback as fb
from .choices import read_choice
from .compare import ACCEPTED, COARSE, ROUNDED, TOLERANCE, accepted, min_sig_figs, verdict
from .guard import screen, shorten
from .mistakes import BITS, EXPRESSION_FACTORS, NUMBER_FACTORS, binary_decimal, shape_mistake, unit_confusion
from .model import AnswerSpec, Outcome, Unreadable
from .numbers import Reading, format_value, read_number
from .shapes import format_shape, read_shape


def check_answer(spec: AnswerSpec, raw) -> Outcome:
    """Grade one answer (text, a number, or a YAML list for a shape) against ``spec``."""
    try:
        why = screen(raw, spec.kind)
        if why:
            return Outcome.invalid(why)
        if isinstance(raw, str) and spec.kind != "free_text":
            raw = " ".join(raw.split())     # one space between words: no regex sees long runs
        return _CHECKERS[spec.kind](spec, raw)
    except Unreadable as e:
        return Outcome.invalid(str(e))
    except SpecError as e:
        return Outcome("undecided", None, 0.0, "", f"cannot grade: the problem's reference is invalid ({e.message})")
    except (RecursionError, MemoryError, OverflowError):
        return Outcome.invalid("too complex to read")
    except _BUGS as e:      # a bug must not cost the learner: a person decides
        return Outcome("undecided", None, 0.0, "", f"cannot grade automatically ({type(e).__name__}); "
                                                   "a person will check this answer")
    # Anything else (a caller's time-limit exception raised from a signal handler,
    # KeyboardInterrupt) is the caller's and goes through.


# a byte unit's prefix level: 1 for kB and KiB, 2 for MB and MiB, ...
_LEVEL = {f"{w}byte": k for k, ws in enumerate((("kilo", "kibi"), ("mega", "mebi"), ("giga", "gibi"), ("tera", "tebi"),
                                               ("peta", "pebi")), 1) for w in ws}

_BUGS = (TypeError, ValueError, AttributeError, KeyError, IndexError, LookupError, ArithmeticError,
         AssertionError, NotImplementedError, UnicodeError, TimeoutError)


# ---------------------------------------------------------------- prepared references

@dataclass(frozen=True)
class NumberRef:
    value: Fraction
    min_sig: int | None
    mistakes: tuple         # ((Reading, Mistake), ...)
    variants: tuple = ()    # ((value, message), ...): derived from the spec, then reference × factor


@dataclass(frozen=True)
class QuantityRef:
    value: Fraction         # in ``unit``
    unit: str               # pint name
    min_sig: int | None
    mistakes: tuple         # ((value in unit, Mistake), ...)
    variants: tuple = ()    # ((value in unit, message), ...): derived from the spec, then reference × factor
    measures: str | None = None


@lru_cache(maxsize=4096)
def prepare(spec: AnswerSpec):
    """The spec's reference and mistakes, read once per process; :class:`SpecError` if the
    reference cannot be read (call it when loading a bank to find such errors early)."""
    try:
        return _PREPARERS[spec.kind](spec)
    except Unreadable as e:
        raise SpecError(f"reference {shorten(repr(spec.reference), 60)}: {e}") from None


def _reading_of_reference(x) -> Reading:
    if isinstance(x, Fraction):
        return Reading(x, None, None, "")
    if hasattr(x, "p") and hasattr(x, "q"):          # a SymPy Rational/Integer
        return Reading(to_fraction(x), None, None, "")
    if isinstance(x, float):
        x = repr(x)
    elif getattr(x, "is_Float", False):                # a SymPy Float: its decimal text
        x = str(x)
    return read_number(x)


def _prep_number(spec: AnswerSpec) -> NumberRef:
    ref = _reading_of_reference(spec.reference).value
    mistakes = []
    for m in spec.mistakes:
        try:
            mistakes.append((_reading_of_reference(m.value), m))
        except Unreadable as e:
            raise SpecError(f"mistake {m.value!r}: {e}") from None
    variants = []
    for m in spec.derived:
        try:
            variants.append((_reading_of_reference(m.value).value, m.message))
        except Unreadable as e:
            raise SpecError(f"derived mistake {m.value!r}: {e}") from None
    variants += [(ref * d.factor, d.message) for d in NUMBER_FACTORS.get(spec.measures, ()) if d.factor != 1]
    return NumberRef(ref, min_sig_figs(spec, ref), tuple(mistakes), _distinct(variants, ref))


def _distinct(variants: list, ref) -> tuple:
    """The variants without the reference and without repeats (the first message wins)."""
    seen, out = {ref}, []
    for value, message in variants:
        if value not in seen:
            seen.add(value)
            out.append((value, message))
    return tuple(out)


def _measures(spec: AnswerSpec, unit: str) -> str | None:
    """What a quantity measures: as the spec says, else from its unit (bytes, FLOPs)."""
    if spec.measures is not None:
        return spec.measures
    from .units import kind_of
    what = kind_of(unit)
    return "bytes" if what == "an amount of data" else "flops" if what == "a number of operations" else None


def _ref_unit(spec: AnswerSpec) -> str:
    from .units import UNITS
    unit = spec.unit or "byte"
    if unit in UNITS:
        return UNITS[unit][0]
    if unit in {u for u, _ in UNITS.values()}:
        return unit
    known = ", ".join(sorted({u for u, _ in UNITS.values()}))
    raise SpecError(f"unit {unit!r} is not one of the known units ({known})")


def _prep_quantity(spec: AnswerSpec) -> QuantityRef:
    from .units import read_quantity
    unit = _ref_unit(spec)

    def value_of(x):
        if isinstance(x, (int, float, Fraction)) or hasattr(x, "q"):
            return _reading_of_reference(x).value
        q = read_quantity(x, unit)
        if q.unit is None:
            return q.number.value
        if q.value is None:
            raise SpecError(f"{x!r} cannot be converted to {unit}")
        return q.value

    ref = value_of(spec.reference)
    mistakes = tuple((value_of(m.value), m) for m in spec.mistakes)
    measures = _measures(spec, unit)
    variants = [(value_of(m.value), m.message) for m in spec.derived]
    variants += [(ref * d.factor, d.message) for d in NUMBER_FACTORS.get(measures, ()) if d.factor != 1]
    return QuantityRef(ref, unit, min_sig_figs(spec, ref), mistakes, _distinct(variants, ref), measures)


def _prep_shape(spec: AnswerSpec):
    """(reference, ((shape, Mistake), ...), ((shape, message), ...) derived from the spec)."""
    ref = read_shape(spec.reference)
    return (ref, tuple((read_shape(m.value), m) for m in spec.mistakes),
            _distinct([(read_shape(m.value), m.message) for m in spec.derived], ref))


def _prep_choice(spec: AnswerSpec):
    if not spec.choices:
        raise SpecError("a choice problem needs its choices")
    ref = read_choice(spec.reference, spec.choices)
    return ref, tuple((read_choice(m.value, spec.choices), m) for m in spec.mistakes)


def _table(spec: AnswerSpec):
    if spec.table is None:
        raise SpecError("an expression problem needs a symbol table (grader.expr.SymbolTable)")
    return spec.table


def _sympy_or_text(value, read):
    """A derived value given as SymPy (from :mod:`.derive`) as it is; text read with ``read``."""
    import sympy
    return value if isinstance(value, sympy.Basic) else read(value)


def _prep_expression(spec: AnswerSpec):
    """(reference, ((mistake, Mistake), ...), ((variant, message), ...)), each formula a
    :class:`_Target`: derived from the spec, then reference × factor."""
    import sympy
    from .symbolic import read_expression
    table = _table(spec)
    ref, _ = read_expression(spec.reference, table)
    mistakes = []
    for m in spec.mistakes:
        e = _sympy_or_text(m.value, lambda v: read_expression(v, table)[0])
        mistakes.append((_Target.of(e, table), m))
    variants, seen = [], {ref}
    candidates = [(_sympy_or_text(m.value, lambda v: read_expression(v, table)[0]), m.message) for m in spec.derived]
    candidates += [(ref * sympy.Rational(d.factor.numerator, d.factor.denominator), d.message)
                   for d in EXPRESSION_FACTORS.get(spec.measures, ()) if d.factor != 1]
    for e, message in candidates:       # (a repeat SymPy does not see as one costs a comparison, no more)
        if e in seen:
            continue
        seen.add(e)
        variants.append((_Target.of(e, table), message))
    return _Target.of(ref, table), tuple(mistakes), tuple(variants)


@dataclass(frozen=True)
class _Target:
    """A formula an answer is compared with: SymPy, its polynomial (None when it is not one) and
    its fingerprint (:mod:`.symbolic`)."""

    expr: object
    poly: dict | None
    fp: tuple | None
    symbols: frozenset      # the names of its symbols

    @classmethod
    def of(cls, expr, table) -> "_Target":
        from .symbolic import fingerprint, polynomial
        return cls(expr, polynomial(expr, table), fingerprint(expr, table),
                   frozenset(str(s) for s in expr.free_symbols))


def _prep_relation(spec: AnswerSpec):
    """(reference, its probes, ((mistake, probes, Mistake), ...), ((variant, probes, message), ...)),
    probes being (truths, spread truths) from :mod:`.symbolic`: cheap proofs that two differ."""
    from .symbolic import check_relation, read_relation
    table = _table(spec)
    ref = check_relation(read_relation(spec.reference, table)[0])
    mistakes = []
    for m in spec.mistakes:
        rel = check_relation(_sympy_or_text(m.value, lambda v: read_relation(v, table)[0]))
        mistakes.append((rel, _probes(rel, table), m))
    variants = []
    for m in spec.derived:
        rel = check_relation(_sympy_or_text(m.value, lambda v: read_relation(v, table)[0]))
        variants.append((rel, _probes(rel, table), m.message))
    return ref, _probes(ref, table), tuple(mistakes), tuple(variants)


def _probes(rel, table) -> tuple:
    from .symbolic import spread_truths, truths
    return truths(rel, table), spread_truths(rel, table)


def _not_same(a: tuple, b: tuple, differ=None) -> bool:
    """Whether the probes of two relations prove them not equivalent: by ``differ`` on each kind
    of truths (default :func:`.symbolic.differ_somewhere`)."""
    from .symbolic import differ_somewhere
    differ = differ or differ_somewhere
    return differ(a[0], b[0]) or differ(a[1], b[1])


_PREPARERS = {"number": _prep_number, "quantity": _prep_quantity, "shape": _prep_shape,
              "choice": _prep_choice, "expression": _prep_expression, "relation": _prep_relation,
              "free_text": lambda spec: None}


# ---------------------------------------------------------------- the kinds

def _check_number(spec: AnswerSpec, raw) -> Outcome:
    ref: NumberRef = prepare(spec)
    r = read_number(raw)
    error = r.error
    v = verdict(r.value, r.sig_figs, r.half_unit, ref.value, spec.tolerance, ref.min_sig, error)
    if v in ACCEPTED:
        return fb.correct(r.read_as, _accepted_note(v, r, ref.value, spec, ""))
    if error is not None:               # not rational: equal only if proven so
        same = _exactly(r.expr, ref.value)
        if same == "equal":
            return fb.correct(r.read_as)
        if same == "undecided":
            return fb.undecided(r.read_as)
    half = r.half_unit
    for mv, m in ref.mistakes:
        if accepted(r.value, r.sig_figs, half, mv.value, spec.tolerance, ref.min_sig, error):
            return fb.from_mistake(r.read_as, m)
    for value, message in ref.variants:     # a coarse answer must be a variant exactly to count as one
        if (r.value == value if v == COARSE else
                accepted(r.value, r.sig_figs, half, value, spec.tolerance, ref.min_sig, error)):
            return fb.wrong(r.read_as, message)
    if v == COARSE:
        return fb.wrong(r.read_as, fb.too_coarse(r.read_as, r.sig_figs or 0, ref.min_sig, spec.tolerance))
    if error is not None and _near(r.value, ref.value):
        return fb.wrong(r.read_as, _not_exact(ref.value, r.expr, Fraction(1), ""))
    return fb.wrong(r.read_as, fb.otherwise(spec.feedback, "not the expected value"))


def _exactly(expr, reference: Fraction, factor: Fraction = Fraction(1)) -> str:
    """Whether the SymPy number ``expr`` × ``factor`` is exactly ``reference``: equal, different
    or undecided, by :func:`grader.expr.equivalent` (exact, then error-bounded evaluation, then
    bounded SymPy)."""
    import sympy

    from grader.expr import equivalent
    from .numbers import _no_symbols
    target = sympy.Rational(reference.numerator, reference.denominator)
    scaled = expr * sympy.Rational(factor.numerator, factor.denominator)
    return equivalent(scaled, target, _no_symbols()).verdict


def _near(value: Fraction, reference: Fraction) -> bool:
    """Within a millionth of the reference: close enough that "not exact" is the news."""
    return abs(value - reference) <= abs(reference) / 10**6


def _not_exact(reference: Fraction, expr, factor, unit: str) -> str:
    """"Not exactly 1,048,576: ... differs from it by about 1.38 × 10⁻⁸⁷" (the difference from
    SymPy's error-bounded evaluation)."""
    import sympy

    from grader.expr.equiv import enclosure, sign
    diff = expr * sympy.Rational(factor.numerator, factor.denominator) - sympy.Rational(reference.numerator,
                                                                                        reference.denominator)
    bounds = enclosure(diff, 1000) if sign(diff) is not None else None
    off = abs(bounds[0] + bounds[1]) / 2 if bounds else None
    shown = f"about {format_value(off, 3)}" if off else "a tiny amount"
    return (f"Not exactly {format_value(reference)}{unit}: the question asks for the exact value, and this "
            f"differs from it by {shown}.")


def _accepted_note(v: str, r: Reading, ref: Fraction, spec: AnswerSpec, unit: str) -> str:
    if v == ROUNDED:
        return f"rounded to {fb.sig_figs_note(r.sig_figs)}; exactly {format_value(ref)}{unit}"
    if v == TOLERANCE:
        return f"within {spec.tolerance} of {format_value(ref)}{unit}"
    return ""


def _check_quantity(spec: AnswerSpec, raw) -> Outcome:
    from .units import BINARY_OF, DECIMAL_OF, factor, kind_of, plural, read_quantity
    ref: QuantityRef = prepare(spec)
    q = read_quantity(raw, ref.unit)
    units = plural(ref.unit)
    if q.unit is None:
        n = q.number
        if accepted(n.value, n.sig_figs, n.half_unit, ref.value, spec.tolerance, ref.min_sig):
            return fb.wrong(q.read_as, f"The number is right in {units}, but a quantity needs its unit: "
                                       f"write {q.read_as} {units}.")
        return fb.wrong(q.read_as, f"A unit is missing: give the quantity with its unit ({units}, KiB, MiB, MB, ...).")
    if q.value is None:
        return fb.wrong(q.read_as, f"{q.read_as} is {kind_of(q.unit)} ({q.unit}), but the question asks for "
                                   f"{kind_of(ref.unit)} ({ref.unit}).")
    sig, half, error = q.number.sig_figs, q.half_unit, q.error
    v = verdict(q.value, sig, half, ref.value, spec.tolerance, ref.min_sig, error)
    if v in ACCEPTED:
        return fb.correct(q.read_as, _accepted_note(v, q.number, ref.value, spec, f" {units}"))
    if error is not None:               # not rational: equal only if proven so
        same = _exactly(q.number.expr, ref.value, q.factor)
        if same == "equal":
            return fb.correct(q.read_as)
        if same == "undecided":
            return fb.undecided(q.read_as)
    for mv, m in ref.mistakes:
        if accepted(q.value, sig, half, mv, spec.tolerance, ref.min_sig, error):
            return fb.from_mistake(q.read_as, m)
    def near(value) -> bool:    # a coarse answer must be the value exactly
        return (q.value == value if v == COARSE else
                accepted(q.value, sig, half, value, spec.tolerance, ref.min_sig, error))

    other = BINARY_OF.get(q.unit) or DECIMAL_OF.get(q.unit)
    if other is not None:
        f_other = factor(other, ref.unit)
        n = q.number
        if f_other and (n.value == ref.value / f_other if v == COARSE else
                        accepted(n.value, n.sig_figs, n.half_unit, ref.value / f_other, None, ref.min_sig)):
            return fb.wrong(q.read_as, unit_confusion(q.read_as.split(" = ")[0], q.value, q.unit, ref.value, ref.unit))
    if ref.measures == "bytes" and q.unit.endswith("bit") and near(ref.value / 8):
        return fb.wrong(q.read_as, BITS)
    for value, message in ref.variants:
        if near(value):
            return fb.wrong(q.read_as, message)
    level = _LEVEL.get(q.unit)
    if ref.measures == "bytes" and level:           # MB against MiB: only for an answer in MB or MiB
        for d in binary_decimal(level):
            if near(ref.value * d.factor):
                return fb.wrong(q.read_as, d.message)
    if v == COARSE:
        return fb.wrong(q.read_as, fb.too_coarse(q.read_as.split(" = ")[0], sig or 0, ref.min_sig, spec.tolerance))
    if error is not None and _near(q.value, ref.value):
        return fb.wrong(q.read_as, _not_exact(ref.value, q.number.expr, q.factor, f" {units}"))
    return fb.wrong(q.read_as, fb.otherwise(spec.feedback, "not the expected quantity"))


def _check_shape(spec: AnswerSpec, raw) -> Outcome:
    ref, mistakes, variants = prepare(spec)
    shape = read_shape(raw)
    shown = format_shape(shape)
    if shape == ref:
        return fb.correct(shown)
    for mv, m in mistakes:
        if shape == mv:
            return fb.from_mistake(shown, m)
    for mv, message in variants:
        if shape == mv:
            return fb.wrong(shown, message)
    found = shape_mistake(shape, ref)
    if found and found[1]:
        return fb.wrong(shown, found[0])
    return fb.wrong(shown, fb.otherwise(spec.feedback, found[0] if found else "not the expected shape"))


def _check_choice(spec: AnswerSpec, raw) -> Outcome:
    ref, mistakes = prepare(spec)
    key = read_choice(raw, spec.choices)
    shown = f"{key}: {shorten(dict(spec.choices)[key], 60)}"
    if key == ref:
        return fb.correct(shown)
    for mv, m in mistakes:
        if key == mv:
            return fb.from_mistake(shown, m)
    return fb.wrong(shown, fb.otherwise(spec.feedback, f"{key} is not the right choice"))


def _check_free_text(spec: AnswerSpec, raw) -> Outcome:
    text = str(raw).lower() if isinstance(raw, bool) else str(raw)
    return fb.needs_person(shorten(text, 200))


def _check_expression(spec: AnswerSpec, raw) -> Outcome:
    from .symbolic import DIFFERENT, EQUAL as SAME, UNDECIDED, compare_expressions, compare_polynomials, \
        fingerprint, may_equal, polynomial_fingerprint, read_formula
    ref, mistakes, variants = prepare(spec)
    table = spec.table
    parsed = read_formula(raw, table)
    shown, poly = parsed.read_as, parsed.poly
    fp = polynomial_fingerprint(poly) if poly is not None else fingerprint(parsed.expr, table)

    def same(target: _Target) -> str:
        if not may_equal(fp, target.fp):
            return DIFFERENT
        if poly is not None and target.poly is not None:      # exact, without SymPy
            return compare_polynomials(poly, target.poly)
        return compare_expressions(parsed.expr, target.expr, table)

    v = same(ref)
    if v == SAME:
        return fb.correct(shown)
    for target, m in mistakes:
        if same(target) == SAME:
            return fb.from_mistake(shown, m)
    if v == UNDECIDED:
        return fb.undecided(shown)
    constant = all(not m for m in poly) if poly is not None else not parsed.expr.free_symbols
    if ref.symbols and constant:
        names = ", ".join(sorted(ref.symbols))
        return fb.wrong(shown, f"Your answer is a number; the question asks for a formula in {names}.")
    for target, message in variants:
        if same(target) == SAME:
            return fb.wrong(shown, message)
    return fb.wrong(shown, fb.otherwise(spec.feedback, "not equivalent to the expected formula"))


def _check_relation(spec: AnswerSpec, raw) -> Outcome:
    from .symbolic import DIFFERENT, EQUAL as SAME, UNDECIDED, check_relation, compare_relations, disagreement, \
        read_relation, truths_differ
    ref, ref_probes, mistakes, variants = prepare(spec)
    table = spec.table
    rel, shown = read_relation(raw, table)
    mine = check_relation(rel)
    probes = _probes(mine, table)
    # different at a sample point, and not simply reversed (compare_relations says "reversed")
    proven = _not_same(probes, ref_probes, truths_differ)
    v, how = (DIFFERENT, "sampling") if proven else compare_relations(mine, ref, table)
    if v == UNDECIDED and _not_same(probes, ref_probes):
        v, how = DIFFERENT, "sampling"      # a sample point where they differ is a proof
    if v == SAME:
        return fb.correct(shown)
    for mv, mprobes, m in mistakes:
        if not _not_same(probes, mprobes) and compare_relations(mine, mv, table)[0] == SAME:
            return fb.from_mistake(shown, m)
    if v == UNDECIDED:
        return fb.undecided(shown)
    if how == "reversed":
        return fb.wrong(shown, "Your inequality points the other way: it holds exactly where the expected one fails.")
    if how == "strictness":
        return fb.wrong(shown, "Strict (>, <) and non-strict (≥, ≤) differ at the boundary, where both sides are "
                               "equal: check which one the question asks for.")
    for mv, mprobes, message in variants:
        if not _not_same(probes, mprobes) and compare_relations(mine, mv, table)[0] == SAME:
            return fb.wrong(shown, message)
    where = disagreement(mine, ref, probes, ref_probes, table)
    return fb.wrong(shown, fb.otherwise(spec.feedback, "not the expected relation" + (f": {where}" if where else "")))


_CHECKERS = {"number": _check_number, "quantity": _check_quantity, "shape": _check_shape,
             "choice": _check_choice, "free_text": _check_free_text, "expression": _check_expression,
             "relation": _check_relation}
