"""Staff in Chromium: the new submission in the gradebook (sortable, CSV), the problem's
distribution plotted and its wrong answers grouped by feedback, a batch upload's progress,
a regrade; the spec report, served and as a standalone file; axe-core on every page."""
from __future__ import annotations

import csv
import io
import re
import subprocess
import sys

import httpx

from web_helpers import ROOT
from web_helpers import axe_violations, sign_in, unlabelled_inputs


def _submit(live, who: str, answers: dict) -> dict:
    r = httpx.post(live.url + "/api/v1/submissions", json={"answers": answers},
                   headers={"Authorization": f"Bearer {live.tokens[who]}"}, timeout=60)
    assert r.status_code == 201, r.text
    return r.json()


def test_gradebook_and_problem_stats(live, new_page, shot):
    # two learners answer through the API; the pages must show what the service stored
    _submit(live, "alice", {"17-08/example-2.params": "786432"})
    _submit(live, "bob", {"17-08/example-2.params": "786432"})
    _submit(live, "alice", {"17-08/example-2.params": "1048576"})      # 4·512² = 1,048,576 + no biases
    page = new_page()
    sign_in(page, live.url, live.tokens["prof"])
    assert page.url.endswith("/staff")
    assert unlabelled_inputs(page) == []
    table = page.locator("table.gradebook")
    rows = {r.locator("th").inner_text(): r for r in table.locator("tbody tr").all()}
    assert {"alice", "bob"} <= set(rows)
    # sort by total, descending: the heading's link, twice
    page.click("table.gradebook thead a:text-is('Total')")
    page.click("table.gradebook thead a:text-is('Total ▲')")
    totals = [float(t) for t in table.locator("tbody tr td:last-child").all_inner_texts()]
    assert totals == sorted(totals, reverse=True)
    assert table.locator("thead th[aria-sort=descending]").inner_text().startswith("Total")
    shot(page, "staff-gradebook")
    assert axe_violations(page) == []
    # the CSV download is the API's CSV
    with page.expect_download() as dl:
        page.click("a:text-is('Download CSV')")
    got = list(csv.DictReader(io.StringIO(open(dl.value.path(), encoding="utf-8").read())))
    api = httpx.get(live.url + "/api/v1/gradebook?format=csv", headers={"Authorization": f"Bearer {live.tokens['prof']}"})
    assert got == list(csv.DictReader(io.StringIO(api.text)))

    page.goto(live.url + "/staff/problems/17-08/example-2.params")
    stats = httpx.get(live.url + "/api/v1/problems/17-08/example-2.params/stats",
                      headers={"Authorization": f"Bearer {live.tokens['prof']}"}).json()
    svg = page.locator("figure.plot svg")
    assert svg.count() == 1 and "learners by score" in svg.get_attribute("aria-label")
    assert page.locator("figure.plot svg path").count() > 0             # matplotlib's bars and axes
    groups = page.locator("table.common-wrong tbody tr")
    assert groups.count() == len(stats["common_wrong"]) >= 1
    first = groups.nth(0).locator("td").all_inner_texts()
    assert first[0] == stats["common_wrong"][0]["feedback"] and first[1] == "2"   # two learners gave 786432
    shot(page, "staff-problem-stats")
    assert axe_violations(page) == []

    page.goto(live.url + "/staff/learners/alice")
    assert page.locator("table.attempts tbody tr").count() >= 2
    assert axe_violations(page) == []


