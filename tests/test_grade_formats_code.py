"""A code answer's tests in every report format: each failed test with its own message (text,
wrapped; JSON; JUnit), one Gradescope test per code test (hidden ones after_published), and the
unanswered problems listed in JUnit and Gradescope."""
import json
from xml.etree import ElementTree as ET

from grader.reports.grades import render
from grader.grade.results import AnswerResult, Report, SubmissionResult, CodeTestResult

LONG = ("multi_head_forward(query, key, value, weights, h): values differ by 1.55 (tolerance 1e-06): "
        "did you scale by √d_model instead of √d_k? [base: d_model=16, h=4, n_q=6, n_k=6, b=2, seed=0]")
TESTS = (CodeTestResult("test_x.py::test_split[a]", True),
         CodeTestResult("test_x.py::test_forward[a]", False, LONG),
         CodeTestResult("test_x.py::test_count[b]", False, "parameter_count(512, 8) = 1048576, expected 1050624"),
         CodeTestResult("test_x_hidden.py::test_hidden_forward[c]", False, "hidden case: " + LONG, hidden=True))
FEEDBACK = "1/4 tests passed [sandbox: bubblewrap]\n" + "\n".join(f"✗ {t.name}: {t.message}" for t in TESTS[1:])
CODE = AnswerResult("17-08/code-mha", "alice.py", 2.5, 10.0, False, FEEDBACK, "partial", tests=TESTS)
NUMBER = AnswerResult("17-08/practice-1", 64, 1.0, 1.0, True, "correct", "correct")
REPORT = Report((SubmissionResult("alice", "alice.yaml", None, (CODE, NUMBER), 3.5, 14.0,
                                  unanswered=("17-08/quiz-1",)),), (), False)
POINTS = {"17-08/code-mha": 10.0, "17-08/practice-1": 1.0, "17-08/quiz-1": 3.0}


def test_text_lists_every_failed_test_wrapped_under_the_answer():
    text = render(REPORT, "text", points=POINTS)
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines if not line.startswith("  ✓") and "alice.py" not in line)
    body = " ".join(line.strip() for line in lines)
    for t in TESTS[1:]:
        assert f"✗ {t.name}: {t.message}" in body          # whole, after unwrapping
    assert "… and" not in text
    assert "- 17-08/quiz-1  not answered" in text
    assert text.rstrip().endswith("1 submission, 2 answers graded")


def test_json_has_each_test_with_its_message():
    data = json.loads(render(REPORT, "json"))
    [code, _] = data["submissions"][0]["results"]
    assert [t["name"] for t in code["tests"]] == [t.name for t in TESTS]
    assert [t["message"] for t in code["tests"] if not t["passed"]] == [t.message for t in TESTS[1:]]
    assert [t["hidden"] for t in code["tests"]] == [False, False, False, True]


def test_junit_has_a_testcase_per_code_test_and_per_unanswered_problem():
    root = ET.fromstring(render(REPORT, "junit", points=POINTS).split("\n", 1)[1])
    [suite] = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert suite.get("tests") == str(4 + 1 + 1) and suite.get("failures") == str(3 + 1)
    assert cases["17-08/code-mha::test_x.py::test_split[a]"].find("failure") is None
    failure = cases["17-08/code-mha::test_x.py::test_forward[a]"].find("failure")
    assert failure.get("message") == LONG
    assert cases["17-08/quiz-1"].find("failure").get("type") == "unanswered"
    assert "0/3" in cases["17-08/quiz-1"].find("failure").text


def test_gradescope_has_one_test_per_code_test_hidden_ones_after_published():
    data = json.loads(render(REPORT, "gradescope", points=POINTS))
    tests = data["tests"]
    code = [t for t in tests if t["name"].startswith("17-08/code-mha")]
    assert len(code) == 4
    assert [t["max_score"] for t in code] == [2.5] * 4                 # 10 points over 4 tests
    assert [t["score"] for t in code] == [2.5, 0, 0, 0]
    assert [t["status"] for t in code] == ["passed", "failed", "failed", "failed"]
    assert code[1]["output"] == LONG
    assert [t.get("visibility") for t in code] == [None, None, None, "after_published"]
    [quiz] = [t for t in tests if t["name"] == "17-08/quiz-1"]
    assert quiz == {"name": "17-08/quiz-1", "score": 0, "max_score": 3, "status": "failed", "output": "Not answered."}
    assert sum(t["score"] for t in tests) == data["score"] == 3.5
