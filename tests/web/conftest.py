"""Fixtures of the browser tests: a live `grader serve` (uvicorn on 127.0.0.1, a temporary
SQLite database), accounts, and Debian's Chromium driven by Playwright.

The ``browser`` (one Chromium per test process) is tests/conftest.py's (tests/browser_env.py).
Screenshots go to ``out/web/`` (``GRADER_SCREENSHOTS`` to change it)."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))

from serve_helpers import LiveServer, make_bank, users  # noqa: E402

from browser_env import ARGS, CHROMIUM, REQUIRE  # noqa: E402,F401 (the browser fixture: tests/conftest.py)
SHOTS = Path(os.environ.get("GRADER_SCREENSHOTS") or ROOT / "out" / "web")


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    """A live server with an instructor, two learners (one with a hostile name) and the
    bundled bank plus a small code exercise."""
    tmp = tmp_path_factory.mktemp("web")
    db = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(db, prof="instructor", alice="learner", bob="learner")
    from grader.db import Database
    from sqlalchemy import update
    from grader.db.models import User
    d = Database(db)
    with d.write() as conn:      # a hostile display name, as a roster could carry it
        conn.execute(update(User).where(User.login == "bob").values(
            name='<script>alert("name")</script><img src=x onerror=alert(1)>'))
    d.dispose()
    server = LiveServer(db, make_bank(tmp), tmp, "--workers", "1", "--rate", "0").start()
    server.tokens = tokens
    yield server
    server.stop()


@pytest.fixture
def shot():
    SHOTS.mkdir(parents=True, exist_ok=True)

    def save(page, name: str) -> Path:
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    def viewport(page, name: str, width: int, height: int) -> Path:
        """A clipped shot of what the viewport shows from the top left (compact, for the docs)."""
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": width, "height": height})
        return path
    save.viewport = viewport
    return save
