"""Hostile names, answers and files are shown as text; a learner's session cannot open staff
pages; a form without its CSRF token is refused."""
from __future__ import annotations

import httpx

from web_helpers import axe_violations, sign_in

HOSTILE = ['<script>alert("answer")</script>', '<img src=x onerror=alert(2)>', 'javascript:alert(3)',
           '<a href="javascript:alert(4)">click</a><b>bold</b>']


def _no_injected(page) -> None:
    assert page.locator("main script, main img, main b, main a[href^='javascript']").count() == 0


def test_hostile_answers_and_names_are_text(live, new_page, tmp_path):
    page = new_page()                                     # fails the test on any dialog or page error
    sign_in(page, live.url, live.tokens["bob"])           # bob's display name is hostile HTML
    assert '<script>alert("name")</script>' in page.locator("header .who").inner_text()
    for text in HOSTILE:        # free text: stored whatever it says (a formula's box refuses what it cannot read)
        page.goto(live.url + "/learn/exercise/17-08/practice-2")
        page.fill("#answer", text)
        page.wait_for_timeout(400)                        # the live reading of it ...
        # ... answered before the submit, so that the two requests never overlap
        page.wait_for_function("!document.querySelector('.htmx-request')", timeout=60_000)
        page.click("form.answer button[type=submit]")
        page.wait_for_selector("#result", timeout=60_000)     # a cold worker on a loaded machine
        _no_injected(page)
        assert text in page.locator("table.attempts").text_content()     # in the collapsed earlier attempts
    # a code file whose content and name are HTML: graded, shown as text
    evil = tmp_path / '<img src=x onerror=alert(5)>.py'
    evil.write_text('"""<script>alert(6)</script>"""\ndef add(a, b):\n    return "<script>alert(7)</script>"\n')
    page.goto(live.url + "/learn/exercise/17-08/code-add")
    page.set_input_files("#file", str(evil))
    page.click("main form button[type=submit]")
    page.wait_for_selector("#job[data-status=done], #job[data-status=failed]", timeout=120_000)
    _no_injected(page)
    # the staff's pages show the same learner and answers as text
    staff = new_page()
    sign_in(staff, live.url, live.tokens["prof"])
    staff.goto(live.url + "/staff")
    assert '<script>alert("name")</script>' in staff.locator("table.gradebook").inner_text()
    _no_injected(staff)
    staff.goto(live.url + "/staff/learners/bob")
    assert HOSTILE[1] in staff.locator("table.attempts").inner_text()
    _no_injected(staff)
    staff.goto(live.url + "/staff/problems/17-08/practice-2")
    _no_injected(staff)


def test_learner_session_cannot_open_staff_pages(live, new_page):
    page = new_page()
    sign_in(page, live.url, live.tokens["alice"])
    for path in ("/staff", "/staff/gradebook.csv", "/staff/problems/17-08/quiz-1", "/staff/learners/bob",
                 "/staff/batch", "/spec"):
        r = page.goto(live.url + path)
        assert r.status == 403, path
        if path == "/staff":
            assert axe_violations(page) == []                          # the error page
    r = page.request.post(live.url + "/staff/regrade", form={"csrf": "x"})
    assert r.status == 403


def test_signed_out_is_sent_to_sign_in(live):
    r = httpx.get(live.url + "/staff", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/learn/login"
    r = httpx.get(live.url + "/learn", follow_redirects=False)
    assert r.status_code == 303


def test_forms_without_csrf_token_are_refused(live, new_page):
    page = new_page()
    sign_in(page, live.url, live.tokens["alice"])          # a real session cookie in the context
    req = page.context.request
    before = httpx.get(live.url + "/api/v1/submissions",
                       headers={"Authorization": f"Bearer {live.tokens['alice']}"}).json()
    r = req.post(live.url + "/learn/exercise/17-08/practice-1", form={"answer": "64"})
    assert r.status == 403 and "CSRF" in r.text()
    r = req.post(live.url + "/learn/exercise/17-08/practice-1", form={"answer": "64", "csrf": "0" * 40})
    assert r.status == 403
    r = req.post(live.url + "/learn/validate", form={"problem": "17-08/practice-1", "answer": "64"})
    assert r.status == 403
    after = httpx.get(live.url + "/api/v1/submissions",
                      headers={"Authorization": f"Bearer {live.tokens['alice']}"}).json()
    assert len(after) == len(before)                       # nothing was stored
    # the sign-in form too: no token, no session (login CSRF)
    fresh = httpx.post(live.url + "/learn/login", data={"token": live.tokens["alice"]}, follow_redirects=False)
    assert fresh.status_code == 403 and "grader_session" not in fresh.headers.get("set-cookie", "")


def test_session_cookie_flags(live):
    with httpx.Client(base_url=live.url) as c:
        c.get("/learn/login")
        csrf_cookie = c.cookies.get("grader_csrf")
        assert csrf_cookie
        form = c.get("/learn/login").text
        token = form.split('name="csrf" value="')[1].split('"')[0]
        r = c.post("/learn/login", data={"token": live.tokens["alice"], "csrf": token}, follow_redirects=False)
        assert r.status_code == 303
        cookie = r.headers["set-cookie"].lower()
        assert "grader_session=" in cookie and "httponly" in cookie and "samesite=strict" in cookie
        assert live.tokens["alice"] not in r.headers["set-cookie"]    # the token is never in the cookie


def test_a_restart_keeps_the_session_and_a_new_secret_ends_it(new_page, tmp_path):
    # the session's signing secret is kept in a file (grader serve --secret-file, default
    # ./grader.secret in the folder it runs in): a restart signs nobody out; a new secret does
    from serve_helpers import LiveServer, make_bank, users
    db = f"sqlite:///{tmp_path / 'grader.db'}"
    tokens = users(db, carol="learner")
    server = LiveServer(db, make_bank(tmp_path), tmp_path, "--workers", "1", "--rate", "0").start()
    try:
        page = new_page()
        sign_in(page, server.url, tokens["carol"])
        secret = tmp_path / "grader.secret"
        assert secret.is_file() and secret.stat().st_mode & 0o077 == 0      # the owner's alone
        server.stop()
        server.start()
        r = page.goto(server.url + "/learn")
        assert r.status == 200 and "/learn/login" not in page.url
        assert "carol" in page.locator("header .who").inner_text()
        server.stop()
        secret.unlink()                                                     # a new secret at the next start
        server.start()
        page.goto(server.url + "/learn")
        assert "/learn/login" in page.url
    finally:
        server.stop()
