"""The pages' sessions: CSRF bound to the session (a pair planted from another session is 403),
``__Host-`` cookies over HTTPS and plain names over HTTP, the sign-in form throttled after
failed tokens; and, in Chromium, "sign out everywhere" signing out another browser."""
from __future__ import annotations

import logging
import secrets

import pytest
from fastapi.testclient import TestClient

from serve_helpers import make_bank, users

LIMIT = 3


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    tmp = tmp_path_factory.mktemp("web-sessions")
    database = f"sqlite:///{tmp / 'grader.db'}"
    tokens = users(database, alice="learner", bob="learner")
    settings = Settings(database=database, exercises=str(make_bank(tmp)), workers=1, job_workers=1,
                        auth_failures=LIMIT, web_secret=b"w" * 32)
    app = create_app(settings, extensions=(install,))
    with TestClient(app, client=("10.8.8.8", 1)):     # the lifespan, once for the module
        app.tokens = tokens
        yield app


def client(app, addr: str, https: bool = False) -> TestClient:
    return TestClient(app, client=(addr, 40000), follow_redirects=False,
                      base_url="https://testserver" if https else "http://testserver")


def form_csrf(html: str) -> str:
    return html.split('name="csrf" value="')[1].split('"')[0]


def sign_in(c: TestClient, token: str):
    csrf = form_csrf(c.get("/learn/login").text)
    return c.post("/learn/login", data={"token": token, "csrf": csrf})


def cookie_headers(r) -> dict[str, str]:
    """{name: the whole Set-Cookie line} of a response."""
    return {h.split("=", 1)[0]: h for h in r.headers.get_list("set-cookie")}


def test_a_csrf_pair_planted_from_another_session_is_refused(app):
    attacker, victim = client(app, "10.4.0.1"), client(app, "10.4.0.2")
    assert sign_in(attacker, app.tokens["bob"]).status_code == 303
    assert sign_in(victim, app.tokens["alice"]).status_code == 303
    planted_cookie = attacker.cookies.get("grader_csrf")
    planted_token = form_csrf(attacker.get("/learn").text)           # valid in the attacker's session
    assert planted_cookie and planted_token
    victim.cookies.set("grader_csrf", planted_cookie)                 # the pair planted in the victim's browser
    r = victim.post("/learn/exercise/17-08/practice-1", data={"answer": "64", "csrf": planted_token})
    assert r.status_code == 403 and "CSRF" in r.text
    r = victim.post("/logout", headers={"X-CSRF-Token": planted_token})
    assert r.status_code == 403
    assert victim.get("/learn").status_code == 200                   # still signed in: the logout was refused
    # the victim's own value works, and the attacker's works in the attacker's session
    assert victim.post("/logout", data={"csrf": form_csrf(victim.get("/learn").text)}).status_code == 303
    assert attacker.post("/logout", data={"csrf": planted_token}).status_code == 303


def test_the_sign_in_forms_value_is_bound_to_its_pre_session_cookie(app):
    one, two = client(app, "10.4.1.1"), client(app, "10.4.1.2")
    token_one = form_csrf(one.get("/learn/login").text)
    two.get("/learn/login")                                          # two has a pre-session cookie of its own
    r = two.post("/learn/login", data={"token": app.tokens["alice"], "csrf": token_one})
    assert r.status_code == 403 and "grader_session" not in r.headers.get("set-cookie", "")


def test_host_cookies_over_https_and_plain_names_over_http(app):
    s = client(app, "10.5.0.1", https=True)
    first = s.get("/learn/login")
    line = cookie_headers(first)["__Host-grader_csrf"].lower()
    assert "secure" in line and "path=/" in line and "domain" not in line and "httponly" in line
    r = sign_in(s, app.tokens["alice"])
    assert r.status_code == 303
    cookies = cookie_headers(r)
    assert set(cookies) == {"__Host-grader_session"}
    line = cookies["__Host-grader_session"].lower()
    assert "secure" in line and "path=/" in line and "domain" not in line and "samesite=strict" in line
    assert s.get("/learn").status_code == 200
    # over HTTPS a cookie without the prefix (which a sub-domain could have set) is not a session
    bare = client(app, "10.5.0.2", https=True)
    bare.cookies.set("grader_session", s.cookies.get("__Host-grader_session"))
    assert bare.get("/learn").status_code == 303
    r = s.post("/logout", data={"csrf": form_csrf(s.get("/learn").text)})
    assert r.status_code == 303 and "__Host-grader_session=" in r.headers["set-cookie"]
    # plain HTTP keeps today's names, not Secure
    p = client(app, "10.5.0.3")
    r = sign_in(p, app.tokens["bob"])
    cookies = cookie_headers(r)
    assert set(cookies) == {"grader_session"} and "secure" not in cookies["grader_session"].lower()


