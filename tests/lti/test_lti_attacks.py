"""Attacks on the tool side of LTI 1.3 (issue 30, red team): a hostile learner, a hostile second
LMS and a network attacker against a live `grader serve` and the independent platform of
tests/lti/platform_lti.py (lti1p3platform). id_tokens are made by hand with the platform's key
(or another platform's), nothing mocked. A second and third "platform" here are registrations
whose key set is served by a small HTTP server of this module (:class:`KeyServer`)."""
from __future__ import annotations

import base64
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from jwcrypto.jwk import JWK
from sqlalchemy import select

from grader.db.models import LtiAccount, LtiContext, LtiLink, User
from lti_fixtures import lti_live  # noqa: F401 (fixture)
from platform_lti import INSTRUCTOR, LEARNER
from serve_helpers import free_port
from test_lti_launch import DL_SETTINGS, LTI, MENTOR, OTHER_KEY, _all, _assert_refused, _claims, _counts, _login, _post

DL = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
INSTITUTION_INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"
SYSTEM_ADMIN = "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"


class KeyServer:
    """``path -> (status, headers, body)`` answered on 127.0.0.1 (a platform's key set URL)."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.hits: list[str] = []
        routes, hits = self.routes, self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:          # noqa: N802 (http.server's name)
                hits.append(self.path)
                status, headers, body = routes.get(self.path, (404, {}, b"{}"))
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, name="lti-keys", daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()


@pytest.fixture(scope="module")
def keys(lti_live):
    ks = KeyServer()
    other = JWK.from_pem(OTHER_KEY[1].encode())
    ks.routes["/jwks-b"] = (200, {}, json.dumps({"keys": [{**other.export_public(as_dict=True), "kid": OTHER_KEY[2],
                                                           "alg": "RS256", "use": "sig"}]}).encode())
    yield ks
    ks.stop()


def _register(live, issuer: str, client_id: str, keyset_url: str, deployment: str) -> None:
    from grader.serve.lti import registry
    with live.db.write() as conn:
        if registry.find(conn, issuer, client_id) is None:
            registry.add_platform(conn, issuer=issuer, client_id=client_id, login_url="https://lms.example/auth",
                                  token_url="https://lms.example/token", keyset_url=keyset_url,
                                  deployments=[deployment])


def _login_at(live, iss: str, client_id: str, headers=None) -> tuple[str, str, httpx.Response]:
    """A login at the tool for any registered platform: (state, nonce, the 302)."""
    r = httpx.get(live.url + "/lti/login", params={"iss": iss, "login_hint": "u", "client_id": client_id},
                  headers=headers, follow_redirects=False, timeout=30)
    assert r.status_code == 302, r.text[:300]
    got = parse_qs(urlsplit(r.headers["location"]).query)
    return got["state"][0], got["nonce"][0], r


def _ok(r) -> None:
    assert r.status_code == 200 and "Continue to" in r.text, r.text[:500]


def _user(live, issuer: str, subject: str):
    with live.db.read() as conn:
        acct = conn.execute(_all(LtiAccount).where(LtiAccount.issuer == issuer, LtiAccount.subject == subject)).one()
        return conn.execute(_all(User).where(User.id == acct.user_id)).one()


# ------------------------------------------------------------------ the login: only to the registered platform

def test_the_login_sends_the_browser_only_to_the_registered_login_url(lti_live):
    p = lti_live.platform
    state, nonce, cookies = _login(lti_live, target_link_uri="http://evil.test/steal",
                                   lti_message_hint="http://evil.test/x\r\nLocation: http://evil.test")
    # _login checked: a 302 to the platform's registered /authorize, redirect_uri = the tool's own /lti/launch
    r = httpx.get(lti_live.url + "/lti/login", params={"iss": p.issuer, "login_hint": "u", "client_id": p.client_id,
                                                        "target_link_uri": "http://evil.test/"},
                  follow_redirects=False, timeout=30)
    assert urlsplit(r.headers["location"]).netloc == urlsplit(p.browser_url).netloc
    assert "evil.test" not in parse_qs(urlsplit(r.headers["location"]).query)["redirect_uri"][0]


# ------------------------------------------------------------------ the state

def test_a_state_from_another_login_is_refused(lti_live):
    """Two logins (two browsers): the id_token of the second with the state of the first. Before
    the fix any state stored by any login passed (the store had no link to the nonce)."""
    state1, _, cookies1 = _login(lti_live)
    state2, nonce2, cookies2 = _login(lti_live)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(lti_live.platform, nonce2), state1, cookies1), 401,
                    "bad_state", before)
    _ok(_post(lti_live, _claims(lti_live.platform, nonce2), state2, cookies2))     # its own state: good


def test_over_https_the_launch_needs_the_state_cookie_of_its_login(lti_live):
    """Behind TLS (uvicorn takes X-Forwarded-Proto from 127.0.0.1) the state cookie is
    SameSite=None; Secure: a top-level cross-site POST carries it, so it is required there.
    Without it, an id_token and state taken from one browser could be posted from another (a
    login CSRF: the victim works signed in as the attacker)."""
    https = {"X-Forwarded-Proto": "https"}
    p = lti_live.platform
    state, nonce, r = _login_at(lti_live, p.issuer, p.client_id, headers=https)
    (set_cookie,) = [c for c in r.headers.get_list("set-cookie") if c.startswith("lti1p3-")]
    assert "Secure" in set_cookie and "SameSite=none" in set_cookie and "HttpOnly" in set_cookie
    token = jwt.encode(_claims(p, nonce), p.private_pem, algorithm="RS256", headers={"kid": p.kid})
    before = _counts(lti_live)
    bare = httpx.post(lti_live.url + "/lti/launch", data={"id_token": token, "state": state}, headers=https,
                      timeout=30)
    _assert_refused(lti_live, bare, 401, "bad_state", before)
    with_cookie = httpx.post(lti_live.url + "/lti/launch", data={"id_token": token, "state": state},
                             headers={**https, "Cookie": f"lti1p3-{state}={state}"}, timeout=30)
    _ok(with_cookie)


# ------------------------------------------------------------------ audience, issuer, deployment

@pytest.mark.parametrize("aud, azp", [(["grader-client-1", "another-tool"], None),
                                      ("grader-client-1", "another-tool"),
                                      (["grader-client-1", "another-tool"], "another-tool")])
def test_an_id_token_for_another_party_is_refused(lti_live, aud, azp):
    """OIDC Core 3.1.3.7: several audiences need ``azp``; ``azp`` must be this tool's client id
    (pylti1p3 reads only ``aud[0]`` and never ``azp``)."""
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    claims = _claims(lti_live.platform, nonce, aud=aud, azp=azp)     # azp None: no azp claim
    _assert_refused(lti_live, _post(lti_live, claims, state, cookies), 401, "bad_audience", before)


def test_several_audiences_with_this_tool_as_azp_are_accepted(lti_live):
    state, nonce, cookies = _login(lti_live)
    claims = _claims(lti_live.platform, nonce, aud=["grader-client-1", "another-tool"], azp="grader-client-1")
    _ok(_post(lti_live, claims, state, cookies))


def test_a_hostile_second_lms_cannot_speak_for_the_first(lti_live, keys):
    """LMS B (its own key) is registered too. A's key claiming issuer B: B's key set lacks A's key.
    B's key claiming issuer A: A's key set lacks it. A's token naming B's deployment: refused.
    The same subject at A and at B: two users."""
    p = lti_live.platform
    b = "https://lms-b.example"
    _register(lti_live, b, "client-b", keys.url + "/jwks-b", "dep-b")
    # A's key, issuer B
    state, nonce, _ = _login_at(lti_live, b, "client-b")
    claims = _claims(p, nonce, iss=b, aud="client-b", azp="client-b", **{"/deployment_id": "dep-b"})
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, claims, state), 401, "bad_signature", before)
    # B's key, issuer A
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(p, nonce), state, cookies, key=OTHER_KEY[0], kid=OTHER_KEY[2]),
                    401, "bad_signature", before)
    # A's own token with the state and nonce of a login started for B
    state, nonce, _ = _login_at(lti_live, b, "client-b")
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(p, nonce), state), 401, "bad_state", before)
    # A's token naming B's deployment, with an instructor's role
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    claims = _claims(p, nonce, **{"/deployment_id": "dep-b", "/roles": [INSTRUCTOR]})
    _assert_refused(lti_live, _post(lti_live, claims, state, cookies), 401, "unknown_deployment", before)
    # the same subject at both: two users, B's a learner though A's is an instructor
    state, nonce, cookies = _login(lti_live)
    _ok(_post(lti_live, _claims(p, nonce, sub="same-sub", **{"/roles": [INSTRUCTOR]}), state, cookies))
    state, nonce, _ = _login_at(lti_live, b, "client-b")
    claims = _claims(p, nonce, iss=b, aud="client-b", azp="client-b", sub="same-sub", **{"/deployment_id": "dep-b"})
    _ok(_post(lti_live, claims, state, key=OTHER_KEY[0], kid=OTHER_KEY[2]))
    at_a, at_b = _user(lti_live, p.issuer, "same-sub"), _user(lti_live, b, "same-sub")
    assert at_a.id != at_b.id and at_a.login != at_b.login
    assert (at_a.role, at_b.role) == ("instructor", "learner")


# ------------------------------------------------------------------ roles

@pytest.mark.parametrize("extra", [INSTITUTION_INSTRUCTOR, SYSTEM_ADMIN])
def test_an_institution_instructor_who_is_a_learner_here_stays_a_learner(lti_live, extra):
    """Canvas sends institution roles (an instructor of any course) with the course's roles: the
    course's (membership) roles decide. Before the fix this learner became grader staff."""
    state, nonce, cookies = _login(lti_live)
    sub = "grad-student-" + extra[-5:]
    r = _post(lti_live, _claims(lti_live.platform, nonce, sub=sub, **{"/roles": [extra, LEARNER]}), state, cookies)
    _ok(r)
    assert 'href="/learn/assessments/hw1"' in r.text
    assert _user(lti_live, lti_live.platform.issuer, sub).role == "learner"