def test_batch_upload_progress_and_regrade(live, new_page, tmp_path):
    page = new_page()
    sign_in(page, live.url, live.tokens["prof"])
    page.goto(live.url + "/staff/batch")
    assert unlabelled_inputs(page) == []
    assert axe_violations(page) == []                                  # the batch upload page
    f = tmp_path / "class.yaml"
    f.write_text("submissions:\n  - {learner: carol, answers: {17-08/practice-1: 64}}\n"
                 "  - {learner: dave, answers: {17-08/practice-1: 16384}}\n")
    page.set_input_files("#file", str(f))
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/staff/jobs/[0-9a-f]+$"))
    assert axe_violations(page) == []                                  # the job page, as it is first shown
    page.wait_for_selector("#job[data-status=done]", timeout=120_000)
    assert page.locator("#job progress").count() == 1
    assert axe_violations(page) == []                                  # ... and done, with its table
    text = page.locator("#job").inner_text()
    assert "2 submissions" in text and "carol" in text and "dave" in text
    page.goto(live.url + "/staff")
    page.click("text=Regrade everything")                              # a link to the confirmation, not the job
    page.wait_for_url(re.compile(r".*/staff/regrade$"))
    assert "Regrade everything?" in page.locator("h1").inner_text()
    assert axe_violations(page) == []                                  # the confirmation page
    page.click("text=Yes, regrade")
    page.wait_for_selector("#job[data-status=done]", timeout=120_000)
    assert "0 scores changed" in page.locator("#job").inner_text()      # nothing changed in the bank
    assert axe_violations(page) == []                                  # the regrade result page


def test_spec_report_served_and_standalone(live, new_page, tmp_path, shot):
    out = tmp_path / "report.html"
    p = subprocess.run([sys.executable, "-m", "grader", "check-spec", "--format", "html", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.is_file(), p.stderr
    assert "<script" not in out.read_text()                # no script, no network: a file
    page = new_page()
    page.goto(out.as_uri())
    claims = page.locator("article.claim")
    json_run = subprocess.run([sys.executable, "-m", "grader", "check-spec", "--format", "json"],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
    import json
    doc = json.loads(json_run.stdout)
    assert claims.count() == len(doc["claims"])
    refuted = [c for c in doc["claims"] if c["verdict"] == "refuted"]
    dom = page.locator("article#claim-s-4-dominance")
    seeds = [q for q in (ROOT / "shared" / "seeds", ROOT.parent / "shared" / "seeds") if q.is_dir()]
    if seeds:                       # the sources beside the repository (as CI clones it): quotes in place
        assert page.locator("article.claim:has(.source-text mark)").count() == claims.count()
    else:
        assert page.locator("article.claim .no-source").count() == claims.count()
    assert dom.get_attribute("data-verdict") == "refuted"
    assert "n = 2d" in dom.locator(".corrected").inner_text()
    # the plot: exact crossover and the text's claim, drawn by matplotlib
    label = page.locator("figure.plot svg").first.get_attribute("aria-label")
    assert "crossover n = 2*d = 128" in label                          # d = 64 of the spec's example
    assert "text's claim: n > d" in page.locator("figure.plot svg").first.text_content()
    # filters (CSS only): hide holds -> only the others stay visible
    page.click("label:text-matches('^holds')")
    visible = [a.get_attribute("data-verdict") for a in claims.all() if a.is_visible()]
    assert visible and "holds" not in visible and visible.count("refuted") == len(refuted)
    page.click("label:text-matches('^holds')")
    shot(page, "spec-report")
    # a compact view for the docs: the refuted claim, its quote in place and the corrected statement
    page.set_viewport_size({"width": 1000, "height": 640})
    page.evaluate("document.querySelector('article#claim-s-4-dominance').scrollIntoView({block: 'start'})")
    shot.viewport(page, "spec-report-claim", width=1000, height=640)
    assert axe_violations(page) == []

    staff = new_page()
    sign_in(staff, live.url, live.tokens["prof"])
    staff.goto(live.url + "/spec")
    assert staff.locator("#spec-status").count() == 1                  # the first visit: the waiting page
    assert axe_violations(staff) == []
    staff.wait_for_selector("article.claim", timeout=300_000)          # checked once, in a process of its own
    assert staff.locator("article.claim").count() == len(doc["claims"])
    assert axe_violations(staff) == []                                 # the served report
