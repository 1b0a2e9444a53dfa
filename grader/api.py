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
    from grader.code.grade import CodeSandbox
    from grader.code.solution_proxy import Session
    from grader.grade.check import Checker
    from grader.grade.run import Totals
    from grader.grade.submissions import Loaded, Submission
    from grader.reports.summary import ClassSummary

__all__ = ["AnswerLimits", "AnswerResult", "Executor", "LocalPoolExecutor", "ProcessExecutor", "Reading", "Report",
           "SerialExecutor", "SubmissionResult", "check_claim", "check_subject", "close", "grade_answer",
           "grade_class", "grade_submission", "load_bank", "result_json", "submission_json", "totals",
           "validate_answer"]

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


# --- for the CLI and the pytest plugins: what they use of the engine (they import only this
# module and grader.errors; tests/test_imports.py holds them to it)

def load_submissions(paths: Iterable[str | Path]) -> Loaded:
    """Every submission in the answers files ``paths`` (files or folders: *.yaml, *.yml, *.json), with the errors
    of what could not be read; what :func:`grade_class` takes."""
    from grader.grade.submissions import load_submissions as _load
    loaded: Loaded = _load(paths)
    return loaded


def cannot_write(path: str) -> str | None:
    """Why an output file cannot be written (None: it can); checked before a long run."""
    from grader.files.output import cannot_write as _why
    why: str | None = _why(path)
    return why


def sandbox_status(allow_weak: bool | None = None) -> CodeSandbox:
    """Whether learner code can run here, in which sandbox, or one line why not."""
    from grader.code.grade import code_sandbox
    return code_sandbox(allow_weak=allow_weak)


def solution_limits(given: Mapping[str, Any] | None = None, wall_s: float | None = None) -> Limits:
    """A sandboxed solution's limits: ``given`` (all of them), else the operator's defaults; ``wall_s`` over
    them."""
    from dataclasses import replace

    from grader.code.grade import default_limits
    limits = Limits(**given) if given else default_limits()
    return limits if wall_s is None else replace(limits, wall_s=wall_s)


def open_solution(path: Path, *, display: str, limits: Limits, allow_weak: bool | None, hide: list[str],
                  workdir: str | None) -> Session | str:
    """A learner's solution file served from the sandbox (a session, not started yet), or one line why it may not
    run (no usable sandbox, an unreadable file)."""
    from grader.code.solution_proxy import Session as _Session
    from grader.errors import GraderError
    from grader.sandbox import SandboxUnavailable
    status = sandbox_status(allow_weak)
    if not status.usable:
        return status.refusal
    try:
        return _Session(path, display=display, limits=limits, backend=status.backend, hide=hide, workdir=workdir)
    except (GraderError, SandboxUnavailable) as e:
        return str(e)


def solution_module(session: Session) -> object:
    """The stand-in module whose functions run in the session's sandbox; raises what :func:`is_solution_failure`
    tells apart when the solution cannot be imported."""
    from grader.code.solution_proxy import SolutionModule
    session.names()
    return SolutionModule(session)


def is_solution_failure(error: BaseException, *, importing: bool = False) -> bool:
    """Whether ``error`` is what the learner's code did (raised, broke, could not be imported;
    ``importing``: only the last), shown as its message rather than as a traceback into the grader."""
    from grader.code.solution_proxy import SolutionBroke, SolutionImportFailed, SolutionRaised
    return isinstance(error, SolutionImportFailed if importing else (SolutionRaised, SolutionBroke, SolutionImportFailed))


def check_paths(paths: Iterable[str] | None = None, *, only: str | None = None, device: str = "auto",
                timeout: float | None = DEFAULT_TIMEOUT, train: bool = True, memory_budget: int | None = None,
                scheduler: str | None = None) -> list[SubjectResult]:
    """What ``grader check-spec`` runs: the specs at ``paths`` (none: the bundled spec) loaded and their claims
    (those matching ``only``) checked; ``scheduler``: measured on that Dask cluster. Raises
    :class:`grader.errors.ErrorList`, an ``OptionError``, a :class:`ClusterError`."""
    from grader.claims.run import check_paths as _check
    factory = None
    if scheduler:
        from grader.cluster.claims import DaskMeasurer
        factory = lambda: DaskMeasurer(scheduler, device=device, memory_budget=memory_budget)   # noqa: E731
    return _check(paths, only=only, device=device, timeout=timeout, train=train, memory_budget=memory_budget,
                  measurer_factory=factory)