@pytest.mark.parametrize("roles", [[INSTITUTION_INSTRUCTOR], [INSTITUTION_INSTRUCTOR, MENTOR]])
def test_an_institution_instructor_without_a_staff_role_here_is_refused(lti_live, roles):
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(lti_live.platform, nonce, **{"/roles": roles}), state, cookies),
                    403, "no_role", before)


# ------------------------------------------------------------------ what the LMS says about a person

def test_a_name_with_control_and_bidi_characters_is_kept_clean_and_bounded(lti_live):
    """``\\x1b[2J`` would clear a terminal showing `grader users`; U+202E reverses the name on staff
    pages. 500 'A's: cut to 200."""
    state, nonce, cookies = _login(lti_live)
    name = "Eve\x1b[2J\u202e<b>x</b>\n\x00" + "A" * 500
    r = _post(lti_live, _claims(lti_live.platform, nonce, sub="eve-ctl", name=name,
                                email="eve\r\nBcc: all@uni.example"), state, cookies)
    _ok(r)
    assert "Signed in as Eve[2J&lt;b&gt;x&lt;/b&gt;AAA" in r.text and "<b>" not in r.text    # the landing page
    u = _user(lti_live, lti_live.platform.issuer, "eve-ctl")
    # "Eve" + "[2J" (the escape's printable rest) + "<b>x</b>" = 14 characters, then 186 'A's: 200
    assert u.name == "Eve[2J<b>x</b>" + "A" * 186
    assert u.email == "eveBcc: all@uni.example"


