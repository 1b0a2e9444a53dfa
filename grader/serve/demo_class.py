"""The demo's class (``grader demo seed``): who the learners are and what each of them answers,
when. Pure and deterministic for a given seed: the plan only; :mod:`.demo` plays it through
the service.

The rules, by learner index ``i`` (0-based; the counts of a class follow by hand):

- ``hw1`` (homework, late penalty per day): everyone submits; ``i % 6 == 5`` after the due
  date (late); learner 4 is granted an extension of 2 days and submits after the class's due
  date (on time for them); ``i % 3 == 0`` submits a second attempt with some of their wrong
  answers corrected (or, with none to correct, its first answer again). Its free-text problems: every learner answers the first two, even ``i``
  the third; the instructor reviews the first free-text problem of learners 0 to 9, and
  learner 1 asks for a regrade of that review (the request is left open for the staff).
- ``quiz1`` (timed): everyone but ``i % 15 == 14`` starts it and submits before its time is up.
- ``formulas`` (late: a multiplier): everyone but ``i % 10 == 9`` submits; ``i % 5 == 2`` late;
  learner 13 is granted an extension of 3 days and submits after the class's due date.
- Problems with numbers drawn per learner, and code exercises, are left unanswered.

Right answers are the bank's references; wrong ones are the bank's known mistakes (the first
one most often, so that the statistics show a common wrong answer), else a plausible slip.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from grader.api import Assessment, Course
from grader.api.service import BankProblem

HOMEWORK, QUIZ, FORMULAS = "hw1", "quiz1", "formulas"
LATE_EVERY = {HOMEWORK: 6, FORMULAS: 5}          # i % n == LATE_AT[a]: late
LATE_AT = {HOMEWORK: 5, FORMULAS: 2}
ABSENT = {QUIZ: (15, 14), FORMULAS: (10, 9)}     # i % n == r: no answer to it
EXTENDED = {HOMEWORK: (4, timedelta(days=2)), FORMULAS: (13, timedelta(days=3))}
SECOND_ATTEMPT_EVERY = 3                          # hw1: i % 3 == 0 tries again
REVIEWED = 10                                     # the first free-text problem of hw1: learners 0..9 reviewed
REGRADE_ASKER = 1                                 # ... and learner 1 asks for a regrade of that review (left open)
REGRADE_MESSAGE = "I did count W^O: the last sentence says 4d² in both cases. Could you look again?"

FIRST = ("Amara", "Bastien", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Kavya",
         "Lucas", "Mei", "Nikolai", "Olufemi", "Priya", "Quentin", "Rosa", "Sven", "Tamar", "Umar", "Valentina",
         "Wen", "Ximena", "Yusuf", "Zofia", "Aleksander", "Beatriz", "Camille", "Daniel", "Emeka", "Freya",
         "Gabriel", "Hana", "Ivan", "Julia")
LAST = ("Okafor", "Moreau", "Rossi", "Volkov", "Yilmaz", "Haddad", "Lindqvist", "Tanaka", "Ferreira", "Becker",
        "Iyer", "Martin", "Chen", "Petrov", "Adeyemi", "Sharma", "Dubois", "Garcia", "Nilsson", "Cohen", "Khan",
        "Bianchi", "Li", "Hernandez", "Demir", "Nowak", "Kowalski", "Santos", "Laurent", "Schmidt", "Nwosu",
        "Jensen", "Silva", "Kim", "Horvath", "Novak")

# free text: (quality, answer) per problem; quality 1 full marks, 0.5 half, 0 none
FREE_TEXT = {
    "17-08/practice-2": (
        (1.0, "Each head projects to d/h dimensions, so the h heads' W^Q, W^K, W^V together are d x d each, "
              "plus W^O: 4d^2 in both cases. The parameters are only split between heads."),
        (0.5, "Because the heads share the work: each one is smaller."),
        (0.0, "Multi-head attention has more heads so it has more parameters, but they are not trained."),
    ),
    "17-08/practice-3": (
        (1.0, "Every head has its own projection matrices, initialised differently, so it looks at its own "
              "subspace; nothing forces them to agree, although some heads end up redundant."),
        (0.5, "They start from different random weights."),
        (0.0, "The softmax makes them different."),
    ),
    "17-08/practice-5": (
        (1.0, "The queries come from the decoder's previous layer, the keys and values from the encoder's output."),
        (0.5, "Q from the decoder, K and V from the decoder too."),
        (0.0, "All three come from the input embeddings."),
    ),
}
COMMENTS = {1.0: "Right: the same 4d² organised differently.",
            0.5: "Half right: say why the total stays 4d² (h · d · d/h per projection, plus W^O).",
            0.0: "Not yet: count the parameters of W^Q, W^K, W^V and W^O in both cases."}


@dataclass(frozen=True)
class Learner:
    index: int
    login: str
    name: str
    ability: float          # the chance of a right answer, before a problem's difficulty


@dataclass(frozen=True)
class Event:
    """One thing that happens at ``at``: a submission, a quiz started, an extension granted, a review."""

    at: datetime
    kind: str               # submit | start | extend | review | regrade
    learner: str
    assessment: str
    answers: dict[str, object] = field(default_factory=dict)
    due: datetime | None = None             # extend: the learner's new due date
    review: tuple[str, float, str] | None = None   # review: (problem, score, comment)
    target: str = ""                        # extend, review: the learner concerned (``learner`` is the actor)
    problem: str = ""                       # regrade: the problem whose answer is asked about
    message: str = ""                       # regrade: the learner's message


def learners(n: int, seed: int) -> list[Learner]:
    """``n`` learners with names, distinct logins and an ability each."""
    rng = random.Random(f"learners-{seed}")
    pairs = [(f, s) for f in FIRST for s in LAST]
    rng.shuffle(pairs)
    out, seen = [], set()
    for i in range(n):
        first, last = pairs[i % len(pairs)]
        login = f"{first}.{last}".lower()
        if login in seen:
            login = f"{login}{i}"
        seen.add(login)
        out.append(Learner(i, login, f"{first} {last}", round(0.45 + 0.5 * rng.random(), 3)))
    return out


def _between(rng: random.Random, start: datetime, end: datetime, lo: float, hi: float) -> datetime:
    t = start + (end - start) * (lo + (hi - lo) * rng.random())
    return t.replace(microsecond=0)


def _as_typed(p: BankProblem, value: object) -> object:
    """A reference or a mistake as a learner types it."""
    if p.kind == "expression":
        return str(value).replace("**", "^").replace("*", " ")
    if p.kind == "quantity" and not isinstance(value, str):
        return f"{value} {p.unit}" if p.unit else value
    if p.kind == "shape" and isinstance(value, (list, tuple)):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return value


def _slip(p: BankProblem, rng: random.Random) -> object:
    """A wrong answer where the bank names no mistake."""
    ref = p.reference
    if p.kind == "choice":
        letters = [c[0] for c in p.choices if c[0] != ref] or ["A"]
        return letters[0] if rng.random() < 0.7 else rng.choice(letters)
    if p.kind == "shape" and isinstance(ref, (list, tuple)) and len(ref) > 1:
        return _as_typed(p, list(reversed(ref)) if ref[0] != ref[-1] else [*ref[:-1], int(ref[-1]) * 2])
    if isinstance(ref, (int, float)) and not isinstance(ref, bool):
        return _as_typed(p, ref * 2)
    return None


def answerable(p: BankProblem) -> bool:
    return p.kind != "code" and p.variant is None


def answer(p: BankProblem, right: bool, rng: random.Random) -> object:
    """The learner's answer to a problem graded by the machine: right (the reference) or wrong."""
    if right:
        return _as_typed(p, p.reference)
    known = [m.answer for m in p.mistakes if m.answer is not None]
    if known:
        weights = [len(known) + 2 - k for k in range(len(known))]
        weights[0] *= 2
        return _as_typed(p, rng.choices(known, weights=weights)[0])
    return _slip(p, rng)


