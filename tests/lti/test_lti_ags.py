"""Grade passback (LTI Assignment and Grade Services) through the outbox, against an independent
platform (lti1p3platform, tests/lti/lti_ags_platform.py) on 127.0.0.1: its token endpoint
checks the tool's signed assertion against the tool's key set, its score endpoint the access
token and its scopes. The sender is driven by its ``run_once`` with the service's clock.

The course (UTC), derived by hand:
- hw1 = practice-1 (number, 1 point) + practice-2 (free text with a rubric, 2 points): opens
  2026-12-01 09:00, due 2026-12-07 23:59, late until 12-10 23:59, 10% per started day.
- alice answers both on 2026-12-08 12:00Z: 12 h 1 min late, one started day: 10% off.
  practice-1 right: 1 - 0.1 = 0.9; practice-2 waits for a person: the total 0.9 of 3, PendingManual.
  (Penalised twice it would be 0.81; not at all, 1.)
- the review gives practice-2 2 points; her answer was late (10% off), and a late answer that a
  person reviews keeps its penalty: 2 x (1 - 0.1) = 1.8 (penalty 2 x 0.1 = 0.2), so
  0.9 + 1.8 = 2.7, FullyGraded. (The old rule, a review without the penalty, gave 2.9.)
- her regrade request answered with 1.5: 1.5 x 0.9 = 1.35, 0.9 + 1.35 = 2.25 (old rule: 2.4).
"""
from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import insert, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lti_ags_platform import CLIENT_ID, DEPLOYMENT, ISSUER, Platform, stamp  # noqa: E402
from serve_helpers import make_bank, users  # noqa: E402

COURSE = """course: {timezone: UTC}
assessments:
  - id: hw1
    title: Homework 1
    problems: [17-08/practice-1, 17-08/practice-2]
    opens: 2026-12-01 09:00
    due: 2026-12-07 23:59
    late: {until: 2026-12-10 23:59, penalty_per_day: 10%}
    show: immediately
  - id: hw2
    title: Homework 2
    problems: [17-08/practice-1.check]
    opens: 2026-12-01 09:00
    due: 2026-12-20 23:59
    show: on_release
"""


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


class Clock:
    def __init__(self, at: str) -> None:
        self.t = utc(at)

    def set(self, at: str) -> None:
        self.t = utc(at)

    def __call__(self) -> datetime:
        return self.t


@pytest.fixture(scope="module")
def lti_postgres():
    """A PostgreSQL cluster for this module's PostgreSQL cases (as tests/serve/conftest.py's)."""
    import glob
    import os
    import shutil
    from serve_helpers import Postgres, require_postgres
    require_postgres()
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    pg = Postgres(os.path.dirname(bins[-1]) if bins else os.path.dirname(shutil.which("initdb")))
    pg.start()
    yield pg
    pg.stop()


