"""Property: a random polynomial in d, h, n, written as text in several styles (** or ^,
explicit or implicit multiplication, ·, ×, unicode superscripts), parses back to itself."""
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.expr import SymbolTable, equivalent, parse

POS_INT = {"positive": True, "integer": True}
TABLE = SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT})
SYMS = [sympy.Symbol(s, positive=True, integer=True) for s in "dhn"]
SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

monomials = st.dictionaries(
    st.tuples(*[st.integers(0, 3)] * 3),
    st.integers(-50, 50).filter(bool),
    min_size=1, max_size=5)


def power(name, k, style):
    if k == 1:
        return name
    return {"**": f"{name}**{k}", "^": f"{name}^{k}", "sup": name + str(k).translate(SUP)}[style]


def write(terms, style, mul, pow_style):
    """The polynomial as text; ``mul`` joins factors: "*", "·", " × ", "" (implicit), " "."""
    out = []
    for exps, coeff in sorted(terms.items()):
        factors = [power(s, k, pow_style) for s, k in zip("dhn", exps) if k]
        c = abs(coeff)
        lead = [str(c)] if c != 1 or not factors else []
        # implicit with ^: "3d^2h" reads as 3·d²·h, the exponent stops at its number
        body = mul.join(lead + factors)
        sign = "-" if coeff < 0 else "+"
        out.append((sign, body))
    text = ("-" if out[0][0] == "-" else "") + out[0][1]
    for sign, body in out[1:]:
        text += f" {sign} {body}" if style == "spaced" else f"{sign}{body}"
    return text


def as_sympy(terms):
    return sympy.Add(*[c * sympy.Mul(*[s**k for s, k in zip(SYMS, exps)]) for exps, c in terms.items()])


@settings(max_examples=60, deadline=None)
@given(terms=monomials, style=st.sampled_from(["spaced", "tight"]),
       mul=st.sampled_from(["*", "·", " × ", "", " ", "⋅"]), pow_style=st.sampled_from(["**", "^", "sup"]))
def test_written_polynomials_parse_back(terms, style, mul, pow_style):
    if mul == "" and pow_style == "**":
        pow_style = "^"
    text = write(terms, style, mul, pow_style)
    expected = as_sympy(terms)
    got = parse(text, TABLE).expr
    # the parser builds SymPy's canonical expanded form itself: equal and same hash
    assert got == sympy.expand(expected), (text, got, expected)
    assert hash(got) == hash(sympy.expand(expected))
    assert equivalent(got, expected, TABLE).verdict == "equal"


@settings(max_examples=30, deadline=None)
@given(terms=monomials)
def test_read_as_parses_back(terms):
    # read_as is itself readable: parsing it gives the same expression
    expr = parse(write(terms, "spaced", "*", "**"), TABLE)
    assert parse(expr.read_as, TABLE).expr == expr.expr


# -- read_as of arbitrary expressions --------------------------------------------------------
atoms = st.sampled_from(["d", "h", "n", "2", "3", "12", "0.5", "dh", "nd"])


def _combine(children):
    return st.one_of(
        st.tuples(children, st.sampled_from([" + ", " - ", "*", "/", "·", " ", "^"]), children).map(
            lambda t: f"({t[0]}){t[1]}({t[2]})" if t[1] == "^" else f"{t[0]}{t[1]}({t[2]})"
            if t[1] == " " else f"{t[0]}{t[1]}{t[2]}"),
        children.map(lambda c: f"-({c})"),
        children.map(lambda c: f"({c})²"),
        children.map(lambda c: f"sqrt({c})"),
        children.map(lambda c: f"[{c}]"),
    )


texts = st.recursive(atoms, _combine, max_leaves=6)


@settings(max_examples=80, deadline=None)
@given(text=texts)
def test_read_as_of_any_expression_parses_back(text):
    from grader.expr import ExprError
    try:
        first = parse(text, TABLE)
    except ExprError:
        return                           # e.g. a symbol in an exponent: refused, nothing to render
    again = parse(first.read_as, TABLE)
    assert again.expr == first.expr, (text, first.read_as)
    assert again.read_as == first.read_as


@settings(max_examples=60, deadline=None)
@given(p=monomials, q=monomials, same=st.booleans())
def test_verdicts_agree_with_expansion(p, q, same):
    """equal exactly when the expanded difference is 0 (SymPy's expand as the independent
    oracle); a "different" verdict carries a point where the two values differ."""
    a = as_sympy(p)
    b = sympy.factor(a) * 1 if same else as_sympy(q)
    r = equivalent(a, b, TABLE)
    oracle = sympy.expand(a - b) == 0
    assert (r.verdict == "equal") == oracle
    if not oracle:
        assert r.verdict == "different"
        cx = r.counterexample
        assert a.xreplace(cx) != b.xreplace(cx)