def free_text(p: BankProblem, learner: Learner, rng: random.Random) -> tuple[float, str]:
    options = FREE_TEXT.get(p.id) or ((1.0, str(p.reference)), (0.5, str(p.reference).split(".")[0] + "."),
                                      (0.0, "I do not know."))
    k = 0 if rng.random() < learner.ability else (1 if rng.random() < 0.6 else 2)
    return options[k]


def _answers(problems: list[BankProblem], who: Learner, rng: random.Random, free: bool = True
             ) -> tuple[dict[str, object], dict[str, float]]:
    """Answers to ``problems`` (free text: only when ``free``): (answers, free text's quality)."""
    out: dict[str, object] = {}
    quality: dict[str, float] = {}
    free_seen = 0
    for p in problems:
        if p.needs_person:
            free_seen += 1
            if free and (free_seen <= 2 or who.index % 2 == 0):
                quality[p.id], out[p.id] = free_text(p, who, rng)
            continue
        difficulty = (sum(map(ord, p.id)) % 7) / 20            # 0 to 0.3, the same for everyone
        value = answer(p, rng.random() < who.ability - difficulty + 0.1, rng)
        if value is not None:
            out[p.id] = value
    return out, quality


def _late(a: str, i: int) -> bool:
    return a in LATE_EVERY and i % LATE_EVERY[a] == LATE_AT[a]