def test_wrong_tokens_on_the_sign_in_page_get_429_and_are_logged(app, caplog):
    caplog.set_level(logging.WARNING, logger="grader.serve.auth")
    c = client(app, "10.6.0.1")
    codes = [sign_in(c, "grd_" + secrets.token_urlsafe(32)).status_code for _ in range(LIMIT + 1)]
    assert codes == [401] * LIMIT + [429]
    r = sign_in(c, "grd_" + secrets.token_urlsafe(32))      # from this address, for the window
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 300
    assert "Too many failed sign-ins" in r.text and "grader_session" not in r.headers.get("set-cookie", "")
    assert sign_in(client(app, "10.6.0.2"), app.tokens["alice"]).status_code == 303   # another address
    assert sign_in(c, app.tokens["bob"]).status_code == 303     # a valid token is never locked out
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "grader.serve.auth"]
    assert sum(m.startswith("authentication failed on sign-in from '10.6.0.1'") for m in lines) == LIMIT
    assert sum(m.startswith("authentication throttled on sign-in from '10.6.0.1'") for m in lines) == 2
    assert app.tokens["alice"] not in "\n".join(lines)


def test_sign_out_everywhere_in_the_browser(live, new_page):
    from web_helpers import sign_in as browser_sign_in
    home, other = new_page(), new_page()
    browser_sign_in(home, live.url, live.tokens["alice"])
    browser_sign_in(other, live.url, live.tokens["alice"])
    home.goto(live.url + "/learn")
    with home.expect_navigation():
        home.get_by_role("button", name="Sign out everywhere").click()
    assert "/learn/login" in home.url
    other.goto(live.url + "/learn")
    assert "/learn/login" in other.url                       # the other browser's session ended too


def test_behind_a_tls_proxy_the_public_urls_https_makes_the_cookies_secure(tmp_path):
    # `grader serve --public-url https://...` behind a proxy that terminates TLS and forwards
    # no scheme: every request reaches grader as plain http, yet the browser is on https, so
    # the cookies must be the __Host- Secure ones (before: plain names, not Secure)
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    from grader.web import install
    database = f"sqlite:///{tmp_path / 'grader.db'}"
    tokens = users(database, alice="learner")
    settings = Settings(database=database, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1,
                        web_secret=b"w" * 32, public_url="https://grader.example.edu")
    app = create_app(settings, extensions=(install,))

    def value(line: str) -> str:
        return line.split("=", 1)[1].split(";", 1)[0]
    with TestClient(app, client=("10.9.0.1", 1)):
        c = client(app, "10.9.0.2")                                   # plain http, as the proxy sends it
        first = c.get("/learn/login")
        line = cookie_headers(first)["__Host-grader_csrf"]
        assert "secure" in line.lower() and "domain" not in line.lower()
        # the browser (on https) sends its Secure cookie back; httpx would not over http: by hand
        c.cookies.clear()
        jar = f"__Host-grader_csrf={value(line)}"
        r = c.post("/learn/login", data={"token": tokens["alice"], "csrf": form_csrf(first.text)},
                   headers={"cookie": jar})
        assert r.status_code == 303, r.text
        cookies = cookie_headers(r)
        assert set(cookies) == {"__Host-grader_session"} and "secure" in cookies["__Host-grader_session"].lower()
        c.cookies.clear()
        session = f"__Host-grader_session={value(cookies['__Host-grader_session'])}"
        assert c.get("/learn", headers={"cookie": session}).status_code == 200
        # the plain name is no session here: a sub-domain could have set it
        plain = f"grader_session={value(cookies['__Host-grader_session'])}"
        assert c.get("/learn", headers={"cookie": plain}).status_code == 303