def test_a_derived_login_already_taken_is_never_taken_over(lti_live):
    """A staff account made by hand whose login is what an LTI subject derives to: the launch
    makes another user (a suffix), the staff account keeps its role and name."""
    from grader.db.models import now
    from grader.serve.lti.people import login_for
    p = lti_live.platform
    taken = login_for(p.issuer, "collide")
    with lti_live.db.write() as conn:
        conn.execute(User.__table__.insert().values(login=taken, name="Staff Person", email="", role="instructor",
                                                    created_at=now()))
    state, nonce, cookies = _login(lti_live)
    _ok(_post(lti_live, _claims(p, nonce, sub="collide", name="Mallory"), state, cookies))
    mallory = _user(lti_live, p.issuer, "collide")
    with lti_live.db.read() as conn:
        staff = conn.execute(_all(User).where(User.login == taken)).one()
    assert mallory.id != staff.id and mallory.login.startswith(taken + "-") and mallory.role == "learner"
    assert (staff.name, staff.role) == ("Staff Person", "instructor")


def test_subjects_are_kept_exactly_two_that_differ_are_two_users(lti_live):
    """A subject was trimmed and cut to 255: " dup " and "dup" (or two 256-character subjects
    sharing 255) were one grader user for two people."""
    p = lti_live.platform
    for sub in ("dup-sub", " dup-sub"):
        state, nonce, cookies = _login(lti_live)
        _ok(_post(lti_live, _claims(p, nonce, sub=sub), state, cookies))
    assert _user(lti_live, p.issuer, "dup-sub").id != _user(lti_live, p.issuer, " dup-sub").id