def absent(a: str, i: int) -> bool:
    return a in ABSENT and i % ABSENT[a][0] == ABSENT[a][1]


def plan(course: Course, problems: dict[str, BankProblem], people: list[Learner], seed: int,
         instructor: str) -> list[Event]:
    """Every event of the demo, in the order of its time."""
    rng = random.Random(f"class-{seed}")
    events: list[Event] = []
    for a_id in (HOMEWORK, QUIZ, FORMULAS):
        a = course.get(a_id)
        if a is None:
            continue
        items = [problems[pid] for pid in a.problem_ids if pid in problems and answerable(problems[pid])]
        for who in people:
            if absent(a_id, who.index):
                continue
            events += _one(a, items, who, rng, instructor)
    events.sort(key=lambda e: (e.at, e.kind != "extend"))
    return events


def _one(a: Assessment, items: list[BankProblem], who: Learner, rng: random.Random,
         instructor: str) -> list[Event]:
    """One learner's events of one assessment."""
    answers, quality = _answers(items, who, rng, free=a.id == HOMEWORK)
    closes = a.late_until or a.due
    out: list[Event] = []
    if a.time_limit is not None:                     # the timed quiz: start, answer within the limit
        start = _between(rng, a.opens, a.due - a.time_limit, 0.0, 1.0)
        out.append(Event(start, "start", who.login, a.id))
        at = start + a.time_limit * (0.4 + 0.5 * rng.random())
        return out + [Event(at.replace(microsecond=0), "submit", who.login, a.id, answers)]
    ext = EXTENDED.get(a.id)
    if ext is not None and who.index == ext[0]:
        new_due = a.due + ext[1]
        out.append(Event(a.due - timedelta(days=1), "extend", instructor, a.id, due=new_due, target=who.login))
        at = _between(rng, a.due, new_due, 0.2, 0.8)
    elif _late(a.id, who.index) and closes > a.due:
        at = _between(rng, a.due, closes, 0.05, 0.9)
    else:
        at = _between(rng, a.opens, a.due, 0.3, 0.8)
    out.append(Event(at, "submit", who.login, a.id, answers))
    if a.id == HOMEWORK and who.index % SECOND_ATTEMPT_EVERY == 0:
        typed = [p for p in items if p.id in answers and not p.needs_person]
        fixed = {p.id: _as_typed(p, p.reference) for p in typed
                 if answers[p.id] != _as_typed(p, p.reference) and rng.random() < 0.7}
        if not fixed and typed:          # nothing to correct: the first answer checked again
            fixed = {typed[0].id: _as_typed(typed[0], typed[0].reference)}
        out.append(Event(_between(rng, at, a.due, 0.3, 0.7), "submit", who.login, a.id, fixed))
    first_free = next((p.id for p in items if p.needs_person), None)
    if a.id == HOMEWORK and who.index < REVIEWED and first_free in quality:
        q = quality[first_free]
        points = float(problems_points(items, first_free))
        out.append(Event(closes + timedelta(days=1), "review", instructor, a.id,
                         review=(first_free, round(points * q * 2) / 2, COMMENTS[q]), target=who.login))
        if who.index == REGRADE_ASKER:
            out.append(Event(closes + timedelta(days=2), "regrade", who.login, a.id, problem=first_free,
                             message=REGRADE_MESSAGE))
    return out


def problems_points(items: list[BankProblem], pid: str) -> float:
    return next(float(p.points) for p in items if p.id == pid)
