"""Failed authentication throttled per client address and per token prefix, in the database
(shared by every instance on it), and the pages' server-side sessions ended by sign-out, by
"sign out everywhere" and by revoking the token: on SQLite and on PostgreSQL."""
from __future__ import annotations

import logging
import re
import secrets

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from serve_helpers import make_bank, users

LIMIT, WINDOW = 3, 300.0


def wrong(prefix: str | None = None) -> str:
    """A token of the right shape that nobody has (a random prefix unless one is given)."""
    return (prefix or "grd_" + secrets.token_urlsafe(4)[:6]) + secrets.token_urlsafe(32)[:37]


@pytest.fixture
def app(database, tmp_path):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tokens = users(database, alice="learner", bob="learner")
    settings = Settings(database=database, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1,
                        auth_failures=LIMIT, auth_window_s=WINDOW, web_secret=b"s" * 32)
    app = create_app(settings, extensions=(install,))
    with TestClient(app, client=("10.9.9.9", 1)):        # runs the lifespan once; clients below share it
        app.tokens = tokens
        yield app


def client(app, addr: str) -> TestClient:
    return TestClient(app, client=(addr, 40000), follow_redirects=False)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


# ------------------------------------------------------------------ throttling

def test_wrong_tokens_from_one_address_get_429_and_are_logged(app, caplog):
    caplog.set_level(logging.WARNING, logger="grader.serve.auth")
    c = client(app, "10.0.0.1")
    sent = [wrong() for _ in range(LIMIT + 1)]         # each a different prefix: only the address counts
    codes = [c.get("/api/v1/me/grades", headers=bearer(t)).status_code for t in sent]
    assert codes == [401] * LIMIT + [429]              # the LIMIT failures answered, then throttled
    r = c.get("/api/v1/me/grades", headers=bearer(wrong()))
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
    retry = int(r.headers["Retry-After"])
    assert 1 <= retry <= WINDOW
    # a correct token still works, from another address and from this one (no lock-out of
    # the learners behind a shared address)
    assert client(app, "10.0.0.2").get("/api/v1/me/grades", headers=bearer(app.tokens["alice"])).status_code == 200
    assert c.get("/api/v1/me/grades", headers=bearer(app.tokens["bob"])).status_code == 200
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "grader.serve.auth"]
    failed = [m for m in lines if m.startswith("authentication failed")]
    throttled = [m for m in lines if m.startswith("authentication throttled")]
    assert len(failed) == LIMIT and len(throttled) == 2, lines
    assert "'10.0.0.1'" in failed[0] and f"({LIMIT} of {LIMIT} allowed" in failed[-1]
    for t in sent:                                      # the prefix is logged, never the token
        assert not any(t in m for m in lines)
    assert any(repr(t[:10] + "...") in m for m in failed for t in sent[:LIMIT])
    # the lines as docs/service.md shows them
    assert re.fullmatch(rf"authentication failed on api from '10\.0\.0\.1' with token 'grd_.{{6}}\.\.\.' "
                        rf"\({LIMIT} of {LIMIT} allowed in {WINDOW:g} s\)", failed[-1]), failed[-1]
    assert re.fullmatch(r"authentication throttled on api from '10\.0\.0\.1' with token 'grd_.{6}\.\.\.': "
                        r"too many failures, retry in \d+ s", throttled[0]), throttled[0]


def test_wrong_tokens_for_one_prefix_get_429_from_any_address(app):
    prefix = "grd_" + "AbCdEf"
    codes = [client(app, f"10.0.1.{i}").get("/api/v1/me/grades", headers=bearer(wrong(prefix))).status_code
             for i in range(LIMIT + 1)]
    assert codes == [401] * LIMIT + [429]              # each address failed once, the prefix LIMIT times
    assert "Retry-After" in client(app, "10.0.1.99").get("/api/v1/me/grades",
                                                          headers=bearer(wrong(prefix))).headers
    # a token with another prefix, from a fresh address, is looked up as usual
    assert client(app, "10.0.1.100").get("/api/v1/me/grades", headers=bearer(wrong())).status_code == 401
    # the owner of a throttled prefix is not locked out
    from grader.serve.auth import token_prefix
    alice = app.tokens["alice"]
    for i in range(LIMIT):
        client(app, f"10.0.2.{i}").get("/api/v1/me/grades", headers=bearer(wrong(token_prefix(alice))))
    assert client(app, "10.0.2.9").get("/api/v1/me/grades", headers=bearer(wrong(token_prefix(alice)))
                                       ).status_code == 429
    assert client(app, "10.0.2.9").get("/api/v1/me/grades", headers=bearer(alice)).status_code == 200