@pytest.fixture
def world(request, tmp_path):
    """grader's service (no sender thread: the test drives it) and the platform, linked: a
    context with its line items URL, a resource link to hw1, alice a member with her account.
    SQLite; ``@pytest.mark.parametrize("world", ["postgresql"], indirect=True)``: PostgreSQL."""
    from grader.db import Database
    from grader.db.models import LtiAccount, LtiContext, LtiLink, LtiMember, LtiPlatform, User
    from grader.serve.app import create_app
    from grader.serve.lti.keys import key_set, signing_key
    from grader.serve.settings import Settings
    from grader.web import install
    bank = make_bank(tmp_path)
    (bank / "assessments.yaml").write_text(COURSE)
    database = (request.getfixturevalue("lti_postgres").new_database()
                if getattr(request, "param", "sqlite") == "postgresql" else f"sqlite:///{tmp_path / 'grader.db'}")
    tokens = users(database, prof="instructor", alice="learner", bob="learner")
    clock = Clock("2026-12-08T12:00:00Z")
    db = Database(database)
    with db.write() as conn:    # the key set as /.well-known/jwks.json serves it (keys live on the system's clock)
        signing_key(conn, datetime.now(timezone.utc))          # the tool's first key
        tool_keys = key_set(conn, datetime.now(timezone.utc))
    platform = Platform(tool_keys)
    platform.start()
    with db.write() as conn:
        pid = conn.execute(insert(LtiPlatform).values(
            issuer=ISSUER, client_id=CLIENT_ID, name="test LMS", login_url=platform.base + "/login",
            token_url=platform.base + "/token", keyset_url=platform.base + "/jwks",
            created_at=clock()).returning(LtiPlatform.id)).scalar_one()
        ctx = conn.execute(insert(LtiContext).values(
            platform_id=pid, deployment_id=DEPLOYMENT, context_id="course-1", title="Deep learning 101",
            lineitems_url=platform.base + "/lineitems", memberships_url=platform.base + "/memberships?limit=2",
            created_at=clock()).returning(LtiContext.id)).scalar_one()
        conn.execute(insert(LtiLink).values(context_pk=ctx, resource_link_id="rl-1", assessment_id="hw1",
                                            title="Homework 1", created_at=clock()))
        alice = conn.execute(select(User.id).where(User.login == "alice")).scalar_one()
        conn.execute(insert(LtiAccount).values(issuer=ISSUER, subject="sub-alice", user_id=alice, created_at=clock()))
        conn.execute(insert(LtiMember).values(context_pk=ctx, user_id=alice, roles=["Learner"], seen_at=clock()))
    db.dispose()
    settings = Settings(database=database, exercises=str(bank), workers=1, job_workers=1, rate=0,
                        web_secret=b"s" * 32, now=clock, lti_interval_s=0)
    app = create_app(settings, extensions=(install,))
    try:
        with TestClient(app, client=("10.4.0.1", 1)):
            app.tokens, app.clock, app.platform, app.database = tokens, clock, platform, database
            yield app
    finally:
        platform.stop()


def api(app, who: str, method: str, path: str, **kw):
    c = TestClient(app, client=("10.4.0.2", 1))
    return c.request(method, "/api/v1" + path, headers={"Authorization": f"Bearer {app.tokens[who]}"}, **kw)


def run(app, at: str | None = None):
    st = app.state.grader
    return st.lti.sender.run_once(utc(at) if at else app.clock())


def outbox(app) -> list:
    from grader.db.models import LtiOutbox
    with app.state.grader.db.read() as conn:
        return conn.execute(select(LtiOutbox.__table__).order_by(LtiOutbox.id)).all()


def audit_actions(app, prefix: str = "lti.passback") -> list[str]:
    from grader.db import audit
    with app.state.grader.db.read() as conn:
        return [e["action"] for e in audit.entries(conn, action=prefix, limit=100)][::-1]


def submit_late(app):
    r = api(app, "alice", "POST", "/submissions",
            json={"answers": {"17-08/practice-1": 64, "17-08/practice-2": "Each projection is d x d, 4d^2 both ways."}})
    assert r.status_code == 201, r.text
    return r.json()


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_a_graded_submission_reaches_the_platform_with_the_penalty_applied_once(world):
    body = submit_late(world)
    first = body["results"][0]
    assert first["score"] == 0.9 and first["raw_score"] == 1 and first["penalty"] == 0.1   # grader's penalty
    rows = outbox(world)
    assert [(r.status, r.cause, r.assessment_id) for r in rows] == [("pending", "graded", "hw1")]
    assert world.platform.received() == []              # nothing posted inside the request
    out = run(world)
    assert out.sent == [rows[0].id] and not out.failed, outbox(world)
    [item] = world.platform.lineitems.values()          # created: no line item on the link yet
    assert (item["label"], item["scoreMaximum"], item["resourceId"], item["resourceLinkId"], item["tag"]) == \
        ("Homework 1", 3, "hw1", "rl-1", "grader")
    [score] = world.platform.received()
    assert score["userId"] == "sub-alice"
    assert score["scoreGiven"] == pytest.approx(0.9) and score["scoreMaximum"] == 3    # 0.9, not 0.81 nor 1
    assert (score["activityProgress"], score["gradingProgress"]) == ("Completed", "PendingManual")
    assert stamp(score["timestamp"]) == utc("2026-12-08T12:00:00Z")
    from grader.db.models import LtiLink
    with world.state.grader.db.read() as conn:
        assert conn.execute(select(LtiLink.lineitem_url)).scalar_one() == item["id"]    # kept for the next
    assert audit_actions(world) == ["lti.passback"]
    assert run(world).sent == []                        # nothing left


