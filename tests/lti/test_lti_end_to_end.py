"""Issue 30's acceptance end to end: ONE independent LMS (tests/lti/lti_lms.py: lti1p3platform's
OIDC login, launches, deep-linking check, token endpoint, AGS and NRPS, on one port under one
issuer) and ONE live `grader serve` (its own process, its outbox sender every 0.2 s:
``--lti-interval 0.2``), driven through a real Chromium (the OIDC redirects included; the LMS is
``localhost``, grader ``127.0.0.1``: two sites). Nothing mocks a JWT check: the tool checks the
LMS's id_tokens against the LMS's key set, the LMS checks the tool's deep-linking response and
its token assertions against the tool's key set.

The steps build on each other (one LMS course, one grader course); each is a method of
:class:`World` run once, so that a test run alone (``-k``) runs the steps it needs first.

The course, derived by hand: hw1 "Homework 1" = 17-08/practice-1 (a number, 1 point; 64 is
right) + 17-08/practice-2 (free text with a rubric, 2 points: items a +1, b +1): its line item's
scoreMaximum is 1 + 2 = 3.
- Alice answers both: 1 (practice-1) + 0 (practice-2 waits for a person) = 1 of 3, every problem
  answered: Completed, PendingManual.
- The review ticks rubric items a and b: 1 + (1 + 1) = 3 of 3, FullyGraded.
- Her regrade request answered with 1.5: 1 + 1.5 = 2.5 of 3.
- With the LMS down, a review gives 2 again: 1 + 2 = 3 of 3, delivered once it is back.
"""
from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from sqlalchemy import select

from lti_fixtures import lti_browser  # noqa: F401 (fixture)
from platform_lti import INSTRUCTOR, LEARNER

LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
TA = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
NOW = datetime.now(timezone.utc).replace(second=0, microsecond=0)


