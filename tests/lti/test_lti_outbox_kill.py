"""The LTI grade outbox survives a SIGKILL of `grader serve` at every point of a passback
("nothing acknowledged is lost: a 2xx means stored, whatever crashes after").

A real `grader serve` process (tests/serve/serve_helpers.LiveServer) on a SQLite file, killed
with SIGKILL (os.kill) and started again on the same file; the LMS is the independent platform
of tests/lti/lti_ags_platform.py (lti1p3platform's token and score handlers, in a thread on
127.0.0.1), here able to hold one score POST: before storing it (the request in flight when
the tool dies) or after storing it (the platform accepted it, its answer never reached the
tool). ``--lti-lease 1`` (a Settings field, ``lti_lease_s``) shortens the 2 minutes after which
a passback claimed by a dead instance is taken over, so nothing here sleeps for it.

The score, derived by hand: hw1 is 17-08/practice-1 alone (a number, 1 point), open since
yesterday, due in a week (no late penalty); alice answers 64, right: scoreGiven 1 of
scoreMaximum 1, Completed (her one problem answered), FullyGraded (no person has to grade).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
import typing as t
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, select, update

HERE = Path(__file__).resolve().parent
for _p in (str(HERE.parent / "serve"), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from lti_ags_platform import CLIENT_ID, DEPLOYMENT, ISSUER, Platform, stamp  # noqa: E402
from serve_helpers import LiveServer, make_bank, users  # noqa: E402

NOW = datetime.now(timezone.utc).replace(second=0, microsecond=0)
COURSE = f"""course: {{timezone: UTC}}
assessments:
  - id: hw1
    title: Homework 1
    problems: [17-08/practice-1]
    opens: "{(NOW - timedelta(days=1)).strftime('%Y-%m-%dT%H:%M:00Z')}"
    due: "{(NOW + timedelta(days=7)).strftime('%Y-%m-%dT%H:%M:00Z')}"
    show: immediately
