"""The hostile corpus (tests/hostile/): every hostile answer gets 0 points and a message,
nothing runs (the sentinel file PWNED is never created), and nothing else is lost."""
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.grade import check
from grader.grade.pool import AnswerLimits as Limits
from grader.grade.run import grade as run_grade
from grader.grade.submissions import load_submissions

CORPUS = Path(__file__).parent / "hostile"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    shutil.copytree(CORPUS, work / "hostile")
    # a megabyte string, and a good answer in the same file
    (work / "hostile" / "megabyte.yaml").write_text(
        "learner: big\nanswers:\n  17-08/params-formula: \"" + "d+" * 500_000 + "d\"\n"
        "  17-08/practice-2: \"" + "x" * 1_000_000 + "\"\n  17-08/practice-1: 64\n")
    cwd = os.getcwd()
    os.chdir(work)          # an injected open('PWNED', 'w') would land here
    try:
        r = CliRunner().invoke(cli, ["grade", "--jobs", "2", "--format", "json", str(work / "hostile")])
    finally:
        os.chdir(cwd)
    sentinel = (work / "PWNED").exists() or (work / "hostile" / "PWNED").exists()
    return r, json.loads(r.stdout), sentinel


def subs(data):
    return {s["learner"]: {res["id"]: res for res in s["results"]} for s in data["submissions"]}


def test_nothing_executed(graded):
    _, _, sentinel = graded
    assert not sentinel


def test_unreadable_files_make_exit_2_but_the_rest_is_graded(graded):
    r, data, _ = graded
    assert r.exit_code == 2
    assert set(subs(data)) == {"mallory", "json-mallory", "big", "twice"}


def test_every_hostile_answer_zero_with_a_message_and_the_good_one_scores(graded):
    _, data, _ = graded
    mallory = subs(data)["mallory"]
    given = [line.split(":")[0].strip() for line in (CORPUS / "mallory.yaml").read_text().splitlines()
             if line.startswith("  17-08/")]
    assert sorted(mallory) == sorted(given)            # each answer exactly once
    for pid, res in mallory.items():
        if pid == "17-08/practice-1.check":
            continue
        assert res["score"] == 0, (pid, res)
        assert res["correct"] is not True
        assert res["feedback"].strip(), pid
    assert mallory["17-08/practice-1.check"]["correct"] is True
    assert mallory["17-08/practice-1.check"]["score"] == 1
    assert mallory["17-08/practice-1"]["feedback"].startswith("invalid answer: nan")
    assert "control character U+0000" in mallory["17-08/example-1.q_i_shape"]["feedback"]
    assert "control character U+001B" in mallory["17-08/example-1.scores_shape"]["feedback"]
    assert "unknown problem id '17-08/no-such-problem'" in mallory["17-08/no-such-problem"]["feedback"]
    for pid in ("17-08/params-formula", "17-08/attn-memory-formula", "17-08/example-3.projection_flops",
                "17-08/example-2.wo_params"):
        assert mallory[pid]["feedback"].startswith("invalid answer:"), (pid, mallory[pid]["feedback"])


def test_injection_in_json_and_its_good_answer(graded):
    _, data, _ = graded
    s = subs(data)["json-mallory"]
    assert s["17-08/params-formula"]["score"] == 0
    assert s["17-08/practice-1"]["correct"] is True          # "1024/16"


def test_megabyte_strings_refused_without_losing_the_good_answer(graded):
    _, data, _ = graded
    big = subs(data)["big"]
    assert big["17-08/params-formula"]["feedback"].startswith("invalid answer: too long (1,000,001 characters")
    assert big["17-08/practice-2"]["feedback"].startswith("invalid answer: too long")
    assert len(json.dumps(big["17-08/practice-2"]["answer"])) < 400   # not echoed in full
    assert big["17-08/practice-1"]["correct"] is True


def test_yaml_bomb_and_duplicate_keys_reported_with_file_line(graded):
    _, data, _ = graded
    errors = {Path(e["location"].split(":")[0]).name: e for e in data["errors"]}
    assert "aliases" in errors["bomb.yaml"]["message"]
    assert "the whole file is refused" in errors["bomb.yaml"]["message"]
    assert errors["bomb.yaml"]["location"].split(":")[1] == "3"          # the anchor reused, &a
    # an answer given twice: neither counts, reported at the second, the file is read
    assert "duplicate-keys.yaml" not in errors
    twice = subs(data)["twice"]["17-08/practice-1"]
    assert twice["score"] == 0 and twice["correct"] is False and twice["status"] == "invalid"
    assert twice["feedback"] == "invalid answer: answered more than once (first at line 4): neither answer counts"
    assert twice["location"].split(":")[1:] == ["5", "3"]
    # the learner twice: who is it? That submission is malformed
    assert "duplicate key 'learner' (first at line 2)" in errors["duplicate-learner.yaml"]["message"]
    assert errors["duplicate-learner.yaml"]["location"].split(":")[1] == "3"


def test_an_answer_past_the_time_limit_is_too_complex_and_the_batch_goes_on(tmp_path, monkeypatch):
    real = check.Checker.check

    def slow(self, payload):
        if payload[1] == "65":
            while True:
                pass
        return real(self, payload)

    monkeypatch.setattr(check.Checker, "check", slow)    # inherited by the forked workers
    f = tmp_path / "a.yaml"
    f.write_text("submissions:\n"
                 "  - {learner: a, answers: {17-08/practice-1: '65', 17-08/practice-4.count: 256}}\n"
                 "  - {learner: b, answers: {17-08/practice-1: 64}}\n")
    from grader.bank import load_bank
    report = run_grade(load_bank(), load_submissions([f]), jobs=2, limits=Limits(timeout_s=0.3, grace_s=0.5))
    a, b = report.submissions
    assert a.results[0].score == 0
    assert a.results[0].feedback == "invalid answer: too complex to grade within 0.3 s"
    assert a.results[1].correct is True and b.results[0].correct is True


def test_junit_of_the_hostile_corpus_is_valid_xml(tmp_path):
    from xml.etree import ElementTree as ET
    r = CliRunner().invoke(cli, ["grade", "--jobs", "1", "--format", "junit", str(CORPUS / "mallory.yaml")])
    assert r.exit_code == 0, r.stderr
    root = ET.fromstring(r.stdout.split("\n", 1)[1])          # control characters escaped, not raw
    cases = root.findall(".//testcase")
    unanswered = [c for c in cases if c.find("failure") is not None and c.find("failure").get("type") == "unanswered"]
    assert len(cases) - len(unanswered) == 29                 # the answers; the unanswered problems listed too
    assert any("\\u0000" in (c.find("failure").text or "") for c in cases if c.find("failure") is not None)
