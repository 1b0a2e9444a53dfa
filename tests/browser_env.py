"""Debian's Chromium driven by Playwright, for every browser test (tests/web, tests/lti): one
Playwright and one browser per test process (the ``browser`` fixture of tests/conftest.py): a
second ``sync_playwright()`` while one runs fails ("inside the asyncio loop").

Playwright cannot download its own browser here: the tests launch the system's
``/usr/bin/chromium`` (``GRADER_CHROMIUM`` to use another). Without Playwright or Chromium the
tests are skipped with the reason; with ``GRADER_TEST_BROWSER=require`` (CI) they fail."""
from __future__ import annotations

import os
import shutil

REQUIRE = os.environ.get("GRADER_TEST_BROWSER", "").lower() == "require"
CHROMIUM = os.environ.get("GRADER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]


def unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    return None
