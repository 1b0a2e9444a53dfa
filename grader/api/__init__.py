"""The engine's public API: grade one answer, read one answer, grade a submission or a class,
check one claim or a subject. Every shell (the CLI, the pytest plugin, the HTTP service, a
cluster's workers) calls these; none holds grading logic of its own.

    from grader.api import load_bank, grade_answer, validate_answer, grade_submission, grade_class
    bank = load_bank()                                    # the bundled exercises/
    r = grade_answer(bank, "17-08/params-formula", "4d^2 + 4d")
    r.status, r.score, r.max_score, r.feedback, r.read_as, r.latex
    validate_answer(bank, "17-08/params-formula", "4d^2 +")   # Reading(ok=False, error=..., column=7)

Pure: nothing here prints, exits or keeps module-global state, and every call is thread-safe.
What is derived from a bank (its spec, the variants, the prepared answer specs, and the check
processes :func:`grade_answer` uses) is kept on that bank object (:meth:`Bank.memo`) and goes
with it: a bank loaded again starts afresh (:func:`close` stops its check processes early).

Untrusted answers are checked in worker processes under :class:`AnswerLimits` (time, CPU,
memory), whatever thread calls: by default the bank's :class:`ProcessExecutor` (fresh Python
processes, never forked from the caller, kept between calls), or any other :class:`Executor`
given (:class:`LocalPoolExecutor`: a forked pool per call, the CLI's). The grading policy (unknown ids, screening, free text, code,
variants) is one function, :func:`grader.grade.plan.decide`, for one answer and for a class.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from grader.bank.model import Bank, Verification
from grader.bank.model import Problem as BankProblem
from grader.bank.assessments import Assessment, AssessmentItem, Course, LatePolicy, load_course
from grader.bank.schedule import Window, apply_late, penalised, scores_shown, when, window
from grader.bank.times import to_utc
from grader.cluster import (ClusterError, check_cluster, check_scheduler, cluster_executor, cluster_job_executor,
                            cluster_sandboxes)
from grader.errors import Location
from grader.grade.executors import Executor, LocalPoolExecutor, ProcessExecutor, SerialExecutor
from grader.grade.pool import AnswerLimits
from grader.grade.reading import Reading
from grader.grade.results import AnswerResult, Report, SubmissionResult, result_json, submission_json
from grader.claims.limits import DEFAULT_TIMEOUT, MAX_TIMEOUT
from grader.reports import FORMATS, plural, summarize as summarize_class, write_plots as write_summary_plots
from grader.reports import formats as report_formats, render as render_report
from grader.sandbox.limits import Limits

if TYPE_CHECKING:
    from grader.claims.model import ClaimResult, Subject
    from grader.claims.run import SubjectResult
    from grader.grade.check import Checker
    from grader.grade.run import Totals
    from grader.grade.submissions import Loaded, Submission

__all__ = ["Assessment", "AssessmentItem", "Course", "LatePolicy", "load_course", "Window", "apply_late", "penalised", "scores_shown", "when", "window",
           "to_utc",
           "AnswerLimits", "AnswerResult", "Executor", "LocalPoolExecutor", "ProcessExecutor", "Reading", "Report",
           "SerialExecutor", "SubmissionResult", "check_claim", "check_subject", "close", "grade_answer",
           "grade_class", "grade_submission", "load_bank", "result_json", "submission_json", "totals",
           "validate_answer", "Bank", "load_submissions", "learner_variant", "variant_draws",
           "seed_variant_draws", "FORMATS", "MAX_TIMEOUT", "DEFAULT_TIMEOUT", "ClusterError",
           "Limits", "check_cluster", "check_scheduler", "cluster_executor", "cluster_job_executor", "cluster_sandboxes",
           "plural", "render_report", "report_formats", "summarize_class", "write_summary_plots"]

ANSWER_WORKERS = 2      # check processes per bank for grade_answer and grade_submission


def load_bank(path: str | Path | None = None, *, spec: str | Path | None = None) -> Bank:
    """The exercise bank at ``path`` (a YAML file or a folder; None: the bundled ``exercises/``);
    raises :class:`grader.errors.ErrorList` with every problem of the files at once."""
    from grader.bank import load_bank as _load
    return _load(path, spec=spec)


def executor_of(bank: Bank) -> ProcessExecutor:
    """The bank's own check processes (started on first use; stopped when the bank is
    collected, or by :func:`close`)."""
    def make() -> ProcessExecutor:
        import weakref
        ex = ProcessExecutor(ANSWER_WORKERS)
        weakref.finalize(bank, ex.close)
        return ex
    return bank.memo("process-executor", make)


def close(bank: Bank) -> None:
    """Stop the bank's check processes now (they also stop when the bank is collected); a later
    call starts new ones."""
    ex = bank.forget("process-executor")
    if ex is not None:
        ex.close()



def load_submissions(paths: Iterable[str | Path]) -> Loaded:
    """Every submission in the answers files ``paths`` (files or folders: *.yaml, *.yml, *.json), with the errors
    of what could not be read; what :func:`grade_class` takes."""
    from grader.grade.submissions import load_submissions as _load
    loaded: Loaded = _load(paths)
    return loaded



def _handler(bank: Bank, key: tuple[str, str | None], spec: Any, with_latex: bool) -> Checker:
    """A handler for one prepared spec, made once per bank (its workers keep it by its token)."""
    from grader.grade.check import Checker
    checker: Checker = bank.memo(("one-answer-checker", key, with_latex),
                                 lambda: Checker((spec,), with_latex=with_latex))
    return checker


def grade_answer(bank: Bank, problem_id: str, raw: object, *, learner: str | None = None,
                 limits: AnswerLimits = AnswerLimits(), base_dir: Path | None = None,
                 executor: Executor | None = None, with_latex: bool = True) -> AnswerResult:
    """Grade one answer: the same policy and the same result as the batch gives it (with
    ``latex``, the reading as LaTeX, where it is math). The check runs in one of the bank's
    check processes (or ``executor``), under ``limits``: an answer past them is "too complex
    to grade", whatever thread calls. ``learner`` draws a variant problem's numbers (a variant
    problem without one is an error result); ``base_dir``: where a code answer's relative path
    is resolved (default: the current folder)."""
    from grader.grade.check import CodeTask, Checker
    from grader.grade.plan import CodeCheck, SpecCheck, decide, result, settle
    from grader.grade.pool import limits_for
    from grader.grade.results import AnswerGrade, Status
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    if learner is None and problem is not None and problem.variant is not None:
        grade = AnswerGrade(0.0, None, "cannot grade: this problem draws its numbers per learner, and no learner "
                                       "was given", None, Status.ERROR)
        return result(problem_id, raw, problem, None, grade, None)
    d = decide(bank, problem_id, raw, learner=learner or "", base=base_dir if base_dir is not None else Path("."))
    action = d.action
    if isinstance(action, SpecCheck):
        handler: Any = _handler(bank, action.key, action.spec, with_latex)
        payload: Any = (0, raw)
    elif isinstance(action, CodeCheck):
        handler, payload = Checker(code=(action.problem,)), CodeTask(0, str(action.path))
    else:
        return result(problem_id, raw, d.problem, d.variant, action, None)
    out = (executor or executor_of(bank)).run([(0, payload)], handler, limits=limits)
    return result(problem_id, raw, d.problem, d.variant, settle(out[0], limits_for(handler, payload, limits)), None)


def validate_answer(bank: Bank, problem_id: str, raw: object) -> Reading:
    """How ``raw`` is read as an answer to ``problem_id`` (``read_as``, LaTeX and MathML where
    it is math), or the reader's error with its 1-based column in ``raw``; nothing is graded.
    In the calling thread, bounded by the readers' own limits on size and depth (no process)."""
    from grader.grade.plan import SpecCheck, spec_of
    from grader.grade.reading import Reading as _Reading
    from grader.grade.reading import failed, read
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    if problem is None:
        return failed(f"unknown problem id {problem_id!r}")
    from grader.api.shells import graded_by_tests
    if graded_by_tests(problem):    # code: a path, read as given; the file is looked at when graded
        from grader.grade.check import screen
        why = screen(raw, problem.kind) or (None if isinstance(raw, str) else "name your solution file (a path)")
        return failed(why) if why else _Reading(True, read_as=str(raw))
    spec = spec_of(bank, problem, None)
    if not isinstance(spec, SpecCheck):
        return failed(spec.feedback)
    return read(spec.spec, raw)


