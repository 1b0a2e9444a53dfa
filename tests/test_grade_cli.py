"""`grader grade` and `grader exercises` through the CLI: exit status first, then output."""
import json
from xml.etree import ElementTree as ET

from click.testing import CliRunner

from grade_helpers import as_json, grade, write
from grader.cli import cli

ALICE = """\
learner: alice
answers:
  17-08/practice-1: 64
  17-08/params-formula: "4d^2 + 4d"
  17-08/example-2.params: 786432
  17-08/example-1.q_i_shape: "128x64"
  17-08/crossover: "2d < n"
  17-08/quiz-1: A
  17-08/practice-2: "Because the heads split d into h parts of d/h."
"""


def bank_ids():
    from grader.bank import load_bank
    return [p.id for p in load_bank().problems]


def by_id(sub):
    return {r["id"]: r for r in sub["results"]}


def test_json_fields_and_grades(tmp_path):
    r, data = as_json(write(tmp_path / "alice.yaml", ALICE))
    assert r.exit_code == 0, r.stderr
    assert set(data) >= {"submissions"}
    [sub] = data["submissions"]
    assert set(sub) >= {"learner", "score", "max_score", "results"}
    assert sub["learner"] == "alice"
    for res in sub["results"]:
        assert set(res) >= {"id", "answer", "score", "max_score", "correct", "feedback"}
    res = by_id(sub)
    assert len(sub["results"]) == 7
    assert res["17-08/practice-1"]["correct"] is True and res["17-08/practice-1"]["score"] == 1
    assert res["17-08/params-formula"]["correct"] is True and res["17-08/params-formula"]["score"] == 2
    assert "read as" in res["17-08/params-formula"]["feedback"]
    assert res["17-08/example-2.params"]["correct"] is False and res["17-08/example-2.params"]["score"] == 0
    assert "W^O" in res["17-08/example-2.params"]["feedback"]
    assert res["17-08/example-1.q_i_shape"]["correct"] is True
    assert res["17-08/crossover"]["correct"] is True
    assert res["17-08/quiz-1"]["correct"] is True
    assert res["17-08/practice-2"]["correct"] is None and res["17-08/practice-2"]["score"] == 0
    # 1 + 2 + 0 + 1 + 2 + 1 + 0 (free text awaits a person)
    assert sub["score"] == 7
    assert sub["max_score"] > sub["score"]


def test_text_format_is_default(tmp_path):
    r = grade(write(tmp_path / "alice.yaml", ALICE))
    assert r.exit_code == 0, r.stderr
    assert "alice" in r.stdout and "17-08/params-formula" in r.stdout
    assert "1 submission, 7 answers graded" in r.stdout          # singular where it is one
    # the problems alice left out are listed, each as not answered
    unanswered = [line for line in r.stdout.splitlines() if line.endswith("not answered")]
    assert len(unanswered) == len(bank_ids()) - 7


def test_junit(tmp_path):
    r = grade("--format", "junit", write(tmp_path / "alice.yaml", ALICE))
    assert r.exit_code == 0, r.stderr
    root = ET.fromstring(r.stdout.split("\n", 1)[1])
    [suite] = root.findall("testsuite")
    n = len(bank_ids())                       # 7 answered + every unanswered problem
    assert suite.get("name") == "alice" and suite.get("tests") == str(n)
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert len(cases) == n
    import yaml
    answered = set(yaml.safe_load(ALICE)["answers"])
    missing = [c for name, c in cases.items() if name not in answered]
    assert len(missing) == n - 7 and all(c.find("failure").get("type") == "unanswered" for c in missing)
    assert cases["17-08/example-2.params"].find("failure") is not None
    assert cases["17-08/practice-1"].find("failure") is None
    assert cases["17-08/practice-2"].find("skipped") is not None


