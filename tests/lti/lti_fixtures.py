"""Fixtures of the LTI launch tests (imported by tests/lti/test_lti_launch.py): a live `grader serve` (uvicorn, its own process, a
temporary SQLite database, a bank with a course whose windows are around now), an independent
platform (tests/lti/platform.py, on lti1p3platform) registered with it, and Debian's Chromium
(Playwright); the browser reaches the platform as localhost and the tool as 127.0.0.1: two sites."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (str(ROOT / "tests" / "serve"), str(ROOT / "tests" / "web"), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from serve_helpers import LiveServer, make_bank  # noqa: E402
from platform_lti import COURSE  # noqa: E402



REQUIRE = os.environ.get("GRADER_TEST_BROWSER", "").lower() == "require"
CHROMIUM = os.environ.get("GRADER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    return None


@pytest.fixture(scope="session")
def lti_browser():
    why = _unavailable()
    if why:
        if REQUIRE:
            pytest.fail(f"GRADER_TEST_BROWSER=require, but {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def lti_live(tmp_path_factory):
    """The tool (``live.url``, ``live.db``) and the platform (``live.platform``), registered."""
    from grader.db import Database
    from grader.serve.lti import registry
    from platform_lti import Platform
    tmp = tmp_path_factory.mktemp("lti")
    bank = make_bank(tmp)
    (bank / "assessments.yaml").write_text(COURSE)
    url = f"sqlite:///{tmp / 'grader.db'}"
    db = Database(url)
    db.ensure_schema()
    server = LiveServer(url, bank, tmp, "--workers", "1", "--rate", "0")
    platform = Platform(f"http://127.0.0.1:{server.port}")
    with db.write() as conn:
        registry.add_platform(conn, issuer=platform.issuer, client_id=platform.client_id,
                              login_url=platform.browser_url + "/authorize", token_url=platform.local + "/token",
                              keyset_url=platform.local + "/jwks", deployments=[platform.deployment], name="test LMS")
    server.start()
    platform.start()
    server.db, server.platform = db, platform
    yield server
    platform.stop()
    server.stop()
    db.dispose()


@pytest.fixture
def lti_page(lti_browser):
    """A page in a fresh browser context (no cookies) that fails on a dialog or a page error."""
    contexts, events = [], []

    def make():
        ctx = lti_browser.new_context(viewport={"width": 1200, "height": 900})
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