def test_a_review_then_a_regrade_update_the_score(world):
    body = submit_late(world)
    run(world)
    free = body["results"][1]
    world.clock.set("2026-12-09T10:00:00Z")
    r = api(world, "prof", "POST", f"/review/{free['answer_id']}", json={"score": 2, "comment": "good"})
    assert r.status_code in (200, 201), r.text
    assert run(world).sent
    world.clock.set("2026-12-09T11:00:00Z")
    r = api(world, "alice", "POST", f"/answers/{free['answer_id']}/regrade-request", json={"message": "please look again"})
    assert r.status_code in (200, 201), r.text
    rid = r.json()["id"]
    world.clock.set("2026-12-09T12:00:00Z")
    r = api(world, "prof", "POST", f"/regrade-requests/{rid}", json={"response": "fair", "score": 1.5})
    assert r.status_code in (200, 201), r.text
    assert run(world).sent
    got = [(s["scoreGiven"], s["gradingProgress"]) for s in world.platform.received()]
    assert got == [(pytest.approx(0.9), "PendingManual"), (pytest.approx(2.7), "FullyGraded"),
                   (pytest.approx(2.25), "FullyGraded")]          # the reviews late: x 0.9 (module docstring)
    stamps = [stamp(s["timestamp"]) for s in world.platform.received()]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_the_platform_down_keeps_the_score_until_it_is_back(world):
    submit_late(world)
    world.platform.stop()                               # no server at all: connection refused
    out = run(world)
    assert out.retried and not out.sent
    [row] = outbox(world)
    assert row.status == "pending" and row.attempts == 1 and "cannot be reached" in row.error
    next_at = row.next_at.replace(tzinfo=timezone.utc)
    assert utc("2026-12-08T12:00:01Z") <= next_at <= utc("2026-12-08T12:00:30Z")   # full jitter, 30 s at most
    assert run(world).retried == []                     # not due yet: nothing tried
    world.platform.start()
    world.platform.down = True                          # back, but overloaded: 503
    out = run(world, "2026-12-08T12:00:31Z")
    assert out.retried and "HTTP 503" in outbox(world)[0].error
    world.platform.down = False
    out = run(world, "2026-12-08T13:00:00Z")
    assert out.sent and world.platform.received()[0]["scoreGiven"] == pytest.approx(0.9)
    assert outbox(world)[0].status == "sent"


def test_bounded_retries_end_failed_and_staff_can_resend(world):
    from grader.serve.lti.outbox import MAX_ATTEMPTS, resend
    submit_late(world)
    world.platform.down = True
    at = utc("2026-12-08T12:00:00Z")
    for _ in range(MAX_ATTEMPTS):
        run(world, at.isoformat())
        at += timedelta(hours=2)                        # past any back-off (an hour at most)
    [row] = outbox(world)
    assert row.status == "failed" and f"after {MAX_ATTEMPTS} tries" in row.error
    assert audit_actions(world) == ["lti.passback.failed"]
    world.platform.down = False
    db = world.state.grader.db
    with db.write() as conn:
        assert resend(conn, None, at, actor="prof") == 1
    assert run(world, at.isoformat()).sent
    assert [r.status for r in outbox(world)] == ["superseded", "sent"]


def test_a_newer_score_supersedes_an_unsent_one(world):
    body = submit_late(world)
    world.clock.set("2026-12-08T13:00:00Z")
    r = api(world, "prof", "POST", f"/review/{body['results'][1]['answer_id']}", json={"score": 1})
    assert r.status_code in (200, 201), r.text
    assert [r.status for r in outbox(world)] == ["superseded", "pending"]
    run(world)
    [score] = world.platform.received()                 # one post: the newest (0.9 + the late review's 1 x 0.9)
    assert score["scoreGiven"] == pytest.approx(1.8) and score["gradingProgress"] == "FullyGraded"