@pytest.mark.parametrize("changes", [{"sub": "s" * 256}, {"/context": {"id": "c" * 256}},
                                     {"/resource_link": {"id": "r" * 256}}])
def test_an_identifier_longer_than_its_column_is_refused(lti_live, changes):
    """Cut to 255, a 256-character context id was stored cut, then never found again (its second
    launch failed on the unique key and was called a replay); a long subject merged two people."""
    state, nonce, cookies = _login(lti_live)
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, _claims(lti_live.platform, nonce, **changes), state, cookies), 400,
                    "bad_message", before)


def test_service_urls_grader_may_not_call_are_not_kept(lti_live):
    """The launch's roster and line-item URLs are where grader later sends the platform's access
    token and the scores: plain http to a non-loopback host (10.0.0.7: an internal address),
    another scheme, or a URL over 1000 characters (cut, another URL) is not kept."""
    p = lti_live.platform
    state, nonce, cookies = _login(lti_live)
    claims = _claims(p, nonce, **{
        "/context": {"id": "course-ssrf"}, "/resource_link": {"id": "link-ssrf"},
        "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice":
            {"context_memberships_url": "http://10.0.0.7/admin/members", "service_versions": ["2.0"]},
        "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint":
            {"lineitems": "file:///etc/passwd", "lineitem": "https://lms.example/" + "l" * 1000,
             "scope": ["https://purl.imsglobal.org/spec/lti-ags/scope/score"]}})
    _ok(_post(lti_live, claims, state, cookies))
    with lti_live.db.read() as conn:
        ctx = conn.execute(_all(LtiContext).where(LtiContext.context_id == "course-ssrf")).one()
        link = conn.execute(_all(LtiLink).where(LtiLink.resource_link_id == "link-ssrf")).one()
    assert (ctx.memberships_url, ctx.lineitems_url, link.lineitem_url) == (None, None, None)


# ------------------------------------------------------------------ deep linking

def _picker(live, return_url: str) -> dict[str, str]:
    state, nonce, cookies = _login(live)
    claims = _claims(live.platform, nonce, **{"/message_type": "LtiDeepLinkingRequest", "/resource_link": None,
                                              "/roles": [INSTRUCTOR], DL: {**DL_SETTINGS,
                                                                           "deep_link_return_url": return_url}})
    r = _post(live, claims, state, cookies)
    assert r.status_code == 200 and "Add to the course" in r.text, r.text[:500]
    return {n: re.search(rf'name="{n}" value="([^"]+)"', r.text).group(1) for n in ("launch_id", "csrf")}


