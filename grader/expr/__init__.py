"""Math text -> SymPy through a whitelist parser, and symbolic equivalence.

>>> from grader.expr import SymbolTable, parse, equivalent
>>> t = SymbolTable.build(symbols={"d": {"positive": True, "integer": True}}, aliases={"d_model": "d"})
>>> parse("4d^2 + 4d", t).read_as
'4·d² + 4·d'
>>> equivalent(parse("4d(d+1)", t).expr, parse("4*d_model**2 + 4*d", t).expr, t).verdict
'equal'

- :mod:`.lexer`, :mod:`.parser`: text -> tokens -> SymPy, bounded by :class:`ParseLimits`;
  no eval/exec/sympify/parse_expr anywhere. Every failure is an :class:`ExprError` whose
  ``location.column`` points into the text.
- :mod:`.symbols`: :class:`SymbolTable` (symbols with assumptions, aliases, definitions).
- :mod:`.equiv`: :func:`equivalent` (canonical rational form, then seeded exact evaluation,
  then a time-limited SymPy simplify; "undecided" when that cannot settle it).
- :mod:`.pretty`: ``read_as`` renderings.
"""
from .equiv import Equivalence, equivalent
from .limits import ExprError, ParseLimits
from .parser import Parsed, parse
from .symbols import SymbolTable

__all__ = ["SymbolTable", "parse", "Parsed", "ParseLimits", "equivalent", "Equivalence", "ExprError"]