def parse_size(text: str) -> int:
    """A memory size in bytes: ``2GiB``, ``512 MB``, ``25%`` (of the memory available); ValueError."""
    from grader.claims.budget import parse_size as _parse
    size: int = _parse(text)
    return size


def cannot_plot(folder: str) -> str:
    """Why check-spec's figures cannot be written to ``folder`` ("" when they can)."""
    from grader.claims.plots import cannot_plot as _why
    why: str = _why(folder)
    return why


def write_attention_maps(results: list[SubjectResult], folder: str) -> list[Path]:
    """The demonstrations' attention maps (PNG and SVG) written to ``folder``; the paths."""
    from grader.claims.plots import write_attention_maps as _write
    written: list[Path] = _write(results, folder)
    return written


def graded_by_tests(problem: BankProblem | None) -> bool:
    """Whether answers to ``problem`` are graded by running its tests (a code answer: the kind
    registry's ``GRADED = "tests"``)."""
    from grader.answers.kinds import KINDS
    entry = KINDS.get(problem.kind) if problem is not None else None
    return entry is not None and entry.graded == "tests"


def learner_variant(problem: BankProblem, learner: str, bank: Bank) -> tuple[str, dict[str, int]]:
    """A variant problem as ``learner`` gets it: its prompt with the learner's numbers, and the numbers drawn
    ({name: value}), as grading draws them."""
    from grader.bank.variants import drawn_values, for_learner
    seen, _ = for_learner(problem, learner, bank)
    return seen.prompt, drawn_values(problem, learner, bank)


__all__ += ["FORMATS", "MAX_TIMEOUT", "DEFAULT_TIMEOUT", "ClusterError", "Limits", "cannot_plot", "cannot_write",
            "check_cluster", "check_paths", "check_scheduler", "cluster_executor", "cluster_job_executor",
            "cluster_sandboxes", "graded_by_tests", "is_solution_failure", "learner_variant", "load_submissions", "open_solution",
            "parse_size", "plural", "render_report", "report_formats", "sandbox_status", "solution_limits",
            "solution_module", "summarize_class", "write_attention_maps", "write_summary_plots"]


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


# --- for the service
# What `grader serve` (grader/serve, grader/web) needs of the engine, and only that: the service
# imports nothing of grader but this module, grader.errors and grader.db.

from grader.bank.model import Problem as BankProblem  # noqa: E402  (api.Problem is a draft's)
from grader.grade.run import Totals  # noqa: E402
from grader import __version__ as VERSION  # noqa: E402  (the version the service reports)
from grader.values import json_number  # noqa: E402


def learner_view(bank: Bank, problem: BankProblem, learner: str) -> tuple[str, dict[str, int] | None]:
    """(the prompt with ``learner``'s numbers, {name: value} drawn, or None where the problem has
    no variant): `grader exercises --learner`'s draw, which grading uses. A variant the spec
    cannot derive gives the template and None (grading reports that error)."""
    if problem.variant is None:
        return problem.prompt, None
    from grader.bank import variants as v
    try:
        seen, _ = v.for_learner(problem, learner, bank)
        return seen.prompt, v.drawn_values(problem, learner, bank)
    except Exception:
        return problem.prompt, None


def answer_failed(bank: Bank, problem_id: str, raw: object, *, reason: str,
                  limits: AnswerLimits = AnswerLimits(), detail: str = "",
                  location: str | None = None) -> AnswerResult:
    """The result of an answer whose check did not finish (``reason``: "timeout", "memory",
    "died", "error"), as the engine grades such an answer in a submission: "too complex to grade"
    (or an internal error left to a person); an unknown problem id is "unknown" as always."""
    from grader.grade.plan import result, too_complex
    from grader.grade.pool import Failure
    from grader.grade.results import AnswerGrade, Status
    problem = bank.get(problem_id) if isinstance(problem_id, str) else None
    where = Location(location) if location else None
    if problem is None:
        grade = AnswerGrade(0.0, False, f"unknown problem id {problem_id!r}", None, Status.UNKNOWN)
        return result(problem_id, raw, None, None, grade, where)
    return result(problem_id, raw, problem, None, too_complex(Failure(reason, detail), limits), where)


