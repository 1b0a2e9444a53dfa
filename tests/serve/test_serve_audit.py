"""The audit log (append-only: the database refuses UPDATE and DELETE), `grader audit`, the
staff page and its JSON twin, `grader db backup` and the backup before `grader db upgrade`
(issue #26, item 12); a batch's hostile learner ids through the live service (item 10)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.exc import DBAPIError

from grader.db import Database, audit
from grader.db.models import AuditEntry, User, now

from serve_helpers import LiveServer, make_bank, users


def grader(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def lines(db: Database, **filters) -> list[dict]:
    with db.read() as conn:
        return audit.entries(conn, **filters)


# ------------------------------------------------------------------ the table

def test_the_audit_log_refuses_update_and_delete(database):
    from grader.serve.accounts import add_user, revoke
    db = Database(database)
    db.ensure_schema()
    add_user(db, "prof", "instructor")
    assert revoke(db, "prof") == 1
    got = [(e["action"], e["target"], e["address"]) for e in lines(db)]
    assert got == [("token.revoked", "prof", "cli"), ("token.issued", "prof", "cli")]
    for sql in ("UPDATE audit_log SET actor = 'someone else'", "DELETE FROM audit_log"):
        with pytest.raises(DBAPIError) as e:
            with db.write() as conn:
                conn.execute(text(sql))
        assert "append-only" in str(e.value)
    after = lines(db)
    assert [(e["action"], e["actor"]) for e in after] == [("token.revoked", audit.operator()),
                                                          ("token.issued", audit.operator())]
    db.dispose()


def test_a_line_is_bounded_whatever_it_is_given(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'a.db'}")
    db.ensure_schema()
    with db.write() as conn:
        audit.write(conn, "x" * 100, actor="a" * 1000, address="b" * 1000, target="c" * 1000,
                    detail={"body": "d" * 100_000})
    e = lines(db)[0]
    assert (len(e["action"]), len(e["actor"]), len(e["address"]), len(e["target"])) == (40, 200, 64, 200)
    assert e["detail"]["truncated"] is True and len(json.dumps(e["detail"])) <= audit.MAX_DETAIL + 100
    db.dispose()


def test_record_does_not_wait_and_drops_lines_beyond_its_bound(tmp_path, monkeypatch):
    from types import SimpleNamespace
    db = Database(f"sqlite:///{tmp_path / 'r.db'}")
    db.ensure_schema()
    request = SimpleNamespace(client=SimpleNamespace(host="10.1.2.3"),
                              app=SimpleNamespace(state=SimpleNamespace(grader=SimpleNamespace(db=db))))
    audit.record(request, "auth.failed", target="first")
    monkeypatch.setattr(audit, "MAX_WAITING", 0)      # as if 10,000 lines were waiting
    audit.record(request, "auth.failed", target="dropped")
    db.dispose()                                      # the writer finishes what it was given
    db = Database(f"sqlite:///{tmp_path / 'r.db'}")
    assert [(e["target"], e["address"]) for e in lines(db)] == [("first", "10.1.2.3")]
    assert audit._waiting[0] == 0
    db.dispose()


# ------------------------------------------------------------------ grader audit

def test_grader_audit_filters_pages_and_prints_one_line_per_entry(tmp_path):
    path = str(tmp_path / "g.db")
    assert grader("users", "add-instructor", "prof", "--database", path).returncode == 0
    assert grader("users", "add-learner", "ann", "--database", path).returncode == 0
    assert grader("users", "revoke", "ann", "--database", path).returncode == 0
    r = grader("users", "add-learner", "a/b", "--database", path)
    assert r.returncode == 2 and "not a valid id" in r.stderr
    db = Database(path)
    with db.write() as conn:        # a hostile target (as a failed sign-in's may be) stays on its line
        audit.write(conn, "auth.failed", actor="", address="10.0.0.9", target="grd_\n\x1b[2Jx")
    db.dispose()
    r = grader("audit", "--database", path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert len(out) == 4 and "\x1b" not in r.stdout and "grd_\\x0a\\x1b[2Jx" in out[0]
    assert [ln.split()[3] for ln in out] == ["auth.failed", "token.revoked", "token.issued", "token.issued"]
    r = grader("audit", "--database", path, "--action", "token", "--user", out[1].split()[1], "--limit", "2",
               "--format", "json")
    found = json.loads(r.stdout)
    # 3 token lines by the operator, 2 a page: revoked ann, issued ann; the next page starts at 2
    assert [(e["action"], e["target"]) for e in found["entries"]] == [("token.revoked", "ann"), ("token.issued", "ann")]
    assert found["next_offset"] == 2
    assert len(grader("audit", "--database", path, "--since", "2000-01-01").stdout.splitlines()) == 4
    r = grader("audit", "--database", path, "--since", "2999-01-01")
    assert r.returncode == 0 and r.stdout == ""
    r = grader("audit", "--database", path, "--since", "tomorrow")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a date" in r.stderr


# ------------------------------------------------------------------ backups

def _rows(url: str) -> tuple[list[str], list[str]]:
    db = Database(url)
    try:
        with db.read() as conn:
            return (sorted(conn.execute(select(User.login)).scalars()),
                    sorted(conn.execute(select(AuditEntry.action)).scalars()))
    finally:
        db.dispose()


def test_sqlite_backup_is_refused_over_a_file_and_restores(tmp_path):
    path = tmp_path / "live.db"
    assert grader("users", "add-instructor", "prof", "--database", str(path)).returncode == 0
    db = Database(str(path))
    with db.write() as conn:        # an open writer's committed rows (in the WAL) are in the copy
        conn.execute(insert(User).values(login="ann", name="", email="", role="learner", created_at=now()))
    dest = tmp_path / "copy.db"
    r = grader("db", "backup", str(dest), "--database", str(path))
    assert r.returncode == 0 and f"backed up to {dest}" in r.stdout, r.stderr
    assert dest.stat().st_mode & 0o777 == 0o600
    r = grader("db", "backup", str(dest), "--database", str(path))
    assert r.returncode == 2 and "exists already" in r.stderr and r.stderr.count("\n") == 1
    assert grader("db", "backup", str(dest), "--force", "--database", str(path)).returncode == 0
    r = grader("db", "backup", str(tmp_path / "x.db"), "--database", str(tmp_path / "none.db"))
    assert r.returncode == 2 and "no database file" in r.stderr and not (tmp_path / "none.db").exists()
    db.dispose()
    restored = tmp_path / "restored" / "grader.db"      # restoring: the copy is the database file
    restored.parent.mkdir()
    shutil.copy(dest, restored)
    assert _rows(str(restored)) == (["ann", "prof"], ["db.backup", "token.issued"])


def test_postgres_backup_restores(postgres, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([postgres.bindir, os.environ.get("PATH", "")]))
    url = postgres.new_database()
    users(url, prof="instructor", ann="learner")
    dest = tmp_path / "pg.dump"
    r = grader("db", "backup", str(dest), "--database", url)
    assert r.returncode == 0 and dest.stat().st_size > 0, r.stderr
    copy = postgres.new_database()
    r = subprocess.run([os.path.join(postgres.bindir, "pg_restore"), "--no-owner", "--dbname",
                        copy.replace("postgresql+psycopg", "postgresql"), str(dest)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _rows(copy) == (["ann", "prof"], ["token.issued", "token.issued"])
    db = Database(copy)             # the restored log is append-only too (the trigger came with it)
    with pytest.raises(DBAPIError):
        with db.write() as conn:
            conn.execute(text("DELETE FROM audit_log"))
    db.dispose()


def _old(path: Path) -> None:
    db = Database(str(path))
    db.upgrade("0001")
    with db.write() as conn:
        conn.execute(insert(User).values(login="old", name="", email="", role="learner", created_at=now()))
    db.dispose()


def _revision(path: Path | str) -> str | None:
    """The database's revision, its connections closed (no -wal file left beside it)."""
    db = Database(str(path))
    try:
        return db.revision()
    finally:
        db.dispose()


