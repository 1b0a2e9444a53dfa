"""An answer whose key names no problem (null, a number, true/false, empty text, a list, a
mapping, a tagged value) is refused alone, with file:line:column and what is wrong; the
learner's other answers (and the other learners) are graded; `grader grade` exits 2, its status
for input it could not take (issue #26)."""
import pytest

from grade_helpers import as_json, grade, write

@pytest.mark.parametrize("line, what", [
    ("~: 5", "not null; that answer (5) was not graded"),
    ("null: 5", "not null; that answer (5) was not graded"),
    ("12: x", "not 12 (a number); that answer ('x') was not graded"),
    ("true: x", "not true (true/false); that answer ('x') was not graded"),
    ("'': x", "not empty text; that answer ('x') was not graded"),
    ("[a]: b", "not a list ([a]); that answer ('b') was not graded"),
    ("{a: 1}: b", "not a mapping ({a: 1}); that answer ('b') was not graded"),
    ("!!binary aGVsbG8=: b", "not a tagged value (!!binary aGVsbG8=); that answer ('b') was not graded"),
])
def test_an_answer_with_a_key_that_is_no_problem_id_is_refused_alone(tmp_path, line, what):
    # the bad key stands on line 4, column 3 (two spaces of indentation under "answers:")
    f = write(tmp_path / "kim.yaml", "learner: kim\nanswers:\n  17-08/practice-1: 64\n  " + line
              + "\n  17-08/params-formula: \"4d^2 + 4d\"\n")
    r, data = as_json(f)
    assert r.exit_code == 2, r.stderr
    [sub] = data["submissions"]
    got = {x["id"]: x for x in sub["results"]}
    assert set(got) == {"17-08/practice-1", "17-08/params-formula"}       # both graded, nothing else
    assert got["17-08/practice-1"]["correct"] is True and got["17-08/params-formula"]["correct"] is True
    assert sub["score"] == 3                                             # 1 + 2 points
    [err] = data["errors"]
    assert err["location"] == f"{f}:4:3"
    assert err["message"] == ("learner 'kim': an answer's key must be a problem id such as "
                              f"17-08/practice-1, {what}")
    assert f"{f}:4:3: learner 'kim'" in r.stderr


def test_other_learners_of_the_file_are_graded_and_the_text_report_is_written(tmp_path):
    f = write(tmp_path / "class.yaml", """\
        submissions:
          - learner: a
            answers:
              ~: 64
              [x]: 1
              17-08/practice-1: 64
          - learner: b
            answers: {17-08/practice-1: 64, 17-08/example-1.d_k: 64}
        """)
    r = grade(f)
    assert r.exit_code == 2, r.stderr
    assert "a (" in r.stdout and "b (" in r.stdout
    assert "✓ 17-08/practice-1" in r.stdout and "✓ 17-08/example-1.d_k" in r.stdout
    assert f"{f}:4:7: learner 'a': an answer's key must be a problem id" in r.stderr
    assert f"{f}:5:7: learner 'a': an answer's key must be a problem id" in r.stderr
    assert "2 submissions, 3 answers graded, 2 input errors" in r.stdout + r.stderr


def test_a_list_key_inside_an_answer_is_echoed_as_text(tmp_path):
    # not a key of 'answers': the answer is a mapping, invalid for a number; JSON can still write it
    f = write(tmp_path / "m.yaml", "learner: m\nanswers:\n  17-08/practice-1: {[a]: 1}\n  17-08/params-formula: 4d^2 + 4d\n")
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    got = {x["id"]: x for x in data["submissions"][0]["results"]}
    assert got["17-08/practice-1"]["answer"] == {"[a]": 1}
    assert got["17-08/practice-1"]["status"] == "invalid"
    assert got["17-08/params-formula"]["correct"] is True


@pytest.mark.parametrize("body", [
    "learner: kim\nanswers:\n  17-08/practice-1: 64\n  17-08/nope: 5\n",     # an unknown id: graded 0
    "learner: kim\nanswers:\n  17-08/practice-1: 64\n  17-08/practice-1: 65\n",   # given twice: invalid
])
def test_answers_graded_with_0_keep_exit_status_0(tmp_path, body):
    r, data = as_json(write(tmp_path / "kim.yaml", body))
    assert r.exit_code == 0, r.stderr
    assert data["submissions"][0]["results"]
