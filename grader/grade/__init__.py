"""Grading learner submissions against the exercise bank.

One module per stage: :mod:`.submissions` (read answer files), :mod:`.variants`
(numbers drawn per learner), :mod:`.pool` (worker processes with limits),
:mod:`.run` (dedupe, dispatch, score), :mod:`.formats` (text, json, junit, gradescope).
"""