"""
EXPECTED = (1.0, 1, "Completed", "FullyGraded")      # (scoreGiven, scoreMaximum, activity, grading): above
MS = timedelta(milliseconds=1)
WAIT_S = 90.0           # the bound of every wait here (a restart, a takeover, a post)


class HoldingPlatform(Platform):
    """The test platform; ``hold = "before"``: the next score POST is read and held, never
    stored, until ``release``; ``hold = "after"``: it is stored, and its answer held until
    ``release``; ``hold = "lost"``: it is stored, and answered 504. ``arrived`` is set once it is held; ``held``: the bodies of held requests."""

    def __init__(self, *a: t.Any, **kw: t.Any) -> None:
        super().__init__(*a, **kw)
        self.hold: str | None = None
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.held: list[dict[str, t.Any]] = []

    def app(self) -> t.Any:
        inner = super().app()

        async def asgi(scope: t.Any, receive: t.Any, send: t.Any) -> None:
            mode = self.hold
            if not (mode and scope["type"] == "http" and scope["method"] == "POST"
                    and scope["path"].endswith("/scores")):
                await inner(scope, receive, send)
                return
            self.hold = None                            # only the first score POST is held
            if mode == "lost":                          # stored; a proxy's 504 instead of the answer
                async def drop(m: t.Any) -> None:
                    pass
                await inner(scope, receive, drop)
                await send({"type": "http.response.start", "status": 504, "headers": []})
                await send({"type": "http.response.body", "body": b"gateway timeout"})
                return
            if mode == "before":
                body = b""
                for _ in range(10_000):
                    m = await receive()
                    body += m.get("body", b"")
                    if not m.get("more_body"):
                        break
                self.held.append(json.loads(body))
                self.arrived.set()
                await self._wait()
                answers = [{"type": "http.response.start", "status": 503, "headers": []},
                           {"type": "http.response.body", "body": b""}]     # to a tool that is gone
            else:
                answers = []

                async def keep(m: t.Any) -> None:
                    answers.append(m)
                await inner(scope, receive, keep)       # stored (lti1p3platform's update_score)
                self.arrived.set()
                await self._wait()
            for m in answers:
                try:
                    await send(m)
                except Exception:                       # the tool's connection died with it
                    break

        return asgi

    async def _wait(self) -> None:
        for _ in range(int(WAIT_S / 0.05)):
            if self.release.is_set():
                return
            await asyncio.sleep(0.05)


class World:
    def __init__(self, tmp: Path, database: str, bank: Path, token: str, platform: HoldingPlatform) -> None:
        from grader.db import Database
        self.tmp, self.database, self.bank, self.token, self.platform = tmp, database, bank, token, platform
        self.db = Database(database)
        self.server: LiveServer | None = None

    def serve(self, interval: str = "0.2") -> LiveServer:
        self.server = LiveServer(self.database, self.bank, self.tmp, "--workers", "1", "--rate", "0",
                                 "--lti-interval", interval, "--lti-lease", "1").start()
        return self.server

    def sigkill(self) -> None:
        assert self.server is not None and self.server.proc is not None
        os.kill(self.server.proc.pid, signal.SIGKILL)   # the server's process, as the OOM killer would
        self.server.kill()                              # reaped, and what it left in its session
        self.server = None

    def submit(self) -> dict[str, t.Any]:
        assert self.server is not None
        r = httpx.post(self.server.url + "/api/v1/submissions", json={"answers": {"17-08/practice-1": 64}},
                       headers={"Authorization": f"Bearer {self.token}"}, timeout=120)
        assert r.status_code == 201, r.text
        assert r.json()["results"][0]["score"] == 1
        return dict(r.json())

    def rows(self) -> list[t.Any]:
        from grader.db.models import LtiOutbox
        with self.db.read() as conn:
            return list(conn.execute(select(LtiOutbox.__table__).order_by(LtiOutbox.id)).all())

    def passbacks(self) -> list[str]:
        from grader.db import audit
        with self.db.read() as conn:
            return [e["action"] for e in audit.entries(conn, action="lti.passback", limit=100)]

    def wait_for(self, what: str, ok: t.Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        for _ in range(int(WAIT_S / 0.1)):
            if ok():
                return
            assert time.monotonic() < deadline, f"{what}: not within {WAIT_S:g} s"
            time.sleep(0.1)
        raise AssertionError(f"{what}: not within {WAIT_S:g} s")


@pytest.fixture
def world(tmp_path):
    """A course with hw1 linked from an LMS course of the platform; alice a member with her
    LTI account (as a launch or a roster sync makes them); no server started yet."""
    from grader.db import Database
    from grader.db.models import LtiAccount, LtiContext, LtiLink, LtiMember, LtiPlatform, User
    from grader.serve.lti.keys import key_set, signing_key
    bank = make_bank(tmp_path)
    (bank / "assessments.yaml").write_text(COURSE)
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    token = users(database, alice="learner")["alice"]
    now = datetime.now(timezone.utc)
    db = Database(database)
    try:
        with db.write() as conn:        # the tool's key, which the running service signs its assertions with
            signing_key(conn, now)
            tool_keys = key_set(conn, now)
        platform = HoldingPlatform(tool_keys)
        with db.write() as conn:
            pid = conn.execute(insert(LtiPlatform).values(
                issuer=ISSUER, client_id=CLIENT_ID, name="test LMS", login_url=platform.base + "/login",
                token_url=platform.base + "/token", keyset_url=platform.base + "/jwks",
                created_at=now).returning(LtiPlatform.id)).scalar_one()
            ctx = conn.execute(insert(LtiContext).values(
                platform_id=pid, deployment_id=DEPLOYMENT, context_id="course-1", title="Deep learning 101",
                lineitems_url=platform.base + "/lineitems", created_at=now).returning(LtiContext.id)).scalar_one()
            conn.execute(insert(LtiLink).values(context_pk=ctx, resource_link_id="rl-1", assessment_id="hw1",
                                                title="Homework 1", created_at=now))
            alice = conn.execute(select(User.id).where(User.login == "alice")).scalar_one()
            conn.execute(insert(LtiAccount).values(issuer=ISSUER, subject="sub-alice", user_id=alice, created_at=now))
            conn.execute(insert(LtiMember).values(context_pk=ctx, user_id=alice, roles=["Learner"], seen_at=now))
    finally:
        db.dispose()
    platform.start()
    w = World(tmp_path, database, bank, token, platform)
    try:
        yield w
    finally:
        platform.release.set()
        if w.server is not None:
            w.server.stop()
        platform.stop()
        w.db.dispose()


def fields(score: dict[str, t.Any]) -> tuple[t.Any, ...]:
    return score["scoreGiven"], score["scoreMaximum"], score["activityProgress"], score["gradingProgress"]


def aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)


def sent_as(row: t.Any) -> datetime:
    """The row's timestamp as it goes on the wire: milliseconds (grader.serve.lti.ags.timestamp)."""
    from grader.serve.lti.ags import timestamp
    return stamp(timestamp(aware(row.timestamp)))


