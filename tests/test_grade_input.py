"""`grader grade` on answer files that are odd or hostile: every problem is reported where it
stands (file:line), never as a traceback, and nothing else given is lost."""
import json

import grade_helpers as helpers
import pytest
from grade_helpers import write


def grade(*args):
    return helpers.grade(*args, jobs=1)


def as_json(*args):
    return helpers.as_json(*args, jobs=1)


def results(data):
    return {(s["learner"], res["id"]): res for s in data["submissions"] for res in s["results"]}


OK = "learner: ok\nanswers:\n  17-08/practice-1: 64\n"


# ---------------------------------------------------------------- 1. huge integers

@pytest.mark.parametrize("name, body", [
    ("big.yaml", "learner: big\nanswers:\n  17-08/example-2.params: {n}\n  17-08/practice-1: 64\n"),
    ("big.json", '{{"learner": "big", "answers": {{"17-08/example-2.params": {n}, "17-08/practice-1": 64}}}}'),
])
def test_an_integer_of_4301_digits_is_an_invalid_answer_not_a_crash(tmp_path, name, body):
    write(tmp_path / name, body.format(n="9" * 4301))
    write(tmp_path / "ok.yaml", OK)
    r, data = as_json(tmp_path / name, tmp_path / "ok.yaml")
    assert r.exit_code == 0, r.stderr
    got = results(data)
    big = got[("big", "17-08/example-2.params")]
    assert big["score"] == 0 and big["status"] == "invalid"
    assert big["feedback"].startswith("invalid answer: too long (4,301 characters")
    assert got[("big", "17-08/practice-1")]["correct"] is True
    assert got[("ok", "17-08/practice-1")]["correct"] is True


# ---------------------------------------------------------------- 2. tags

def test_tags_other_than_plain_data_refuse_that_answer_at_its_line(tmp_path):
    f = write(tmp_path / "tags.yaml", """\
        learner: tags
        answers:
          17-08/practice-1: !!set {a, b}
          17-08/example-1.d_k: !!binary aGVsbG8=
          17-08/example-2.params: !!python/object/apply:os.system ["id"]
          17-08/practice-4.count: !!timestamp 2001-12-14
          17-08/example-1.q_i_shape: [128, !!set {a}]
          17-08/example-2.wo_params: !!int 262144
          17-08/quiz-1: !!str A
        """)
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    got = results(data)
    for pid, line, tag in [("17-08/practice-1", 3, "!!set"), ("17-08/example-1.d_k", 4, "!!binary"),
                           ("17-08/example-2.params", 5, "!!python/object/apply:os.system"),
                           ("17-08/practice-4.count", 6, "!!timestamp"), ("17-08/example-1.q_i_shape", 7, "!!set")]:
        res = got[("tags", pid)]
        assert res["score"] == 0 and res["status"] == "invalid", pid
        assert res["feedback"].startswith(f"invalid answer: tag {tag} is not allowed"), res["feedback"]
        assert res["location"].startswith(f"{f}:{line}:"), (pid, res["location"])
    assert got[("tags", "17-08/practice-1")]["answer"] == "!!set {a, b}"       # as written
    assert got[("tags", "17-08/example-2.wo_params")]["correct"] is True       # core tags are fine
    assert got[("tags", "17-08/quiz-1")]["correct"] is True


def test_grading_survives_unhashable_answers():
    """Whatever the reader gives, run.grade keys answers without hashing them raw."""
    from grader.bank import load_bank
    from grader.errors import Location
    from grader.grade.run import grade as run_grade
    from grader.grade.submissions import Answer, Loaded, Submission
    at = Location("x.yaml", 3, 3)
    sub = Submission("u", (Answer("17-08/practice-1", {"a", "b"}, at), Answer("17-08/example-1.d_k", [[64]], at),
                           Answer("17-08/practice-4.count", 256, at)), at, "x.yaml")
    report = run_grade(load_bank(), Loaded((sub,), (), False), jobs=1)
    a, b, c = report.submissions[0].results
    assert a.score == 0 and a.status == "invalid" and b.status == "invalid"
    assert c.correct is True


# ---------------------------------------------------------------- 3. --output

