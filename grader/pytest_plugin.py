"""The grader's pytest plugin (the ``pytest11`` entry point): two plugins, loaded together.

- :mod:`grader.pytest_bank`: the exercise bank's YAML files as test items, one per problem,
  each verifying the problem's reference answer;
- :mod:`grader.pytest_code`: the code exercises' ``solution`` fixture (a learner's file served
  from the sandbox, or imported here with ``--unsandboxed``), ``--solution``, and
  ``--grader-report`` (the results pipe :mod:`grader.code` reads).

Import-light: neither imports torch, SymPy or mha when pytest loads it.
"""
pytest_plugins = ["grader.pytest_bank", "grader.pytest_code"]
