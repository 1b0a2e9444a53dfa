"""The pieces of the LTI launch without a browser: the role mapping, the stable login, the
state cookie's attributes over HTTP and HTTPS, and the launch-data storage's expiry and
one-time values (issue 30)."""
from __future__ import annotations

from starlette.responses import Response

from grader.db import Database
from grader.serve.lti.adapter import DbStorage, LtiCookies, LtiRequest
from grader.serve.lti.launch import role_of
from grader.serve.lti.people import login_for

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"


def test_roles_map_to_instructor_or_learner():
    assert role_of([LIS + "membership#Instructor"]) == "instructor"
    assert role_of([LIS + "membership/Instructor#TeachingAssistant"]) == "instructor"
    assert role_of([LIS + "institution/person#Administrator"]) == "instructor"
    assert role_of([LIS + "membership#Learner", LIS + "institution/person#Student"]) == "learner"
    assert role_of(["Learner"]) == "learner"                      # LTI's short names
    assert role_of([LIS + "membership#Learner", LIS + "membership#Instructor"]) == "instructor"
    # institution and system roles never outweigh the course's: an instructor (or administrator)
    # elsewhere who is a learner here is a learner; an institution Instructor alone is no role here
    assert role_of([LIS + "institution/person#Instructor", LIS + "membership#Learner"]) == "learner"
    assert role_of([LIS + "institution/person#Administrator", "Learner"]) == "learner"
    assert role_of([LIS + "system/person#Administrator", LIS + "membership#Mentor"]) is None
    assert role_of([LIS + "institution/person#Instructor"]) is None
    # neither: a mentor alone, another vocabulary's "Instructor", nothing usable
    assert role_of([LIS + "membership#Mentor"]) is None
    assert role_of([LIS + "membership#ContentDeveloper"]) is None      # designs content, sees no grades
    assert role_of(["http://example.com/roles#Instructor"]) is None
    assert role_of("Instructor") is None and role_of(None) is None and role_of([7]) is None


def test_a_new_users_login_is_stable_and_a_valid_id():
    from grader.db.ids import check_login
    a = login_for("https://canvas.instructure.com", "sub-1")
    assert a == login_for("https://canvas.instructure.com", "sub-1") and check_login(a) == a
    assert a != login_for("https://canvas.instructure.com", "sub-2")
    assert a != login_for("https://moodle.example.edu", "sub-1")
    assert len(a) == 4 + 16 and a.startswith("lti-")


def _cookie(secure: bool) -> str:
    jar = LtiCookies(LtiRequest({}, {}, secure))
    jar.set_cookie("state-abc", "state-abc", 300)
    r = Response()
    jar.apply(r)
    (header,) = r.headers.getlist("set-cookie")
    return header.lower()


def test_the_state_cookie_is_samesite_none_and_secure_over_https_only():
    https = _cookie(True)
    assert "lti1p3-state-abc=state-abc" in https and "samesite=none" in https and "secure" in https
    assert "path=/lti" in https and "httponly" in https and "max-age=300" in https
    http = _cookie(False)       # a browser drops SameSite=None without Secure: Lax over plain HTTP
    assert "samesite=lax" in http and "secure" not in http


def test_the_storage_expires_keys_and_takes_a_value_once(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'g.db'}")
    db.ensure_schema()
    clock = [1000.0]
    s = DbStorage(db, clock=lambda: clock[0])
    s.set_value("nonce-x", True, 600)
    s.set_value("state-y", {"a": 1}, 60)
    assert s.check_value("nonce-x") and s.get_value("state-y") == {"a": 1}
    clock[0] += 61          # past the state's 60 s, within the nonce's 600 s
    assert s.get_value("state-y") is None and s.check_value("nonce-x")
    assert s.take("nonce-x") is True and s.take("nonce-x") is None and not s.check_value("nonce-x")
    db.dispose()
