"""LTI 1.3 launches end to end (issue 30): a real Chromium goes through the OIDC redirects
between an independent platform (lti1p3platform, tests/lti/platform_lti.py, at localhost:
another site than the tool's 127.0.0.1) and a live `grader serve`. An instructor deep-links an
assessment (the platform checks the signed response with the tool's key set); a learner
launches, lands signed in on it and submits; an instructor's launch lands on the staff page.
Then every refusal: id_tokens made with the platform's own key (or another key), nothing
mocked: each is one page, one audit line, and nothing created.

The course (platform_lti.py): hw1 "Homework <1> & "A"" (17-08/practice-1, 1 point, due in 3 days),
hw2 (practice-1.check and quiz-1)."""
from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from sqlalchemy import func, select

from grader.db.models import (AuditEntry, LtiAccount, LtiContext, LtiLink, LtiMember, LtiNonce, User,
                              WebSession)
from lti_fixtures import lti_browser, lti_live, lti_page  # noqa: F401 (fixtures)
from platform_lti import DUE, INSTRUCTOR, LEARNER, rsa_pair
from web_helpers import axe_violations, unlabelled_inputs

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
    assert axe_violations(page) == [] and unlabelled_inputs(page) == []
    form = {n: page.locator(f"input[name={n}]").get_attribute("value") for n in ("launch_id", "csrf")}
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
    # the launch answers once: the same form again is refused
    before = _counts(lti_live)
    again = httpx.post(lti_live.url + "/lti/deep-link", data={**form, "assessment": "hw1"}, timeout=30)
    _assert_refused(lti_live, again, 400, "deep_link_expired", before)
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


def test_the_refusal_page_in_the_browser(lti_live, lti_page):
    page = lti_page()
    resp = page.goto(lti_live.url + "/lti/login?iss=http%3A%2F%2Fevil.test&login_hint=u")
    assert resp.status == 401
    assert page.locator("h1").inner_text() == "This launch from your course was refused"
    assert "not registered with this grader" in page.locator("[role=alert]").inner_text()
    assert axe_violations(page) == []


# ------------------------------------------------------------------ refusals (id_tokens made by hand)

def _login(live, post: bool = False, **params) -> tuple[str, str, httpx.Cookies]:
    """A real OIDC login at the tool (GET, or POST as Canvas sends it): its state and nonce (from
    the redirect to the platform)."""
    p = live.platform
    q = {"iss": p.issuer, "login_hint": "u1", "target_link_uri": live.url + "/lti/launch", "client_id": p.client_id,
         "lti_deployment_id": p.deployment, **params}
    r = (httpx.post(live.url + "/lti/login", data=q, follow_redirects=False, timeout=30) if post else
         httpx.get(live.url + "/lti/login", params=q, follow_redirects=False, timeout=30))
    assert r.status_code == 302, r.text
    assert r.headers["location"].startswith(p.browser_url + "/authorize?")
    got = parse_qs(urlsplit(r.headers["location"]).query)
    assert got["redirect_uri"] == [live.url + "/lti/launch"] and got["client_id"] == [p.client_id]
    return got["state"][0], got["nonce"][0], r.cookies


def _claims(p, issued_nonce: str, /, **changes) -> dict:
    """A learner's resource-link launch as the platform makes it; ``changes``: claims replaced
    (``None``: removed; a key starting with ``/``: an LTI claim; a function: of the time now,
    in seconds, as the token is made: a time taken when the module was collected would be
    long past in a long run)."""
    now = int(time.time())
    c = {"iss": p.issuer, "aud": p.client_id, "azp": p.client_id, "sub": "mallory-" + uuid.uuid4().hex[:6],
         "nonce": issued_nonce, "iat": now, "exp": now + 300, "name": "Mallory",
         LTI + "message_type": "LtiResourceLinkRequest", LTI + "version": "1.3.0",
         LTI + "deployment_id": p.deployment, LTI + "target_link_uri": "x", LTI + "roles": [LEARNER],
         LTI + "resource_link": {"id": "link-r"}, LTI + "context": {"id": "course-r", "title": "R"},
         LTI + "custom": {"assessment": "hw1"}}
    for k, v in changes.items():
        k = LTI + k[1:] if k.startswith("/") else k
        v = v(now) if callable(v) else v
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def _post(live, claims: dict, state: str, cookies=None, key: str | None = None, kid: str | None = None):
    p = live.platform
    token = jwt.encode(claims, key or p.private_pem, algorithm="RS256", headers={"kid": kid or p.kid})
    return httpx.post(live.url + "/lti/launch", data={"id_token": token, "state": state}, cookies=cookies,
                      follow_redirects=False, timeout=30)


