"""Hostile text: every item is refused with an ExprError that has a message and a column,
and nothing is executed (a sentinel file that the code would create never appears)."""
import pytest
import sympy

from grader.expr import ExprError, SymbolTable, equivalent, parse

POS_INT = {"positive": True, "integer": True}


@pytest.fixture(scope="module")
def table():
    return SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT},
                             aliases={"d_model": "d"}, definitions={"d_k": "d/h"})


def corpus(sentinel: str):
    return [
        f"__import__('os').system('touch {sentinel}')",
        f"__import__(\"os\").system(\"touch {sentinel}\")",
        f"open('{sentinel}', 'w')",
        f"exec(\"open('{sentinel}','w')\")",
        f"eval('1')",
        "().__class__",
        "().__class__.__bases__[0].__subclasses__()",
        "d.__class__",
        "x.__class__",
        "d._sympy_",
        "lambda: 1",
        "lambda x: x",
        "import os",
        "[x for x in ()]",
        "d if d else h",
        "print(d)",
        "getattr(d, 'x')",
        "Symbol('x')",
        "Integer(2)**Integer(10)",
        "9^999^999",
        "((9^999)^999)^999",
        "10^10^10",
        "2^(2^100)",
        "2**2**2**2**2",
        "d^100000",
        "(d+h+n)^5000",
        "(d^100)^100",
        "1e999999",
        "9" * 500,
        "(" * 10_000 + "d" + ")" * 10_000,
        "(" * 41 + "d" + ")" * 41,
        "-" * 60 + "d",
        "d" * 1_000_000,
        "d+" * 300 + "d",
        "NaN", "nan", "inf", "-inf", "Infinity", "oo", "zoo", "1/0", "0^-1", "log(0)", "d/(h-h)",
        "sqrt(-1)",
        "exp(10^9)",
        "d\x00", "\x00", "d\x07", "d\x1b[31m", "d\x7f",
        "d\u200b+1", "d\u202e", "\ufeffd",
        "а", "dа", "ｄ", "４d", "d²\u0301",
        "'d'", '"d"', "`d`", "d;h", "d:h", "{d}", "d@h", "d#", "$d", "d!", "d&h", "d|h", "d%h",
        "d ≠ h",
        "d_model_", "__d", "d__k", "_",
    ]


def test_every_hostile_item_is_refused_with_a_column(table, tmp_path):
    sentinel = tmp_path / "pwned"
    for text in corpus(str(sentinel)):
        with pytest.raises(ExprError) as e:
            parse(text, table, relations=True)
        err = e.value
        assert err.message, text
        assert err.location is not None and isinstance(err.location.column, int), text
        assert 1 <= err.location.column <= min(len(text), 1001) + 1, (text[:40], err.location)
    assert not sentinel.exists()


@pytest.mark.parametrize("text,words", [
    ("__import__('os')", "cannot start with '_'"),
    ("().__class__", "no attribute access"),
    ("lambda: 1", "Python"),
    ("((9^999)^999)^999", "too large"),
    ("10^10^10", "exponent too large"),
    ("2^(2^100)", "exponent too large"),
    ("(" * 10_000 + "d" + ")" * 10_000, "too long"),
    ("(" * 41 + "d" + ")" * 41, "nested too deeply"),
    ("NaN", "not a finite number"),
    ("inf", "not a finite number"),
    ("1/0", "division by zero"),
    ("d\x00", "NUL"),
    ("d\x07", "control character"),
    ("dа", "CYRILLIC"),
    ("４d", "write the digit 4"),
    ("'d'", "quotes"),
    ("d ≠ h", "not supported"),
])
def test_messages(table, text, words):
    with pytest.raises(ExprError) as e:
        parse(text, table, relations=True)
    assert words in e.value.message


def test_nesting_refused_at_the_first_level_too_deep(table):
    with pytest.raises(ExprError) as e:
        parse("(" * 41 + "d" + ")" * 41, table)
    assert e.value.location.column == 41


def test_within_the_bounds_is_accepted(table):
    # 9^999 has floor(999·log10 9) + 1 = floor(953.28...) + 1 = 954 digits: under 10,000
    assert parse("9^999", table).expr == sympy.Integer(9) ** 999
    assert parse("(" * 40 + "d" + ")" * 40, table).expr == table.symbol("d")
    assert parse("(d+1)^200", table).expr == sympy.expand((table.symbol("d") + 1) ** 200)
    assert parse("1^(10^100)", table).expr == 1


