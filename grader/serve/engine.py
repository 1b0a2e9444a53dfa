"""The service's only door to the engine: every call to ``grader.api``, the bank and
``grader.code.grade`` is here, and everything crosses it as plain JSON-able data.

Three sides:

- :class:`Engine`, in the server: the bank's problems as the API lists them (never a
  reference, a mistake or a solution), a learner's own variant numbers, and assembling a
  submission's object when its answers had to be graded one by one.
- :func:`worker_init` / :func:`worker_task`, in the grading workers (:mod:`.workers`):
  ``grade_submission`` and ``validate_answer``.
- :func:`job_init` / :func:`run_job`, in the job processes (:mod:`.jobs`): a code file in the
  sandbox (``grader.code.grade.grade_code``), a batch (``grade_class``), a regrade.
"""
from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.api import AnswerLimits, Bank, Course, load_course, LocalPoolExecutor, SerialExecutor, grade_class, grade_submission, learner_variant, load_bank, seed_variant_draws, variant_draws, load_submissions, result_json, submission_json, totals, validate_answer
from grader.api.service import BankProblem, answer_failed, code_not_run, grade_code_file, json_number

JSON = dict[str, Any]
_num = json_number


def _as_seen(bank: Bank, problem: BankProblem, learner: str) -> tuple[str, dict[str, int] | None]:
    """The prompt ``learner`` sees and the numbers drawn; a variant the bank cannot derive shows
    its template (grading then reports that error)."""
    try:
        return learner_variant(problem, learner, bank)
    except Exception:
        return problem.prompt, None


class Engine:
    """The bank as the server sees it (loaded in the server too, for listings and totals)."""

    def __init__(self, exercises: str | None = None, spec: str | None = None, course: str | None = None) -> None:
        self.exercises, self.spec, self.course_file = exercises, spec, course
        self.bank: Bank = load_bank(exercises, spec=spec)
        self.problems: tuple[BankProblem, ...] = tuple(self.bank.problems)
        self.by_id = {p.id: p for p in self.problems}
        self.total = sum(float(p.points) for p in self.problems)
        # the assessments: the file given, or the bank folder's own assessments.yaml, or none
        self.course: Course | None = load_course(self.bank, course)

    def seed_draws(self, draws: dict[str, Any]) -> int:
        """The variants' draws from a grading worker (:func:`worker_task` ``("draws",)``), which has
        the spec loaded: this process then lists each learner's variant without loading the spec
        (SymPy: seconds of CPU, in the process that answers every request)."""
        return seed_variant_draws(self.bank, draws)

    def reloaded(self) -> Engine:
        return Engine(self.exercises, self.spec, self.course_file)

    def get(self, problem_id: str) -> BankProblem | None:
        return self.by_id.get(problem_id)

    def kind(self, problem_id: str) -> str | None:
        p = self.by_id.get(problem_id)
        return p.kind if p else None

    def points(self, problem_id: str) -> float:
        p = self.by_id.get(problem_id)
        return float(p.points) if p else 0.0

    def attempts(self, problem_id: str) -> int | None:
        """Answers that count: the smaller of its assessment's ``attempts`` and the problem's own."""
        p = self.by_id.get(problem_id)
        own = p.attempts if p else None
        a = self.course.of_problem(problem_id) if self.course is not None else None
        return a.attempts_for(own) if a is not None else own

    def title(self, problem_id: str) -> str:
        p = self.by_id.get(problem_id)
        return (p.title or problem_id) if p else problem_id

    def prompt(self, problem_id: str, learner: str | None) -> str:
        p = self.by_id[problem_id]
        return _as_seen(self.bank, p, learner)[0] if learner else p.prompt

    def exercise(self, p: BankProblem, learner: str | None) -> JSON:
        """What a learner may see of a problem: never the reference, mistakes or solution."""
        prompt, drawn = _as_seen(self.bank, p, learner) if learner else (p.prompt, None)
        row: JSON = {"id": p.id, "title": p.title, "kind": p.kind, "points": _num(float(p.points)), "prompt": prompt,
                     "choices": dict(p.choices) if p.choices else None, "attempts": self.attempts(p.id),
                     "variant": drawn}
        why = self.not_counted(p.id, float(p.points))
        if why:
            row["not_counted"] = why
        if learner is None and p.variant is not None:       # staff: the candidate values
            row["variant_choices"] = {k: list(vals) for k, vals in p.variant.choose}
        return row

    def not_counted(self, problem_id: str, points: float) -> str | None:
        """Why a problem worth 0 points is kept (the bank's ``note``, shown to learners), or None:
        it counts, or the bank says nothing."""
        p = self.by_id.get(problem_id)
        if p is None or points != 0:
            return None
        return " ".join(p.note.split()) or "This problem is worth 0 points: it does not count."

    def assemble(self, learner: str, results: list[JSON]) -> JSON:
        """A submission's object from answers graded one by one (as grade_submission sums them)."""
        t = totals(self.bank, [(r["id"], float(r["score"]), float(r.get("pending_points") or 0))
                                          for r in results])
        return {"learner": learner, "file": "answers", "score": _num(t.score), "max_score": _num(t.max_score),
                "pending_points": _num(t.pending_points), "results": results, "unanswered": list(t.unanswered)}

    def too_complex(self, problem_id: str, raw: object, timeout_s: float) -> JSON:
        """The object of an answer whose check was killed past its limits: the engine's own."""
        r = answer_failed(self.bank, problem_id, raw, reason="timeout", limits=AnswerLimits(timeout_s=timeout_s),
                          location=f"answers.{problem_id}")
        return result_json(r)


