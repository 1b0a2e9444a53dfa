"""LTI 1.3 hardening (issue 30): a fixed public base URL (``grader serve --public-url``: no URL
built on the request's Host header), clock-skew leeway on the id_token's times, and a per-address
cap on the logins outstanding (a login flood cannot grow ``lti_states`` without bound, nor block
another address's logins). Against live `grader serve` processes; id_tokens made by hand with the
independent platform's key (tests/lti/platform_lti.py), nothing mocked."""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from grader.db.models import LtiState
from lti_fixtures import lti_live  # noqa: F401 (fixture)
from serve_helpers import LiveServer, make_bank
from test_lti_launch import _assert_refused, _claims, _counts, _login, _post

PUBLIC = "https://grader.example.edu/course"
ISS, CLIENT = "https://lms.example.edu", "client-h"


@pytest.fixture(scope="module")
def pub(tmp_path_factory):
    """A live `grader serve --public-url PUBLIC` with one registered platform (its URLs are never
    called here: a login only redirects to its login URL)."""
    from grader.db import Database
    from grader.serve.lti import registry
    tmp = tmp_path_factory.mktemp("lti-pub")
    bank = make_bank(tmp)
    url = f"sqlite:///{tmp / 'grader.db'}"
    db = Database(url)
    db.ensure_schema()
    with db.write() as conn:
        registry.add_platform(conn, issuer=ISS, client_id=CLIENT, login_url=ISS + "/auth", token_url=ISS + "/token",
                              keyset_url=ISS + "/jwks", deployments=["d1"], name="LMS")
    server = LiveServer(url, bank, tmp, "--workers", "1", "--rate", "0", "--public-url", PUBLIC + "/")
    server.start()
    server.db = db
    yield server
    server.stop()
    db.dispose()


def _login_from(server, source: str | None = None, headers=None) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source) if source else None
    with httpx.Client(transport=transport, timeout=30) as client:
        return client.get(server.url + "/lti/login", params={"iss": ISS, "login_hint": "u", "client_id": CLIENT,
                                                             "lti_deployment_id": "d1"},
                          headers=headers, follow_redirects=False)


def _rows(server) -> int:
    with server.db.read() as conn:
        return conn.execute(select(func.count()).select_from(LtiState)).scalar_one()


# ------------------------------------------------------------------ 1. the public base URL

def test_a_forged_host_never_makes_an_lti_url(pub):
    """Without --public-url the login's redirect_uri and /lti/config.json were built on the Host
    header: http://evil.test/lti/launch."""
    forged = {"Host": "evil.test", "X-Forwarded-Host": "evil.test"}
    r = _login_from(pub, "127.0.0.3", headers=forged)      # not 127.0.0.1: the flood's test counts its logins
    assert r.status_code == 302, r.text[:300]
    q = parse_qs(urlsplit(r.headers["location"]).query)
    assert q["redirect_uri"] == [PUBLIC + "/lti/launch"]          # the trailing "/" given was dropped
    # the public URL is https: the state cookie is the cross-site one, though the request was http
    (cookie,) = [c for c in r.headers.get_list("set-cookie") if c.startswith("lti1p3-state-")]
    assert "secure" in cookie.lower() and "samesite=none" in cookie.lower()

    conf = httpx.get(pub.url + "/lti/config.json", headers=forged, timeout=30).json()
    assert conf["oidc_initiation_url"] == PUBLIC + "/lti/login"
    assert conf["target_link_uri"] == conf["deep_linking_url"] == PUBLIC + "/lti/launch"
    assert conf["redirect_uris"] == [PUBLIC + "/lti/launch"]
    assert conf["public_jwk_url"] == PUBLIC + "/.well-known/jwks.json"
    assert conf["extensions"][0]["domain"] == "grader.example.edu"
    assert "evil.test" not in str(conf) and "127.0.0.1" not in str(conf)


@pytest.mark.parametrize("value, says", [
    ("ftp://grader.example.edu", "is not an absolute https:// URL"),
    ("grader.example.edu", "is not an absolute https:// URL"),
    ("http://grader.example.edu", "is plain http"),
    ("https://grader.example.edu/?x=1", "has a user, a query or a fragment"),
    ("https://grader.example.edu/#top", "has a user, a query or a fragment"),
    ("https://me:pw@grader.example.edu", "has a user, a query or a fragment"),
    ("https://grader.example.edu:99999", "has an invalid port"),
])
@pytest.mark.parametrize("how", ["option", "env"])
def test_a_bad_public_url_is_refused_at_start(value, says, how, tmp_path):
    from grader.commands.serve import serve
    args, env = (["--public-url", value], {}) if how == "option" else ([], {"GRADER_PUBLIC_URL": value})
    r = CliRunner().invoke(serve, [*args, "--database", f"sqlite:///{tmp_path / 'g.db'}"], env=env)
    assert r.exit_code == 2, r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert line.startswith("Error: Invalid value for '--public-url': ") and says in line
    assert "Traceback" not in r.output and not (tmp_path / "g.db").exists()      # refused before anything


def test_the_public_url_check_keeps_a_path_prefix():
    from grader.serve.lti.registry import check_public_url
    assert check_public_url("https://grader.example.edu/") == "https://grader.example.edu"
    assert check_public_url("https://u.example.edu:8443/grader/") == "https://u.example.edu:8443/grader"
    assert check_public_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000"      # as `grader lti config --url`


