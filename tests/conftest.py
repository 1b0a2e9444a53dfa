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

# importlib_metadata (the backport; dask needs it) puts its own distribution finder on
# sys.meta_path the first time it is imported, and deletes the standard library's. Imported
# first inside an in-process pytester run (tests/test_plugin.py), its finder went with the run's
# sys.meta_path, which pytester puts back, and the standard one stayed deleted: no installed
# distribution could be found any more (pluggy's version, the pytest11 entry points). Imported
# here, before any such run, its finder is part of the snapshot that pytester restores.
try:
    import importlib_metadata  # noqa: F401
except ImportError:      # not installed: nothing removes the standard finder
    pass


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


@pytest.fixture(scope="session")
def browser():
    """Chromium for the browser tests (tests/web, tests/lti): one for the whole session."""
    from browser_env import ARGS, CHROMIUM, REQUIRE, unavailable
    why = unavailable()
    if why:
        if REQUIRE:
            pytest.fail(f"GRADER_TEST_BROWSER=require, but {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def new_page(browser):
    """A page in a fresh context that fails the test on any dialog (alert, confirm) or
    uncaught page error."""
    contexts, events = [], []

    def make():
        ctx = browser.new_context(viewport={"width": 1200, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()
        page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: events.append(f"page error: {e}"))
        page.set_default_timeout(20_000)
        return page
    yield make
    for ctx in contexts:
        ctx.close()
    assert not events, f"script ran or failed in the page: {events}"
