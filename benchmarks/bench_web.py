"""How long the staff's gradebook page takes to render: 1,000 learners x the bank's 44
problems (every cell answered), from the rows `grader.serve.gradebook.rows` returns to the
HTML the browser gets (sorting included). Prints medians; asserts nothing (target < 1 s).

    .venv/bin/python benchmarks/bench_web.py [--learners 1000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import random
import statistics
import time


class _Req:                        # what the template and the CSRF token read of a request
    def __init__(self):
        from types import SimpleNamespace
        self.cookies, self.state = {}, SimpleNamespace()
        self.url, self.headers = SimpleNamespace(scheme="http"), {}
        self.app = SimpleNamespace(state=SimpleNamespace(web_secret=b"k" * 32))


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
    course = load_course(bank)
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


if __name__ == "__main__":
    main()