def _at(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:00Z")


COURSE = f"""course: {{timezone: UTC}}
assessments:
  - id: hw1
    title: Homework 1
    problems: [17-08/practice-1, 17-08/practice-2]
    opens: "{_at(NOW - timedelta(days=1))}"
    due: "{_at(NOW + timedelta(days=3))}"
    show: immediately
  - id: hw2
    title: Homework 2
    problems: [17-08/practice-1.check]
    opens: "{_at(NOW - timedelta(days=1))}"
    due: "{_at(NOW + timedelta(days=10))}"
"""
PROF = {"sub": "prof-1", "roles": [INSTRUCTOR], "name": "Ada Prof", "email": "ada@uni.example"}
ALICE = {"sub": "alice-7", "roles": [LEARNER], "name": "Alice Liddell", "email": "alice@uni.example"}
FREE_TEXT = "Each projection is d x d, so 4d^2 either way: h heads of d x d/h give d^2 per projection."


def wait_for(what: str, probe, deadline_s: float, every_s: float = 0.1):
    """``probe()`` until it is truthy (its value), at most ``deadline_s`` seconds."""
    end = time.monotonic() + deadline_s
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {deadline_s:g} s (last: {got!r})")
        time.sleep(every_s)


class World:
    """The tool, the LMS, a staff token for grader's API, and the steps done so far."""

    def __init__(self, server, lms, db, token: str, browser) -> None:
        self.server, self.lms, self.db, self.token, self.browser = server, lms, db, token, browser
        self.done: dict[str, object] = {}
        self.contexts: list = []

    def step(self, name: str):
        if name not in self.done:
            self.done[name] = getattr(self, "_" + name)()
        return self.done[name]

    def page(self):
        ctx = self.browser.new_context(viewport={"width": 1200, "height": 900})
        self.contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        return page

    def api(self, method: str, path: str, **kw) -> httpx.Response:
        return httpx.request(method, self.server.url + "/api/v1" + path,
                             headers={"Authorization": f"Bearer {self.token}"}, timeout=30, **kw)

    def last_score(self) -> tuple | None:
        got = [s for s in self.lms.received() if s["userId"] == ALICE["sub"]]
        if not got:
            return None
        s = got[-1]
        return (s["scoreGiven"], s["scoreMaximum"], s["activityProgress"], s["gradingProgress"])

    def score_becomes(self, want: tuple, deadline_s: float = 30.0) -> tuple:
        """Bounded polling of what the LMS received (the live sender posts by itself)."""
        return wait_for(f"the LMS holds {want}", lambda: self.last_score() == want and self.last_score(), deadline_s)

    def outbox_empty(self, deadline_s: float = 30.0) -> None:
        """Bounded polling of the staff's outbox API until nothing is pending, held or failed."""
        wait_for("the outbox empty", lambda: self.api("GET", "/lti/outbox").json()["items"] == [], deadline_s)

    # ------------------------------------------------------------------ the steps

    def _deep_link(self) -> str:
        """The instructor deep-links hw1: the id of the link the LMS placed."""
        lms = self.lms
        lms.launches["dl-prof"] = {"kind": "deep_link", **PROF}
        page = self.page()
        page.goto(lms.browser_url + "/start/dl-prof")
        page.wait_for_url(re.compile(r".*/lti/launch$"))
        page.locator("label", has_text="Homework 1").click()
        with page.expect_navigation(url=re.compile(r".*/deep-link-return$")):
            page.get_by_role("button", name="Add to the course").click()
        page.wait_for_selector("#received, #refused")
        assert lms.deep_link_errors == [], lms.deep_link_errors
        (link_id,) = lms.links
        return link_id

    def _staff(self):
        """The instructor launches the placed link: a browser page signed in as staff."""
        link = self.step("deep_link")
        page = self.page()
        page.goto(self.lms.launch_of(link, **PROF))
        page.wait_for_url(re.compile(r".*/staff/assessments/hw1$"))
        return page

    def _learner(self):
        """Alice launches the placed link and answers both problems in the browser."""
        link = self.step("deep_link")
        page = self.page()
        page.goto(self.lms.launch_of(link, **ALICE))
        page.wait_for_url(re.compile(r".*/learn/assessments/hw1$"))
        assert "Signed in as Alice Liddell" in page.locator("header").inner_text()
        for problem, answer in (("practice-1", "64"), ("practice-2", FREE_TEXT)):
            page.goto(f"{self.server.url}/learn/exercise/17-08/{problem}")
            page.locator("textarea#answer").fill(answer)
            page.get_by_role("button", name="Submit").click()
            page.wait_for_selector("#result")
        assert page.locator("#result").count() == 1
        return page

    def _roster(self) -> str:
        """The LMS's roster gains two learners and a TA; the instructor clicks "Sync the roster"
        on /staff/lti: the page's message."""
        staff = self.step("staff")
        self.lms.roster.extend(dict(m) for m in NEW)
        staff.goto(self.server.url + "/staff/lti")
        staff.get_by_role("button", name="Sync the roster").click()
        return str(staff.locator("[role=status]").inner_text())


@pytest.fixture(scope="module")
def world(tmp_path_factory, lti_browser):  # noqa: F811
    from grader.db import Database
    from grader.serve.lti import registry
    from lti_lms import Lms
    from serve_helpers import LiveServer, make_bank, users
    tmp = tmp_path_factory.mktemp("lti-e2e")
    bank = make_bank(tmp)
    (bank / "assessments.yaml").write_text(COURSE)
    url = f"sqlite:///{tmp / 'grader.db'}"
    token = users(url, staff="instructor")["staff"]        # grader's API (outbox, audit), as staff
    db = Database(url)
    server = LiveServer(url, bank, tmp, "--workers", "1", "--rate", "0", "--lti-interval", "0.2")
    lms = Lms(server.url)
    lms.services.roster.extend({"user_id": p["sub"], "roles": p["roles"], "name": p["name"], "email": p["email"]}
                               for p in (PROF, ALICE))
    with db.write() as conn:
        registry.add_platform(conn, issuer=lms.issuer, client_id=lms.client_id,
                              login_url=lms.browser_url + "/authorize", token_url=lms.local + "/token",
                              keyset_url=lms.local + "/jwks", deployments=[lms.deployment], name="the LMS")
    server.start()
    lms.start()
    w = World(server, lms, db, token, lti_browser)
    try:
        yield w
    finally:
        for ctx in w.contexts:
            ctx.close()
        lms.stop()
        server.stop()
        db.dispose()


def _alice(world):
    from grader.db.models import LtiAccount, User
    with world.db.read() as conn:
        return conn.execute(select(User.id, User.login).join(LtiAccount, LtiAccount.user_id == User.id)
                            .where(LtiAccount.subject == ALICE["sub"])).one()


def _claims_of_launch(lms, sub: str) -> dict:
    """The claims of the last id_token the LMS posted for ``sub`` (read here only for what they
    say: the tool checked their signature itself)."""
    import jwt
    got = [jwt.decode(s["id_token"], options={"verify_signature": False}) for s in lms.sent]
    return [c for c in got if c["sub"] == sub][-1]


# ------------------------------------------------------------------ 1. deep linking

def test_an_instructor_deep_links_an_assessment_and_the_lms_places_it(world):
    link = world.step("deep_link")
    lms = world.lms
    (received,) = lms.deep_links                 # verified by the LMS against the tool's key set
    (item,) = received["items"]
    assert item["type"] == "ltiResourceLink" and item["title"] == "Homework 1"
    assert item["url"] == world.server.url + "/lti/launch"
    assert item["custom"] == {"assessment": "hw1"}
    # practice-1 (1 point) + practice-2 (2 points): 3
    assert item["lineItem"] == {"label": "Homework 1", "scoreMaximum": 3, "resourceId": "hw1"}
    placed = lms.links[link]
    assert placed["custom"] == {"assessment": "hw1"}
    assert lms.lineitems[placed["lineitem"]] == {"id": placed["lineitem"], "label": "Homework 1", "scoreMaximum": 3,
                                                 "resourceId": "hw1", "resourceLinkId": link}


# ------------------------------------------------------------------ 2. a learner's launch and score

def test_a_learner_launches_submits_and_the_lms_receives_the_score(world):
    from grader.db.models import LtiLink
    world.step("learner")
    link = world.lms.links[world.step("deep_link")]
    claims = _claims_of_launch(world.lms, ALICE["sub"])
    ags = claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]
    assert (ags["lineitems"], ags["lineitem"]) == (world.lms.lineitems_url, link["lineitem"])
    assert (claims["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"]["context_memberships_url"]
            == world.lms.memberships_url)
    # 1 (practice-1) + 0 (practice-2 waits for a person) of 3; both answered
    assert world.score_becomes((1, 3, "Completed", "PendingManual")) == (1, 3, "Completed", "PendingManual")
    score = [s for s in world.lms.received() if s["userId"] == ALICE["sub"]][-1]
    assert score in world.lms.services.scores[link["lineitem"]]        # the placed line item's column
    with world.db.read() as conn:
        assert conn.execute(select(LtiLink.lineitem_url).where(LtiLink.assessment_id == "hw1")).scalar_one() \
            == link["lineitem"]


