"""Grading a code exercise: the learner's functions run in the sandbox, the exercise's tests in
a fork of a warm trusted runner, only plain data between them.

- :mod:`grader.code.grade`: ``grade_code`` and ``code_sandbox``, what the grading stage calls;
- :mod:`grader.code.runner`: the trusted runner (``python -m grader.code.runner``), one fork per job;
- :mod:`grader.code.solution_proxy`: the learner's file as a stand-in module whose calls go to
  the sandboxed :mod:`grader.code.solution_server`;
- :mod:`grader.code.wire`: the plain-data frames that cross between them.
"""
