"""The class summary (`grader grade --summary`, grader.reports.summary) on a generated class with
planted misconceptions at known frequencies: they come out grouped by feedback, largest first."""
import json
import random
from xml.etree import ElementTree as ET

import pytest

from grade_helpers import grade, write

# 17-08/example-2.params (2 points; 4·512² = 1,048,576): 786,432 forgets W^O, 1,050,624 adds the
# biases, 262,144 counts one matrix; 17-08/practice-1 (1024/16 = 64): 1024 is d_model, 16 and 65
# get the same generic feedback (one group of 5 + 3). Counts out of 40 learners.
PLANTED = {
    "17-08/example-2.params": [(1048576, 20), (786432, 9), (1050624, 5), (262144, 3), (None, 3)],
    "17-08/practice-1": [(64, 25), (1024, 7), (16, 5), (65, 3)],
    "17-08/quiz-1": [("A", 30), ("B", 6), (None, 4)],
}
N = 40


def make_class(tmp_path):
    rng = random.Random(7)
    answers = [{} for _ in range(N)]
    for pid, plan in PLANTED.items():
        column = [a for a, count in plan for _ in range(count)]
        assert len(column) == N
        rng.shuffle(column)
        for row, a in zip(answers, column):
            if a is not None:
                row[pid] = a
    subs = [{"learner": f"learner-{i:02d}", "answers": row} for i, row in enumerate(answers)]
    return write(tmp_path / "class.json", json.dumps({"submissions": subs}))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    path = make_class(tmp)
    r = grade(path, "--format", "json", "--summary", "--plots", tmp / "plots", "--plot-format", "png",
              "--plot-format", "svg")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout), tmp / "plots", path


def problem(data, pid):
    [p] = [p for p in data["class"]["problems"] if p["id"] == pid]
    return p


def test_the_planted_misconceptions_come_out_largest_first(graded):
    data, _, _ = graded
    p = problem(data, "17-08/example-2.params")
    assert (p["answered"], p["unanswered"], p["correct"]) == (37, 3, 20)
    assert p["success_rate"] == round(20 / 37, 4)
    assert p["mean_score"] == pytest.approx(20 * 2 / N)
    groups = p["common_wrong"]
    assert [g["answers"] for g in groups] == [9, 5, 3]
    assert [g["examples"][0]["answer"] for g in groups] == ["786432", "1050624", "262144"]
    assert "W^O" in groups[0]["feedback"] and "biases" in groups[1]["feedback"]
    assert all("read as" not in g["feedback"] for g in groups)


def test_answers_with_the_same_feedback_are_one_misconception(graded):
    data, _, _ = graded
    groups = problem(data, "17-08/practice-1")["common_wrong"]
    assert [g["answers"] for g in groups] == [8, 7]           # 16 and 65 share one feedback: 5 + 3
    assert {e["answer"]: e["count"] for e in groups[0]["examples"]} == {"16": 5, "65": 3}
    assert groups[0]["learners"] == 8
    assert "d_model" in groups[1]["feedback"]


def test_unanswered_and_the_class_totals(graded):
    data, _, _ = graded
    quiz = problem(data, "17-08/quiz-1")
    assert (quiz["unanswered"], quiz["correct"], quiz["answered"]) == (4, 30, 36)
    assert data["class"]["submissions"] == N
    totals = [s["score"] for s in data["submissions"]]
    assert data["class"]["mean_total"] == pytest.approx(sum(totals) / N, abs=1e-4)
    nobody = problem(data, "17-08/crossover")
    assert nobody["answered"] == 0 and nobody["unanswered"] == N and nobody["success_rate"] is None


def test_plots_are_written_and_open_as_images(graded):
    import matplotlib.image as mpimg
    _, plots, _ = graded
    for stem in ("class", "17-08_example-2.params", "17-08_quiz-1"):
        img = mpimg.imread(plots / f"{stem}.png")
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
        root = ET.parse(plots / f"{stem}.svg").getroot()
        assert root.tag.endswith("svg")


def test_text_summary_lists_the_largest_group_first(graded):
    _, _, path = graded
    r = grade(path, "--summary")
    assert r.exit_code == 0, r.stderr
    text = r.stdout[r.stdout.index("class summary: 40 submissions"):]
    block = text[text.index("17-08/example-2.params:"):].splitlines()
    assert "54% correct of 37 answered, 3 unanswered" in block[0]       # 20/37 = 0.54
    assert block[1].strip().startswith("9× (9 learners)") and "W^O" in block[1]
    assert block[2].strip().startswith("5× (5 learners)")


def test_summary_needs_text_or_json(graded):
    _, _, path = graded
    r = grade(path, "--summary", "--format", "junit")
    assert r.exit_code == 2 and "--summary goes with" in r.stderr