def test_gradescope(tmp_path):
    out = tmp_path / "results.json"
    r = grade("--format", "gradescope", "--output", out, write(tmp_path / "alice.yaml", ALICE))
    assert r.exit_code == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["score"] == 7
    assert len(data["tests"]) == len(bank_ids())      # the unanswered problems too, each failed, worth 0
    assert [t["output"] for t in data["tests"][7:]] == ["Not answered."] * (len(bank_ids()) - 7)
    for t in data["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output"}
        assert t["status"] in ("passed", "failed")
    tests = {t["name"]: t for t in data["tests"]}
    assert tests["17-08/practice-1"]["status"] == "passed"
    assert tests["17-08/example-2.params"]["status"] == "failed"


def test_gradescope_needs_one_submission(tmp_path):
    write(tmp_path / "a.yaml", "learner: a\nanswers: {17-08/practice-1: 64}\n")
    write(tmp_path / "b.yaml", "learner: b\nanswers: {17-08/practice-1: 64}\n")
    r = grade("--format", "gradescope", tmp_path)
    assert r.exit_code == 2
    assert "one submission" in r.stderr


def test_multi_submission_files_and_directories_every_answer_once(tmp_path):
    write(tmp_path / "class" / "many.yaml", """\
        submissions:
          - learner: bob
            answers: {17-08/practice-1: "1024/16", 17-08/d_k-formula: "d_model/h"}
          - learner: carol
            answers: {17-08/practice-1: 65}
        """)
    write(tmp_path / "class" / "sub" / "dave.json",
          json.dumps({"learner": "dave", "answers": {"17-08/practice-4.count": "8*32", "17-08/quiz-2": "D"}}))
    write(tmp_path / "erin.yaml", "learner: erin\nanswers:\n  17-08/practice-4.bytes: 16 MiB\n")
    r, data = as_json(tmp_path / "class", tmp_path / "erin.yaml")
    assert r.exit_code == 0, r.stderr
    got = [(s["learner"], res["id"]) for s in data["submissions"] for res in s["results"]]
    assert sorted(got) == sorted([("bob", "17-08/practice-1"), ("bob", "17-08/d_k-formula"),
                                  ("carol", "17-08/practice-1"), ("dave", "17-08/practice-4.count"),
                                  ("dave", "17-08/quiz-2"), ("erin", "17-08/practice-4.bytes")])
    subs = {s["learner"]: by_id(s) for s in data["submissions"]}
    assert subs["bob"]["17-08/practice-1"]["correct"] is True
    assert subs["carol"]["17-08/practice-1"]["correct"] is False
    assert subs["dave"]["17-08/practice-4.count"]["correct"] is True
    assert subs["erin"]["17-08/practice-4.bytes"]["correct"] is True


def test_unknown_id_and_malformed_submission_reported_rest_graded(tmp_path):
    f = write(tmp_path / "mixed.yaml", """\
        submissions:
          - learner: frank
            answers:
              17-08/practice-1: 64
              17-08/no-such-problem: 3
          - learner: grace
            answers: [17-08/practice-1, 64]
          - learner: heidi
            answers: {17-08/practice-1: 64}
        """)
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    subs = {s["learner"]: by_id(s) for s in data["submissions"]}
    assert set(subs) == {"frank", "heidi"}
    unknown = subs["frank"]["17-08/no-such-problem"]
    assert unknown["score"] == 0 and unknown["correct"] is False
    assert f"unknown problem id '17-08/no-such-problem' at {f}:5:" in unknown["feedback"]
    assert subs["frank"]["17-08/practice-1"]["correct"] is True
    assert subs["heidi"]["17-08/practice-1"]["correct"] is True
    [err] = data["errors"]
    assert err["location"].startswith(f"{f}:6:") and "malformed submission" in err["message"]
    assert "'answers' must map problem ids to answers" in err["message"]
    assert f"{f}:6:" in r.stderr


def test_unreadable_file_exit_2_after_grading_the_rest(tmp_path):
    write(tmp_path / "good.yaml", "learner: ivan\nanswers: {17-08/practice-1: 64}\n")
    write(tmp_path / "broken.yaml", "learner: judy\nanswers: {17-08/practice-1: [64\n")
    r, data = as_json(tmp_path)
    assert r.exit_code == 2
    assert [s["learner"] for s in data["submissions"]] == ["ivan"]
    assert data["submissions"][0]["results"][0]["correct"] is True
    assert "broken.yaml:" in r.stderr and "invalid YAML" in r.stderr


