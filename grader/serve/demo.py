"""``grader demo seed``: a throwaway database with a small class, so that a newcomer sees every
staff page with data in a minute.

The class (:mod:`.demo_class`) is played through the service itself: the application of
``grader serve`` (its grading workers, its gates, its late penalties, its audit log) is started
in this process and every action is an HTTP request to it, made in process (an ASGI call: no
socket, no HTTP client library), with the clock of the assessments' windows set to each
event's time (``Settings.now``). Nothing is inserted past the service's own code.
"""
from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from grader.db import Database
from grader.errors import GraderError, Location

from . import demo_class
from .demo_class import Event, Learner

INSTRUCTOR = ("prof", "Ada Lovelace")
MAX_LEARNERS = 500
EXAMPLE_COURSE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "course.yaml"  # in a checkout


def default_course() -> str:
    """The course the demo class answers by default: the repository's docs/examples/course.yaml
    (shown relative to the working folder when it is below it)."""
    if not EXAMPLE_COURSE.is_file():
        raise GraderError("no course to seed: docs/examples/course.yaml is not beside this installation "
                          "(give --course FILE, an assessments file over the bundled bank)")
    rel = os.path.relpath(EXAMPLE_COURSE)
    return str(EXAMPLE_COURSE) if rel.startswith("..") else rel


@dataclass
class Seeded:
    """What the demo made (counted from the service's answers)."""

    database: str
    instructor: str
    token: str
    course: str = ""
    learners: int = 0
    submissions: int = 0
    answers: int = 0
    late: Counter[str] = field(default_factory=Counter)          # assessment -> late submissions
    by_assessment: Counter[str] = field(default_factory=Counter)  # assessment -> submissions
    starts: int = 0
    extensions: list[str] = field(default_factory=list)           # "hw1:learner"
    free_text: int = 0
    reviewed: int = 0
    regrade_requests: int = 0

    def lines(self, serve_url: str) -> list[str]:
        out = [f"seeded {self.database}: 1 instructor ({self.instructor}), {self.learners} learners, "
               f"{self.submissions} submissions ({self.answers} answers)"]
        for a in (demo_class.HOMEWORK, demo_class.QUIZ, demo_class.FORMULAS):
            if a in self.by_assessment:
                out.append(f"  {a}: {self.by_assessment[a]} submissions, {self.late[a]} late")
        out.append(f"  timed quiz started by {self.starts}; extensions: {', '.join(self.extensions) or 'none'}")
        out.append(f"  free text: {self.free_text} answers, {self.reviewed} reviewed, "
                   f"{self.free_text - self.reviewed} waiting for review; regrade requests open: "
                   f"{self.regrade_requests}")
        out.append(f"instructor token: {self.token}")
        out.append(f"serve it: grader serve --database {serve_url} --course {self.course}")
        out.append("then sign in at http://127.0.0.1:8000/learn/login with the instructor token: the staff pages "
                   "are at /staff")
        return out


class Clock:
    """The assessments' clock of the demo's service: each event's time."""

    def __init__(self) -> None:
        self.t = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.t


class Refused(GraderError):
    pass


def _refuse_used(d: Database) -> None:
    from sqlalchemy import func, inspect, select

    from grader.db.models import User
    with d.reader.connect() as conn:
        if not inspect(conn).get_table_names():
            return
        if "users" not in inspect(conn).get_table_names():
            raise Refused(f"{d.shown} already holds tables that are not grader's; the demo seeds only a new, "
                          "empty database")
        n = conn.execute(select(func.count()).select_from(User)).scalar_one()
    if n:
        raise Refused(f"{d.shown} already has data ({n} accounts); the demo seeds only a new, empty database "
                      "(give another --database)")