# ------------------------------------------------------------------ 3. a review, then a regrade

def test_a_review_then_a_regrade_in_the_browser_update_the_lms_score(world):
    learner = world.step("learner")
    world.score_becomes((1, 3, "Completed", "PendingManual"))
    staff = world.step("staff")
    staff.goto(world.server.url + "/staff/review")
    item = staff.locator("article.review-item", has_text=FREE_TEXT[:30])
    item.locator("input[name=rubric][value=a]").check()
    item.locator("input[name=rubric][value=b]").check()
    item.get_by_role("button", name=re.compile("^Save")).click()
    staff.wait_for_url(re.compile(r".*/staff/review(#.*)?$"))
    # rubric a + b = 2: 1 + 2 = 3 of 3, nothing left for a person
    world.score_becomes((3, 3, "Completed", "FullyGraded"))
    learner.goto(world.server.url + "/learn/exercise/17-08/practice-2")
    learner.locator("form.regrade-form textarea").fill("Item b is only half there.")
    learner.get_by_role("button", name="Ask for a regrade").click()
    learner.wait_for_url(re.compile(r".*/learn/exercise/17-08/practice-2(#review)?$"))
    staff.goto(world.server.url + "/staff/review")
    form = staff.locator("article.review-item", has_text=FREE_TEXT[:30]).locator("form.regrade-answer")
    form.locator("textarea[name=response]").fill("Fair: 1.5.")
    form.locator("input[name=score]").fill("1.5")
    form.get_by_role("button", name="Answer the request").click()
    staff.wait_for_url(re.compile(r".*/staff/review$"))
    world.score_becomes((2.5, 3, "Completed", "FullyGraded"))       # 1 + 1.5
    stamps = [s["timestamp"] for s in world.lms.received() if s["userId"] == ALICE["sub"]]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


# ------------------------------------------------------------------ 4. the LMS down during a passback