def csv_rows(text: str) -> list[dict[str, str]]:
    import csv
    import io
    return list(csv.DictReader(io.StringIO(text)))


def test_a_late_answer_reviewed_counts_with_its_penalty_everywhere(world):
    """alice's late practice-2 (2 points, 10% off: module docstring) reviewed at 2: the review
    counts 2 x 0.9 = 1.8, its penalty 2 x 0.1 = 0.2, raw 2; with practice-1's 0.9 the total is
    2.7. The gradebooks (JSON, CSV), her own views and the passback all say so (old rule: 2, 2.9)."""
    body = submit_late(world)
    free = body["results"][1]
    world.clock.set("2026-12-09T10:00:00Z")
    r = api(world, "prof", "POST", f"/review/{free['answer_id']}", json={"score": 2, "comment": "good"})
    assert r.status_code == 201, r.text
    out = r.json()
    book = api(world, "prof", "GET", "/gradebook").json()
    [row] = [x for x in book["rows"] if x["learner"] == "alice"]
    assert row["problems"]["17-08/practice-2"]["score"] == 1.8 and row["total"] == pytest.approx(2.7)
    [line] = [x for x in csv_rows(api(world, "prof", "GET", "/gradebook?format=csv").text) if x["learner"] == "alice"]
    assert float(line["17-08/practice-2"]) == 1.8 and float(line["total"]) == pytest.approx(2.7)
    hw1 = api(world, "prof", "GET", "/assessments/hw1/gradebook").json()
    [row] = [x for x in hw1["rows"] if x["learner"] == "alice"]
    c = row["problems"]["17-08/practice-2"]
    assert (c["score"], c["penalty"], c["raw_score"], c["late"], c["status"]) == (1.8, 0.2, 2, True, "reviewed")
    assert row["total"] == pytest.approx(2.7)
    [line] = [x for x in csv_rows(api(world, "prof", "GET", "/assessments/hw1/gradebook?format=csv").text)
              if x["SIS User ID"] == "alice"]
    assert float(line["Homework 1 (hw1)"]) == pytest.approx(2.7)
    [mine] = [x for x in api(world, "alice", "GET", "/me/reviews").json() if x["answer_id"] == free["answer_id"]]
    assert mine["score"] == 1.8 and (mine["review"]["score"], mine["review"]["penalty"], mine["review"]["counted"]) \
        == (2, 0.2, 1.8)
    grades = api(world, "alice", "GET", "/me/grades").json()
    assert grades["problems"]["17-08/practice-2"]["score"] == 1.8 and grades["total"] == pytest.approx(2.7)
    sub = api(world, "alice", "GET", f"/submissions/{body['id']}").json()
    assert sub["results"][1]["review"]["counted"] == 1.8 and sub["results"][1]["review"]["penalty"] == 0.2
    detail = api(world, "alice", "GET", "/assessments/hw1").json()
    assert [i["score"] for i in detail["items"]] == [0.9, 1.8]
    run(world)
    assert world.platform.received()[-1]["scoreGiven"] == pytest.approx(2.7)
    assert (out["score"], out["counted"], out["penalty"], out["late_fraction"]) == (2, 1.8, 0.2, 0.1)