def test_upgrade_backs_up_first_and_upgrades_nothing_if_it_cannot(tmp_path):
    path = tmp_path / "grader.db"
    _old(path)
    r = grader("db", "upgrade", "--database", str(path), "--backup-dir", str(tmp_path / "missing"))
    assert r.returncode == 2 and "nothing was upgraded" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert _revision(str(path)) == "0001"
    r = grader("db", "upgrade", "--database", str(path))
    assert r.returncode == 0, r.stderr
    saved = Path(re.search(r"backed up to (\S+)", r.stdout).group(1))
    assert saved.parent == tmp_path and saved.name.startswith("grader.db.backup-")
    assert _revision(str(saved)) == "0001"            # the backup is the database before
    assert _rows(str(path))[0] == ["old"] and "db.upgrade" in _rows(str(path))[1]
    copy = tmp_path / "c.db"
    shutil.copy(saved, copy)
    assert _revision(str(copy)) == "0001"
    other = tmp_path / "other.db"
    _old(other)
    r = grader("db", "upgrade", "--database", str(other), "--no-backup")
    assert r.returncode == 0 and "backed up" not in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir() if ".backup-" in p.name) == [saved.name]


# ------------------------------------------------------------------ the live service

@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit")
    bank = make_bank(tmp)
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, prof="instructor", ann="learner")
    server = LiveServer(database, bank, tmp, "--workers", "1").start()
    yield server, tokens, database
    server.stop()


