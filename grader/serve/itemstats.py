"""Item statistics (issue 29): how hard each problem was, how well it separates the learners
who did well from those who did not, and how many attempts the learners needed.

Figures of a problem ``p``, over the learners with a graded attempt of it (its cell in the
gradebook, under the service's ``best``/``last`` policy, a person's review counting; an answer
still waiting for a person leaves the learner out until it is graded):

- ``mean_fraction``: the mean of ``score / points`` (0..1; the item's "difficulty" in
  classical test theory, 1 = everybody got it right).
- ``discrimination``: the **item-rest correlation**, Pearson's r between the learner's
  fraction on ``p`` and their total on the *rest* of its group: the other problems of its
  assessment (in the assessment's points, an item's override included), or, for a problem in
  no assessment (or a bank without ``assessments.yaml``), the other problems of the whole bank.
  A problem the learner has not answered counts 0 in the rest. When ``p`` is scored right or
  wrong (0 or full points) this r is the point-biserial correlation. ``None`` with fewer than
  3 learners or when either side does not vary (everybody equal: no information). About 0.3
  and above: the item separates well; near 0 or negative: look at the item (or its key).
- ``attempts_to_correct``: among the learners who got it right at some point (an attempt
  graded ``correct``, or a person's review of full points), the mean and median number of
  graded attempts up to and including the first right one (1 = right at the first try);
  ``never``: the learners with graded attempts none of which is right; ``waiting``: those not
  right so far with an answer still waiting for a person (free text), who are not "never".

Attempts are those of :func:`grader.serve.gradebook._attempts` (graded ones; an unreadable
answer is no attempt: ``store.counts_as_attempt``)."""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection

from grader.api.service import json_number
from grader.db.models import Record

from . import gradebook
from .store import latest_reviews

if TYPE_CHECKING:
    from grader.api import Assessment

    from .engine import Engine

JSON = dict[str, Any]
MIN_LEARNERS = 3


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r of two equally long samples; None below MIN_LEARNERS or with no variance."""
    n = len(xs)
    if n < MIN_LEARNERS or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def group_of(engine: Engine, problem_id: str) -> tuple[Assessment | None, dict[str, float]]:
    """The problems a problem's rest score is taken over, with their points there: its
    assessment's (item overrides included), else the whole bank's."""
    a = engine.course.of_problem(problem_id) if engine.course is not None else None
    if a is not None:
        return a, {it.problem_id: float(it.points) if it.points is not None else engine.points(it.problem_id)
                   for it in a.items}
    return None, {p.id: float(p.points) for p in engine.problems}


def _fraction(row: JSON, problem_id: str, bank_points: float) -> float | None:
    c = row["problems"].get(problem_id)
    if c is None or c["score"] is None or bank_points <= 0:
        return None
    return float(c["score"]) / bank_points


def item_figures(engine: Engine, table: list[JSON], problem_id: str) -> JSON:
    """``mean_fraction`` and ``discrimination`` of one problem from the gradebook's rows."""
    a, group = group_of(engine, problem_id)
    xs: list[float] = []
    rests: list[float] = []
    for row in table:
        x = _fraction(row, problem_id, engine.points(problem_id))
        if x is None:
            continue
        rest = 0.0
        for q, pts in group.items():
            if q != problem_id:
                rest += (_fraction(row, q, engine.points(q)) or 0.0) * pts
        xs.append(x)
        rests.append(rest)
    r = pearson(xs, rests)
    return {"learners": len(xs),
            "mean_fraction": json_number(round(sum(xs) / len(xs), 4), digits=6) if xs else None,
            "discrimination": None if r is None else json_number(round(r, 4), digits=6),
            "group": a.id if a is not None else None}


def _right(x: Record, reviews: dict[str, JSON], points: float) -> bool:
    """An attempt is right: a person's review of full points, else graded ``correct``."""
    if x.id in reviews:
        return float(reviews[x.id]["score"]) >= points - 1e-9
    return bool(x.status == "correct")


def attempts_to_correct(attempts: Sequence[Record], reviews: dict[str, JSON], points: float) -> JSON:
    """Mean and median attempts up to the first right one, among the learners who got it right;
    ``never``: learners whose graded attempts were all not right; ``waiting``: learners not right
    so far with an answer a person has not graded yet. ``attempts`` in order."""
    per: defaultdict[int, list[Record]] = defaultdict(list)
    for x in attempts:
        per[x.user_id].append(x)
    counts: list[int] = []
    never = waiting = 0
    for tries in per.values():
        first = next((i for i, x in enumerate(tries, 1) if _right(x, reviews, points)), None)
        if first is not None:
            counts.append(first)
        elif any(x.id not in reviews and x.pending_points for x in tries):
            waiting += 1            # not right so far, an answer still waits for a person: not "never"
        else:
            never += 1
    return {"learners": len(counts), "never": never, "waiting": waiting,
            "mean": json_number(round(sum(counts) / len(counts), 4), digits=6) if counts else None,
            "median": json_number(float(statistics.median(counts)), digits=6) if counts else None}


def _attempts_of(conn: Connection, engine: Engine, problem_ids: list[str]) -> dict[str, JSON]:
    by: defaultdict[str, list[Record]] = defaultdict(list)
    wanted = set(problem_ids)
    for x in gradebook._attempts(conn, problem_id=problem_ids[0] if len(problem_ids) == 1 else None):
        if x.problem_id in wanted:
            by[x.problem_id].append(x)
    ids = [x.id for v in by.values() for x in v]
    reviews = latest_reviews(conn, ids) if ids else {}
    return {pid: attempts_to_correct(by.get(pid, []), reviews, engine.points(pid)) for pid in problem_ids}


def problem(conn: Connection, engine: Engine, problem_id: str, policy: str) -> JSON:
    """``GET /problems/{id}/stats``: :func:`gradebook.stats` with the item figures."""
    out = gradebook.stats(conn, engine, problem_id, policy)
    table = gradebook.rows(conn, engine, policy)
    out["item"] = {**item_figures(engine, table, problem_id),
                   "attempts_to_correct": _attempts_of(conn, engine, [problem_id])[problem_id]}
    return out


def class_table(conn: Connection, engine: Engine, policy: str, assessment: Assessment | None) -> list[JSON]:
    """``GET /statistics``: one row per problem (of ``assessment``, or of the bank), in order."""
    ids = list(assessment.problem_ids) if assessment is not None else [p.id for p in engine.problems]
    table = gradebook.rows(conn, engine, policy)
    tries = _attempts_of(conn, engine, ids)
    return [{"problem": pid, "title": engine.title(pid), "kind": engine.kind(pid),
             "points": json_number(engine.points(pid), digits=6),
             **item_figures(engine, table, pid), "attempts_to_correct": tries[pid]} for pid in ids]