def test_a_return_url_cannot_write_the_answers_content_security_policy(lti_live):
    """A (hostile, registered) LMS's return URL whose host part carries ``;script-src *``: it went
    into the answer's CSP (form-action ORIGIN) as a directive of its own."""
    form = _picker(lti_live, "http://localhost:1;script-src * 'unsafe-inline';/back")
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/deep-link", data={**form, "assessment": "hw1"}, timeout=30)
    assert "unsafe-inline'" not in r.headers.get("content-security-policy", "").split("style-src")[0]
    _assert_refused(lti_live, r, 400, "bad_message", before)


def test_the_signed_answer_is_never_sent_in_the_clear(lti_live):
    """A return URL on plain http to a host that is not loopback: the signed response would cross
    the network readable (and replayable by whoever reads it)."""
    form = _picker(lti_live, "http://lms.example/deep-link-return")
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/deep-link", data={**form, "assessment": "hw1"}, timeout=30)
    _assert_refused(lti_live, r, 400, "bad_message", before)


def test_the_answer_goes_to_the_signed_return_url_never_a_form_field(lti_live):
    form = _picker(lti_live, "http://localhost:9/return")
    r = httpx.post(lti_live.url + "/lti/deep-link",
                   data={**form, "assessment": "hw1", "return_url": "http://evil.test/",
                         "deep_link_return_url": "http://evil.test/"}, timeout=30)
    assert r.status_code == 200
    assert 'action="http://localhost:9/return"' in r.text and "evil.test" not in r.text
    directives = [d.strip() for d in r.headers["content-security-policy"].split(";")]
    assert "form-action http://localhost:9" in directives


def test_the_picker_token_of_one_launch_does_not_fit_another(lti_live):
    a, b = _picker(lti_live, "http://localhost:9/a"), _picker(lti_live, "http://localhost:9/b")
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/deep-link", data={"launch_id": b["launch_id"], "csrf": a["csrf"],
                                                           "assessment": "hw1"}, timeout=30)
    _assert_refused(lti_live, r, 403, "deep_link_csrf", before)


# ------------------------------------------------------------------ the key set fetch

def test_the_key_set_is_read_from_its_registered_url_only_no_redirect(lti_live, keys):
    """A key-set URL that redirects (here to the real platform's key set, which would verify the
    token): requests followed it; now a 3xx is refused."""
    p = lti_live.platform
    keys.routes["/moved"] = (302, {"Location": p.local + "/jwks"}, b"")
    _register(lti_live, "https://lms-c.example", "client-c", keys.url + "/moved", "dep-c")
    state, nonce, _ = _login_at(lti_live, "https://lms-c.example", "client-c")
    claims = _claims(p, nonce, iss="https://lms-c.example", aud="client-c", azp="client-c",
                     **{"/deployment_id": "dep-c"})
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, claims, state), 401, "keyset_unavailable", before)


def test_a_huge_key_set_is_not_read_whole(lti_live, keys):
    """The platform's own key set, padded to 300 kB (> MAX_KEYSET, 256 kB): refused."""
    p = lti_live.platform
    real = httpx.get(p.local + "/jwks", timeout=30).json()
    keys.routes["/huge"] = (200, {}, json.dumps({**real, "pad": "x" * 300_000}).encode())
    _register(lti_live, "https://lms-d.example", "client-d", keys.url + "/huge", "dep-d")
    state, nonce, _ = _login_at(lti_live, "https://lms-d.example", "client-d")
    claims = _claims(p, nonce, iss="https://lms-d.example", aud="client-d", azp="client-d",
                     **{"/deployment_id": "dep-d"})
    before = _counts(lti_live)
    _assert_refused(lti_live, _post(lti_live, claims, state), 401, "keyset_unavailable", before)


