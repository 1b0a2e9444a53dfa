"""What the LMS sends back to the tool's service calls is untrusted too: a roster's roles (the
launch's rule: course roles decide), its identifiers (kept whole or not at all), its names
(control and bidi characters dropped), its next page (never on another host: the bearer token
would go with it), and an answer's size (bounded).

The LMS here is an httpx transport answering in process: what is checked is grader's reading
of the answers, not the platform's checks of grader (tests/lti/test_lti_nrps.py does those
against lti1p3platform)."""
from __future__ import annotations

from datetime import datetime, timezone

import httpx
import pytest
from sqlalchemy import insert, select

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
NOW = datetime(2026, 11, 29, tzinfo=timezone.utc)


@pytest.fixture
def ctx(tmp_path):
    from grader.db import Database
    from grader.db.models import LtiContext
    from grader.serve.lti import registry
    db = Database(f"sqlite:///{tmp_path / 'g.db'}")
    db.ensure_schema()
    with db.write() as conn:
        p = registry.add_platform(conn, issuer="https://lms.example.edu", client_id="c1",
                                  login_url="https://lms.example.edu/auth", token_url="https://lms.example.edu/token",
                                  keyset_url="https://lms.example.edu/jwks", deployments=["d1"])
        pk = conn.execute(insert(LtiContext).values(platform_id=p.id, deployment_id="d1", context_id="course-1",
                                                    title="C", created_at=NOW)).inserted_primary_key[0]
    yield db, pk
    db.dispose()


def _people(db) -> dict[str, tuple[str, str, str]]:
    from grader.db.models import LtiAccount, User
    with db.read() as conn:
        rows = conn.execute(select(LtiAccount.subject, User.name, User.email, User.role)
                            .join(User, User.id == LtiAccount.user_id)).all()
    return {r.subject: (r.name, r.email, r.role) for r in rows}


def test_a_roster_maps_roles_as_a_launch_and_keeps_ids_whole_and_names_clean(ctx):
    from grader.serve.lti import nrps
    db, pk = ctx
    roster = [
        # teaches some course (institution role), a learner in this one: a learner here
        {"user_id": "u-teacher-elsewhere", "name": "Tea Cher",
         "roles": [LIS + "institution/person#Instructor", LIS + "membership#Learner"]},
        # an id of 256 characters is not cut to 255 (two such ids would be one person): skipped
        {"user_id": "x" * 256, "name": "Long Id", "roles": [LIS + "membership#Learner"]},
        # a name with a terminal escape, a newline and a right-to-left override: dropped from it
        {"user_id": "u-eve", "name": "Eve\x1b[31m\nEvil\u202eliam", "email": "eve@x.test\r\n",
         "roles": [LIS + "membership#Learner"]},
        {"user_id": "u-prof", "name": "Pro Fessor", "roles": [LIS + "membership#Instructor"]},
    ]
    with db.write() as conn:
        out = nrps.store(conn, pk, "https://lms.example.edu", roster, NOW)
    assert (out.members, out.created, out.skipped) == (3, 3, 1)
    people = _people(db)
    assert people["u-teacher-elsewhere"][2] == "learner"
    assert people["u-prof"][2] == "instructor"
    assert "x" * 255 not in people and "x" * 256 not in people
    assert people["u-eve"][:2] == ("Eve[31mEvilliam", "eve@x.test")


def _client(pages: dict[str, httpx.Response]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        return pages[str(request.url)]
    return httpx.Client(transport=httpx.MockTransport(answer))


def test_a_rosters_next_page_on_another_host_is_not_followed():
    from grader.serve.lti import nrps
    from grader.serve.lti.ags import ServiceError
    first = "https://lms.example.edu/members"
    asked: list[str] = []
    pages = {first: httpx.Response(200, json={"members": []},
                                   headers={"Link": '<https://collector.example.net/steal>; rel="next"'}),
             "https://collector.example.net/steal": httpx.Response(200, json={"members": []})}

    def token() -> str:
        asked.append("token")
        return "secret-bearer"
    client = _client(pages)
    with pytest.raises(ServiceError, match="another host"):
        nrps.fetch(client, token, first)
    assert asked == ["token"]            # the token went to the roster's host once, never to the other


def test_an_lms_answer_is_read_up_to_a_bound():
    from grader.serve.lti import ags
    from grader.serve.lti.ags import ServiceError
    url = "https://lms.example.edu/lineitems"
    big = b'{"x": "' + b"a" * (ags.MAX_BODY + 1) + b'"}'
    client = _client({url: httpx.Response(200, content=big, headers={"Content-Type": "application/json"})})
    with pytest.raises(ServiceError, match="is over"):
        ags.send(client, "GET", url, "reading the line items")
    small = _client({url: httpx.Response(200, json=[{"id": url + "/1"}])})
    assert ags.send(small, "GET", url, "reading the line items").json() == [{"id": url + "/1"}]


def test_staff_can_send_a_pending_passback_now_but_not_a_held_one(ctx):
    """After a long outage a row may wait out up to an hour of back-off: named by staff, it is
    due now (a fresh row; the waiting one superseded). A row held until the release is not."""
    from datetime import timedelta

    from sqlalchemy import update
    from grader.db.models import LtiLink, LtiMember, LtiOutbox, User
    from grader.serve.lti import outbox
    db, pk = ctx
    with db.write() as conn:
        uid = conn.execute(insert(User).values(login="ann", role="learner", created_at=NOW)
                           .returning(User.id)).scalar_one()
        conn.execute(insert(LtiMember).values(context_pk=pk, user_id=uid, roles=[], seen_at=NOW))
        conn.execute(insert(LtiLink).values(context_pk=pk, resource_link_id="rl", assessment_id="hw1", title="",
                                            created_at=NOW))
        assert outbox.enqueue(conn, [(uid, "hw1")], NOW, "graded") == 1
        waiting = conn.execute(select(LtiOutbox.id)).scalar_one()
        conn.execute(update(LtiOutbox).values(attempts=5, next_at=NOW + timedelta(hours=1)))   # backing off
    with db.write() as conn:
        assert outbox.resend(conn, None, NOW, "prof") == 0          # "every failed one": none failed
        assert outbox.resend(conn, [waiting], NOW + timedelta(minutes=1), "prof") == 1
    with db.read() as conn:
        rows = {r.id: r for r in conn.execute(select(LtiOutbox))}
    assert rows[waiting].status == "superseded"
    fresh = [r for i, r in rows.items() if i != waiting]
    assert [(r.status, r.attempts) for r in fresh] == [("pending", 0)]
    assert outbox.aware(fresh[0].next_at) == NOW + timedelta(minutes=1)
    with db.write() as conn:
        conn.execute(update(LtiOutbox).where(LtiOutbox.id == fresh[0].id).values(status="held"))
        assert outbox.resend(conn, [fresh[0].id], NOW, "prof") == 0
