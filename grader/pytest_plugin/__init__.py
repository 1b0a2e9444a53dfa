"""The grader's pytest plugin (the ``pytest11`` entry point): two plugins, loaded together.

- :mod:`grader.pytest_plugin.bank`: the exercise bank's YAML files as test items, one per problem,
  each verifying the problem's reference answer;
- :mod:`grader.pytest_plugin.code`: the code exercises' ``solution`` fixture (a learner's file served
  from the sandbox, or imported here with ``--unsandboxed``), ``--solution``, and
  ``--grader-report`` (the results pipe :mod:`grader.code.grade` reads).

Import-light: neither imports torch, SymPy or mha when pytest loads it.
"""
pytest_plugins = ["grader.pytest_plugin.bank", "grader.pytest_plugin.code"]
