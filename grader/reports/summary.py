"""A class summary from a grading :class:`~grader.grade.results.Report`: for each problem its
mean score, success rate and unanswered count, and the most common wrong answers grouped by
the feedback they received (the class's misconceptions, largest group first); plots of it.

    from grader.reports.summary import summarize, summary_json, summary_text, write_plots
    s = summarize(report, points={"17-08/practice-1": 1.0, ...})   # the bank's problems and points
    s.problems[0].success_rate, s.problems[0].wrong[0].feedback, s.problems[0].wrong[0].answers
    write_plots(s, "plots/", formats=("png", "svg"))

Definitions (over the graded submissions):

- ``mean_score``: the mean of the problem's score over every submission (an unanswered
  problem counts 0); ``answered``/``unanswered``: how many submissions gave it an answer;
- ``success_rate``: the fraction of the answered ones that are fully correct (an answer a
  person has still to grade counts as not yet correct; ``pending`` says how many wait);
- ``wrong``: the answers that are not correct (wrong, partial, invalid), grouped by their
  feedback (a variant's "(variant d=768, h=12)" left out, so the same mistake on different
  numbers is one group). A code answer counts once per failed test message (its test case,
  the trailing ``[...]``, left out): the class's most common failures. Each group says how
  many answers and learners, and the most frequent answers given.

Pure: no printing. :func:`write_plots` imports matplotlib (Agg) only when called.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP = 5                 # wrong-answer groups shown per problem in text
EXAMPLES = 3            # answers shown per group
_CASE = re.compile(r"\s*\[[^\]]*\]\s*$")


@dataclass(frozen=True)
class WrongGroup:
    """Wrong answers that received the same feedback."""

    feedback: str
    answers: int                # how many answers (a code answer: failed tests) got it
    learners: int
    examples: tuple[tuple[str, int], ...]   # (answer as written, how many times), most frequent first


@dataclass(frozen=True)
class ProblemSummary:
    id: str
    points: float
    submissions: int
    answered: int
    correct: int
    pending: int
    mean_score: float
    scores: tuple[float, ...]           # one per submission (unanswered: 0)
    wrong: tuple[WrongGroup, ...] = ()

    @property
    def unanswered(self) -> int:
        return self.submissions - self.answered

    @property
    def success_rate(self) -> float | None:
        """Fully correct among the answered (None: nobody answered)."""
        return self.correct / self.answered if self.answered else None


@dataclass(frozen=True)
class ClassSummary:
    submissions: int
    max_total: float
    totals: tuple[float, ...]
    problems: tuple[ProblemSummary, ...] = field(default_factory=tuple)

    @property
    def mean_total(self) -> float:
        return sum(self.totals) / len(self.totals) if self.totals else 0.0


def _answer_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else repr(raw) if not isinstance(raw, (int, float)) else str(raw)


def _feedback(r: Any) -> str:
    """The feedback without what is particular to the answer: the variant's numbers, the reading."""
    fb = str(r.feedback)
    if r.variant and fb.endswith(f" ({r.variant})"):
        fb = fb[: -len(r.variant) - 3]
    if r.read_as and fb.endswith(f" (read as {r.read_as})"):
        fb = fb[: -len(r.read_as) - 11]
    return fb


def summarize(report: Any, points: Mapping[str, float] | None = None) -> ClassSummary:
    """The class summary of ``report``; ``points``: every problem of the bank and its points
    (in the bank's order; without it, the problems answered, in order of first appearance)."""
    subs = report.submissions
    order: dict[str, float] = dict(points or {})
    by_problem: dict[str, list[Any]] = defaultdict(list)
    for s in subs:
        seen = set()
        for r in s.results:
            if r.id in seen:
                continue
            seen.add(r.id)
            by_problem[r.id].append((s.learner, r))
            if r.id not in order and r.max_score:
                order[r.id] = r.max_score
    problems = []
    n = len(subs)
    for pid, pts in order.items():
        rows = by_problem.get(pid, [])
        scores = [r.score for _, r in rows] + [0.0] * (n - len(rows))
        problems.append(ProblemSummary(
            id=pid, points=float(pts), submissions=n, answered=len(rows),
            correct=sum(1 for _, r in rows if r.correct is True),
            pending=sum(1 for _, r in rows if r.correct is None),
            mean_score=sum(scores) / n if n else 0.0, scores=tuple(scores), wrong=_wrong_groups(rows)))
    return ClassSummary(n, sum(order.values()), tuple(s.score for s in subs), tuple(problems))


def _wrong_groups(rows: Iterable[tuple[str, Any]]) -> tuple[WrongGroup, ...]:
    count: Counter[str] = Counter()
    learners: dict[str, set[str]] = defaultdict(set)
    examples: dict[str, Counter[str]] = defaultdict(Counter)
    for learner, r in rows:
        if r.correct is not False:
            continue
        if r.tests:             # a code answer: its failed tests' messages, each a mistake
            for t in r.tests:
                if not t.passed:
                    key = _CASE.sub("", t.message)
                    count[key] += 1
                    learners[key].add(learner)
                    examples[key][t.name.split("[")[0]] += 1
            continue
        key = _feedback(r)
        count[key] += 1
        learners[key].add(learner)
        examples[key][_answer_text(r.answer)] += 1
    groups = [WrongGroup(fb, c, len(learners[fb]), tuple(examples[fb].most_common(EXAMPLES)))
              for fb, c in count.items()]
    groups.sort(key=lambda g: (-g.answers, -g.learners, g.feedback))
    return tuple(groups)