# ---------------------------------------------------------------- grading workers

_WORKER: dict[str, Any] = {}


def worker_init(exercises: str | None, spec: str | None, timeout_s: float, memory_mb: int) -> None:
    """In a grading worker: load the bank and prepare every problem once."""
    bank = load_bank(exercises, spec=spec)
    limits = AnswerLimits(timeout_s=timeout_s, memory_mb=memory_mb)
    _WORKER.update(bank=bank, limits=limits, executor=SerialExecutor())
    warm: dict[str, object] = {p.id: "0" for p in bank.problems if p.kind != "code"}
    if warm:
        grade_submission(bank, "warm-up", warm, limits=limits, executor=_WORKER["executor"])


def worker_task(payload: tuple[Any, ...]) -> JSON:
    """``("grade", learner, {problem: answer})`` -> the submission's JSON object;
    ``("validate", problem, answer)`` -> how it is read; ``("draws",)`` -> the variants' draws
    (:meth:`Engine.seed_draws`)."""
    kind = payload[0]
    bank: Bank = _WORKER["bank"]
    if kind == "grade":
        _, learner, answers = payload
        s = grade_submission(bank, learner, answers, limits=_WORKER["limits"], executor=_WORKER["executor"],
                             source="answers")
        return submission_json(s)
    if kind == "validate":
        _, problem_id, raw = payload
        r = validate_answer(bank, problem_id, raw)
        return {"ok": r.ok, "read_as": r.read_as, "latex": r.latex, "mathml": r.mathml, "error": r.error,
                "column": r.column}
    if kind == "draws":
        return variant_draws(bank)
    raise ValueError(f"unknown task {kind!r}")


# ---------------------------------------------------------------- job processes

_JOB: dict[str, Any] = {}
Progress = Callable[[int, "int | None"], None]


def job_init(progress_queue: Any) -> None:
    from .workers import die_with_parent
    die_with_parent()
    _JOB["progress"] = progress_queue


def _progress(job_id: str) -> Progress:
    queue = _JOB.get("progress")
    state: dict[str, Any] = {"done": 0, "total": None, "sent": 0.0}

    def report(advance: int, total: int | None) -> None:
        if total is not None:
            state["total"] = total
        else:
            state["done"] += advance
        t = time.monotonic()
        if queue is not None and (t - state["sent"] >= 0.5 or state["done"] == state["total"]):
            state["sent"] = t
            try:
                queue.put_nowait((job_id, state["done"], state["total"]))
            except Exception:
                pass
    return report


_HELD: dict[str, tuple[tuple[Any, Any], tuple[tuple[str, int, int], ...], Bank]] = {}


def job_bank(config: JSON, fresh: bool = False) -> Bank:
    """The bank a job grades with: the job process keeps the one it loaded and loads it again
    only when a file of it (or of its spec) changed on disk, or for a regrade (``fresh``: the
    bank as it is on disk now, always). Loading it and deriving its spec's references cost
    ~0.3 s of CPU, the whole cost of a small batch, for every upload."""
    key = (config.get("exercises"), config.get("spec"))
    held = _HELD.get("bank")
    if held is not None and not fresh and held[0] == key and held[1] == bank_stamp(held[2]):
        return held[2]
    _HELD.pop("bank", None)
    began = time.time_ns()
    bank = load_bank(key[0], spec=key[1])
    stamp = bank_stamp(bank)
    if all(mtime < began for _, mtime, _ in stamp):     # none changed since the load began (else not kept)
        _HELD["bank"] = (key, stamp, bank)
    return bank


def bank_stamp(bank: Bank) -> tuple[tuple[str, int, int], ...]:
    """Each file of the bank's folder (or files) and of its spec: path, mtime (ns) and size."""
    places = [Path(bank.root)] if bank.root else [Path(p) for p in bank.paths]
    if bank.spec_path:
        places.append(Path(bank.spec_path))
    out: list[tuple[str, int, int]] = []
    for place in places:
        for f in sorted(place.rglob("*")) if place.is_dir() else [place]:
            try:
                st = f.stat()
            except OSError:
                out.append((str(f), -1, -1))
                continue
            out.append((str(f), st.st_mtime_ns, st.st_size))
    return tuple(out)


