"""`grader db`, `grader users`, the schema check of `grader serve`, and a light `grader --help`."""
from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import sys

import pytest
from sqlalchemy import insert, select

from serve_helpers import free_port

PG_BINS = sorted({os.path.dirname(p) for p in glob.glob("/usr/lib/postgresql/*/bin/pg_dump")})[-1:]


def grader(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def test_help_imports_no_server_library():
    code = ("import sys\nfrom grader.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'fastapi', 'starlette', 'uvicorn', 'sqlalchemy',"
            " 'alembic', 'pydantic', 'psycopg', 'prometheus_client', 'torch', 'sympy'})\nprint('HEAVY', heavy)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "serve" in r.stdout and "HEAVY []" in r.stdout, r.stdout + r.stderr


def test_schema_behind_is_refused_until_upgraded(database, tmp_path, monkeypatch):
    from grader.db import Database
    from grader.db.models import User, now
    monkeypatch.setenv("PATH", os.pathsep.join([*PG_BINS, os.environ.get("PATH", "")]))    # pg_dump: the backup first
    db = Database(database)
    head = db.head()
    assert db.upgrade("0001") == (None, "0001")
    with db.write() as conn:      # data made by the older schema survives the upgrade
        conn.execute(insert(User).values(login="old", name="Old", email="", role="learner", created_at=now()))
    db.dispose()
    r = grader("serve", "--database", database, "--port", str(free_port()), cwd=tmp_path, timeout=60)
    assert r.returncode == 2
    assert f"schema revision 0001, behind this grader's {head}" in r.stderr and "grader db upgrade" in r.stderr
    r = grader("db", "current", "--database", database)
    assert r.returncode == 1 and "behind" in r.stdout
    r = grader("db", "upgrade", "--database", database, "--backup-dir", str(tmp_path))
    assert r.returncode == 0 and f"upgraded from 0001 to {head}" in r.stdout, r.stdout + r.stderr
    assert "backed up to" in r.stdout, r.stdout
    assert grader("db", "current", "--database", database).returncode == 0
    db = Database(database)
    with db.read() as conn:
        assert conn.execute(select(User.login)).scalars().all() == ["old"]
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from grader.db.models import Base
    with db.reader.connect() as conn:       # the migrations make exactly the models' tables
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    db.dispose()


def test_a_database_that_is_not_graders_is_refused(tmp_path):
    import sqlite3
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as c:
        c.execute("create table t (x int)")
    r = grader("users", "add-instructor", "prof", "--database", str(path))
    assert r.returncode == 2 and "has tables but no grader schema" in r.stderr


def test_users_tokens_are_shown_once_and_stored_as_hashes(tmp_path):
    db = str(tmp_path / "g.db")
    r = grader("users", "add-instructor", "prof", "--name", "Pat Prof", "--database", db)
    assert r.returncode == 0, r.stderr
    token = r.stdout.split("token ")[1].split()[0]
    assert token.startswith("grd_") and len(token) == 47
    data = b"".join(p.read_bytes() for p in tmp_path.glob("g.db*"))
    assert token.encode() not in data
    assert hashlib.sha256(token.encode()).hexdigest().encode() in data
    assert grader("users", "add-instructor", "prof", "--database", db).returncode == 2      # exists
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,name,email\nann,Ann A,ann@example.org\nben,Ben B,ben@example.org\n")
    r = grader("users", "import", str(roster), "--database", db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "learner,name,email,token" and len(lines) == 3
    assert lines[1].startswith("ann,Ann A,ann@example.org,grd_")
    again = grader("users", "import", str(roster), "--database", db)
    assert again.stdout.strip() == "learner,name,email,token" and "2 already there" in again.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("learner,name\ncat,Cat\nnot an id!,X\ncat,Again\n")
    r = grader("users", "import", str(bad), "--database", db)
    assert r.returncode == 2 and "bad.csv:3" in r.stderr and "bad.csv:4" in r.stderr and "listed twice" in r.stderr
    assert "cat" not in grader("users", "list", "--database", db).stdout       # nothing of a bad roster
    r = grader("users", "revoke", "ann", "--database", db)
    assert r.returncode == 0 and "1 token(s)" in r.stdout
    listing = grader("users", "list", "--database", db).stdout
    assert "ann" in listing and "tokens: none" in listing and "Pat Prof" in listing
    assert grader("users", "revoke", "nobody", "--database", db).returncode == 2


@pytest.mark.parametrize("value, url", [("x.db", "sqlite:///x.db"),
                                        ("postgresql://u:p@h/db", "postgresql+psycopg://u:p@h/db")])
def test_database_urls(value, url):
    from grader.db import database_url
    assert database_url(value) == url


@pytest.mark.parametrize("make,says", [
    (lambda p: p.write_text("short\n"), "holds 5 characters; at least 32 are needed"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b"\xff" * 40), "cannot read the secret file"),
])
def test_a_secret_file_that_cannot_serve_is_refused_in_one_line_before_anything_starts(make, says, tmp_path):
    secret = tmp_path / "my.secret"
    make(secret)
    r = grader("serve", "--database", str(tmp_path / "g.db"), "--port", str(free_port()), "--secret-file", str(secret),
               cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and says in r.stderr and "--secret-file" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "g.db").exists()            # refused before the database is made


def test_the_secret_file_is_made_once_for_its_owner_alone_and_read_after(tmp_path):
    from grader.serve.secret import load_or_make
    path = tmp_path / "grader.secret"
    first = load_or_make(path)
    assert len(first) == 64 and int(first, 16) >= 0     # 256 random bits, as hex
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_make(path) == first                  # read, not made again
    path.write_text("a secret an operator chose, long enough to sign with\n")
    assert load_or_make(path) == b"a secret an operator chose, long enough to sign with"