def test_bad_usage_and_missing_files_exit_2(tmp_path):
    assert grade(tmp_path / "nope.yaml").exit_code == 2
    assert grade().exit_code == 2
    r = grade("--format", "pdf", write(tmp_path / "a.yaml", ALICE))
    assert r.exit_code == 2


def test_invalid_bank_exit_2_with_location(tmp_path):
    bank = write(tmp_path / "bank.yaml", "subject: x\nproblems:\n  - {id: x/a, prompt: p, kind: colour, reference: 1}\n")
    r = grade("--exercises", bank, write(tmp_path / "a.yaml", ALICE))
    assert r.exit_code == 2
    assert f"{bank}:3:" in r.stderr and "'kind' must be one of" in r.stderr


def test_variants_deterministic_per_learner_and_named(tmp_path):
    names = [f"learner-{i}" for i in range(24)]
    body = "submissions:\n" + "".join(
        f"  - learner: {n}\n    answers: {{17-08/variant.d_k: 64}}\n" for n in names)
    f = write(tmp_path / "v.yaml", body)
    r1, first = as_json(f)
    r2, second = as_json(f)
    assert r1.exit_code == 0 and r2.exit_code == 0
    v1 = [s["results"][0]["variant"] for s in first["submissions"]]
    assert v1 == [s["results"][0]["variant"] for s in second["submissions"]]
    assert len(set(v1)) >= 3                          # drawn, not one for all
    for s in first["submissions"]:
        res = s["results"][0]
        assert res["variant"] in res["feedback"]
        # "variant d=768, h=12": d_k = d / h, by hand from the name
        values = dict(kv.split("=") for kv in res["variant"].removeprefix("variant ").split(", "))
        d, h = int(values["d"]), int(values["h"])
        assert d % h == 0                             # only well-defined draws
        assert res["correct"] is (d // h == 64)


def test_variant_answer_right_for_its_draw(tmp_path):
    r, data = as_json(write(tmp_path / "one.yaml", "learner: kim\nanswers: {17-08/variant.d_k: 1}\n"))
    variant = data["submissions"][0]["results"][0]["variant"]
    values = dict(kv.split("=") for kv in variant.removeprefix("variant ").split(", "))
    right = int(values["d"]) // int(values["h"])
    r, data = as_json(write(tmp_path / "two.yaml", f"learner: kim\nanswers: {{17-08/variant.d_k: {right}}}\n"))
    res = data["submissions"][0]["results"][0]
    assert res["variant"] == variant and res["correct"] is True and res["score"] == 1


def test_exercises_lists_the_bank():
    r = CliRunner().invoke(cli, ["exercises", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    ids = {row["id"]: row for row in rows}
    assert ids["17-08/example-2.params"]["kind"] == "number"
    assert ids["17-08/example-2.params"]["points"] == 2
    assert "d_model = 512" in ids["17-08/example-2.params"]["prompt"]
    assert set(rows[0]) >= {"id", "kind", "points", "prompt"}
    r = CliRunner().invoke(cli, ["exercises"])
    assert r.exit_code == 0
    assert "17-08/crossover" in r.output and "relation" in r.output


def bank_points():
    from grader.bank import load_bank
    return sum(p.points for p in load_bank())


def test_free_text_is_pending_for_a_person_counted_0_in_max_score_json(tmp_path):
    # issue 13: pending points stay in max_score (counted 0 until a person rules), so that an
    # answer nobody has graded can never raise a percentage
    r, data = as_json(write(tmp_path / "alice.yaml", ALICE))
    [sub] = data["submissions"]
    free = by_id(sub)["17-08/practice-2"]                       # 2 points, free text
    assert free["correct"] is None and free["status"] == "needs_person"
    assert free["score"] == 0 and free["max_score"] == 2 and free["pending_points"] == 2
    assert sub["score"] == 7
    assert sub["max_score"] == bank_points() and sub["pending_points"] == 2
    assert by_id(sub)["17-08/practice-1"]["pending_points"] == 0


def test_free_text_in_gradescope_is_not_a_failed_test(tmp_path):
    out = tmp_path / "results.json"
    r = grade("--format", "gradescope", "--output", out, write(tmp_path / "alice.yaml", ALICE))
    assert r.exit_code == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["score"] == 7 and data["max_score"] == bank_points()     # pending: counted 0, not left out
    [free] = [t for t in data["tests"] if t["name"].startswith("17-08/practice-2")]
    assert free["status"] != "failed"
    assert free["score"] == 0 and free["max_score"] == 2
    assert "needs a person to grade it (2 points, counted 0 until then)" in free["name"] + free["output"].lower()
    assert "2 points wait for a person" in data["output"]
    answered = [t for t in data["tests"] if t["output"] != "Not answered."]
    assert sum(t["max_score"] for t in answered) == 1 + 2 + 2 + 1 + 2 + 1 + 2   # the six scored answers + free text
    assert sum(t["max_score"] for t in data["tests"]) == bank_points()          # and the unanswered ones


def test_exercises_for_a_learner_shows_the_numbers_grade_uses(tmp_path):
    import re
    from grader.bank import load_bank
    variants = [p.id for p in load_bank() if p.variant]
    assert "17-08/variant.d_k" in variants
    r = CliRunner().invoke(cli, ["exercises", "--format", "json", "--learner", "learner-7"])
    assert r.exit_code == 0, r.output
    rows = {row["id"]: row for row in json.loads(r.output)}
    d_k = rows["17-08/variant.d_k"]
    assert "{" not in d_k["prompt"]
    d, h = map(int, re.search(r"d_model = (\d+), h = (\d+)", d_k["prompt"]).groups())
    assert d_k["drawn"] == {"d": d, "h": h}
    for pid in variants:
        assert "{" not in rows[pid]["prompt"] and rows[pid]["drawn"]
    assert rows["17-08/practice-1"]["drawn"] is None
    # d_k = d / h, by hand from the numbers the learner was shown: graded right for that learner
    r, data = as_json(write(tmp_path / "l7.yaml", f"learner: learner-7\nanswers: {{17-08/variant.d_k: {d // h}}}\n"))
    res = data["submissions"][0]["results"][0]
    assert res["correct"] is True and res["variant"] == f"variant d={d}, h={h}"
    text = CliRunner().invoke(cli, ["exercises", "--learner", "learner-7"]).output
    assert f"d_model = {d}, h = {h}" in text and "your variant" in text


def test_exercises_shows_the_options_of_a_choice_and_the_units_asked_for():
    # expected from the bank file itself, read as plain YAML (not by the bank loader)
    import yaml
    from pathlib import Path
    quiz = yaml.safe_load((Path(__file__).resolve().parents[1] / "exercises/17-08/04-quiz.yaml").read_text())
    q1 = next(p for p in quiz["problems"] if p["id"] == "17-08/quiz-1")
    options = q1["choices"] if isinstance(q1["choices"], dict) else dict(q1["choices"])
    r = CliRunner().invoke(cli, ["exercises"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    for letter, option in options.items():
        assert " ".join(f"{letter}) {option}".split()) in text
    assert "answer: the letter of one option (A, B, C, D)" in text
    assert "KiB, MiB, GiB" in text                     # 17-08/practice-4.bytes asks for bytes
    r = CliRunner().invoke(cli, ["exercises", "--format", "json"])
    rows = {row["id"]: row for row in json.loads(r.output)}
    assert {c["letter"]: c["text"] for c in rows["17-08/quiz-1"]["choices"]} == options
    assert rows["17-08/practice-4.bytes"]["unit"] == "byte"
    assert rows["17-08/practice-1"]["choices"] is None
