"""One rule for account ids (grader.db.ids), wherever a learner is made: `grader users`, a
roster's import, a batch of answers files (issue #26, item 10). Each hostile id is refused
alone, with where and what; the rest of a roster's or a batch's learners are kept."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import select

from grader.db import Database
from grader.db.ids import check_login, login_problem
from grader.db.models import Submission, User
from grader.errors import ErrorList, InputError, Location

HOSTILE = {
    "markup": "<b>x</b>",
    "script": "<script>alert(1)</script>",
    "formula": '=HYPERLINK("http://evil.example","click")',
    "plus-formula": "+cmd",        # starts with a sign: a spreadsheet formula too
    "nul": "a\x00b",
    "newline": "a\nb",
    "slash": "a/b",
    "dotdot": "..",
    "space": "a b",
    "too-long": "a" * 201,
    "empty": "",
}
GOOD = ["alice", "b.smith", "c_d-e", "x@example.org", "a+b", "12345", "A" * 200]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_id_is_refused_with_its_reason(name):
    login = HOSTILE[name]
    assert login_problem(login), login
    with pytest.raises(InputError) as e:
        check_login(login, Location("roster.csv", 3))
    assert str(e.value).startswith("roster.csv:3: ")
    assert "\n" not in str(e.value) and "\x00" not in str(e.value)     # the id is quoted escaped, on one line


@pytest.mark.parametrize("login", GOOD)
def test_ordinary_ids_pass(login):
    assert login_problem(login) is None and check_login(f"  {login} ") == login


@pytest.fixture
def db(tmp_path):
    d = Database(f"sqlite:///{tmp_path / 'ids.db'}")
    d.ensure_schema()
    yield d
    d.dispose()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_grader_users_refuses_each_hostile_id(db, name):
    from grader.serve.accounts import add_user
    with pytest.raises(InputError):
        add_user(db, HOSTILE[name], "learner")
    with db.read() as conn:
        assert conn.execute(select(User.login)).all() == []


def test_a_roster_names_each_bad_row_and_the_import_checks_again(db):
    from grader.serve.accounts import import_roster, read_roster
    text = 'learner,name\nalice,A\n"a/b",B\n"=HYPERLINK(""x"")",C\n'
    with pytest.raises(ErrorList) as e:
        read_roster(text, "r.csv")
    # rows 3 and 4 by hand: the header is line 1, alice line 2
    assert [str(x.location) for x in e.value.errors] == ["r.csv:3", "r.csv:4"]
    with pytest.raises(InputError):         # rows made some other way are checked when stored too
        import_roster(db, [("a/b", "", "", Location("r.csv", 2))])


class Counter:
    def labels(self, *_):
        return self

    def inc(self, *_):
        pass


def _batch_result(logins):
    subs = [{"learner": login, "file": "answers.json", "score": 1, "max_score": 1, "pending_points": 0,
             "unanswered": [], "results": [{"id": "p1", "answer": "1", "status": "correct", "correct": True,
                                            "score": 1, "max_score": 1, "location": f"answers.json:{i + 2}:5"}]}
            for i, login in enumerate(logins)]
    return {"submissions": subs, "errors": []}


def test_a_batch_refuses_each_hostile_learner_alone_and_keeps_the_rest(db):
    from grader.serve.jobwork import JobWork
    from datetime import datetime, timezone
    state = SimpleNamespace(metrics=SimpleNamespace(submissions=Counter()), now=lambda: datetime.now(timezone.utc))
    work = JobWork(state)       # what JobWork reads of the service's State: its metrics and its clock
    logins = ["alice", *(HOSTILE[k] for k in sorted(HOSTILE)), "bob"]
    with db.write() as conn:
        out = work._batch(conn, SimpleNamespace(id="j"), _batch_result(logins))
    # 2 good learners stored, one error per hostile id (11), each at its submission's first answer
    assert out["learners_created"] == ["alice", "bob"]
    assert out["summary"] == {"submissions": 2, "answers": 2, "errors": len(HOSTILE)}
    wheres = [e["location"] for e in out["errors"]]
    assert wheres == [f"answers.json:{i + 2}:5" for i in range(1, len(HOSTILE) + 1)]
    assert all("learner " in e["message"] and "not stored" in e["message"] for e in out["errors"])
    with db.read() as conn:
        assert sorted(conn.execute(select(User.login)).scalars()) == ["alice", "bob"]
        assert conn.execute(select(Submission.id)).all().__len__() == 2
