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



@pytest.fixture(scope="session")
def lti_browser(browser):
    """The session's one Chromium (tests/conftest.py): tests/web's tests share it."""
    return browser


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
def lti_page(new_page):
    """A page in a fresh browser context (no cookies) that fails on a dialog or a page error
    (tests/conftest.py's ``new_page``)."""
    return new_page
