"""The API's part for the CLI and the pytest plugins: what they use of the engine beyond grading
and checking (the sandbox's state, a learner's solution served from it, check-spec's run, sizes,
figures). They import only :mod:`grader.api`, this module and :mod:`grader.errors`
(tests/test_imports.py holds them to it)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.bank.model import Verification
from grader.bank.model import Problem as BankProblem
from grader.claims.limits import DEFAULT_TIMEOUT
from grader.sandbox.limits import Limits

if TYPE_CHECKING:
    from grader.claims.run import SubjectResult
    from grader.code.grade import CodeSandbox
    from grader.code.solution_proxy import Session as Session  # noqa: PLC0414 (re-exported: the plugin's types)


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



__all__ = ["BankProblem", "Verification", "cannot_plot", "cannot_write", "check_paths", "graded_by_tests", "is_solution_failure", "open_solution", "parse_size", "sandbox_status", "solution_limits", "solution_module", "write_attention_maps"]