def seed(database: str, *, learners: int = 30, seed: int = 17, workers: int = 2,
         course: str | None = None) -> Seeded:
    """Seed a new database with a demo class: the instructor ``prof`` and ``learners`` learners
    answering the bundled course's homework, timed quiz and formulas (refused if the database
    already has accounts)."""
    if not 1 <= learners <= MAX_LEARNERS:
        raise GraderError(f"--learners {learners}: from 1 to {MAX_LEARNERS}")
    course = course or default_course()
    from .accounts import add_user, import_roster
    d = Database(database)
    try:
        _refuse_used(d)
        d.ensure_schema()
        prof = add_user(d, INSTRUCTOR[0], "instructor", INSTRUCTOR[1], actor="demo")
        people = demo_class.learners(learners, seed)
        roster = [(p.login, p.name, f"{p.login}@example.edu", Location("demo", p.index + 1)) for p in people]
        issued, _ = import_roster(d, roster, actor="demo")
        shown = d.shown
    finally:
        d.dispose()
    tokens = {i.login: i.token for i in issued}
    tokens[prof.login] = prof.token
    out = Seeded(shown, prof.login, prof.token, course=course, learners=len(people))
    try:
        _run(lambda: _play(database, course, tokens, people, seed, out, workers))
    except GraderError as e:
        raise GraderError(f"{e.message}; {shown} is seeded in part: delete it before seeding again") from None
    return out


def _run(play: Any) -> None:
    """``asyncio.run(play())``; from a thread where an event loop already runs (a notebook,
    Playwright's sync API), in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(play())
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(play())).result()


async def _play(database: str, course: str, tokens: dict[str, str], people: list[Learner], seed: int,
                out: Seeded, workers: int) -> None:
    from .app import create_app
    from .settings import Settings
    clock = Clock()
    app = create_app(Settings(database=database, course=course, workers=workers, job_workers=1, rate=0, now=clock))
    async with app.router.lifespan_context(app):
        engine = app.state.grader.engine
        if engine.course is None:
            raise GraderError(f"{course}: no course to seed")
        events = demo_class.plan(engine.course, dict(engine.by_id), people, seed, INSTRUCTOR[0])
        answer_ids: dict[tuple[str, str], str] = {}
        for e in events:
            clock.t = e.at
            await _event(app, e, tokens, answer_ids, out)


async def _event(app: Any, e: Event, tokens: dict[str, str], answer_ids: dict[tuple[str, str], str],
                 out: Seeded) -> None:
    if e.kind == "submit":
        body = await call(app, "POST", "/api/v1/submissions", tokens[e.learner], {"answers": e.answers})
        out.submissions += 1
        out.by_assessment[e.assessment] += 1
        out.answers += len(body["results"])
        if any("penalty" in r for r in body["results"]):
            out.late[e.assessment] += 1
        for r in body["results"]:
            answer_ids.setdefault((e.learner, r["id"]), r["answer_id"])
            out.free_text += r.get("status") == "needs_person"
    elif e.kind == "start":
        await call(app, "POST", f"/api/v1/assessments/{e.assessment}/start", tokens[e.learner])
        out.starts += 1
    elif e.kind == "extend":
        learner = e.target
        assert e.due is not None
        await call(app, "POST", f"/api/v1/assessments/{e.assessment}/extensions", tokens[e.learner],
                   {"learner": learner, "due": e.due.isoformat(), "reason": "ill for a week (demo)"})
        out.extensions.append(f"{e.assessment}:{learner}")
    elif e.kind == "review":
        assert e.review is not None
        problem, score, comment = e.review
        answer_id = answer_ids[(e.target, problem)]
        await call(app, "POST", f"/api/v1/review/{answer_id}", tokens[e.learner], {"score": score, "comment": comment})
        out.reviewed += 1
    elif e.kind == "regrade":
        answer_id = answer_ids[(e.learner, e.problem)]
        await call(app, "POST", f"/api/v1/answers/{answer_id}/regrade-request", tokens[e.learner],
                   {"message": e.message})
        out.regrade_requests += 1


async def call(app: Any, method: str, path: str, token: str, body: object = None) -> Any:
    """One request to the application, in process (ASGI): its JSON; a status >= 400 is an error."""
    raw = json.dumps(body).encode() if body is not None else b""
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode()),
               (b"content-length", str(len(raw)).encode())]
    if body is not None:
        headers.append((b"content-type", b"application/json"))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}
    done = asyncio.Event()
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    await app(scope, receive, send)
    text = b"".join(chunks).decode("utf-8", "replace")
    if status >= 400:
        raise GraderError(f"the demo's {method} {path} was answered {status}: {text[:300]}")
    return json.loads(text) if text else None
