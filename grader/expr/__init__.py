"""Math text -> SymPy through a whitelist parser, and symbolic equivalence.

>>> from grader.expr import SymbolTable, parse, equivalent
>>> t = SymbolTable.build(symbols={"d": {"positive": True, "integer": True}}, aliases={"d_model": "d"})
>>> parse("4d^2 + 4d", t).read_as
'4·d² + 4·d'
>>> equivalent(parse("4d(d+1)", t).expr, parse("4*d_model**2 + 4*d", t).expr, t).verdict
'equal'

- :mod:`.lexer`, :mod:`.parser`: text -> tokens -> SymPy, bounded by :class:`ParseLimits`
  (length, tokens, nesting, digits, estimated size of numbers, degree and terms, checked before
  anything is computed); no eval/exec/sympify/parse_expr anywhere. Every failure is an
  :class:`ExprError` whose ``location.column`` points into the text. Polynomials come back
  expanded, in SymPy's canonical form; ``read_as`` shows the parse tree (``4·d·(d + 1)``).
- :mod:`.symbols`: :class:`SymbolTable` (symbols with assumptions, aliases, definitions,
  allowed functions; "O" and "Theta" on request).
- :mod:`.equiv`: :func:`equivalent` — exact rational-function comparison on sparse
  polynomials (:mod:`.poly`), then seeded evaluation at points meeting the assumptions and
  constraints, then SymPy's simplify under a SIGALRM time limit (main thread only; elsewhere
  that last step is skipped and the verdict is "undecided", never a guess).
- :mod:`.pretty`: renderings of SymPy objects for messages.

Everything here is pure: values in and out are frozen and picklable (they cross into the
grading workers), and results are cached (parse on (text, table, relations, limits);
equivalence on its arguments).
"""
from .equiv import equivalent
from .limits import ExprError, ParseLimits
from .nodes import Parsed
from .parser import parse
from .symbols import SymbolTable
from .verdict import Equivalence

__all__ = ["SymbolTable", "parse", "Parsed", "ParseLimits", "equivalent", "Equivalence", "ExprError"]
