"""grader.expr.parse: every written form of the subject's formulas, read_as, the symbol table.

Expected SymPy objects are built here by hand from Symbols (never by the parser)."""
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import sympy

from grader.errors import GraderError
from grader.expr import ExprError, Parsed, ParseLimits, SymbolTable, parse

POS_INT = {"positive": True, "integer": True}
d, h, n, b = (sympy.Symbol(s, positive=True, integer=True) for s in "dhnb")


@pytest.fixture(scope="module")
def table():
    return SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT, "b": POS_INT,
                                      "n_kv": POS_INT},
                             aliases={"d_model": "d"}, definitions={"d_k": "d/h", "d_v": "d/h"})


@pytest.mark.parametrize("text", ["4d²", "4*d**2", "4·d²", "d^2*4", "4 d_model^2", "4*d_model^2",
                                  "4×d^2", "4⋅d**2", "(2d)^2", "2d·2d", "4[d]^2", " 4 d ² "])
def test_forms_of_4d2(table, text):
    assert parse(text, table).expr == 4 * d**2


@pytest.mark.parametrize("text,expected", [
    ("4d(d+1)", 4 * d * (d + 1)),
    ("4d²+4d", 4 * d**2 + 4 * d),
    ("4d^2 + 4d", 4 * d**2 + 4 * d),
    ("8nd²+4n²d", 8 * n * d**2 + 4 * n**2 * d),        # "nd" is n·d, the ² is d's alone
    ("8*n*d**2 + 4*n**2*d", 8 * n * d**2 + 4 * n**2 * d),
    ("4bhn^2", 4 * b * h * n**2),
    ("(d+1)(d-1)", (d + 1) * (d - 1)),
    ("d/h", d / h),
    ("d_k", d / h),                                     # definitions are expanded in .expr
    ("h·d_v", d),
    ("1/2d", 1 / (2 * d)),                              # juxtaposition binds tighter than /
    ("d/2h", d / (2 * h)),
    ("-d^2", -(d**2)),
    ("−d + 2", 2 - d),                                  # U+2212 minus
    ("d ÷ h", d / h),
    ("2^d", 2**d),
    ("√d_k", sympy.sqrt(d) / sympy.sqrt(h)),
    ("sqrt(d)", sympy.sqrt(d)),
    ("max(n, 2d)", sympy.Max(n, 2 * d)),
])
def test_expressions(table, text, expected):
    # polynomials come back expanded, in SymPy's own canonical form
    got = parse(text, table).expr
    assert got == sympy.expand(expected)
    assert hash(got) == hash(sympy.expand(expected))
    assert got.free_symbols == sympy.expand(expected).free_symbols


@pytest.mark.parametrize("text,value", [
    ("1,048,576", 1048576),
    ("1048576", 1048576),
    ("1.05e6", 1050000),                # 1.05 × 10^6
    ("2²⁰", 1048576),                   # 2^20 = 1,048,576
    ("2^20", 1048576),
    ("4*512^2", 1048576),               # 512² = 262,144; × 4 = 1,048,576
    ("1024/16", 64),
    ("2^3^2", 512),                     # right-associative: 2^(3^2) = 2^9
    ("-2^2", -4),                       # the sign applies after the power
    ("2^-1", sympy.Rational(1, 2)),
    ("0.5", sympy.Rational(1, 2)),      # decimals are exact rationals
    (".25", sympy.Rational(1, 4)),
    ("2.5e-1", sympy.Rational(1, 4)),
    ("√64", 8),
    ("max(1,000)", 1),                  # inside a call "," separates arguments: max(1, 0)
    ("10²·3", 300),
    ("12,345.5", sympy.Rational(24691, 2)),
])
def test_numbers(text, value):
    t = SymbolTable.build(symbols={})
    assert parse(text, t).expr == value


@pytest.mark.parametrize("text,expected", [
    ("n > 2d", sympy.StrictGreaterThan(n, 2 * d)),
    ("2d < n", sympy.StrictLessThan(2 * d, n)),
    ("n ≥ 2d", sympy.GreaterThan(n, 2 * d)),
    ("n >= 2*d", sympy.GreaterThan(n, 2 * d)),
    ("n ≤ 2d", sympy.LessThan(n, 2 * d)),
    ("n = 2d", sympy.Equality(n, 2 * d)),
])
def test_relations(table, text, expected):
    assert parse(text, table, relations=True).expr == expected


def test_chain_is_and(table):
    got = parse("0 < n < 2d", table, relations=True).expr
    assert got == sympy.And(sympy.StrictLessThan(0, n, evaluate=False), sympy.StrictLessThan(n, 2 * d))


def test_relation_refused_without_relations(table):
    with pytest.raises(ExprError) as e:
        parse("n > 2d", table)
    assert "relation" in e.value.message and e.value.location.column == 3


