"""pytest plugin (registered through the ``pytest11`` entry point).

Kept import-light: it is loaded by every pytest run in an environment where
grader is installed.
"""