OTHER_KEY = rsa_pair()
MENTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"
DL_SETTINGS = {"deep_link_return_url": "http://localhost/x", "accept_types": ["ltiResourceLink"],
               "accept_presentation_document_targets": ["window"]}

# name: (claims changed, how the request is made, status, reason)
REFUSALS = {
    "bad signature (another key, the platform's kid)": ({}, {"key": OTHER_KEY[0]}, 401, "bad_signature"),
    "a key the platform does not have": ({}, {"key": OTHER_KEY[0], "kid": OTHER_KEY[2]}, 401, "bad_signature"),
    "unknown issuer": ({"iss": "http://evil.test"}, {}, 401, "unknown_platform"),
    "unknown client id": ({"aud": "someone-else", "azp": "someone-else"}, {}, 401, "unknown_platform"),
    "unknown deployment": ({"/deployment_id": "deployment-9"}, {}, 401, "unknown_deployment"),
    "expired": ({"iat": lambda now: now - 900, "exp": lambda now: now - 300}, {}, 401, "expired"),
    "issued in the future": ({"iat": lambda now: now + 900, "exp": lambda now: now + 1200}, {}, 401,
                             "not_yet_valid"),
    "no expiry": ({"exp": None}, {}, 400, "missing_claim"),
    "wrong message type": ({"/message_type": "LtiSubmissionReviewRequest"}, {}, 400, "wrong_message_type"),
    "no roles claim": ({"/roles": None}, {}, 400, "bad_message"),
    "no resource link": ({"/resource_link": None}, {}, 400, "bad_message"),
    "no context": ({"/context": None}, {}, 400, "missing_claim"),
    "no deployment": ({"/deployment_id": None}, {}, 400, "missing_claim"),
    "a nonce this tool never issued": ({"nonce": "made-up-nonce"}, {}, 401, "unknown_nonce"),
    "a forged state": ({}, {"state": "state-forged"}, 401, "bad_state"),
    "learner deep linking": ({"/message_type": "LtiDeepLinkingRequest", "/resource_link": None,
                              "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings": DL_SETTINGS},
                             {}, 403, "learner_deep_linking"),
    "an assessment the course lacks": ({"/custom": {"assessment": "nope"}}, {}, 400, "unknown_assessment"),
    "a link naming no assessment": ({"/custom": None}, {}, 400, "no_assessment"),
    "a role grader does not serve": ({"/roles": [MENTOR]}, {}, 403, "no_role"),
}


def _refusals(live) -> list[dict]:
    return [{**r.detail, "target": r.target} for r in _audit(live, "lti.refused", wait_s=0)]


def _assert_refused(live, r, status: int, reason: str, before: dict) -> dict:
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"].startswith("text/html")
    assert "This launch from your course was refused" in r.text
    for leak in ("Traceback", "LtiException", "pylti1p3", "jwt.", "Signature verification", "File \""):
        assert leak not in r.text
    assert not any(c.startswith(("grader_session", "__Host-grader_session"))
                   for c in r.headers.get_list("set-cookie"))
    deadline = time.monotonic() + 10      # the audit line is written without waiting for it
    while len(_refusals(live)) < before["refused"] + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    new = _refusals(live)[before["refused"]:]
    assert [d["reason"] for d in new] == [reason]
    assert _counts(live) == {**before, "refused": before["refused"] + 1}
    return new[0]


def _counts(live) -> dict:
    return {"users": _count(live, User), "sessions": _count(live, WebSession), "nonces": _count(live, LtiNonce),
            "accounts": _count(live, LtiAccount), "contexts": _count(live, LtiContext),
            "links": _count(live, LtiLink), "refused": len(_refusals(live))}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_bad_launch_is_refused_with_one_page_one_audit_line_and_nothing_created(lti_live, name):
    changes, how, status, reason = REFUSALS[name]
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    claims = _claims(lti_live.platform, nonce, **changes)
    r = _post(lti_live, claims, how.get("state", state), cookies, key=how.get("key"), kid=how.get("kid"))
    line = _assert_refused(lti_live, r, status, reason, before)
    assert line["target"] == claims["iss"]          # the issuer the token claims, for staff to look into