@pytest.mark.parametrize("text,shown", [
    ("4d^2 + 4d", "4·d² + 4·d"),
    ("4*d**2+4*d", "4·d² + 4·d"),
    ("d_k", "d_k"),
    ("d/h", "d/h"),
    ("n >= 2d", "n ≥ 2·d"),
    ("0 < n < 2d", "0 < n < 2·d"),
    ("4d(d+1)", "4·d·(d + 1)"),              # the tree as understood, not the expanded form
    ("d^2*4", "d²·4"),
    ("1/2d", "1/(2·d)"),
    ("(2d)^2", "(2·d)²"),
    ("2^-1", "2⁻¹"),
    ("2^(d+1)", "2^(d + 1)"),
    ("-(d+1)", "-(d + 1)"),
    ("d - (h - n)", "d - (h - n)"),
    ("√d_k", "√d_k"),
    ("sqrt(d+1)", "√(d + 1)"),
    ("nd²", "n·d²"),
    ("1,048,576", "1048576"),
    ("d_model", "d"),
])
def test_read_as(table, text, shown):
    relations = any(c in text for c in "<>=")
    assert parse(text, table, relations=relations).read_as == shown


def test_parsed_value(table):
    p = parse("4d^2", table)
    assert isinstance(p, Parsed) and p.text == "4d^2"
    assert parse("4d^2", table) is p                    # cached on (text, table, ...)
    assert pickle.loads(pickle.dumps(p)) == p


def test_table(table):
    assert table.symbol("d_model") == table.symbol("d") == d
    assert table.symbol("d").is_positive and table.symbol("d").is_integer
    assert table.names() == ("d", "h", "n", "b", "n_kv", "d_model", "d_k", "d_v")
    assert table.expand(sympy.Symbol("d_k") * h) == d
    assert table.definition("d_v") == d / h
    same = SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT, "b": POS_INT,
                                      "n_kv": POS_INT},
                             aliases={"d_model": "d"}, definitions={"d_k": "d/h", "d_v": "d/h"})
    assert same == table and hash(same) == hash(table)
    again = pickle.loads(pickle.dumps(table))
    assert again == table and parse("d_k", again).expr == d / h
    with pytest.raises(AttributeError):
        table.symbols = ()


@pytest.mark.parametrize("kwargs,words", [
    ({"symbols": {"d": {"positive": "yes"}}}, "unknown assumption"),
    ({"symbols": {"d": {"colour": True}}}, "unknown assumption"),
    ({"symbols": {"d": {}}, "aliases": {"d_model": "x"}}, "unknown symbol 'x'"),
    ({"symbols": {"d": {}}, "aliases": {"d": "d"}}, "already a name"),
    ({"symbols": {"_d": {}}}, "bad symbol name"),
    ({"symbols": {"d": {}}, "definitions": {"d_k": "d/q"}}, "unknown name 'q'"),
    ({"symbols": {"d": {}}, "functions": ["eval"]}, "unknown function"),
])
def test_bad_tables(kwargs, words):
    with pytest.raises(ExprError) as e:
        SymbolTable.build(**kwargs)
    assert words in e.value.message
    assert isinstance(e.value, GraderError)


def test_bad_definition_has_column():
    with pytest.raises(ExprError) as e:
        SymbolTable.build(symbols={"d": {}}, definitions={"d_k": "d/q"})
    assert e.value.location.column == 3 and "definition of d_k" in e.value.message


@pytest.mark.parametrize("text,column,words", [
    ("4d + x", 6, "unknown name 'x'"),
    ("4dmodel", 2, "did you mean d_model?"),
    ("sin(d)", 1, "unknown function 'sin'"),
    ("d +", 4, "end of the expression"),
    ("(d + 1", 1, "never closed"),
    ("d + 1)", 6, "unmatched"),
    ("[d + 1)", 7, "does not match"),
    ("12,34", 3, "groups of three"),
    ("d 2", 3, "missing operator"),
    ("", 1, "empty"),
    ("d\n+ x", 3, "unknown name 'x'"),          # column on its own line
    ("2^d^2", 2, "exponent"),
    ("sqrt d", 1, "parentheses"),
    ("max(d, )", 8, "unexpected"),
])
def test_errors_point_at_the_column(table, text, column, words):
    with pytest.raises(ExprError) as e:
        parse(text, table)
    assert words in e.value.message
    assert e.value.location.column == column


def test_line_of_error(table):
    with pytest.raises(ExprError) as e:
        parse("d\n+ x", table)
    assert e.value.location.line == 2


def test_limits_are_configurable(table):
    with pytest.raises(ExprError, match="too long"):
        parse("d+d", table, limits=ParseLimits(max_length=2))
    with pytest.raises(ExprError, match="nested too deeply"):
        parse("((d))", table, limits=ParseLimits(max_depth=1))
    assert parse("((d))", table, limits=ParseLimits(max_depth=2)).expr == d


@pytest.mark.parametrize("value", [123, None, b"4d", ["4d"]])
def test_only_text_is_parsed(table, value):
    with pytest.raises(ExprError) as e:
        parse(value, table)
    assert "expected text" in e.value.message and e.value.location.column == 1


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="0123456789dnhb_xeE +-*/^()[]<>=.,\t²·kwimport", max_size=30))
def test_the_plain_ascii_fast_path_reads_as_the_full_lexer(text):
    # the fast path answers only where it reads exactly what the character-by-character loop
    # reads; anything else (an error included) is left to the loop
    from grader.expr.lexer import fast_tokens, scan
    fast = fast_tokens(text, ParseLimits())
    try:
        full = scan(text, frozenset(), ParseLimits())
    except ExprError:
        assert fast is None
        return
    assert fast is None or fast == full