def test_two_instances_share_the_counters_and_old_rows_are_pruned(database):
    from grader.db import Database
    from grader.db.models import AuthFailure
    from grader.serve.auth import FailureThrottle
    one, two = Database(database), Database(database)      # two `grader serve` on one database
    one.ensure_schema()
    try:
        a, b = FailureThrottle(LIMIT, WINDOW, prune_s=0), FailureThrottle(LIMIT, WINDOW, prune_s=0)
        keys = ["addr:10.1.1.1", "prefix:grd_abcdef"]
        t0 = 1_000_000.0
        assert [a.fail(one, keys, now=t0 + i) for i in range(2)] == [1, 2]
        assert b.wait(two, keys, now=t0 + 2) == 0.0
        assert b.fail(two, keys, now=t0 + 2) == 3           # the third failure, counted on the other instance
        assert a.wait(one, keys, now=t0 + 10) == WINDOW - 10  # window began at t0: ends at t0 + 300
        assert a.wait(one, ["addr:10.1.1.2"], now=t0 + 10) == 0.0
        # the window over: counting starts again, and the rows of ended windows are deleted
        assert a.wait(one, keys, now=t0 + WINDOW) == 0.0
        assert a.fail(one, ["addr:10.1.1.3"], now=t0 + WINDOW + 1) == 1
        with one.read() as conn:
            left = conn.execute(select(AuthFailure.key)).scalars().all()
        assert left == ["addr:10.1.1.3"]
    finally:
        one.dispose()
        two.dispose()


# ------------------------------------------------------------------ sessions

def signed_in(app, login: str, addr: str = "10.2.0.1") -> TestClient:
    c = client(app, addr)
    form = c.get("/learn/login").text
    csrf = form.split('name="csrf" value="')[1].split('"')[0]
    r = c.post("/learn/login", data={"token": app.tokens[login], "csrf": csrf})
    assert r.status_code == 303 and r.headers["location"] == "/learn", r.text
    assert c.get("/learn").status_code == 200
    return c


def csrf_of(c: TestClient) -> str:
    return c.get("/learn").text.split('name="csrf" value="')[1].split('"')[0]


def sessions_of(app, login: str) -> int:
    from grader.db.models import User, WebSession
    with app.state.grader.db.read() as conn:
        return conn.execute(select(func.count()).select_from(WebSession).join(User, User.id == WebSession.user_id)
                            .where(User.login == login)).scalar_one()


def test_a_saved_cookie_opens_nothing_after_sign_out(app):
    c = signed_in(app, "alice")
    saved = c.cookies.get("grader_session")
    assert saved and app.tokens["alice"] not in saved and sessions_of(app, "alice") == 1
    r = c.post("/logout", data={"csrf": csrf_of(c)})
    assert r.status_code == 303 and sessions_of(app, "alice") == 0
    replay = client(app, "10.2.0.2")
    replay.cookies.set("grader_session", saved)
    r = replay.get("/learn")
    assert r.status_code == 303 and r.headers["location"] == "/learn/login"


def test_revoking_the_token_ends_the_session(app):
    from grader.serve.accounts import revoke
    c = signed_in(app, "alice")
    assert revoke(app.state.grader.db, "alice") == 1
    assert sessions_of(app, "alice") == 0
    r = c.get("/learn")
    assert r.status_code == 303 and r.headers["location"] == "/learn/login"


def test_sign_out_everywhere_ends_another_browsers_session(app):
    home, laptop = signed_in(app, "alice", "10.3.0.1"), signed_in(app, "alice", "10.3.0.2")
    other = signed_in(app, "bob", "10.3.0.3")
    assert sessions_of(app, "alice") == 2
    page = home.get("/learn").text
    assert 'action="/learn/sign-out-everywhere"' in page
    assert home.post("/learn/sign-out-everywhere", data={"csrf": "0" * 40}).status_code == 403   # CSRF-protected
    r = home.post("/learn/sign-out-everywhere", data={"csrf": csrf_of(home)})
    assert r.status_code == 303 and sessions_of(app, "alice") == 0
    assert laptop.get("/learn").status_code == 303                       # the other browser is signed out
    assert other.get("/learn").status_code == 200                        # bob's session is his own


def test_an_expired_session_is_refused_and_pruned(app):
    import time
    from grader.db.models import WebSession
    c = signed_in(app, "alice")
    with app.state.grader.db.write() as conn:       # 12 hours later
        conn.execute(update(WebSession).values(expires_at=time.time() - 1))
    assert c.get("/learn").status_code == 303
    assert sessions_of(app, "alice") == 1            # still there until the next sign-in prunes it
    signed_in(app, "bob")
    assert sessions_of(app, "alice") == 0


