"""``grader draft`` and ``grader check-text``: from a course text to a checked spec skeleton, and
the text's own arithmetic checked with no spec (issue #28).

Stages, one module each: :mod:`.sources` (formats -> plain text that remembers its file's
characters, and quotes from them), :mod:`.segment` (sections and statements), :mod:`.mathtext`
(math as texts write it -> the whitelist parser's words), :mod:`.arith` (chains recomputed),
:mod:`.rules` (the kinds of statements), :mod:`.analyse` (one text, in order), :mod:`.spec` (the
YAML), :mod:`.engine` (the public calls), :mod:`.report` (text, json, junit). Rules only: no
network, no model; formulas go through :func:`grader.expr.parse`, figures through
:func:`grader.claims.figures.parse_figure`; nothing is evaluated otherwise.
"""
from .engine import check_text, draft_string, draft_text
from .model import Draft, Problem, Proposed, Statement, TextCheck

__all__ = ["draft_text", "check_text", "draft_string", "Draft", "Problem", "Proposed", "Statement", "TextCheck"]