def test_a_replayed_launch_is_refused(lti_live):
    state, nonce, cookies = _login(lti_live)
    claims = _claims(lti_live.platform, nonce)
    first = _post(lti_live, claims, state, cookies)
    assert first.status_code == 200 and "Continue to" in first.text      # the launch itself is good
    before = _counts(lti_live)
    again = _post(lti_live, claims, state, cookies)
    _assert_refused(lti_live, again, 401, "replayed", before)
    # the same id_token with a fresh login's state: its nonce is still the used one
    state2, _, cookies2 = _login(lti_live, post=True)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, claims, state2, cookies2), 401, "replayed", before)


def test_a_login_from_an_unknown_platform_is_refused(lti_live):
    before = _counts(lti_live)
    r = httpx.get(lti_live.url + "/lti/login", params={"iss": "http://evil.test", "login_hint": "u",
                                                        "target_link_uri": lti_live.url + "/lti/launch"}, timeout=30)
    _assert_refused(lti_live, r, 401, "unknown_platform", before)
    before = _counts(lti_live)
    p = lti_live.platform
    r = httpx.get(lti_live.url + "/lti/login", params={"iss": p.issuer, "login_hint": "u", "client_id": p.client_id,
                                                        "lti_deployment_id": "deployment-9"}, timeout=30)
    _assert_refused(lti_live, r, 401, "unknown_deployment", before)
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/launch", data={"state": "x"}, timeout=30)
    _assert_refused(lti_live, r, 400, "missing_param", before)
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/launch", data={"id_token": "not.a.jwt", "state": "x"}, timeout=30)
    _assert_refused(lti_live, r, 400, "malformed", before)


def test_the_deep_link_form_needs_its_launchs_token(lti_live):
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/deep-link", data={"launch_id": "abc", "csrf": "0" * 40,
                                                           "assessment": "hw1"}, timeout=30)
    _assert_refused(lti_live, r, 403, "deep_link_csrf", before)


def test_a_platform_whose_key_set_cannot_be_read_is_refused(lti_live):
    """A registered platform whose key-set URL answers nothing (a port nobody listens on): the
    launch cannot be checked, so it is refused (and nothing hangs: the fetch has a timeout)."""
    from grader.serve.lti import registry
    from serve_helpers import free_port
    dead = f"http://127.0.0.1:{free_port()}"
    with lti_live.db.write() as conn:
        registry.add_platform(conn, issuer=dead, client_id="c-dead", login_url=dead + "/auth",
                              token_url=dead + "/token", keyset_url=dead + "/jwks", deployments=["d-dead"])
    q = {"iss": dead, "login_hint": "u", "target_link_uri": lti_live.url + "/lti/launch", "client_id": "c-dead"}
    r = httpx.get(lti_live.url + "/lti/login", params=q, follow_redirects=False, timeout=30)
    assert r.status_code == 302 and r.headers["location"].startswith(dead + "/auth?")
    got = parse_qs(urlsplit(r.headers["location"]).query)
    claims = _claims(lti_live.platform, got["nonce"][0], iss=dead, aud="c-dead", azp="c-dead",
                     **{"/deployment_id": "d-dead"})
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, claims, got["state"][0], r.cookies), 401, "keyset_unavailable", before)


def test_a_launch_does_not_undo_a_revoked_access(lti_live):
    """`grader users revoke` of an LTI learner's tokens: the next launch is refused (it used to
    make a new token silently); a token issued again by staff lets the launches in again."""
    from grader.db.models import Token, now
    from sqlalchemy import update
    sub = "revoked-" + uuid.uuid4().hex[:6]
    state, nonce, cookies = _login(lti_live)
    assert _post(lti_live, _claims(lti_live.platform, nonce, sub=sub), state, cookies).status_code == 200
    with lti_live.db.write() as conn:
        uid = conn.execute(select(LtiAccount.user_id).where(LtiAccount.subject == sub)).scalar_one()
        conn.execute(update(Token).where(Token.user_id == uid).values(revoked_at=now()))
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(lti_live.platform, nonce, sub=sub), state, cookies),
                    403, "revoked", before)
    login = None
    with lti_live.db.read() as conn:
        login = conn.execute(select(User.login).where(User.id == uid)).scalar_one()
    r = subprocess.run([sys.executable, "-m", "grader", "users", "token", login, "--database", str(lti_live.db.url)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    state, nonce, cookies = _login(lti_live)
    assert _post(lti_live, _claims(lti_live.platform, nonce, sub=sub), state, cookies).status_code == 200
