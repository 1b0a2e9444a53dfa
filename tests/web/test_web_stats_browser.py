"""Chromium: the item statistics page (sortable, each title a link to its problem's page, which
shows its own figures) and "view as learner" (the banner, the learner's answer, the answer box
disabled); axe-core: no serious or critical violation on these pages."""
from __future__ import annotations

import httpx

from web_helpers import axe_violations, sign_in, unlabelled_inputs

PID = "17-08/practice-1"


def _submit(live, who: str, answers: dict) -> None:
    r = httpx.post(live.url + "/api/v1/submissions", json={"answers": answers},
                   headers={"Authorization": f"Bearer {live.tokens[who]}"}, timeout=60)
    assert r.status_code == 201, r.text


def test_statistics_and_view_as_learner(live, new_page, shot):
    _submit(live, "alice", {PID: "63"})
    _submit(live, "alice", {PID: "64"})          # right at the second attempt
    _submit(live, "bob", {PID: "64"})
    page = new_page()
    sign_in(page, live.url, live.tokens["prof"])
    page.click("nav[aria-label=main] a:text-is('Statistics')")
    assert page.url.endswith("/staff/statistics")
    table = page.locator("table.statistics")
    page.click("table.statistics thead a:text-is('Learners')")
    page.click("table.statistics thead a:text-is('Learners ▲')")          # descending: answered problems first
    first = table.locator("tbody tr").nth(0)
    assert PID in first.locator("th").inner_text()
    cells = first.locator("td").all_inner_texts()
    assert cells[1] == "2" and cells[2] == "1.00"            # 2 learners, both right in the end
    assert cells[4] == "1.5, 1.5"                            # attempts to correct: alice 2, bob 1
    shot.viewport(page, "staff-statistics", 1200, 560)                  # docs/img/staff-statistics.png
    assert axe_violations(page) == []
    first.locator("th a").click()
    assert page.url.endswith("/staff/problems/" + PID)
    assert "mean 1.5, median 1.5" in page.locator("section[aria-labelledby=item-h]").inner_text()
    assert axe_violations(page) == []

    page.goto(live.url + "/staff/learners/bob")
    page.click("a:text-is('View as this learner')")
    assert page.url.endswith("/staff/learners/bob/view")
    banner = page.locator("p.view-as")
    assert "read only" in banner.inner_text() and "(bob)" in banner.inner_text()
    assert page.locator("script:has-text('alert')").count() == 0        # bob's hostile name is text
    assert axe_violations(page) == []
    page.click(f"table.exercises a[href$='/exercise/{PID}']")
    assert page.url.endswith(f"/staff/learners/bob/view/exercise/{PID}")
    assert page.locator("#answer").is_disabled() and page.locator("form.answer button").is_disabled()
    page.click("summary:has-text('Earlier attempts')")
    assert "64" in page.locator("table.attempts").inner_text()
    assert unlabelled_inputs(page) == []
    shot.viewport(page, "view-as-learner", 1200, 720)                   # docs/img/view-as-learner.png
    assert axe_violations(page) == []