# ------------------------------------------------------------------ 2. clock skew

def test_a_token_within_the_clock_skew_leeway_is_accepted(lti_live):
    """LEEWAY_S = 60: iat 30 s ahead (the platform's clock is fast) and exp 30 s past (slow, or a
    slow network) both pass; without the leeway PyJWT refused them (not_yet_valid, expired)."""
    p = lti_live.platform
    now = int(time.time())
    for times in ({"iat": now + 30, "exp": now + 330}, {"iat": now - 330, "exp": now - 30},
                  {"iat": now, "exp": now + 300, "nbf": now + 30}):
        state, nonce, cookies = _login(lti_live)
        r = _post(lti_live, _claims(p, nonce, **times), state, cookies)
        assert r.status_code == 200 and "Continue to" in r.text, (times, r.text[:500])


def test_a_token_expired_past_the_leeway_is_refused(lti_live):
    p = lti_live.platform
    now = int(time.time())
    for times, reason in (({"iat": now - 600, "exp": now - 300}, "expired"),            # 5 min: 240 s past it
                          ({"iat": now + 300, "exp": now + 600}, "not_yet_valid")):
        state, nonce, cookies = _login(lti_live)
        before = _counts(lti_live)
        r = _post(lti_live, _claims(p, nonce, **times), state, cookies)
        _assert_refused(lti_live, r, 401, reason, before)


# ------------------------------------------------------------------ 3. a login flood

def test_a_login_flood_from_one_address_is_capped_and_others_still_log_in(pub):
    """MAX_OUTSTANDING = 50: logins 1-50 from 127.0.0.1 redirect, 51-60 are 429 with Retry-After
    (the oldest state expires in at most LOGIN_S = 600 s); 127.0.0.2's login still redirects.
    Each admitted login stores its state and pylti1p3's nonce, plus one row listing the
    address's states: 50 * 2 + 1 = 101 rows from the flood, and 2 + 1 for 127.0.0.2's login."""
    base = _rows(pub)
    got = [_login_from(pub, "127.0.0.1") for _ in range(60)]
    assert [r.status_code for r in got] == [302] * 50 + [429] * 10
    refused = got[-1]
    assert 540 <= int(refused.headers["retry-after"]) <= 600
    assert refused.headers["content-type"].startswith("text/html")
    assert "Too many logins from your network address" in refused.text and "Wait 10 minutes" in refused.text
    assert not any(c.startswith("lti1p3-") for c in refused.headers.get_list("set-cookie"))
    assert _rows(pub) - base == 101
    other = _login_from(pub, "127.0.0.2")
    assert other.status_code == 302 and other.headers["location"].startswith(ISS + "/auth?")
    assert _rows(pub) - base == 104
    assert _login_from(pub, "127.0.0.1").status_code == 429


def test_outstanding_logins_are_counted_per_address_and_freed_by_use_or_expiry(tmp_path):
    """The cap's bookkeeping with a clock: a used state (a launch deletes it) frees its place at
    once; expired states free theirs and every row of theirs is pruned; an IPv6 address counts
    by its /64."""
    from grader.db import Database
    from grader.serve.lti import logins
    from grader.serve.lti.adapter import DbStorage
    db = Database(f"sqlite:///{tmp_path / 'g.db'}")
    db.ensure_schema()
    t = [1000.0]
    store = DbStorage(db, clock=lambda: t[0])

    def login(addr: str, i: int) -> None:       # as adapter.login: check, pylti1p3 writes the nonce, admit
        logins.check(db, addr, t[0], limit=3)
        store.set_value(f"nonce-{addr}-{i}", True, 600)
        logins.admit(db, addr, t[0], store.key(f"state-{addr}-{i}"), {"n": i}, 600, [store.key(f"nonce-{addr}-{i}")],
                     limit=3)

    for i in range(3):
        login("10.0.0.1", i)
    with pytest.raises(logins.TooManyLogins) as e:
        login("10.0.0.1", 3)
    assert e.value.retry_after_s == 600
    login("10.0.0.2", 0)                                    # another address: its own places
    with db.write() as conn:                                 # a launch used state 1
        conn.execute(LtiState.__table__.delete().where(LtiState.key == store.key("state-10.0.0.1-1")))
    login("10.0.0.1", 4)
    with pytest.raises(logins.TooManyLogins):
        login("10.0.0.1", 5)
    # a race lost (check passed, then admit finds the places taken): the login's nonce is removed
    store.set_value("nonce-late", True, 600)
    with pytest.raises(logins.TooManyLogins):
        logins.admit(db, "10.0.0.1", t[0], store.key("state-late"), {}, 600, [store.key("nonce-late")], limit=3)
    assert store.get_value("nonce-late") is None and store.get_value("state-late") is None
    # IPv6: 2001:db8::1 and 2001:db8::ffff are one /64, 2001:db8:0:1::1 another
    for i in range(3):
        login("2001:db8::1" if i else "2001:db8::ffff", i)
    with pytest.raises(logins.TooManyLogins):
        login("2001:db8::2", 9)
    login("2001:db8:0:1::1", 0)
    t[0] += 601                                              # every state expired
    login("10.0.0.1", 6)
    with db.read() as conn:                                   # the new login's nonce, state and listing
        assert conn.execute(select(func.count()).select_from(LtiState)).scalar_one() == 3
    db.dispose()