def test_the_key_set_is_kept_a_flood_of_forged_launches_does_not_fetch_it_each_time(lti_live, keys):
    """Two good launches and three with a kid the platform lacks, within 30 s: one fetch (each
    launch fetched it before, so forged launches made grader wait on the LMS once per request)."""
    p = lti_live.platform
    keys.routes["/jwks-e"] = (200, {}, httpx.get(p.local + "/jwks", timeout=30).content)
    _register(lti_live, "https://lms-e.example", "client-e", keys.url + "/jwks-e", "dep-e")
    e = {"iss": "https://lms-e.example", "aud": "client-e", "azp": "client-e", "/deployment_id": "dep-e"}
    for _ in range(2):
        state, nonce, _ = _login_at(lti_live, "https://lms-e.example", "client-e")
        _ok(_post(lti_live, _claims(p, nonce, **e), state))
    for _ in range(3):
        state, nonce, _ = _login_at(lti_live, "https://lms-e.example", "client-e")
        before = _counts(lti_live)
        _assert_refused(lti_live, _post(lti_live, _claims(p, nonce, **e), state, key=OTHER_KEY[0], kid=OTHER_KEY[2]),
                        401, "bad_signature", before)
    assert keys.hits.count("/jwks-e") == 1


def test_a_kid_the_kept_key_set_lacks_is_looked_up_again_after_30_s(lti_live, keys):
    """In process (a clock): the kept set lacks the kid; at +10 s no fetch, at +31 s one."""
    from grader.serve.lti.adapter import DbSession, DbStorage, LtiCookies, LtiLaunch, LtiRequest, DbToolConf
    p = lti_live.platform
    keys.routes["/jwks-f"] = keys.routes["/jwks-b"]            # OTHER_KEY only
    _register(lti_live, "https://lms-f.example", "client-f", keys.url + "/jwks-f", "dep-f")
    t = [time.time()]

    def launch_with_kid():
        token = jwt.encode({"iss": "https://lms-f.example", "aud": "client-f"}, p.private_pem, algorithm="RS256",
                           headers={"kid": p.kid})
        req = LtiRequest({"id_token": token}, {}, False)
        storage = DbStorage(lti_live.db, clock=lambda: t[0])
        launch = LtiLaunch(req, DbToolConf(lti_live.db), DbSession(req, storage), LtiCookies(req))
        launch.set_auto_validation(False)
        launch.validate_jwt_format().validate_registration()
        with pytest.raises(Exception, match="Unable to find public key"):
            launch.get_public_key()
    launch_with_kid()
    assert keys.hits.count("/jwks-f") == 1
    t[0] += 10
    launch_with_kid()
    assert keys.hits.count("/jwks-f") == 1
    t[0] += 21
    launch_with_kid()
    assert keys.hits.count("/jwks-f") == 2