def test_output_in_a_missing_folder_is_refused_before_grading(tmp_path, monkeypatch):
    import grader.grade.run as run

    def must_not_grade(*a, **k):
        raise AssertionError("graded before checking --output")

    monkeypatch.setattr(run, "grade", must_not_grade)
    ok = write(tmp_path / "ok.yaml", OK)
    out = tmp_path / "no" / "such" / "out.json"
    r = grade("--format", "json", "-o", out, ok)
    assert r.exit_code == 2
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert f"--output {out}: no such folder" in r.stderr and "Traceback" not in r.output
    r = grade("-o", tmp_path, ok)                                   # a folder, not a file
    assert r.exit_code == 2 and f"--output {tmp_path}: is a folder" in r.stderr


def test_output_check_leaves_no_file_behind_and_an_existing_one_alone(tmp_path, monkeypatch):
    import grader.grade.run as run

    def fails(*a, **k):
        raise RuntimeError("stop after the check")

    ok = write(tmp_path / "ok.yaml", OK)
    monkeypatch.setattr(run, "grade_all", fails)     # what grader grade runs (through grader.api.grade_class)
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    old.write_text("previous grades")
    grade("-o", new, ok)
    grade("-o", old, ok)
    assert not new.exists()
    assert old.read_text() == "previous grades"


# ---------------------------------------------------------------- 4. YAML 1.1 typing

def test_yaml_1_1_numbers_and_booleans_are_not_read_into_right_answers(tmp_path):
    """0100 is octal 64, 1:04 sexagesimal 64 and 0x100 hex 256 in YAML 1.1: none is 64 as the
    learner wrote it. yes/no/on/off are not true/false. The answer echoed is what was written."""
    f = write(tmp_path / "y11.yaml", """\
        submissions:
          - {learner: a, answers: {17-08/practice-1: 0100, 17-08/practice-4.count: 0x100, 17-08/quiz-1: yes}}
          - {learner: b, answers: {17-08/practice-1: 1:04, 17-08/quiz-2: off, 17-08/example-1.d_k: 64}}
          - {learner: c, answers: {17-08/practice-1: 0o100, 17-08/quiz-3: on, 17-08/example-2.params: 1048576}}
        """)
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    got = results(data)
    for (learner, pid), written in [(("a", "17-08/practice-1"), "0100"), (("a", "17-08/practice-4.count"), "0x100"),
                                    (("b", "17-08/practice-1"), "1:04"), (("c", "17-08/practice-1"), "0o100")]:
        res = got[(learner, pid)]
        assert res["answer"] == written
        assert res["correct"] is False and res["score"] == 0, (written, res["feedback"])
    for (learner, pid), written in [(("a", "17-08/quiz-1"), "yes"), (("b", "17-08/quiz-2"), "off"),
                                    (("c", "17-08/quiz-3"), "on")]:
        res = got[(learner, pid)]
        assert res["answer"] == written and res["correct"] is False
        assert "true/false" not in res["feedback"]
    assert got[("b", "17-08/example-1.d_k")]["answer"] == 64 and got[("b", "17-08/example-1.d_k")]["correct"] is True
    assert got[("c", "17-08/example-2.params")]["correct"] is True


def test_numbers_written_as_text_keep_their_digits(tmp_path):
    f = write(tmp_path / "t.yaml", "learner: t\nanswers:\n  17-08/example-3.total_flops: 3.44e11\n"
                                   "  17-08/practice-1: 64.0\n")
    r, data = as_json(f)
    got = results(data)
    assert got[("t", "17-08/example-3.total_flops")]["answer"] == "3.44e11"
    assert got[("t", "17-08/practice-1")]["answer"] == "64.0" and got[("t", "17-08/practice-1")]["correct"] is True


# ---------------------------------------------------------------- 5. one bad entry of a class file

def test_a_duplicate_answer_spoils_that_answer_only(tmp_path):
    f = write(tmp_path / "class.yaml", """\
        submissions:
          - learner: a
            answers: {17-08/practice-1: 64}
          - learner: b
            answers:
              17-08/practice-1: 64
              17-08/example-1.d_k: 64
              17-08/practice-1: 32
          - learner: c
            answers: {17-08/practice-1: 64}
        """)
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    got = results(data)
    assert [s["learner"] for s in data["submissions"]] == ["a", "b", "c"]
    assert got[("a", "17-08/practice-1")]["correct"] is True and got[("c", "17-08/practice-1")]["correct"] is True
    assert got[("b", "17-08/example-1.d_k")]["correct"] is True
    dup = got[("b", "17-08/practice-1")]
    assert dup["score"] == 0 and dup["status"] == "invalid"
    assert dup["feedback"] == "invalid answer: answered more than once (first at line 6): neither answer counts"
    assert dup["location"].startswith(f"{f}:8:")
    assert len(data["submissions"][1]["results"]) == 2            # reported once


