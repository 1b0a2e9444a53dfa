"""Test-session settings shared by every test file; ``--fuzz-seconds`` bounds the fuzzing
(tests/test_fuzz.py)."""
import atexit
import os
import shutil
import tempfile

import pytest

DEFAULT_FUZZ_SECONDS = 12.0     # per fuzz target: nine targets, about two minutes in all


# The demonstrations' results (kind: demonstrate) are cached on disk; the tests use a cache of
# their own, empty at the start of the session and removed at its end (set before any test
# starts a measuring process, which inherits it). The first test that runs the bundled spec
# trains its models; the others read them.
_CACHE = tempfile.mkdtemp(prefix="grader-test-cache-")
os.environ["GRADER_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)


def pytest_addoption(parser):
    parser.addoption("--fuzz-seconds", type=float, default=None,
                     help=f"seconds each fuzz target runs (default {DEFAULT_FUZZ_SECONDS:g}, or the "
                          "GRADER_FUZZ_SECONDS environment variable; 0 replays the regression cases only)")


def pytest_configure(config):
    config.addinivalue_line("markers", "fuzz: hypothesis-driven fuzzing bounded in time (--fuzz-seconds)")


@pytest.fixture
def fuzz_seconds(request) -> float:
    value = request.config.getoption("--fuzz-seconds")
    if value is None:
        value = float(os.environ.get("GRADER_FUZZ_SECONDS", DEFAULT_FUZZ_SECONDS))
    return max(0.0, value)