def test_killed_after_the_201_before_the_post_the_score_arrives_once_after_the_restart(world):
    # an interval of an hour: the sender's first pass is an hour after the start, none before the kill
    world.serve(interval="3600")
    world.submit()
    [row] = world.rows()
    assert (row.status, row.attempts) == ("pending", 0)         # stored with the 201, not sent
    world.sigkill()
    assert world.platform.received() == []
    world.serve()
    world.wait_for("the passback sent", lambda: world.rows()[0].status == "sent")
    world.server.stop()
    [score] = world.platform.received()                          # exactly once
    assert fields(score) == EXPECTED and score["userId"] == "sub-alice"
    [row] = world.rows()
    assert stamp(score["timestamp"]) == sent_as(row) and row.attempts == 1
    assert len(world.platform.lineitems) == 1 and world.passbacks() == ["lti.passback"]


def test_killed_while_the_post_is_in_flight_the_score_is_sent_after_the_restart(world):
    world.platform.hold = "before"
    world.serve()
    world.submit()
    world.wait_for("the score POST at the platform", world.platform.arrived.is_set)
    [row] = world.rows()
    assert row.status == "sending"
    world.sigkill()
    world.platform.release.set()                                 # dropped: never stored
    assert world.platform.received() == []
    world.serve()
    world.wait_for("the passback sent", lambda: world.rows()[0].status == "sent")
    world.server.stop()
    [held] = world.platform.held
    [score] = world.platform.received()
    assert fields(score) == fields(held) == EXPECTED
    # taken over from the dead instance: posted again 1 ms later than the first try
    assert stamp(score["timestamp"]) == stamp(held["timestamp"]) + MS == sent_as(world.rows()[0])
    assert len(world.platform.lineitems) == 1        # the line item the dead instance made is found, not made again
    assert world.passbacks() == ["lti.passback"]


def test_killed_after_the_platform_stored_it_the_score_is_sent_once_more_and_the_row_ends_sent(world):
    # Without the takeover's new timestamp, the second post carries the same timestamp, the
    # platform answers 409 ("old timestamp") and the row ends 'failed' though the score is there.
    world.platform.hold = "after"
    world.serve()
    world.submit()
    world.wait_for("the score stored by the platform", world.platform.arrived.is_set)
    assert world.rows()[0].status == "sending"
    world.sigkill()
    world.platform.release.set()
    [first] = world.platform.received()
    world.serve()
    world.wait_for("the passback done", lambda: world.rows()[0].status not in ("pending", "sending"))
    world.server.stop()
    [row] = world.rows()
    assert row.status == "sent", (row.status, row.error)
    first, second = world.platform.received()                    # resent once
    assert fields(first) == fields(second) == EXPECTED
    assert stamp(second["timestamp"]) == stamp(first["timestamp"]) + MS == sent_as(row)
    assert len(world.platform.lineitems) == 1 and world.passbacks() == ["lti.passback"]


