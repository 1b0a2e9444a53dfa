"""Options of the test suite: ``--fuzz-seconds`` bounds the fuzzing (tests/test_fuzz.py)."""
import os

import pytest

DEFAULT_FUZZ_SECONDS = 12.0     # per fuzz target: nine targets, about two minutes in all


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