def _answers(answers: Mapping[str, object], source: str | None = None) -> tuple[Any, ...]:
    """The answers as a submission holds them; each at ``source.<problem id>`` where a source is
    named (a request's field, say), else at no location (no file)."""
    from grader.grade.submissions import Answer
    return tuple(Answer(pid, raw, cast(Any, None) if source is None else Location(f"{source}.{pid}"))
                 for pid, raw in answers.items())


def grade_submission(bank: Bank, learner: str, answers: Mapping[str, object], *,
                     limits: AnswerLimits = AnswerLimits(), executor: Executor | None = None,
                     base_dir: Path | None = None, with_latex: bool = False,
                     source: str | None = None) -> SubmissionResult:
    """Grade one learner's answers ({problem id: answer}), in the order given: a
    :class:`SubmissionResult` (``file`` is "", ``location`` None). The checks run in the bank's
    check processes (or ``executor``); ``base_dir``: where code answers' paths start;
    ``source``: where the answers were given (each answer's location is ``source.<problem id>``,
    which an unknown id's feedback names, as a file:line in ``grader grade``)."""
    from grader.grade.run import grade_all
    from grader.grade.submissions import Submission
    sub = Submission(str(learner), _answers(answers, source), cast(Any, None), "")
    report = grade_all(bank, [sub], executor=executor or executor_of(bank), limits=limits,
                       with_latex=with_latex, base=base_dir if base_dir is not None else Path("."))
    out: SubmissionResult = report.submissions[0]
    return out