@pytest.mark.parametrize("key", [
    {"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
     "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},                  # an EC key named RS256
    {"kty": "RSA", "n": "AQAB", "e": "AQAB"},                                # a 16-bit "RSA" key
    {"kty": "RSA", "n": "!!!", "e": "AQAB"}])                                # not base64url
def test_a_key_set_with_a_key_that_cannot_be_used_is_refused_not_a_server_error(lti_live, keys, key):
    """A (hostile or broken) LMS publishes, under the id_token's kid, a key PyJWT or jwcrypto
    cannot use for RS256: their exceptions were not LtiExceptions, the launch answered 500 (the
    16-bit key held: PyJWT refuses it as a bad signature)."""
    p = lti_live.platform
    n = len(keys.routes)
    keys.routes[f"/bad-{n}"] = (200, {}, json.dumps({"keys": [{**key, "kid": p.kid, "alg": "RS256"}]}).encode())
    iss = f"https://lms-bad{n}.example"
    _register(lti_live, iss, "client-x", keys.url + f"/bad-{n}", "dep-x")
    state, nonce, _ = _login_at(lti_live, iss, "client-x")
    before = _counts(lti_live)
    claims = _claims(p, nonce, iss=iss, aud="client-x", azp="client-x", **{"/deployment_id": "dep-x"})
    _assert_refused(lti_live, _post(lti_live, claims, state), 401, "bad_signature", before)


# ------------------------------------------------------------------ huge and odd requests

def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_deeply_nested_or_huge_id_token_is_refused_as_malformed(lti_live):
    header = _b64(json.dumps({"alg": "RS256", "kid": "k"}).encode())
    for body in (b"[" * 5000 + b"]" * 5000, json.dumps({"iss": "x", "pad": "y" * 40_000}).encode()):
        before = _counts(lti_live)
        r = httpx.post(lti_live.url + "/lti/launch", data={"id_token": f"{header}.{_b64(body)}.AAAA", "state": "s"},
                       timeout=30)
        _assert_refused(lti_live, r, 400, "malformed", before)


def test_a_huge_form_is_refused_without_a_server_error(lti_live):
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/launch", data={"id_token": "x" * (2 << 20), "state": "s"}, timeout=60)
    assert r.status_code == 413 and "Traceback" not in r.text
    many = httpx.post(lti_live.url + "/lti/login", content="&".join(f"k{i}=v" for i in range(5000)),
                      headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=30)
    assert 400 <= many.status_code < 500 and "Traceback" not in many.text
    assert {k: v for k, v in _counts(lti_live).items() if k != "refused"} == \
        {k: v for k, v in before.items() if k != "refused"}


def test_an_id_token_in_the_query_string_is_not_read(lti_live):
    """The login asks for response_mode=form_post: an id_token and state in the launch's URL (which
    access logs and proxies keep) are not read; the form's are."""
    state, nonce, cookies = _login(lti_live)
    p = lti_live.platform
    token = jwt.encode(_claims(p, nonce), p.private_pem, algorithm="RS256", headers={"kid": p.kid})
    before = _counts(lti_live)
    r = httpx.post(lti_live.url + "/lti/launch", params={"id_token": token, "state": state}, cookies=cookies,
                   timeout=30)
    _assert_refused(lti_live, r, 400, "missing_param", before)
    _ok(httpx.post(lti_live.url + "/lti/launch", data={"id_token": token, "state": state}, cookies=cookies,
                   timeout=30))


# ------------------------------------------------------------------ the session

def test_a_session_cookie_set_before_the_launch_does_not_survive_it(lti_live):
    state, nonce, cookies = _login(lti_live)
    planted = "A" * 43 + ".0"
    cookies.set("grader_session", planted)
    r = _post(lti_live, _claims(lti_live.platform, nonce), state, cookies)
    _ok(r)
    (new,) = [c for c in r.headers.get_list("set-cookie") if c.startswith("grader_session=")]
    assert planted not in new and "SameSite=strict" in new and "HttpOnly" in new
    # the landing page's only script is the site's own file; the target is grader's page
    assert re.findall(r"<script[^>]*>", r.text) == ['<script src="/static/lti.js" defer>']
    assert "script-src 'self'" in r.headers["content-security-policy"]


def test_expired_states_are_pruned(tmp_path):
    """lti_states stays bounded by the logins of the last LOGIN_S seconds: every write deletes the
    expired rows (a flood of logins is pruned as it goes)."""
    from sqlalchemy import func

    from grader.db import Database
    from grader.db.models import LtiState
    from grader.serve.lti.adapter import DbStorage
    db = Database(f"sqlite:///{tmp_path / 'g.db'}")
    db.ensure_schema()
    t = [1000.0]
    store = DbStorage(db, clock=lambda: t[0])
    for i in range(50):
        store.set_value(f"state-{i}", {"nonce": str(i)}, 600)
    t[0] += 601                 # all 50 expired
    store.set_value("state-new", {"nonce": "n"}, 600)
    with db.read() as conn:
        assert conn.execute(select(func.count()).select_from(LtiState)).scalar_one() == 1
    assert store.get_value("state-1") is None
    db.dispose()
