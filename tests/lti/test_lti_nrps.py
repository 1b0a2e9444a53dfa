"""Roster sync (LTI Names and Role Provisioning) against an independent platform
(lti1p3platform's NRPS handler, tests/lti/lti_ags_platform.py) on 127.0.0.1: the access token
from its token endpoint (the tool's assertion checked against the tool's key set), pages of 2
members followed through ``Link: rel=next``.

The roster (5 members, 3 pages of 2): an instructor, a TA, two learners, one mentor (not mapped);
then one learner marked Deleted."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lti_ags import api, world  # noqa: E402,F401  (the fixture: grader's service and the platform)

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
ROSTER = [
    {"user_id": "sub-prof", "roles": [LIS + "Instructor"], "name": "Ada Prof", "email": "ada@uni.test"},
    {"user_id": "sub-ta", "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"],
     "given_name": "Tom", "family_name": "Assist", "email": "tom@uni.test"},
    {"user_id": "sub-alice", "roles": [LIS + "Learner"], "name": "Alice A", "email": "alice@uni.test"},
    {"user_id": "sub-new", "roles": ["Learner"], "name": "Nina New", "email": "nina@uni.test"},
    {"user_id": "sub-mentor", "roles": [LIS + "Mentor"], "name": "Max Mentor"},
]


def members(app) -> dict[str, tuple[str, str, str]]:
    from grader.db.models import LtiAccount, LtiMember, User
    with app.state.grader.db.read() as conn:
        rows = conn.execute(select(LtiAccount.subject, User.login, User.name, User.role)
                            .join(User, User.id == LtiAccount.user_id)
                            .join(LtiMember, LtiMember.user_id == User.id)).all()
    return {r.subject: (r.login, r.name, r.role) for r in rows}


def test_the_roster_sync_creates_learners_and_instructors(world):
    from grader.db import audit
    from grader.serve.lti.people import login_for
    from lti_ags_platform import ISSUER
    world.platform.roster = [dict(m) for m in ROSTER]
    st = world.state.grader
    out = st.lti.roster(1, actor="prof")
    # 5 members on pages of 2: 3 pages; the mentor left out; alice known already (her account)
    assert (out.members, out.created, out.skipped, out.pages) == (4, 3, 1, 3)
    got = members(world)
    assert got["sub-alice"] == ("alice", "Alice A", "learner")    # the existing user: the roster's name
    assert got["sub-new"] == (login_for(ISSUER, "sub-new"), "Nina New", "learner")
    assert got["sub-prof"][1:] == ("Ada Prof", "instructor") and got["sub-ta"][1:] == ("Tom Assist", "instructor")
    assert "sub-mentor" not in got
    with st.db.read() as conn:
        [line] = audit.entries(conn, action="lti.roster")
    assert line["actor"] == "prof" and line["detail"]["created"] == 3 and line["target"] == "course-1"
    # again, with Nina deleted in the LMS and Alice made a TA: Nina stops being a member, Alice is
    # staff now (as her launch as a TA would make her), nothing new is made
    world.platform.roster[3]["status"] = "Deleted"
    world.platform.roster[2]["roles"] = ["TeachingAssistant"]
    out = st.lti.roster(1, actor="prof")
    assert (out.members, out.created, out.removed) == (3, 0, 1)
    got = members(world)
    assert "sub-new" not in got and got["sub-alice"] == ("alice", "Alice A", "instructor")


def test_a_roster_refused_by_the_platform_changes_nothing(world):
    from grader.serve.lti.ags import ServiceError
    world.platform.granted.discard("https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")
    world.platform.roster = [dict(m) for m in ROSTER]
    before = members(world)
    with pytest.raises(ServiceError) as e:
        world.state.grader.lti.roster(1, actor="prof")
    assert "HTTP 400" in e.value.message and "no scope granted" in e.value.message
    assert members(world) == before


def test_staff_sync_a_roster_and_see_the_outbox_through_the_api(world):
    world.platform.roster = [dict(m) for m in ROSTER]
    assert api(world, "alice", "POST", "/lti/contexts/1/roster").status_code == 403
    r = api(world, "prof", "POST", "/lti/contexts/1/roster")
    assert r.status_code == 200, r.text
    assert r.json()["created"] == 3
    r = api(world, "prof", "GET", "/lti/outbox")
    assert r.status_code == 200 and r.json() == {"items": []}


def test_the_cli_syncs_a_roster_by_its_lms_id(world):
    from click.testing import CliRunner
    from grader.commands.lti_outbox import roster
    world.platform.roster = [dict(m) for m in ROSTER]
    r = CliRunner().invoke(roster, ["course-1", "--database", world.database])
    assert r.exit_code == 0, r.output
    assert r.output.strip() == ("course-1: 4 member(s) read in 3 page(s), 3 new user(s), 0 no longer active, "
                                "1 left out (roles grader does not map)")
    r = CliRunner().invoke(roster, ["course-9", "--database", world.database])
    assert r.exit_code == 1 and "no LMS course 'course-9'" in r.output


def test_a_launch_schedules_one_roster_sync_in_the_background(world):
    import time
    from grader.db.models import LtiContext
    world.platform.roster = [dict(m) for m in ROSTER]
    lti = world.state.grader.lti
    assert lti.sync_after_launch(1) is True
    deadline = time.monotonic() + 30
    while "sub-new" not in members(world):                # bounded polling: the sync's thread
        assert time.monotonic() < deadline, "the roster sync after the launch did not finish"
        time.sleep(0.05)
    with world.state.grader.db.read() as conn:
        assert conn.execute(select(LtiContext.roster_synced_at)).scalar_one() is not None
    assert lti.sync_after_launch(1) is False              # synced within the hour: not again