def test_an_old_row_without_the_fraction_uses_penalty_over_raw_score_else_the_review_as_given(world):
    """Rows stored before the fraction was kept (``late`` taken out of their results here):
    practice-1 (raw 1, penalty 0.1) -> fraction 0.1 / 1 = 0.1, its review of 0.5 counts
    0.5 x 0.9 = 0.45 (penalty 0.05); practice-2 (waited for a person: raw 0, penalty 0) -> not
    known, its review of 2 counts 2 as given (the old rule, docs/service.md), the cell late
    with a penalty of 0. Total 0.45 + 2 = 2.45 (old code: 0.5 + 2 = 2.5)."""
    from sqlalchemy import update
    from grader.db.models import Answer
    body = submit_late(world)
    ids = [r["answer_id"] for r in body["results"]]
    with world.state.grader.db.write() as conn:
        for aid in ids:
            result = conn.execute(select(Answer.result).where(Answer.id == aid)).scalar_one()
            conn.execute(update(Answer).where(Answer.id == aid).values(result={k: v for k, v in result.items()
                                                                                if k != "late"}))
    for aid, score in zip(ids, (0.5, 2)):
        assert api(world, "prof", "POST", f"/review/{aid}", json={"score": score}).status_code == 201
    [row] = [x for x in api(world, "prof", "GET", "/assessments/hw1/gradebook").json()["rows"] if x["learner"] == "alice"]
    one, two = row["problems"]["17-08/practice-1"], row["problems"]["17-08/practice-2"]
    assert (one["score"], one["penalty"], one["raw_score"]) == (0.45, 0.05, 0.5)
    assert (two["score"], two["penalty"], two["raw_score"], two["late"]) == (2, 0, 2, True)
    assert row["total"] == pytest.approx(2.45)
    mine = {x["answer_id"]: x for x in api(world, "alice", "GET", "/me/reviews").json()}
    assert (mine[ids[0]]["score"], mine[ids[1]]["score"]) == (0.45, 2)
    assert mine[ids[1]]["review"]["penalty"] is None and mine[ids[1]]["review"]["late_fraction"] is None
    run(world)
    assert world.platform.received()[-1]["scoreGiven"] == pytest.approx(2.45)


def test_the_pages_say_the_late_penalty_of_a_review(world):
    """The staff's review form says the penalty before the score is given; alice's exercise page
    shows the reviewer's 2, the penalty 0.2 (10%) and her 1.8 (module docstring)."""
    body = submit_late(world)
    free = body["results"][1]
    staff = signed_in(world, "prof")
    page = staff.get("/staff/review").text
    assert "Late: 10% penalty applies to the score you give" in page
    world.clock.set("2026-12-09T10:00:00Z")
    assert api(world, "prof", "POST", f"/review/{free['answer_id']}", json={"score": 2}).status_code == 201
    assert "counts 1.8 after the late penalty of 0.2" in staff.get("/staff/review?all=1").text
    learner = signed_in(world, "alice")
    page = learner.get("/learn/exercise/17-08/practice-2").text
    assert "the reviewer's score 2, the late penalty −0.2 (10%): your score is <strong>1.8 / 2</strong>" in page
    assert '<span class="score">1.8 / 2</span>' in page           # the score that counts, not the reviewer's 2


def signed_in(app, login: str) -> TestClient:
    c = TestClient(app, client=("10.4.0.3", 1), follow_redirects=False)
    page = c.get("/learn/login").text
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    assert c.post("/learn/login", data={"token": app.tokens[login], "csrf": csrf}).status_code == 303
    return c


def test_a_learner_not_in_the_lms_course_is_not_enqueued(world):
    r = api(world, "bob", "POST", "/submissions", json={"answers": {"17-08/practice-1": 64}})
    assert r.status_code == 201, r.text
    assert outbox(world) == []


def test_a_token_without_the_score_scope_is_refused_and_failed_at_once(world):
    world.platform.granted.discard("https://purl.imsglobal.org/spec/lti-ags/scope/score")
    submit_late(world)
    out = run(world)
    assert out.failed and not out.retried
    [row] = outbox(world)
    assert row.status == "failed" and "HTTP 400" in row.error and "no scope granted" in row.error
    assert audit_actions(world) == ["lti.passback.failed"]


def test_an_assertion_signed_by_another_key_is_refused_by_the_platform(world):
    from lti_ags_platform import pem_pair
    from jwcrypto.jwk import JWK
    other = JWK.from_pem(pem_pair()[0].encode())
    pub = {**other.export_public(as_dict=True), "kid": "not-the-tools", "alg": "RS256"}
    world.platform.registration.set_tool_key_set({"keys": [pub]})
    submit_late(world)
    out = run(world)
    assert out.failed
    [row] = outbox(world)
    # the platform's own words: no key of the tool's key set has the assertion's kid
    assert row.status == "failed" and "HTTP 401" in row.error and "Unable to find public key" in row.error, row.error
    assert world.platform.received() == []


