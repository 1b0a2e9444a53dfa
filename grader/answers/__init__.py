"""grader.answers — turn one learner answer into a value, compare it, say what went wrong.

API (stable)::

    from grader.answers import AnswerSpec, Outcome, Mistake, check_answer

    spec = AnswerSpec(kind="number" | "quantity" | "expression" | "shape" | "relation" | "choice" | "free_text"
                           | "interval",
                      reference=...,          # 1048576, "16 MiB", "4*d**2 + 4*d", [128, 64], "n > 2*d", "A"
                      tolerance=None,         # or {"rel": 1e-3}, {"abs": 0.5}, 1e-3 (rel), "0.1%", "0.5 abs"
                      sig_figs=None,          # fewest significant figures a rounded answer may state
                      unit=None,              # quantity: the reference's unit, e.g. "byte"
                      choices=None,           # choice: {"A": "text", ...} or (("A", "text"), ...)
                      mistakes=(Mistake(value, message, credit=0.0), ...),
                      feedback=None,          # the author's text for a wrong answer
                      table=None,             # expression/relation: a grader.expr.SymbolTable
                      measures=None,          # what it counts: flops, bytes, params, count, dim, shape
                      derived=(Mistake(...), ...))  # mistakes derived from the spec (grader.answers.derive)
    outcome = check_answer(spec, raw)         # raw: str | int | float | list (as YAML gives it)
    outcome.status    # "correct" | "wrong" | "invalid" | "undecided" | "needs_person"
    outcome.correct   # True | False | None (a person decides: undecided, needs_person)
    outcome.credit    # 0..1 of the points (a Mistake's credit gives partial credit)
    outcome.read_as   # the answer as read: "4·d² + 4·d", "16.8 MB = 16,800,000 bytes", "(128, 64)"
    outcome.feedback  # "correct", "correct (rounded to 3 significant figures; exactly ...)",
                      # the most specific message for a wrong answer, or "invalid answer: <why>"

``AnswerSpec``, ``Mistake`` and ``Outcome`` are frozen, hashable and picklable (lists become
tuples). ``check_answer`` is pure and never raises: a hostile or unreadable answer is
``invalid`` (0 credit); a reference that cannot be read, or an internal error, is
``undecided`` with the reason. ``prepare(spec)`` reads the reference and the mistakes (cached
per process) and raises :class:`grader.errors.SpecError` for a bad reference: call it when
loading a bank.

Forms read (see each stage's docstring):

- numbers (:mod:`.numbers`): 1048576, 1,048,576, 1 048 576, 1_048_576, 1.05e6, 1.05×10^6,
  1.05·10⁶, 34.4B, 2 billion, 16.8k (k/K 10³, M 10⁶, B/bn/G 10⁹, T 10¹², decimal), 2^20,
  4*512^2, 1024/16 (through grader.expr). Exact integers are compared exactly.
- precision (:mod:`.compare`): an answer rounded at the precision it states is right when it
  states at least ``sig_figs`` figures (default: exact for an integer reference of a number
  problem, 3 for quantities and non-integers); "17 MB" for 16,777,216 bytes is too coarse.
- quantities (:mod:`.units`, pint): 16777216 bytes, 16 MiB, 16.777216 MB, 2^24 B; KB/MB/GB
  are 10³ᵏ bytes, KiB/MiB/GiB 2¹⁰ᵏ.
- expressions and relations (:mod:`.symbolic`, grader.expr): 4d², 4*d**2, d^2*4, 4d(d+1),
  4*d_model^2; n > 2d, 2d < n, d < n/2.
- shapes (:mod:`.shapes`): (128, 64), 128×64, 128x64, [128,64], 128 by 64, YAML [128, 64].
- choices (:mod:`.choices`): C, c, (C), C), or the option's text.
- intervals (:mod:`.kinds.interval`): [0, 1], (0, 1], ]0, 1[, 0 to 1, 0 <= x < 1, [0, ∞), YAML [0, 1].
- free text: recorded, ``needs_person``.

Each kind is one module of :mod:`.kinds` (its bank fields, screening, parser, checker,
verification of the reference and feedback); :data:`KINDS` is read from that registry.

Mistakes, most specific first: the author's (``mistakes``, with their partial credit); then
those derived from the spec (``derived``, made by :mod:`.derive` from the problem's formula when
the bank is prepared: a named part or a term missing, biases added or counted twice, W^O
forgotten, one projection of four, multiply-adds, d where d_k belongs and the other way, a
factor missing); then the generic ones (:mod:`.mistakes`), only those that fit what the answer
``measures`` (multiply-adds for FLOPs; elements, float64, bits for bytes; MB/MiB for a
quantity given in MB or MiB; none for a dimension), transposed shapes, missing or extra axes,
relations reversed or strict against non-strict.
Hostile input (:mod:`.guard`): sizes, depth, magnitude and characters are bounded first.
"""
from __future__ import annotations

from .check import check_answer, prepare
from .kinds import ANSWER_KINDS as KINDS
from .model import STATUSES, AnswerSpec, Mistake, Outcome, Tolerance

__all__ = ["AnswerSpec", "Outcome", "Mistake", "Tolerance", "check_answer", "prepare", "KINDS", "STATUSES"]
