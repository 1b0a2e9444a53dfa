"""Fixtures of the service's tests: a PostgreSQL cluster for the session, a fresh database of
each backend.

Without PostgreSQL the PostgreSQL tests are skipped with the reason; with
``GRADER_TEST_POSTGRES=require`` (CI) they fail instead.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess

import pytest

from serve_helpers import REQUIRE_PG, Postgres, require_postgres


@pytest.fixture(scope="session")
def postgres():
    require_postgres()
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    pg = Postgres(os.path.dirname(bins[-1]) if bins else os.path.dirname(shutil.which("initdb")))
    try:
        pg.start()
    except subprocess.CalledProcessError as e:
        pg.stop()
        why = f"PostgreSQL could not start: {e.stderr or e.stdout}"
        if REQUIRE_PG:
            pytest.fail(why)
        pytest.skip(why)
    yield pg
    pg.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """A fresh database URL of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'grader.db'}"
    return request.getfixturevalue("postgres").new_database()
