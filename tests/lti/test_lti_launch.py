"""LTI 1.3 launches end to end (issue 30): a real Chromium goes through the OIDC redirects
between an independent platform (lti1p3platform, tests/lti/platform_lti.py, at lms.test: another
site) and a live `grader serve`. An instructor deep-links an assessment (the platform checks the
signed response with the tool's key set); a learner launches, lands signed in on it and
submits; an instructor's launch lands on the staff page. Then every refusal: id_tokens made
with the platform's own key (or another key), nothing mocked: each is one page, one audit line,
and nothing created.

The course (conftest.py): hw1 "Homework <1> & "A"" (17-08/practice-1, 1 point, due in 3 days),
hw2 (practice-1.check and quiz-1)."""
from __future__ import annotations

import re
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from sqlalchemy import func, select

from grader.db.models import (AuditEntry, LtiAccount, LtiContext, LtiLink, LtiMember, LtiNonce, User,
                              WebSession)
from platform_lti import DUE, INSTRUCTOR, LEARNER, rsa_pair

HW1 = 'Homework <1> & "A"'
LTI = "https://purl.imsglobal.org/spec/lti/claim/"


def _audit(live, action: str, wait_s: float = 10.0) -> list:
    """The audit lines of ``action`` (record() writes them without waiting: read until they are
    there, at most ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        with live.db.read() as conn:
            rows = conn.execute(select(*AuditEntry.__table__.c).where(AuditEntry.action == action)
                                .order_by(AuditEntry.id)).all()
        if rows or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def _all(model):
    return select(*model.__table__.c)


def _count(live, model) -> int:
    with live.db.read() as conn:
        return conn.execute(select(func.count()).select_from(model)).scalar_one()


# ------------------------------------------------------------------ in the browser

def test_instructor_deep_links_an_assessment(lti_live, lti_page):
    p = lti_live.platform
    p.launches["dl-prof"] = {"kind": "deep_link", "sub": "prof-42", "roles": [INSTRUCTOR], "name": "Ada Prof",
                             "email": "ada@uni.example"}
    p.context_title = "<script>alert(1)</script> DL101"
    page = lti_page()
    page.goto(p.browser_url + "/start/dl-prof")
    page.wait_for_url(re.compile(r".*/lti/launch$"))
    # the picker: escaped titles (the course's and the LMS's), every assessment offered
    assert page.locator("h1").inner_text() == "Add a grader assessment to <script>alert(1)</script> DL101"
    assert page.locator("label", has_text=HW1).count() == 1
    assert page.locator("input[name=assessment]").count() == 2
    page.locator("label", has_text=HW1).click()
    with page.expect_navigation(url=re.compile(r".*/deep-link-return$")):
        page.get_by_role("button", name="Add to the course").click()
    page.wait_for_selector("#received, #refused")
    assert p.deep_link_errors == []
    (items,) = [d["items"] for d in p.deep_links]
    (item,) = items
    # the platform verified the JWT with the tool's key set (validate_deeplinking_resp)
    assert item["type"] == "ltiResourceLink" and item["title"] == HW1
    assert item["url"] == lti_live.url + "/lti/launch"
    assert item["custom"] == {"assessment": "hw1"}
    # 17-08/practice-1 is worth 1 point (the bank's own points, no override in the course)
    assert item["lineItem"] == {"scoreMaximum": 1, "label": HW1, "resourceId": "hw1"}
    assert item["submission"] == {"endDateTime": DUE.strftime("%Y-%m-%dT%H:%M:%SZ")}
    assert [a.target for a in _audit(lti_live, "lti.deep_link")] == ["hw1"]
    launch = _audit(lti_live, "lti.launch")[-1]
    assert launch.detail["message"] == "LtiDeepLinkingRequest" and launch.detail["role"] == "instructor"


def test_learner_launches_lands_signed_in_and_submits(lti_live, lti_page):
    p = lti_live.platform
    p.launches["rl-alice"] = {"kind": "resource", "sub": "alice-7", "roles": [LEARNER], "name": "Alice Liddell",
                              "email": "alice@uni.example", "link": "link-hw1", "title": "HW 1 in the LMS",
                              "custom": {"assessment": "hw1"},
                              "lineitem": p.local + "/ags/course-1/lineitems/7"}
    page = lti_page()
    page.goto(p.browser_url + "/start/rl-alice")
    # the landing page navigates (same-site) to the assessment: the session cookie is sent on it
    page.wait_for_url(re.compile(r".*/learn/assessments/hw1$"))
    assert page.locator("h1").inner_text().startswith(HW1)
    assert "Signed in as Alice Liddell" in page.locator("header").inner_text()
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["grader_session"]["sameSite"] == "Strict"
    # submit an answer: 64 is practice-1's answer (1 point)
    page.locator("a", has_text=re.compile("\\w")).filter(has=page.locator("xpath=ancestor::table")).first.click()
    page.wait_for_url(re.compile(r".*/learn/exercise/17-08/practice-1$"))
    page.locator("textarea").first.fill("64")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#result")
    assert page.locator("#result .score").inner_text() == "1 / 1"

    with lti_live.db.read() as conn:
        (acct,) = conn.execute(_all(LtiAccount).where(LtiAccount.subject == "alice-7")).all()
        user = conn.execute(_all(User).where(User.id == acct.user_id)).one()
        ctx = conn.execute(_all(LtiContext).where(LtiContext.context_id == "course-1")).one()
        link = conn.execute(_all(LtiLink).where(LtiLink.resource_link_id == "link-hw1")).one()
        member = conn.execute(_all(LtiMember).where(LtiMember.user_id == user.id)).one()
    assert (user.role, user.name, user.email) == ("learner", "Alice Liddell", "alice@uni.example")
    assert user.login.startswith("lti-") and acct.issuer == p.issuer
    assert ctx.memberships_url == p.local + "/nrps/course-1/members"
    assert ctx.lineitems_url == p.local + "/ags/course-1/lineitems"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in ctx.ags_scopes
    assert (link.assessment_id, link.lineitem_url, link.context_pk) == ("hw1", p.local + "/ags/course-1/lineitems/7",
                                                                        ctx.id)
    assert member.roles == [LEARNER]

    # a second launch of the same person: the same user (issuer + subject), a new session
    users = _count(lti_live, User)
    page2 = lti_page()
    page2.goto(p.browser_url + "/start/rl-alice")
    page2.wait_for_url(re.compile(r".*/learn/assessments/hw1$"))
    assert _count(lti_live, User) == users


def test_instructor_launch_lands_on_the_staff_page(lti_live, lti_page):
    p = lti_live.platform
    p.launches["rl-ta"] = {"kind": "resource", "sub": "ta-1", "name": "Tom TA", "link": "link-hw2",
                           "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"],
                           "custom": {"assessment": "hw2"}}
    page = lti_page()
    page.goto(p.browser_url + "/start/rl-ta")
    page.wait_for_url(re.compile(r".*/staff/assessments/hw2$"))
    assert "Signed in as Tom TA" in page.locator("header").inner_text()