def run_job(kind: str, job_id: str, params: JSON, data: bytes | None, config: JSON) -> JSON:
    """A job's work, in a job process; returns its JSON result. A code job whose tests did not
    run (the grader's fault, not the learner's) is ``{"not_run": cause}``: never a grade."""
    bank = job_bank(config, fresh=kind == "regrade")
    limits = AnswerLimits(timeout_s=config.get("timeout_s", 2.0), memory_mb=config.get("memory_mb", 1024))
    if kind == "code":
        answer = _code_answer(bank, params["problem"], params.get("filename") or "solution.py", data or b"")
        cause = answer.pop("not_run", None)
        return {"not_run": cause} if cause else {"answer": answer}
    if kind == "batch":
        return _batch(bank, params.get("filename") or "answers.yaml", data or b"", limits, config, _progress(job_id))
    if kind == "regrade":
        return _regrade(bank, params["submissions"], limits, _progress(job_id))
    raise ValueError(f"unknown job kind {kind!r}")


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


def safe_name(name: str, default: str, suffixes: tuple[str, ...]) -> str:
    """A file name to write an upload under: its last part, plain characters, a known suffix."""
    base = _SAFE_NAME.sub("_", Path(str(name or "")).name)[-100:].lstrip(".")
    return base if base and base.lower().endswith(suffixes) else default


def _code_answer(bank: Bank, problem_id: str, filename: str, data: bytes) -> JSON:
    """The per-answer object of a code submission, with each test's result (``tests``): graded by
    the engine's own code path (:func:`grader.api.service.grade_code_file`), as ``grader grade`` does.
    Where its tests did not run at all, ``not_run`` says why (:func:`grader.api.service.code_not_run`)."""
    problem = bank.get(problem_id)
    points = float(problem.points) if problem else 0.0
    row: JSON = {"id": problem_id, "answer": filename, "score": 0, "max_score": _num(points), "pending_points": 0,
                 "correct": False, "feedback": "", "status": "wrong", "read_as": None, "variant": None,
                 "location": None}
    if problem is None or problem.kind != "code":
        return {**row, "status": "unknown", "feedback": f"unknown code problem {problem_id!r}"}
    work = Path(tempfile.mkdtemp(prefix="grader-serve-code-"))
    try:
        path = work / filename
        path.write_bytes(data)
        r = grade_code_file(bank, problem_id, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tests = [{"name": t.name, "passed": t.passed, "message": t.message, "hidden": t.hidden} for t in r.tests]
    out = {**row, "score": _num(r.score), "correct": bool(r.correct), "feedback": r.feedback, "status": r.status,
           "tests": tests}
    cause = code_not_run(r)
    if cause:
        out["not_run"] = cause
    return out


def _batch(bank: Bank, filename: str, data: bytes, limits: AnswerLimits, config: JSON, progress: Progress) -> JSON:
    work = Path(tempfile.mkdtemp(prefix="grader-serve-batch-"))
    try:
        path = work / filename
        path.write_bytes(data)
        report = grade_class(bank, load_submissions([path]), limits=limits, progress=progress,
                             executor=LocalPoolExecutor(jobs=config.get("batch_jobs", 2)))
        prefix = str(path)

        def shown(text: Any) -> Any:
            return text.replace(prefix, filename) if isinstance(text, str) else text
        subs = []
        for s in report.submissions:
            obj = submission_json(s)
            obj["file"] = shown(obj.get("file"))
            for r in obj["results"]:
                r["location"] = shown(r.get("location"))
            subs.append(obj)
        errors = [{"location": shown(str(e.location)) if e.location else None, "message": shown(e.message)}
                  for e in report.errors]
        return {"submissions": subs, "errors": errors}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _regrade(bank: Bank, submissions: list[Any], limits: AnswerLimits, progress: Progress) -> JSON:
    """``submissions``: [[submission id, learner, [[answer id, problem, answer, code bytes or None], ...]], ...]
    -> {"results": {submission id: [[answer id, per-answer object or None], ...]}} (None: a problem
    no longer in the bank, kept as it was; a code answer whose tests did not run, kept as it was)."""
    progress(0, len(submissions))
    executor = SerialExecutor()
    out: JSON = {}
    for sub_id, learner, answers in submissions:
        plain: dict[str, object] = {}
        for _, pid, raw, code in answers:
            p = bank.get(pid)
            if code is None and p is not None and p.kind != "code":
                plain[pid] = raw
        graded: dict[str, JSON] = {}
        if plain:
            s = submission_json(grade_submission(bank, learner, plain, limits=limits, executor=executor,
                                                 source="answers"))
            graded = {r["id"]: r for r in s["results"]}
        results: list[list[Any]] = []
        for answer_id, pid, raw, code in answers:
            if code is not None:
                r = _code_answer(bank, pid, str(raw or "solution.py"), code)
                results.append([answer_id, None if r.get("not_run") else r])
            else:
                results.append([answer_id, graded.get(pid)])
        out[sub_id] = results
        progress(1, None)
    return {"results": out}