def grade_class(bank: Bank, submissions: Loaded | Iterable[Submission], *, executor: Executor | None = None,
                limits: AnswerLimits = AnswerLimits(), progress: Callable[[int, int | None], None] | None = None,
                with_latex: bool = False, tune_gc: bool = False) -> Report:
    """Grade a class: ``submissions`` is what :func:`grader.grade.submissions.load_submissions`
    read (its errors go into the report) or an iterable of
    :class:`~grader.grade.submissions.Submission`. Unique answers are checked once, by
    ``executor`` (default: the bank's :class:`ProcessExecutor`; a :class:`LocalPoolExecutor`
    is faster for a big class, from a process without other threads).
    ``progress(n, total)``: called with (0, number of checks) first, then (k, None) as k more
    are done. ``tune_gc``: the cycle collector paused in the bulk phases (only for a caller
    that owns its process: the CLI)."""
    from grader.grade.run import grade_all
    from grader.grade.submissions import Loaded
    if isinstance(submissions, Loaded):
        subs: Iterable[Any] = submissions.submissions
        errors, unreadable = submissions.errors, submissions.unreadable
    else:
        subs, errors, unreadable = submissions, (), False
    return grade_all(bank, subs, executor=executor or executor_of(bank),
                     limits=limits, errors=tuple(errors), unreadable=unreadable, progress=progress,
                     with_latex=with_latex, tune_gc=tune_gc)


def learner_variant(problem: BankProblem, learner: str, bank: Bank) -> tuple[str, dict[str, int] | None]:
    """A problem as ``learner`` gets it: its prompt with the learner's numbers and the numbers drawn
    ({name: value}), as grading draws them; a problem without a variant gives its prompt and None.
    Raises where the bank cannot derive the variant (each shell says so its own way)."""
    if problem.variant is None:
        return problem.prompt, None
    from grader.bank.variants import drawn_values, for_learner
    seen, _ = for_learner(problem, learner, bank)
    return seen.prompt, drawn_values(problem, learner, bank)


def variant_draws(bank: Bank) -> dict[str, Any]:
    """Every variant problem's draws ({problem id: plain, picklable data}), derived from the spec
    (loading it): what another process's copy of the same bank takes with :func:`seed_variant_draws`."""
    from grader.bank.variants import all_draws
    return all_draws(bank)


def seed_variant_draws(bank: Bank, draws: dict[str, Any]) -> int:
    """Give ``bank`` the draws :func:`variant_draws` derived from the same bank elsewhere, so that
    :func:`learner_variant` needs no spec (no SymPy) here; how many problems got them."""
    from grader.bank.variants import seed_draws
    return seed_draws(bank, draws)


def totals(bank: Bank, results: Iterable[tuple[str, float, float]]) -> Totals:
    """A submission's totals from its answers graded one by one, ``(problem id, score, pending
    points)`` each: :class:`grader.grade.run.Totals` (score, max_score, unanswered,
    pending_points), the same sums :func:`grade_submission` makes."""
    from grader.grade.run import totals as _totals
    return _totals(bank, results)


def check_claim(subject: Subject, claim_id: str, *, measurer: Any = None, device: str = "auto", seed: int = 0,
                timeout: float | None = DEFAULT_TIMEOUT) -> ClaimResult:
    """Check one claim of a spec subject (:func:`grader.claims.load_subject`): a
    :class:`grader.claims.model.ClaimResult`. Measurements run in the measuring process
    (``measurer``, or the library's shared one, started if the claim needs it)."""
    from grader.claims.run import check_claim as _check
    result: ClaimResult = _check(subject, claim_id, measurer=measurer, device=device, seed=seed, timeout=timeout)
    return result


def check_subject(subject: Subject, *, measurer: Any = None, only: str | None = None, device: str = "auto",
                  seed: int = 0, timeout: float | None = DEFAULT_TIMEOUT) -> SubjectResult:
    """Check every claim of ``subject`` (those whose id matches the glob ``only``): a
    :class:`grader.claims.run.SubjectResult`, claims in the spec's order."""
    from grader.claims.run import run_subject
    return run_subject(subject, only=only, device=device, seed=seed, timeout=timeout, measurer=measurer)


def verify_reference(problem: BankProblem, bank: Bank) -> Verification:
    """Check one problem's reference answer against the spec (``derive``) and the real mha
    (``measure``): a :class:`grader.bank.verify.Verification` (``ok``, ``expected``, ``found``,
    ``message``). What the pytest plugin runs for each problem of a bank."""
    from grader.bank import verify_reference as _verify
    verification: Verification = _verify(problem, bank)
    return verification


__all__ += ["verify_reference"]


# grader draft / grader check-text (issue #28): rules over the engine's own parsers, no torch.
from grader.draft.engine import check_text, draft_string, draft_text  # noqa: E402
from grader.draft.model import Draft, Problem, Proposed, Statement, TextCheck  # noqa: E402
from grader.draft.sources import FORMATS as TEXT_FORMATS  # noqa: E402
from grader.reports.text_check import draft_summary, render as render_text_check  # noqa: E402

__all__ += ["draft_text", "draft_string", "check_text", "draft_summary", "render_text_check", "TEXT_FORMATS", "Draft", "Problem",
            "Proposed", "Statement", "TextCheck"]