def test_bounded_answers_still_compare_quickly(table):
    # the largest accepted polynomial powers expand in the fast path
    a, b = parse("(d+1)^200", table).expr, parse("(d+1)^199 (d+1)", table).expr
    assert equivalent(a, b, table).verdict == "equal"


def test_no_text_reaches_eval_exec_or_sympify(table, monkeypatch, tmp_path):
    """While parsing (good and hostile text alike), builtins.eval/exec are never called, SymPy's
    sympify never receives a string and its text parser never runs."""
    import builtins
    import sys

    import sympy.parsing.sympy_parser as sympy_parser

    sympify_module = sys.modules["sympy.core.sympify"]

    calls = []

    def trap(name, real=None):
        def f(*args, **kwargs):
            if real is not None and not isinstance(args[0], (str, bytes)):
                return real(*args, **kwargs)     # Python's import machinery runs code objects
            calls.append((name, args[:1]))
            raise AssertionError(f"{name} called")
        return f

    real = sympify_module.sympify

    def sympify_guard(a, *args, **kwargs):
        if isinstance(a, str):
            calls.append(("sympify", a))
            raise AssertionError("sympify on text")
        return real(a, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", trap("eval", builtins.eval))
    monkeypatch.setattr(builtins, "exec", trap("exec", builtins.exec))
    monkeypatch.setattr(sympify_module, "sympify", sympify_guard)
    monkeypatch.setattr(sympy, "sympify", sympify_guard)
    monkeypatch.setattr(sympy_parser, "parse_expr", trap("parse_expr"))   # where sympify(str) ends
    monkeypatch.setattr(sympy_parser, "eval_expr", trap("eval_expr"))
    good = ["4d(d+1)", "8nd²+4n²d", "√d_k", "log(d h)", "max(n, 2d)", "2^20", "1.05e6", "n > 2d"]
    fresh = SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT},
                              definitions={"d_k": "d/h"})           # nothing cached yet for it
    for text in good + corpus(str(tmp_path / "x")):
        try:
            parse(text, fresh, relations=True)
        except ExprError:
            pass
    assert calls == []
    with pytest.raises(AssertionError):         # the traps are live: text through SymPy is caught
        sympy.sympify("d + 1")
    assert calls


def test_products_of_many_factors_are_bounded_by_their_real_size(table):
    # (d+1)(d+2)…(d+40) has degree 40 in one symbol: 41 terms, not 2^40
    text = "".join(f"(d+{k})" for k in range(1, 41))
    assert len(parse(text, table).expr.args) == 41
    # (d+h+n)^200 would have C(203, 3) = 1,373,701 terms: refused before expanding
    with pytest.raises(ExprError, match="too many terms"):
        parse("(d+h+n)^200", table)


def test_large_but_allowed_powers_compare_without_expanding_everything(table):
    a = parse("(d+h+n)^40", table).expr
    b = parse("(d+h+n)^39·d + (d+h+n)^39·(h+n)", table).expr
    assert equivalent(a, b, table).verdict == "equal"
    c = parse("(d+h+n)^39·d + (d+h+n)^39·(h+n) + 1", table).expr
    r = equivalent(a, c, table)
    assert r.verdict == "different" and r.counterexample


@pytest.mark.parametrize("text, column, message", [
    ("0x200", 1, "0x200 is a hexadecimal number: numbers are read in decimal here; write 512"),
    ("4*0x1F*d", 3, "0x1F is a hexadecimal number: numbers are read in decimal here; write 31"),
    ("0xd", 1, "0xd is a hexadecimal number"),            # not 0·x·d = 0 with symbols x and d
    ("0b101 + d", 1, "0b101 is a binary number: numbers are read in decimal here; write 5"),
    ("d^0o17", 3, "0o17 is an octal number: numbers are read in decimal here; write 15"),
])
def test_numbers_in_another_base_are_refused_where_they_stand(text, column, message):
    from grader.expr import ExprError, SymbolTable, parse
    table = SymbolTable.build(symbols={"d": {"positive": True}, "x": {}})
    with pytest.raises(ExprError) as e:
        parse(text, table)
    assert message in str(e.value) and e.value.location.column == column
    assert parse("0x + 2x", table).read_as == "0·x + 2·x"      # 0 times x is still a product


def test_a_hexadecimal_answer_is_invalid_with_its_decimal_value():
    from grader.answers import AnswerSpec, check_answer
    out = check_answer(AnswerSpec("number", 512), "0x200")
    assert (out.status, out.credit) == ("invalid", 0.0)
    assert "0x200 is a hexadecimal number: numbers are read in decimal here; write 512" in out.feedback