def test_a_duplicate_learner_makes_that_submission_malformed_only(tmp_path):
    f = write(tmp_path / "class.yaml", """\
        submissions:
          - learner: a
            answers: {17-08/practice-1: 64}
          - learner: b
            learner: bb
            answers: {17-08/practice-1: 64}
          - learner: c
            answers: {17-08/practice-1: 64}
        """)
    r, data = as_json(f)
    assert r.exit_code == 0, r.stderr
    assert [s["learner"] for s in data["submissions"]] == ["a", "c"]
    [err] = data["errors"]
    assert err["location"].startswith(f"{f}:5:")
    assert err["message"] == "malformed submission: duplicate key 'learner' (first at line 4)"
    assert f"{f}:5:" in r.stderr


def test_an_alias_refuses_the_whole_file_and_says_so(tmp_path):
    f = write(tmp_path / "class.yaml", """\
        submissions:
          - learner: a
            answers: {17-08/practice-1: &x 64}
          - learner: b
            answers: {17-08/practice-1: *x}
        """)
    write(tmp_path / "ok.yaml", OK)
    r, data = as_json(f, tmp_path / "ok.yaml")
    assert r.exit_code == 2
    assert [s["learner"] for s in data["submissions"]] == ["ok"]
    [err] = data["errors"]
    assert err["location"].startswith(f"{f}:3:")
    assert "aliases (*name) are not allowed" in err["message"]
    assert "the whole file is refused, none of its answers was graded" in err["message"]


# ---------------------------------------------------------------- 6. a missing path

def test_a_missing_path_is_reported_and_the_rest_graded_exit_2(tmp_path):
    ok = write(tmp_path / "ok.yaml", OK)
    missing = tmp_path / "missing.yaml"
    out = tmp_path / "out.json"
    r = grade("--format", "json", "-o", out, ok, missing, tmp_path / "no-folder")
    assert r.exit_code == 2
    assert r.exception is None or isinstance(r.exception, SystemExit)
    data = json.loads(out.read_text())
    assert [s["learner"] for s in data["submissions"]] == ["ok"]
    assert data["submissions"][0]["results"][0]["correct"] is True
    errors = {e["location"]: e["message"] for e in data["errors"]}
    assert errors == {str(missing): "no such file or folder", str(tmp_path / "no-folder"): "no such file or folder"}
    assert f"error: {missing}: no such file or folder" in r.stderr


def test_a_file_nested_100000_deep_is_refused_and_the_rest_graded(tmp_path):
    """Run as a command: before the fix, libyaml's composer crashed the process (segfault)."""
    import subprocess
    import sys
    deep = tmp_path / "deep.yaml"
    deep.write_text("learner: deep\nanswers:\n  17-08/practice-1: " + "[" * 100_000 + "]" * 100_000 + "\n")
    ok = write(tmp_path / "ok.yaml", OK)
    r = subprocess.run([sys.executable, "-m", "grader", "grade", "--jobs", "1", "--format", "json", str(deep), str(ok)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr[-500:]
    data = json.loads(r.stdout)
    assert [s["learner"] for s in data["submissions"]] == ["ok"]
    [err] = data["errors"]
    assert err["location"] == str(deep) and "YAML nested too deeply" in err["message"]


def test_reading_and_grading_leave_the_garbage_collector_on(tmp_path):
    """Both pause it for their bulk work; the forked workers and the caller must get it back."""
    import gc
    from grader.bank import load_bank
    from grader.grade.run import grade as run_grade
    from grader.grade.submissions import load_submissions
    assert gc.isenabled()
    loaded = load_submissions([write(tmp_path / "ok.yaml", OK)])
    assert gc.isenabled()
    report = run_grade(load_bank(), loaded, jobs=1)
    assert gc.isenabled() and report.submissions[0].results[0].correct is True


def test_submissions_given_twice_spoils_that_file_only(tmp_path):
    f = write(tmp_path / "twice.yaml", """\
        submissions:
          - {learner: a, answers: {17-08/practice-1: 64}}
        submissions:
          - {learner: b, answers: {17-08/practice-1: 64}}
        """)
    write(tmp_path / "ok.yaml", OK)
    r, data = as_json(f, tmp_path / "ok.yaml")
    assert r.exit_code == 0, r.stderr
    assert [s["learner"] for s in data["submissions"]] == ["ok"]
    [err] = data["errors"]
    assert err["location"].startswith(f"{f}:3:")
    assert err["message"] == "no submission of this file was graded: duplicate key 'submissions' (first at line 1)"
