"""Code answers in `grader grade`: a solution file that cannot be read is that answer's invalid
result; every other answer is still graded and the exit status is the command's usual one."""
from grade_helpers import as_json, write


def test_an_unreadable_or_oversized_solution_is_that_answers_invalid_result(tmp_path):
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\nx = 1\n")              # not UTF-8
    (tmp_path / "big.py").write_bytes(b"#" * (2 * 1024 * 1024) + b"\n")      # 2 MiB
    answers = write(tmp_path / "answers.yaml", """\
        submissions:
          - learner: ann
            answers: {17-08/code-mha: latin1.py, 17-08/practice-1: 64}
          - learner: bob
            answers: {17-08/code-mha: big.py, 17-08/practice-1: 65}
        """)
    r, data = as_json(answers)
    assert r.exit_code == 0, r.stderr                   # grading ran: 0, whatever the scores
    ann, bob = data["submissions"]
    code, other = ann["results"]
    assert (code["status"], code["score"], code["correct"]) == ("invalid", 0, False)
    assert code["feedback"].startswith("invalid answer: ") and "UTF-8" in code["feedback"]
    assert other["status"] == "correct" and other["score"] == 1
    code, other = bob["results"]
    assert (code["status"], code["score"]) == ("invalid", 0)
    assert code["feedback"].startswith("invalid answer: ") and "larger than" in code["feedback"]
    assert other["status"] == "wrong"
    assert "Traceback" not in r.output