# ------------------------------------------------------------------ guard and rate limit shared by instances

def test_the_one_at_a_time_guard_is_shared_by_instances(database):
    from grader.db import Database
    from grader.serve.shared import SharedSlots
    one, two = Database(database), Database(database)
    one.ensure_schema()
    try:
        a, b = SharedSlots(lease_s=600), SharedSlots(lease_s=600)
        t0 = 2_000_000.0
        held = a.acquire(one, 7, now=t0)
        assert held is not None
        assert b.acquire(two, 7, now=t0 + 1) is None          # the learner's request runs on instance one
        assert b.acquire(two, -7, now=t0 + 1) is not None     # a live reading is a slot of its own
        a.release(one, 7, held)
        again = b.acquire(two, 7, now=t0 + 2)
        assert again is not None                              # free once released
        # the holding instance renews its lease (to t0 + 300 + 600) while the request runs
        assert b.renew(two, now=t0 + 300) == 2 and a.renew(one, now=t0 + 300) == 0
        assert a.acquire(one, 7, now=t0 + 899) is None
        # a row left by a killed instance (no more renewals) is taken over when its lease is over
        assert a.acquire(one, 7, now=t0 + 900) is not None
        b.release(two, 7, again)                              # a stale holder's release frees nothing
        assert b.acquire(two, 7, now=t0 + 901) is None
    finally:
        one.dispose()
        two.dispose()


def test_the_rate_limit_is_shared_by_instances(database):
    from grader.db import Database
    from grader.serve.shared import SharedRateLimiter
    one, two = Database(database), Database(database)
    one.ensure_schema()
    try:
        a, b = SharedRateLimiter(rate=2, burst=3), SharedRateLimiter(rate=2, burst=3)
        t0 = 3_000_000.0
        # a burst of 3 spread over both instances, then the 4th waits (1 - 0) / 2 = 0.5 s
        assert [a.take(one, 5, now=t0), b.take(two, 5, now=t0), a.take(one, 5, now=t0)] == [0.0, 0.0, 0.0]
        assert b.take(two, 5, now=t0) == 0.5
        assert b.take(two, 6, now=t0) == 0.0                  # another token has its own bucket
        # 0.25 s later the bucket holds 0.5: one more waits 0.25 s; at 0.5 s one may go
        assert a.take(one, 5, now=t0 + 0.25) == 0.25
        assert a.take(one, 5, now=t0 + 0.5) == 0.0
    finally:
        one.dispose()
        two.dispose()


@pytest.fixture
def shared_app(database, tmp_path):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    tokens = users(database, alice="learner")
    settings = Settings(database=database, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1,
                        rate=0.01, burst=3, shared_limits=True)      # one request back per 100 s
    app = create_app(settings)
    with TestClient(app, client=("10.7.0.1", 1)):
        app.tokens = tokens
        yield app


def test_a_server_honours_the_guard_and_bucket_another_instance_holds(shared_app):
    from grader.db import Database
    from grader.db.models import User
    from grader.serve.shared import SharedRateLimiter, SharedSlots
    app = shared_app
    other = Database(app.state.grader.settings.database)      # a second instance's view of the database
    try:
        with other.read() as conn:
            uid = conn.execute(select(User.id).where(User.login == "alice")).scalar_one()
        held = SharedSlots(600).acquire(other, uid)
        c = client(app, "10.7.0.2")
        body = {"answers": {"17-08/quiz-3": "A"}}
        r = c.post("/api/v1/submissions", json=body, headers=bearer(app.tokens["alice"]))
        assert r.status_code == 429 and "still being graded" in r.json()["error"]["message"]
        SharedSlots(600).release(other, uid, held)
        r = c.post("/api/v1/submissions", json=body, headers=bearer(app.tokens["alice"]))
        assert r.status_code == 201, r.text                    # two requests of the burst of 3 used
        # the other instance takes the third: this one's next request waits (in its own
        # process's bucket there would be one left)
        with other.read() as conn:
            from grader.db.models import Token
            tid = conn.execute(select(Token.id).join(User, User.id == Token.user_id)
                               .where(User.login == "alice")).scalar_one()
        assert SharedRateLimiter(0.01, 3).take(other, tid) == 0.0
        r = c.get("/api/v1/me/grades", headers=bearer(app.tokens["alice"]))
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    finally:
        other.dispose()


def test_the_guard_and_rate_limit_are_in_the_database_on_postgresql_only_by_default(app, database):
    assert app.state.grader.shared is database.startswith("postgresql")
