"""How long the staff's gradebook page takes to render: 1,000 learners x the bank's 44
problems (every cell answered), from the rows `grader.serve.gradebook.rows` returns to the
HTML the browser gets (sorting included). Prints medians; asserts nothing (target < 1 s).

    .venv/bin/python benchmarks/bench_web.py [--learners 1000] [--repeat 5]
"""
from __future__ import annotations

import argparse
from pathlib import Path
import random
import statistics
import time

COURSE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "course.yaml"   # the example course


class _Req:                        # what the template and the CSRF token read of a request
    def __init__(self):
        from types import SimpleNamespace
        self.cookies, self.state = {}, SimpleNamespace()
        self.url, self.headers = SimpleNamespace(scheme="http"), {}
        self.app = SimpleNamespace(state=SimpleNamespace(web_secret=b"k" * 32,
                                                         grader=SimpleNamespace(settings=SimpleNamespace(public_url=None))))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from types import SimpleNamespace

    from grader.bank import load_bank
    from grader.web.staff import gradebook_html
    bank = load_bank(None)
    problems = list(bank.problems)
    rng = random.Random(17)
    table = []
    for i in range(args.learners):
        cells = {p.id: {"score": rng.choice([0, float(p.points)]), "max_score": float(p.points), "attempts": 1,
                        "pending": False, "status": "correct"} for p in problems}
        table.append({"learner": f"learner-{i:04d}", "name": f"Learner {i}", "email": "", "problems": cells,
                      "total": sum(c["score"] for c in cells.values()), "max_total": 65, "pending_points": 0})
    from grader.api import load_course
    course = load_course(bank, COURSE)
    st = SimpleNamespace(engine=SimpleNamespace(problems=problems, total=sum(float(p.points) for p in problems),
                                                course=course),
                         settings=SimpleNamespace(policy="best"))
    req = _Req()
    gradebook_html(req, st, table, "learner", "asc")        # templates compiled once, as in a running server
    for key in ("learner", "total"):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            html = gradebook_html(req, st, table, key, "desc")
            times.append(time.perf_counter() - t0)
        print(f"gradebook {args.learners} learners x {len(problems)} problems, sorted by {key}: "
              f"median {statistics.median(times):.3f} s (min {min(times):.3f} s) over {args.repeat} runs; "
              f"{len(html) / 1e6:.1f} MB of HTML; target < 1 s")
    if course is not None:
        _assessment_tab(req, st, course.assessments[0], table, args.repeat)
        _assessment_book(course.assessments[0], args.learners, args.repeat)


def _assessment_tab(req, st, a, table, repeat: int) -> None:
    """The gradebook tab of one assessment (its problems only, late and extension markers)."""
    from grader.serve.assessbook import short
    from grader.web.staff import gradebook_html
    by_id = {p.id: p for p in st.engine.problems}
    columns = [{"id": pid, "title": by_id[pid].title, "short": short(by_id[pid].title),
                "points": float(by_id[pid].points)} for pid in a.problem_ids]
    rows = []
    for i, r in enumerate(table):
        cells = {c["id"]: {**r["problems"][c["id"]], "late": i % 7 == 0, "penalty": 0.1 if i % 7 == 0 else None,
                           "raw_score": 1.0 if i % 7 == 0 else None} for c in columns}
        rows.append({**r, "problems": cells, "total": sum(c["score"] for c in cells.values()),
                     "extension": "2026-12-09T22:59:00Z" if i % 11 == 0 else None})
    book = {"assessment": a.id, "title": a.title, "due": "2026-12-07T22:59:00Z", "problems": columns, "rows": rows}
    extra = {"book": book, "columns": columns, "due_local": "2026-12-07 23:59 CET", "show_text": "at once",
             "released": None}
    gradebook_html(req, st, rows, "learner", "asc", **extra)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        html = gradebook_html(req, st, rows, "total", "desc", **extra)
        times.append(time.perf_counter() - t0)
    print(f"assessment {a.id} gradebook {len(rows)} learners x {len(columns)} problems, sorted by total: "
          f"median {statistics.median(times):.3f} s (min {min(times):.3f} s) over {repeat} runs; "
          f"{len(html) / 1e6:.1f} MB of HTML; target < 1 s")



def _assessment_book(a, learners: int, repeat: int) -> None:
    """The rows of that tab from a SQLite database (``assessbook.book``): every learner answered
    each problem once, one in seven late."""
    import tempfile
    from datetime import datetime, timezone

    from sqlalchemy import insert

    from grader.db import Database
    from grader.db.models import Answer, Submission, User, new_id
    from grader.serve import assessbook
    from grader.serve.engine import Engine
    at = datetime(2026, 12, 3, tzinfo=timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/grader.db")
        db.ensure_schema()
        engine = Engine(course=str(COURSE))
        subs, answers = [], []
        for uid in range(1, learners + 1):
            sid = new_id()
            subs.append({"id": sid, "user_id": uid, "body_hash": "", "source": "api", "status": "graded",
                         "created_at": at})
            late = uid % 7 == 0
            answers += [{"id": new_id(), "submission_id": sid, "user_id": uid, "problem_id": pid, "position": k,
                         "raw": "1", "created_at": at, "status": "correct", "score": 0.8 if late else 1.0,
                         "max_score": 1.0, "pending_points": 0.0, "assessment_id": a.id,
                         "raw_score": 1.0 if late else None, "penalty": 0.2 if late else None}
                        for k, pid in enumerate(a.problem_ids)]
        with db.write() as conn:
            conn.execute(insert(User), [{"login": f"learner-{i:04d}", "name": "", "email": "", "role": "learner",
                                         "created_at": at} for i in range(learners)])
            conn.execute(insert(Submission), subs)
            conn.execute(insert(Answer), answers)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            with db.read() as conn:
                book = assessbook.book(conn, engine, a, "best")
            times.append(time.perf_counter() - t0)
        db.dispose()
    print(f"assessment {a.id} rows from the database, {len(book['rows'])} learners x {len(book['problems'])} problems "
          f"({len(answers):,} answers): median {statistics.median(times):.3f} s (min {min(times):.3f} s) "
          f"over {repeat} runs")


if __name__ == "__main__":
    main()