def submission_totals(bank: Bank, results: Iterable[tuple[str, float, float]]) -> Totals:
    """:func:`totals`, typed: a submission's totals from its answers graded one by one."""
    from grader.grade.run import totals as _totals
    return _totals(bank, results)


def answers_file(paths: Iterable[str | Path]) -> Loaded:
    """Every submission in ``paths`` (answers files or folders), read as ``grader grade`` reads
    them, for :func:`grade_class` (its errors go into the report)."""
    from grader.grade.submissions import load_submissions
    return load_submissions(list(paths))


def grade_code_file(bank: Bank, problem_id: str, path: Path) -> AnswerResult:
    """A code exercise's answer (the learner's file at ``path``) graded by the engine's own code
    path, as ``grader grade`` grades it: its tests in the sandbox, each test in ``tests``."""
    from grader.grade.check import grade_code_task
    from grader.grade.plan import result
    problem = bank.get(problem_id)
    if problem is None or problem.kind != "code":
        raise KeyError(problem_id)
    return result(problem_id, str(path.name), problem, None, grade_code_task(problem, path), None)


def code_not_run(r: AnswerResult) -> str | None:
    """Why a code answer's tests did not run at all, where that is the grader's fault and not
    the learner's (the test runner crashed or exited abnormally, its folder went missing, the
    grader's own processes ran out of memory, no usable sandbox): its cause, or None when the
    tests ran (whatever they found). Such a grade is not the learner's score."""
    if r.status == "error":         # no safe sandbox here, or the exercise's tests are missing
        return r.feedback
    if len(r.tests) == 1 and r.tests[0].name == "tests" and not r.tests[0].passed:
        message = r.tests[0].message
        if message.startswith("the tests did not run: ") and "time limit" not in message:
            return message[len("the tests did not run: "):]
    return None


class AnswerShape:
    """The engine's own limits on what an answer may be (:mod:`grader.answers.guard`), as a
    shell checks them once at its boundary, before anything is stored, pickled or sent to a
    worker: a value nested at most ``max_depth`` levels (a shape is a flat list: 1), with at most
    ``max_items`` items in a list, ``max_chars`` characters of text. An answer within them may
    still be invalid (the engine says why); one beyond them is refused whole."""

    def __init__(self) -> None:
        from grader.answers.guard import MAX_FREE_TEXT, MAX_INT_DIGITS, MAX_ITEMS
        self.max_depth = 2          # a list of lists at most: the engine then says "not a list of integers"
        self.max_items = MAX_ITEMS
        self.max_chars = MAX_FREE_TEXT
        self.max_int_digits = MAX_INT_DIGITS

    def problem(self, raw: object) -> str | None:
        """Why ``raw`` is beyond the limits (None: within them). Iterative: any depth is safe."""
        stack: list[tuple[object, int]] = [(raw, 0)]
        seen = 0
        while stack:
            value, depth = stack.pop()
            seen += 1
            if seen > (self.max_items + 1) ** self.max_depth:
                return f"more than {(self.max_items + 1) ** self.max_depth} values"
            if isinstance(value, (list, tuple, dict)):
                if depth >= self.max_depth:
                    return f"nested more than {self.max_depth} levels deep"
                if len(value) > self.max_items:
                    return f"a list of {len(value):,} items (at most {self.max_items})"
                items = list(value.items()) if isinstance(value, dict) else list(value)
                for item in items:
                    if isinstance(item, tuple) and isinstance(value, dict):
                        stack.extend([(item[0], depth + 1), (item[1], depth + 1)])
                    else:
                        stack.append((item, depth + 1))
            elif isinstance(value, str) and len(value) > self.max_chars:
                return f"{len(value):,} characters of text (at most {self.max_chars:,})"
        return None


def answer_shape() -> AnswerShape:
    """The engine's limits on an answer's shape (see :class:`AnswerShape`)."""
    return AnswerShape()


def summarise_class(report: Report, points: Mapping[str, float] | None = None) -> ClassSummary:
    """The class summary of a graded :class:`Report` (``grader grade --summary``'s): for each
    problem its mean score, success rate and the most common wrong answers grouped by their
    feedback (:class:`ClassSummary`)."""
    from grader.reports.summary import summarize as _summarize
    return _summarize(report, points)


__all__ += ["VERSION", "AnswerShape", "Bank", "BankProblem", "Totals", "answer_failed", "answer_shape", "answers_file",
            "code_not_run", "grade_code_file", "json_number", "learner_view", "submission_totals", "summarise_class"]
