"""grader: check the math claims of transformer course texts, and grade learners.

The package is a pure core (load spec -> check -> report; parse answer ->
compare -> feedback) with two thin shells over it: the ``grader`` command
(:mod:`grader.cli`) and the pytest plugin (:mod:`grader.pytest_plugin`).
Nothing here imports torch at import time.
"""

__version__ = "0.1.0"