def _num(x: float) -> float | int:
    # not grader.values.json_number(x, 4): a bank's `points: .inf` (or .nan) passes its loader, and comes out
    # here as inf (nan) where json_number raises
    return int(x) if float(x).is_integer() else round(x, 4)


def summary_json(s: ClassSummary) -> dict[str, Any]:
    """The summary as JSON data (``grader grade --format json --summary``: its ``class`` key)."""
    return {"submissions": s.submissions, "mean_total": _num(s.mean_total), "max_total": _num(s.max_total),
            "problems": [{"id": p.id, "points": _num(p.points), "answered": p.answered,
                          "unanswered": p.unanswered, "correct": p.correct, "pending": p.pending,
                          "mean_score": _num(p.mean_score),
                          "success_rate": None if p.success_rate is None else round(p.success_rate, 4),
                          "common_wrong": [{"feedback": g.feedback, "answers": g.answers, "learners": g.learners,
                                            "examples": [{"answer": a, "count": c} for a, c in g.examples]}
                                           for g in p.wrong]}
                         for p in s.problems]}


def summary_text(s: ClassSummary, top: int = TOP) -> str:
    """The summary for people: one block per problem, its most common wrong answers."""
    lines = [f"class summary: {s.submissions} submission{'' if s.submissions == 1 else 's'}, "
             f"mean {_num(s.mean_total)}/{_num(s.max_total)}"]
    nobody = [p.id for p in s.problems if not p.answered]
    for p in s.problems:
        if not p.answered and s.submissions:
            continue
        rate = "—" if p.success_rate is None else f"{p.success_rate:.0%}"
        lines.append(f"  {p.id}: mean {_num(p.mean_score)}/{_num(p.points)}, {rate} correct of "
                     f"{p.answered} answered, {p.unanswered} unanswered"
                     + (f", {p.pending} wait for a person" if p.pending else ""))
        for g in p.wrong[:top]:
            shown = ", ".join(f"{a} ×{c}" if c > 1 else a for a, c in g.examples)
            lines.append(f"      {g.answers}× ({g.learners} learner{'' if g.learners == 1 else 's'}) {g.feedback}"
                         + (f"  [{shown}]" if shown else ""))
        if len(p.wrong) > top:
            lines.append(f"      … {len(p.wrong) - top} other wrong-answer groups (--format json lists them all)")
    if nobody and s.submissions:
        lines.append(f"  answered by nobody: {', '.join(nobody)}")
    return "\n".join(lines) + "\n"


def _file_name(pid: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", pid).strip("_") or "problem"


def write_plots(s: ClassSummary, folder: str | Path, formats: Iterable[str] = ("png",)) -> list[Path]:
    """A score histogram per problem (``<id>.<fmt>``) and a class overview (``class.<fmt>``:
    success rate per problem, and the totals' histogram). Returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(fig: Any, stem: str) -> None:
        for fmt in formats:
            path = folder / f"{stem}.{fmt}"
            fig.savefig(path, format=fmt, bbox_inches="tight")
            written.append(path)
        plt.close(fig)

    for p in s.problems:
        fig, ax = plt.subplots(figsize=(5, 3))
        top = max(p.points, max(p.scores, default=0.0), 1.0)
        bins = [b * top / 10 for b in range(11)] if p.points != int(p.points) or p.points > 10 else \
            [b - 0.5 for b in range(int(top) + 2)]
        ax.hist(p.scores, bins=bins, color="#4C72B0", edgecolor="white")
        ax.set_title(f"{p.id} ({p.unanswered} unanswered)", fontsize=9)
        ax.set_xlabel(f"score (of {_num(p.points)})")
        ax.set_ylabel("submissions")
        save(fig, _file_name(p.id))

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, max(3, 0.25 * len(s.problems) + 1)))
    names = [p.id for p in s.problems]
    rates = [p.success_rate or 0.0 for p in s.problems]
    left.barh(range(len(names)), rates, color="#55A868")
    left.set_yticks(range(len(names)), names, fontsize=7)
    left.invert_yaxis()
    left.set_xlim(0, 1)
    left.set_xlabel("correct, of the answered")
    right.hist(s.totals, bins=min(20, max(1, len(set(s.totals)))), color="#4C72B0", edgecolor="white")
    right.set_xlabel(f"total score (of {_num(s.max_total)})")
    right.set_ylabel("submissions")
    fig.suptitle(f"class: {s.submissions} submissions, mean {_num(s.mean_total)}/{_num(s.max_total)}")
    save(fig, "class")
    return written
