"""`grader lti` (platforms, deployments, keys, configuration) and what platforms fetch without
a launch: the key set and the configuration JSON (issue 30)."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import timedelta

import jwt
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from serve_helpers import make_bank

CANVAS = ["https://canvas.example.edu", "--client-id", "10000000000042",
          "--login-url", "https://sso.canvaslms.com/api/lti/authorize_redirect",
          "--token-url", "https://sso.canvaslms.com/login/oauth2/token",
          "--keyset-url", "https://sso.canvaslms.com/api/lti/security/jwks"]


def grader(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def db(tmp_path):
    return f"sqlite:///{tmp_path / 'grader.db'}"


def test_platforms_are_registered_listed_and_audited(db):
    r = grader("lti", "add-platform", *CANVAS, "--deployment", "12:abc", "--name", "Canvas", "--database", db)
    assert r.returncode == 0, r.stderr
    assert "deployments: 12:abc" in r.stdout
    r = grader("lti", "add-deployment", "https://canvas.example.edu", "13:def", "--database", db)
    assert r.returncode == 0, r.stderr
    listed = json.loads(grader("lti", "list", "--format", "json", "--database", db).stdout)
    assert [(p["issuer"], p["client_id"], p["deployments"]) for p in listed] == \
        [("https://canvas.example.edu", "10000000000042", ["12:abc", "13:def"])]
    # the same registration twice is refused, with where and what; nothing is added
    r = grader("lti", "add-platform", *CANVAS, "--deployment", "x", "--database", db)
    assert r.returncode != 0 and "already registered" in r.stderr and "Traceback" not in r.stderr
    from grader.db import Database
    from grader.db.models import AuditEntry
    d = Database(db)
    with d.read() as conn:
        actions = conn.execute(select(AuditEntry.action).order_by(AuditEntry.id)).scalars().all()
    d.dispose()
    assert actions == ["lti.platform", "lti.deployment"]


@pytest.mark.parametrize("option, value, message", [
    ("--login-url", "http://sso.example.edu/auth", "only https"),
    ("--token-url", "token", "not an absolute https:// URL"),
    ("--keyset-url", "javascript:alert(1)", "not an absolute https:// URL"),
    ("--client-id", "", "printable characters"),
])
def test_bad_registrations_say_where_and_what(db, option, value, message):
    args = list(CANVAS)
    args[args.index(option) + 1] = value
    r = grader("lti", "add-platform", *args, "--deployment", "1", "--database", db)
    assert r.returncode == 2 or r.returncode == 1
    assert f"{option}: " in r.stderr and message in r.stderr and "Traceback" not in r.stderr
    assert "no platform registered" in grader("lti", "list", "--database", db).stdout


def test_a_platform_needs_a_deployment(db):
    r = grader("lti", "add-platform", *CANVAS, "--database", db)
    assert r.returncode != 0 and "--deployment: give at least one deployment id" in r.stderr


def test_the_configuration_names_the_tools_urls():
    r = grader("lti", "config", "--url", "https://grader.example.edu/")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["oidc_initiation_url"] == "https://grader.example.edu/lti/login"
    assert c["target_link_uri"] == "https://grader.example.edu/lti/launch"
    assert c["public_jwk_url"] == "https://grader.example.edu/.well-known/jwks.json"
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in c["scopes"]
    placements = c["extensions"][0]["settings"]["placements"]
    assert {p["message_type"] for p in placements} == {"LtiDeepLinkingRequest"}
    assert c["extensions"][0]["domain"] == "grader.example.edu"
    bad = grader("lti", "config", "--url", "grader.example.edu")
    assert bad.returncode != 0 and "--url: " in bad.stderr


@pytest.fixture
def app(tmp_path, db):
    from grader.serve.app import create_app
    from grader.serve.settings import Settings
    app = create_app(Settings(database=db, exercises=str(make_bank(tmp_path)), workers=1, job_workers=1))
    with TestClient(app) as client:
        yield app, client


def _sign(pem: str, kid: str) -> str:
    return jwt.encode({"iss": "10000000000042", "sub": "10000000000042", "exp": int(time.time()) + 60},
                      pem, algorithm="RS256", headers={"kid": kid})


def _verify(token: str, key_set: dict) -> dict:
    # an independent check (PyJWT, not jwcrypto that made the key): find the kid, verify RS256
    kid = jwt.get_unverified_header(token)["kid"]
    jwk = next(k for k in key_set["keys"] if k["kid"] == kid)
    public = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(jwk))
    return jwt.decode(token, public, algorithms=["RS256"])


def test_the_key_set_serves_the_signing_key_and_a_retired_one_until_it_expires(app):
    from grader.db.models import now
    from grader.serve.lti import keys
    app, client = app
    first = client.get("/.well-known/jwks.json")
    assert first.status_code == 200 and len(first.json()["keys"]) == 1     # a fresh install makes its key
    db = app.state.grader.db
    with db.read() as conn:
        old = keys.signing_key(conn, now())
    assert first.json()["keys"][0]["kid"] == old.kid and "d" not in first.json()["keys"][0]   # public only
    token = _sign(old.private_pem, old.kid)
    assert _verify(token, first.json())["sub"] == "10000000000042"
    with db.write() as conn:
        new = keys.rotate(conn, now(), overlap=timedelta(days=7))
    served = client.get("/.well-known/jwks.json").json()
    assert [k["kid"] for k in served["keys"]] == [new.kid, old.kid]
    assert _verify(token, served)["iss"] == "10000000000042"      # a message signed just before still checks
    with db.read() as conn:
        assert keys.signing_key(conn, now()).kid == new.kid
        later = keys.key_set(conn, now() + timedelta(days=8))      # 8 days on: the retired key is gone
    assert [k["kid"] for k in later["keys"]] == [new.kid]
    with pytest.raises(jwt.InvalidSignatureError):                # and another key does not pass for it
        _verify(_sign(new.private_pem, old.kid), served)


def test_the_configuration_json_is_served(app):
    _, client = app
    c = client.get("/lti/config.json").json()
    assert c["oidc_initiation_url"] == "http://testserver/lti/login"
    assert c["public_jwk_url"] == "http://testserver/.well-known/jwks.json"