def _wait_for(db: Database, action: str, n: int = 1) -> list[dict]:
    deadline = time.monotonic() + 10       # the service writes these without waiting: bounded poll
    while time.monotonic() < deadline:
        found = lines(db, action=action)
        if len(found) >= n:
            return found
        time.sleep(0.1)
    return lines(db, action=action)


def _sign_in(client: httpx.Client, token: str) -> httpx.Response:
    form = client.get("/learn/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    return client.post("/learn/login", data={"csrf": csrf, "token": token})


def test_the_service_records_who_did_what_from_where(srv):
    server, tokens, database = srv
    db = Database(database)
    api = httpx.Client(base_url=server.url + "/api/v1", timeout=60)
    prof = {"Authorization": f"Bearer {tokens['prof']}"}
    assert api.get("/exercises", headers={"Authorization": "Bearer grd_<script>x"}).status_code == 401
    failed = _wait_for(db, "auth.failed")
    assert failed[0]["address"] == "127.0.0.1" and failed[0]["target"] == "grd_<scrip"
    assert api.get("/gradebook?format=csv", headers=prof).status_code == 200
    assert _wait_for(db, "export")[0]["detail"]["format"] == "csv"
    hostile = ["<b>x</b>", '=HYPERLINK("http://e.example")', "a\u0000b", "a\nb", "a/b"]
    body = json.dumps({"submissions": [{"learner": "ok-1", "answers": {"17-08/quiz-3": "A"}},
                                       *({"learner": h, "answers": {"17-08/quiz-3": "A"}} for h in hostile)]})
    r = api.post("/batches", headers=prof, files={"file": ("class.json", body.encode())})
    assert r.status_code == 202
    job_id = r.json()["id"]
    deadline = time.monotonic() + 120
    while (job := api.get(f"/jobs/{job_id}", headers=prof).json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    assert job["status"] == "done", job
    res = job["result"]
    assert res["learners_created"] == ["ok-1"] and res["summary"]["submissions"] == 1
    assert len(res["errors"]) == len(hostile)
    assert all(e["location"].startswith("class.json") and "not stored" in e["message"] for e in res["errors"])
    assert _wait_for(db, "batch.uploaded")[0]["target"] == job_id
    ann = {"Authorization": f"Bearer {tokens['ann']}"}
    sub = api.post("/submissions", headers=ann, json={"answers": {"17-08/practice-2": "W^O stays d x d."}}).json()
    answer_id = sub["results"][0]["answer_id"]
    assert api.post(f"/review/{answer_id}", headers=prof, json={"score": 1, "comment": "ok"}).status_code == 201
    reviewed = _wait_for(db, "review")[0]
    assert (reviewed["actor"], reviewed["target"], reviewed["detail"]["score"]) == ("prof", answer_id, 1)
    r = api.post("/regrade", headers=prof)
    assert r.status_code == 202 and _wait_for(db, "regrade")[0]["actor"] == "prof"
    with httpx.Client(base_url=server.url, timeout=60) as page:
        assert _sign_in(page, "grd_wrong").status_code == 401
        assert _sign_in(page, tokens["prof"]).status_code == 303
        found = _wait_for(db, "login", 2)
        assert [(e["action"], e["actor"]) for e in found[:2]] == [("login", "prof"), ("login.failed", "")]
        html = page.get("/staff/audit").text
        assert "grd_&lt;scrip" in html and "grd_<scrip" not in html      # every string escaped
        assert 'href="/api/v1/audit?' in html
        assert page.get("/staff/audit?action=login.failed").text.count("<tr><td>") == 1
        assert page.get("/staff/audit?offset=99999999999999999999").status_code == 422
    twin = api.get("/audit", headers=prof, params={"action": "auth", "limit": 1}).json()
    assert twin["entries"][0]["action"] == "auth.failed" and twin["limit"] == 1
    assert api.get("/audit?offset=99999999999999999999", headers=prof).status_code == 422
    assert api.get("/audit", headers={"Authorization": f"Bearer {tokens['ann']}"}).status_code == 403
    with httpx.Client(base_url=server.url, timeout=60) as page:
        assert _sign_in(page, tokens["ann"]).status_code == 303
        assert page.get("/staff/audit").status_code == 403
    api.close()
    db.dispose()
