"""Grading learner submissions against the exercise bank.

One module per stage: :mod:`.submissions` (read answer files), :mod:`.plan` (the grading
policy: one answer, or a class deduped into tasks), :mod:`.check` (bank problem -> answer spec;
the handler the workers run), :mod:`.executors`, :mod:`.pool`, :mod:`.processes` (worker
processes with limits), :mod:`.run` (a class: plan, check, score), :mod:`.results` (the
results and their JSON), :mod:`.reading` (how an answer is read), :mod:`.formats` (text,
json, junit, gradescope). The variants (numbers drawn per learner) are the bank's:
:mod:`grader.bank.variants`. The public calls are :mod:`grader.api`'s.
"""
