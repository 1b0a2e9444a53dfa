"""Helpers shared by the check kinds: substituting values, writing exact numbers."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..figures import fmt
from ..measurer import MeasureError  # noqa: F401  (raised by Context.measured)
from ..model import CheckResult, Verdict, frozen_map

if TYPE_CHECKING:
    from ..loader import CheckSite


@dataclass(frozen=True)
class Context:
    """What a check runs with: the subject, the device for real computations, the seed, and
    ``measurements``: request key -> value (or MeasureError), made by the measuring process;
    without them a measured check measures in this process (:func:`measure_here`). ``train``:
    False skips the demonstrations that train a model (check-spec --no-train)."""

    subject: Any
    device: str = "cpu"
    seed: int = 0
    measurements: Any = None
    train: bool = True

    def measured(self, request: dict[str, Any]) -> Any:
        """The value of one measurement (see grader.claims.checks.measured.request)."""
        if self.measurements is None:
            return measure_here(request)
        value = self.measurements.get(request_key(request), _MISSING)
        if value is _MISSING:
            raise MeasureError(f"no measurement for {request}")
        if isinstance(value, MeasureError):
            raise value
        return value


_MISSING = object()


def request_key(request: dict[str, Any]) -> str:
    import json
    return json.dumps(request, sort_keys=True)


def measure_here(request: dict[str, Any]) -> Any:
    """Make one measurement in this process (imports torch)."""
    from ..measure import make   # (not `from .. import measure`: that is the package's function)
    return make(request)


def substitute(expr: Any, values: Any) -> Any:
    """expr with each symbol named in ``values`` replaced by its exact value."""
    import sympy

    by_name = {s.name: s for s in expr.free_symbols}
    subs = {}
    for name, v in values.items():
        if name in by_name:
            if isinstance(v, float):
                subs[by_name[name]] = sympy.Rational(str(v))
            elif isinstance(v, Fraction):
                subs[by_name[name]] = sympy.Rational(v.numerator, v.denominator)
            else:
                subs[by_name[name]] = sympy.Integer(v)
    return expr.xreplace(subs) if subs else expr


def evaluate_exact(expr: Any, values: Any) -> Any:
    """The exact number expr takes at ``values``; ValueError naming the symbols left free."""
    out = substitute(expr, values)
    free: Any = getattr(out, "free_symbols", set())
    if free:
        raise ValueError(f"no value given for {', '.join(sorted(s.name for s in free))}")
    return out


def show_values(values: Any) -> str:
    """d=4,096, F=125,000,000,000,000, x=0.5: ints and floats alike, grouped, trailing zeros cut."""
    return ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={_plain(v)}" for k, v in values.items())


def _plain(v: Any) -> str:
    if isinstance(v, (float, Fraction)) and not isinstance(v, bool):
        import math
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return str(fmt(Fraction(str(v)) if isinstance(v, float) else v))
    return str(v)


def result(kind: str, verdict: str, summary: str, method: str = "", **details: Any) -> CheckResult:
    return CheckResult(kind, Verdict(verdict), summary, frozen_map(details), method)


def num(x: Any) -> str:
    return str(fmt(x))


def pretty(e: Any) -> str:
    """An expression as the reports write it (``^`` for powers)."""
    import sympy
    return str(sympy.sstr(e)).replace("**", "^")


def figure_result(kind: str, expr: Any, values: Any, claimed: Any, where: str = "",
                  method: str = "symbolic", check: Any = None) -> CheckResult:
    """``expr`` at ``values`` against a claimed figure: exact, or within half a unit of its
    last stated digit (the numeric and config kinds). With the ``check``, its dimension
    (grader.claims.dimensions): values of symbols with units are taken in base units, and a
    figure whose unit has another dimension is refuted, saying so; a figure with a unit checked
    against an expression whose dimension is not known (none of its symbols declares a unit) is
    compared by value, and the evidence says that its dimension was not checked."""
    from ..dimensions import mismatch, shown_unit
    from ..spec_units import scale_values
    from ..figures import to_fraction
    dim = check.get("_dim") if check is not None else None
    scaled = scale_values(values, check.get("_scale") or {}) if check is not None else values
    try:
        value = evaluate_exact(expr, scaled)
        if check is not None and check.get("_unit_factor", 1) != 1:
            import sympy
            f = check.get("_unit_factor")
            value = value * sympy.Rational(f.numerator, f.denominator)
    except ValueError as e:
        return result(kind, "error", f"cannot evaluate {pretty(expr)}: {e}")
    wrong = mismatch(claimed.dimension, dim, "the expression")
    if wrong and value.is_Rational:
        return result(kind, "refuted", f"{wrong}: {pretty(expr)}{' at ' + show_values(values) if values else ''}"
                      f"{where} = {num(to_fraction(value))}{shown_unit(dim) or _count_unit(dim)}; claimed "
                      f"{claimed.describe()}", method, expr=pretty(expr), at=dict(values), claimed=claimed.text,
                      dimension=wrong)
    if not value.is_number or not value.is_real:
        return result(kind, "error", f"{pretty(expr)} at {show_values(values)} is not a real number: {value}")
    exact = value if value.is_Rational else None
    computed = to_fraction(exact) if exact is not None else None
    ok = claimed.matches(exact) if exact is not None else abs(float(value) - float(claimed.value)) <= float(claimed.tolerance)
    shown = num(computed) if computed is not None else f"{float(value):.10g}"
    unit = (shown_unit(dim) or _count_unit(dim)) if dim else " bytes" if claimed.unit else ""
    at = f" at {show_values(values)}" if values else ""
    summary = (f"{pretty(expr)}{at}{where} = {shown}{unit}; claimed {claimed.describe()}")
    unchecked = {}
    if claimed.dimension is not None and dim is None:     # compared by value: say so (subject.units: strict refuses it)
        summary += f"; {UNCHECKED}"
        unchecked = {"dimension": UNCHECKED}
    return result(kind, "holds" if ok else "refuted", summary, method,
                  expr=pretty(expr), at=dict(values), computed=shown, claimed=claimed.text,
                  claimed_value=num(claimed.value), tolerance=num(claimed.tolerance), **unchecked)


UNCHECKED = "dimension not checked: no unit declared on the expression's symbols"


def needs_values(site: CheckSite, params: dict[str, Any], exprs: Any, why: Any) -> bool:
    """A check evaluated at ``at``: every symbol of ``exprs`` has a value there, and the values
    meet the spec's constraints."""
    at = dict(params.get("at") or {})
    return site.missing(site.free(*exprs), at, why) and site.meets_constraints(at)


def _count_unit(dim: Any) -> str:
    """' bytes', ' FLOPs', ' parameters' after a count in the evidence; '' for a plain number."""
    from ..dimensions import describe
    return f" {describe(dim)}" if dim else ""