def signed_in(app, login: str) -> TestClient:
    c = TestClient(app, client=("10.4.0.3", 1))
    form = c.get("/learn/login").text
    csrf = form.split('name="csrf" value="')[1].split('"')[0]
    assert c.post("/learn/login", data={"token": app.tokens[login], "csrf": csrf},
                  follow_redirects=False).status_code == 303
    return c


def test_staff_see_a_failed_passback_on_the_page_and_resend_it(world):
    from sqlalchemy import update
    from grader.db.models import LtiOutbox
    submit_late(world)
    world.platform.granted.discard("https://purl.imsglobal.org/spec/lti-ags/scope/score")
    run(world)
    with world.state.grader.db.write() as conn:       # an LMS's message is shown as text, never as markup
        conn.execute(update(LtiOutbox).values(error="<script>alert(1)</script> refused"))
    c = signed_in(world, "prof")
    html = c.get("/staff/lti").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; refused" in html and "<script>alert(1)" not in html
    row_id = outbox(world)[0].id
    assert c.post("/staff/lti/resend", data={"outbox_id": row_id, "csrf": "0" * 40}).status_code == 403
    assert outbox(world)[0].status == "failed"
    csrf = html.split('name="csrf" value="')[1].split('"')[0]
    r = c.post("/staff/lti/resend", data={"outbox_id": row_id, "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303, r.text
    assert [r.status for r in outbox(world)] == ["superseded", "pending"]
    world.platform.granted.add("https://purl.imsglobal.org/spec/lti-ags/scope/score")
    assert run(world).sent and world.platform.received()[0]["scoreGiven"] == pytest.approx(0.9)
    assert signed_in(world, "alice").get("/staff/lti").status_code in (403, 404)
    r = api(world, "prof", "GET", "/lti/outbox", params={"status": ["failed", "sent"]})
    assert [(i["status"], i["learner"], i["score_given"]) for i in r.json()["items"]] == [("sent", "alice", 0.9)]


def test_the_cli_lists_failed_passbacks_and_resends_them(world):
    from click.testing import CliRunner
    from grader.commands.lti_outbox import outbox as outbox_cli
    submit_late(world)
    world.platform.granted.discard("https://purl.imsglobal.org/spec/lti-ags/scope/score")
    run(world)
    row_id = outbox(world)[0].id
    r = CliRunner().invoke(outbox_cli, ["--database", world.database])
    assert r.exit_code == 0 and f"{row_id:>6}  failed   alice  hw1  (Deep learning 101, graded, 1 tries)" in r.output
    r = CliRunner().invoke(outbox_cli, ["--resend", "999", "--database", world.database])
    assert r.exit_code == 1 and "1 of the ids given are not failed passbacks (resent: 0)" in r.output
    r = CliRunner().invoke(outbox_cli, ["--resend", str(row_id), "--database", world.database])
    assert r.exit_code == 0 and "1 passback(s) pending again" in r.output, r.output
    assert audit_actions(world, "lti.passback.resend") == ["lti.passback.resend"]
    world.platform.granted.add("https://purl.imsglobal.org/spec/lti-ags/scope/score")
    assert run(world).sent


def test_scores_not_released_are_held_until_the_release(world):
    from grader.db.models import LtiLink
    with world.state.grader.db.write() as conn:
        conn.execute(insert(LtiLink).values(context_pk=1, resource_link_id="rl-2", assessment_id="hw2",
                                            title="Homework 2", created_at=world.clock()))
    r = api(world, "alice", "POST", "/submissions", json={"answers": {"17-08/practice-1.check": 1024}})
    assert r.status_code == 201, r.text
    out = run(world)
    assert out.waiting and not out.sent and world.platform.received() == []   # hidden from her: not posted
    assert [r.status for r in outbox(world)] == ["held"]
    world.clock.set("2026-12-09T09:00:00Z")
    assert api(world, "prof", "POST", "/assessments/hw2/release").status_code == 201
    assert [(r.status, r.cause) for r in outbox(world)] == [("superseded", "graded"), ("pending", "release")]
    assert run(world).sent
    [score] = world.platform.received()
    assert (score["scoreGiven"], score["scoreMaximum"], score["gradingProgress"]) == (1, 1, "FullyGraded")


def test_an_extension_enqueues_the_learners_score_again(world):
    submit_late(world)
    run(world)
    world.clock.set("2026-12-08T14:00:00Z")
    r = api(world, "prof", "POST", "/assessments/hw1/extensions",
            json={"learner": "alice", "due": "2026-12-12T23:59:00Z", "reason": "ill"})
    assert r.status_code == 201, r.text
    assert [(r.status, r.cause) for r in outbox(world)] == [("sent", "graded"), ("pending", "extension")]
    assert run(world).sent
    # the penalty stays what grader gave when the answer came (docs/lti.md, "Grades and rosters"): 0.9 again, a later timestamp
    first, second = world.platform.received()
    assert second["scoreGiven"] == pytest.approx(0.9) and stamp(second["timestamp"]) > stamp(first["timestamp"])


@pytest.mark.parametrize("world", ["sqlite", "postgresql"], indirect=True)
def test_two_instances_never_claim_the_same_row(world):
    from grader.serve.lti.outbox import Sender
    submit_late(world)
    api(world, "prof", "POST", "/assessments/hw1/extensions",
        json={"learner": "alice", "due": "2026-12-12T23:59:00Z", "reason": "ill"})
    st = world.state.grader
    other = Sender(st.db, lambda: st.engine, "best", st.lti.passback, instance="other", clock=world.clock)
    pending = [r.id for r in outbox(world) if r.status == "pending"]
    mine, theirs = st.lti.sender.claim(world.clock()), other.claim(world.clock())
    assert sorted(mine + theirs) == pending and not set(mine) & set(theirs)
    # a claim whose instance died is taken over once its lease has run out (2 minutes)
    later = world.clock() + timedelta(minutes=3)
    assert sorted(other.claim(later)) == pending


def test_a_regrade_job_enqueues_the_regraded_learners_score(world):
    import time
    submit_late(world)
    run(world)
    world.clock.set("2026-12-09T08:00:00Z")
    r = api(world, "prof", "POST", "/regrade")
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 120
    while api(world, "prof", "GET", f"/jobs/{r.json()['id']}").json()["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, "the regrade job did not finish"
        time.sleep(0.1)
    assert api(world, "prof", "GET", f"/jobs/{r.json()['id']}").json()["status"] == "done"
    assert [(r.status, r.cause) for r in outbox(world)] == [("sent", "graded"), ("pending", "regrade")]
    assert run(world).sent
    second = world.platform.received()[1]       # the same answers, the same late fraction kept: 0.9 again
    assert second["scoreGiven"] == pytest.approx(0.9) and second["gradingProgress"] == "PendingManual"


def test_service_urls_keep_their_own_query():
    # Moodle's AGS URLs carry ?type_id=N: a filter is added to it, the scores path goes before it
    from grader.serve.lti.ags import filtered, scores_url
    base = "https://moodle.test/mod/lti/services.php/2/lineitems"
    assert filtered(base + "?type_id=1", resource_id="hw1") == base + "?type_id=1&resource_id=hw1"
    assert scores_url(base + "/3/lineitem?type_id=1") == base + "/3/lineitem/scores?type_id=1"
    assert scores_url("https://canvas.test/api/lti/courses/1/line_items/7/") == \
        "https://canvas.test/api/lti/courses/1/line_items/7/scores"


def test_the_launchs_line_item_is_used_as_given(world):
    from sqlalchemy import update
    from grader.db.models import LtiLink
    item = world.platform.base + "/lineitems/1"
    world.platform.lineitems[item] = {"id": item, "label": "From the LMS", "scoreMaximum": 3, "resourceId": "x"}
    with world.state.grader.db.write() as conn:
        conn.execute(update(LtiLink).values(lineitem_url=item))
    submit_late(world)
    assert run(world).sent
    assert list(world.platform.lineitems) == [item] and list(world.platform.scores) == [item]   # none created
