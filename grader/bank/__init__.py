"""The exercise bank: every problem of a subject, read from ``exercises/**/*.yaml``.

A bank file names its subject and lists problems::

    subject: 17-08
    problems:
      - id: 17-08/example-2.params
        source: {document: 17-08, section: Worked Examples / Example 2}
        prompt: Parameters of multi-head attention for d_model = 512, h = 8, no biases?
        kind: number            # one of grader.answers.kinds: number|quantity|expression|shape|...|code
        points: 2
        reference: 1048576
        derive: {formula: params_nobias, at: {d: 512, h: 8}}   # checked with grader.claims.evaluate
        measure: {quantity: params_nobias, at: {d: 512, h: 8}} # checked on the real mha
        mistakes:
          - {answer: 786432, feedback: "That is W^Q, W^K and W^V only: add W^O."}

A problem's reference is *verified* (:func:`verify_reference`) against the spec's
formulas and, where it names a quantity, against the real mha: a wrong reference
is a failing check, never a silently wrong grade.

A problem with ``variant: {seed_from: learner, choose: {d: [...], h: [...]}}`` draws
its numbers from the learner id; its reference for each draw follows from its
``derive`` formula (see :mod:`grader.bank.variants`).

Nothing here evaluates text: expressions go through :func:`grader.expr.parse`.
"""
from .load import bank_files, load_bank
from .model import KINDS
from .model import Bank, BankMistake, Derive, Measure, Problem, Variant, Verification, as_fraction, with_reference
from .verify import verify_reference

__all__ = ["KINDS", "Bank", "BankMistake", "Derive", "Measure", "Problem", "Variant", "Verification",
           "as_fraction", "bank_files", "load_bank", "verify_reference", "with_reference"]