def test_the_lms_down_keeps_the_score_which_arrives_once_it_is_back(world):
    from grader.db.models import Answer
    world.step("learner")
    world.outbox_empty()                               # what the steps before posted is in
    alice = _alice(world)
    with world.db.read() as conn:
        answer = conn.execute(select(Answer.id).where(Answer.user_id == alice.id,
                                                      Answer.problem_id == "17-08/practice-2")).scalar_one()
    before = len(world.lms.received())
    world.lms.stop()                                   # no server at all: connection refused
    try:
        r = world.api("POST", f"/review/{answer}", json={"score": 2, "comment": "both items after all"})
        assert r.status_code in (200, 201), r.text

        def retried():
            items = world.api("GET", "/lti/outbox").json()["items"]
            return [i for i in items if i["learner"] == alice.login and i["attempts"] >= 1]
        (row,) = wait_for("a failed try kept pending", retried, 30)
        assert row["status"] == "pending" and "cannot be reached" in row["error"], row
        assert len(world.lms.received()) == before
    finally:
        world.lms.start()
    # the sender's own back-off (full jitter, at most 30 s after the first try): bounded by next_at
    next_at = datetime.fromisoformat(row["next_at"].replace("Z", "+00:00"))
    wait = max(0.0, (next_at - datetime.now(timezone.utc)).total_seconds()) + 15
    world.score_becomes((3, 3, "Completed", "FullyGraded"), wait)    # 1 + 2
    world.outbox_empty()


# ------------------------------------------------------------------ 5. the roster

NEW = [
    {"user_id": "bob-3", "roles": [LIS + "Learner"], "name": "Bob Builder", "email": "bob@uni.example"},
    {"user_id": "carol-4", "roles": ["Learner"], "given_name": "Carol", "family_name": "Chen",
     "email": "carol@uni.example"},
    {"user_id": "tom-5", "roles": [TA], "name": "Tom Assist", "email": "tom@uni.example"},
]


def test_the_staff_sync_the_roster_in_the_browser_and_the_new_members_exist(world):
    from grader.db.models import LtiAccount, LtiMember, User
    # prof, alice and the three new: 5 members, 3 new users
    assert "5 members read, 3 new" in world.step("roster")
    with world.db.read() as conn:
        got = {r.subject: (r.name, r.email, r.role) for r in conn.execute(
            select(LtiAccount.subject, User.name, User.email, User.role).join(User, User.id == LtiAccount.user_id)
            .join(LtiMember, LtiMember.user_id == User.id))}
    assert got["bob-3"] == ("Bob Builder", "bob@uni.example", "learner")
    assert got["carol-4"] == ("Carol Chen", "carol@uni.example", "learner")
    assert got["tom-5"] == ("Tom Assist", "tom@uni.example", "instructor")


# ------------------------------------------------------------------ 6. the audit log

def test_the_audit_log_records_launches_the_deep_link_passbacks_and_the_roster(world):
    for step in ("deep_link", "staff", "learner", "roster"):
        world.step(step)
    world.outbox_empty()
    assert world.lms.received()

    def entries(action: str) -> list[dict]:
        r = world.api("GET", "/audit", params={"action": action, "limit": 500})
        assert r.status_code == 200, r.text
        return [e for e in r.json()["entries"] if e["action"] == action]
    launches = wait_for("launches", lambda: entries("lti.launch"), 10)
    messages = sorted(e["detail"]["message"] for e in launches)
    assert messages.count("LtiDeepLinkingRequest") == 1 and messages.count("LtiResourceLinkRequest") >= 2
    assert {e["detail"]["role"] for e in launches} == {"instructor", "learner"}
    assert [e["target"] for e in entries("lti.deep_link")] == ["hw1"]
    alice = _alice(world)
    passbacks = wait_for("passbacks", lambda: entries("lti.passback"), 10)
    assert all(e["actor"] == "lti-outbox" and e["target"] == f"hw1:{alice.id}" for e in passbacks)
    assert {e["detail"]["scoreMaximum"] for e in passbacks} == {3}
    rosters = entries("lti.roster")
    assert any(e["detail"].get("created") == 3 and e["target"] == "course-1" for e in rosters), rosters


# ------------------------------------------------------------------ `grader serve --lti-interval`

def test_serve_passes_its_lti_interval_to_the_service(tmp_path, monkeypatch):
    from click.testing import CliRunner
    import uvicorn
    import grader.serve.app
    from grader.commands.serve import serve
    seen = []
    monkeypatch.setattr(grader.serve.app, "create_app", lambda settings, **kw: seen.append(settings) or object())
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    base = ["--database", str(tmp_path / "g.db"), "--port", "0", "--secret-file", str(tmp_path / "s")]
    r = CliRunner().invoke(serve, base + ["--lti-interval", "0.5"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(serve, base)
    assert r.exit_code == 0, r.output
    assert [s.lti_interval_s for s in seen] == [0.5, 5.0]               # the production default unchanged
    r = CliRunner().invoke(serve, base + ["--lti-interval", "0"])      # 0 would be "no sender": refused
    assert r.exit_code == 2 and "--lti-interval" in r.output
