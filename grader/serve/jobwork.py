"""What the job runner does around a job's work: gather its input from the database
(:func:`prepare`) and apply its result (:func:`finish`), in the transaction that marks it done."""
from __future__ import annotations

import re

import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from grader.db.ids import login_problem, shown
from grader.db.models import Answer, Job, Record, Submission, User, now

from .course import carry_late
from .store import S, insert_graded, update_answers

if TYPE_CHECKING:
    from .app import State
    from .settings import Settings

JSON = dict[str, Any]

log = logging.getLogger("grader.serve")


def config(settings: Settings) -> JSON:
    return {"exercises": settings.exercises, "spec": settings.spec, "timeout_s": settings.timeout_s,
            "memory_mb": settings.memory_mb, "batch_jobs": max(1, settings.workers)}


class JobWork:
    def __init__(self, state: State) -> None:
        self.state = state

    # ---------------------------------------------------------------- before

    def prepare(self, row: Record) -> JSON:
        params = dict(row.params or {})
        if row.kind == "regrade":
            self._reload()
            params["submissions"] = self._snapshot()
        return params

    def _reload(self) -> None:
        """The bank as it is on disk now, for new submissions too (its errors fail the job)."""
        state = self.state
        engine = state.engine.reloaded()
        state.engine = engine
        state.pool.recycle(state.worker_args())

    def _snapshot(self) -> list[list[Any]]:
        """Every graded submission: [id, learner, [[problem, answer, code bytes or None], ...]]."""
        db = self.state.db
        with db.read() as conn:
            subs = conn.execute(select(Submission.id, User.login).join(User, User.id == Submission.user_id)
                                .where(Submission.status == "graded").order_by(Submission.created_at)).all()
            answers = conn.execute(select(Answer.submission_id, Answer.id, Answer.problem_id, Answer.raw, Answer.result)
                                   .join(Submission, Submission.id == Answer.submission_id)
                                   .where(Submission.status == "graded").order_by(Answer.position)).all()
            code_jobs = {r.get("job_id") for *_, r in answers if isinstance(r, dict) and r.get("job_id")}
            data = dict(conn.execute(select(Job.id, Job.data).where(Job.id.in_(code_jobs))).all()) if code_jobs else {}
        by_sub: dict[str, list[list[Any]]] = {}
        for sub_id, answer_id, pid, raw, result in answers:
            job_id = result.get("job_id") if isinstance(result, dict) else None
            code = data.get(job_id) if job_id else None
            if job_id and code is None:
                continue            # a code answer whose file is gone: kept as it is
            by_sub.setdefault(sub_id, []).append([answer_id, pid, raw, code])
        return [[sid, login, by_sub[sid]] for sid, login in subs if sid in by_sub]

    # ---------------------------------------------------------------- after

    def finish(self, conn: Connection, job: Record, result: JSON) -> JSON:
        out: JSON = {"code": self._code, "batch": self._batch, "regrade": self._regrade}[job.kind](conn, job, result)
        return out

    def _login(self, conn: Connection, user_id: int) -> str:
        login: str = conn.execute(select(User.login).where(User.id == user_id)).scalar_one()
        return login

    def _code(self, conn: Connection, job: Record, result: JSON) -> JSON:
        answer = dict(result["answer"])
        tests = answer.pop("tests", [])
        answer.pop("sandbox", None)
        answer["job_id"] = job.id
        params = job.params if isinstance(job.params, dict) else {}
        if params.get("assessment"):
            answer = carry_late(answer, {"assessment": params["assessment"], "late": params.get("late")})
        obj = self.state.engine.assemble(self._login(conn, job.user_id), [answer])
        sub_id = insert_graded(conn, job.user_id, obj, "code", self.state.now())
        self.state.metrics.submissions.labels("code").inc()
        return {"submission_id": sub_id, "score": answer["score"], "max_score": answer["max_score"],
                "status": answer["status"], "feedback": answer["feedback"], "tests": tests}

    def _batch(self, conn: Connection, job: Record, result: JSON) -> JSON:
        stored: list[JSON] = []
        created: list[str] = []
        errors: list[JSON] = list(result["errors"])
        for obj in result["submissions"]:
            login = str(obj["learner"])
            why = login_problem(login)
            if why:         # the one rule of account ids (grader.db.ids): this learner refused, the rest kept
                errors.append(refused_learner(obj, login, why))
                continue
            uid = conn.execute(select(User.id).where(User.login == login)).scalar()
            if uid is None:
                uid = conn.execute(insert(User).values(login=login, name=name_of(login), email="", role="learner",
                                                       created_at=now()).returning(User.id)).scalar_one()
                created.append(login)
            sub_id = insert_graded(conn, uid, obj, "batch", self.state.now())
            stored.append({"learner": login, "submission_id": sub_id, "score": obj["score"],
                           "max_score": obj["max_score"], "answers": len(obj["results"])})
        self.state.metrics.submissions.labels("batch").inc(len(stored))
        return {"summary": {"submissions": len(stored), "answers": sum(s["answers"] for s in stored),
                            "errors": len(errors)},
                "submissions": stored, "errors": errors, "learners_created": created}

    def _regrade(self, conn: Connection, job: Record, result: JSON) -> JSON:
        """Store every new grade; report each score (or status) that changed, old -> new."""
        changes: list[JSON] = []
        regraded = 0
        for sub_id, pairs in result["results"].items():
            old = {r.id: r for r in conn.execute(
                select(Answer.id, Answer.problem_id, Answer.score, Answer.status, Answer.result, User.login)
                .join(User, User.id == Answer.user_id).where(Answer.submission_id == sub_id))}
            graded: list[tuple[str, JSON]] = []
            for answer_id, r in pairs:
                row = old.get(answer_id)
                if r is None or row is None:
                    continue
                r = {k: v for k, v in r.items() if k not in ("tests", "sandbox")}
                if isinstance(row.result, dict) and row.result.get("job_id"):
                    r["job_id"] = row.result["job_id"]
                r = carry_late(r, row.result if isinstance(row.result, dict) else None)
                regraded += 1
                if float(r["score"]) != float(row.score or 0) or r.get("status") != row.status:
                    changes.append({"submission_id": sub_id, "answer_id": answer_id, "learner": row.login,
                                    "problem": row.problem_id, "old": row.score, "new": r["score"],
                                    "old_status": row.status, "new_status": r.get("status")})
                graded.append((answer_id, r))
            if graded:
                update_answers(conn, graded)
                from .lti.outbox import enqueue_answers  # the LMS's gradebook: in this transaction
                enqueue_answers(conn, [aid for aid, _ in graded], self.state.now(), "regrade")
                totals = conn.execute(select(Answer.score, Answer.pending_points)
                                      .where(Answer.submission_id == sub_id)).all()
                pending = sum(t.pending_points or 0 for t in totals)
                conn.execute(update(S).where(S.c.id == sub_id).values(
                    score=round(sum(t.score or 0 for t in totals), 6), pending_points=pending,
                    max_score=self.state.engine.total - pending))
        return {"submissions": len(result["results"]), "answers_regraded": regraded, "changed": changes}


def refused_learner(obj: JSON, login: str, why: str) -> JSON:
    """A batch's error for a submission whose learner id the rule refuses: where (its first
    answer's place in the file, else the file) and what; none of its answers is stored."""
    results = obj.get("results") or []
    where = next((r.get("location") for r in results if isinstance(r, dict) and r.get("location")), None)
    return {"location": where or obj.get("file"),
            "message": f"learner {shown(login)}: {why}; its {len(results)} answer(s) were not stored"}


def name_of(login: str) -> str:
    """The name a learner a batch creates is given, from the id its answers file wrote: the part
    before an ``@``, its words (split at ``. _ - +``) capitalised where they are letters
    (``alice.smith@uni.edu`` -> ``Alice Smith``, ``s1234`` -> ``s1234``)."""
    local = login.split("@", 1)[0] or login
    words = [w for w in re.split(r"[._+\-]+", local) if w]
    return " ".join(w.capitalize() if w.isalpha() else w for w in words) or login