def test_a_score_stored_whose_answer_was_lost_is_tried_again_1_ms_later_and_ends_sent(world):
    # A timeout or a 5xx may come after the LMS stored the score (here a proxy's 504). Tried
    # again with the same timestamp, the platform answered 409 ("old timestamp") and the row
    # ended 'failed' though the score is there; 1 ms later, it takes it.
    from grader.serve.engine import Engine
    from grader.serve.lti.ags import SigningKey
    from grader.serve.lti.keys import signing_key
    from grader.serve.lti.outbox import Sender
    from grader.serve.lti.passback import Passback
    world.serve(interval="3600")                # the submission stored; the sender is driven here
    world.submit()
    world.server.stop()

    def key() -> SigningKey:
        with world.db.write() as conn:
            k = signing_key(conn, datetime.now(timezone.utc))
        return SigningKey(k.kid, k.private_pem)
    engine = Engine(str(world.bank))
    passback = Passback(key)
    now = datetime.now(timezone.utc)
    sender = Sender(world.db, lambda: engine, "best", passback, instance="test", clock=lambda: now)
    try:
        world.platform.hold = "lost"
        out = sender.run_once(now)
        assert out.retried and not out.sent, world.rows()
        [row] = world.rows()
        assert row.status == "pending" and "HTTP 504" in row.error
        out = sender.run_once(now + timedelta(hours=2))         # past any back-off (an hour at most)
    finally:
        passback.close()
    [row] = world.rows()
    assert row.status == "sent", (row.status, row.error)
    first, second = world.platform.received()
    assert fields(first) == fields(second) == EXPECTED
    assert stamp(second["timestamp"]) == stamp(first["timestamp"]) + MS == sent_as(row)


def test_a_dead_instances_row_with_a_newer_one_behind_it_is_superseded_not_posted(world):
    # no server: the takeover itself (Sender.claim), on two rows of alice's one link
    from grader.db.models import LtiOutbox
    from grader.serve.lti.outbox import Sender, _add
    t0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    with world.db.write() as conn:
        _add(conn, 1, 1, "hw1", t0, "graded")
        conn.execute(update(LtiOutbox).values(status="sending", claimed_by="dead", claimed_until=t0 + timedelta(seconds=1)))
    sender = Sender(world.db, lambda: None, "best", None, instance="new", clock=lambda: t0,  # type: ignore[arg-type]
                    lease=timedelta(seconds=1))
    assert sender.claim(t0) == []                               # its lease has not run out
    with world.db.write() as conn:                              # a review while the dead one held it
        _add(conn, 1, 1, "hw1", t0 + timedelta(minutes=1), "review")
    later = t0 + timedelta(minutes=2)
    [old, new] = world.rows()
    assert sender.claim(later) == [new.id]
    [old, new] = world.rows()
    assert old.status == "superseded" and old.claimed_by is None and "newer score" in old.error
    assert aware(old.timestamp) == t0                           # not posted again: left as it was
    # alone, a dead instance's row is taken over 1 ms later than its own timestamp
    with world.db.write() as conn:
        conn.execute(update(LtiOutbox).where(LtiOutbox.id == new.id).values(claimed_until=later))
    assert sender.claim(later + timedelta(seconds=1)) == [new.id]
    [_, new2] = world.rows()
    assert (new2.status, new2.claimed_by) == ("sending", "new")
    assert aware(new2.timestamp) == aware(new.timestamp) + MS == t0 + timedelta(minutes=1) + MS


def test_serve_passes_its_lti_lease_to_the_service(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import uvicorn
    import grader.serve.app
    from grader.commands.serve import serve
    seen = []
    monkeypatch.setattr(grader.serve.app, "create_app", lambda settings, **kw: seen.append(settings) or object())
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    base = ["--database", str(tmp_path / "g.db"), "--port", "0", "--secret-file", str(tmp_path / "s")]
    assert CliRunner().invoke(serve, base + ["--lti-lease", "1.5"]).exit_code == 0
    assert CliRunner().invoke(serve, base).exit_code == 0
    assert [s.lti_lease_s for s in seen] == [1.5, 120.0]        # the production default: 2 minutes, as before
    r = CliRunner().invoke(serve, base + ["--lti-lease", "0"])  # under a second: refused
    assert r.exit_code == 2 and "--lti-lease" in r.output
