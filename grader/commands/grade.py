"""`grader grade`: grade learner answer files against the exercise bank."""
from __future__ import annotations

import os
import sys

from typing import Any

import click

from grader.api import report_formats

from . import scheduler_option

PROGRESS_FROM = 2000    # unique answers: below this a batch is quick and gets no progress bar


@click.command("grade")
@click.argument("answers", nargs=-1, required=True, type=click.Path(dir_okay=True, file_okay=True))
@click.option("--exercises", type=click.Path(exists=True, dir_okay=True, file_okay=True), default=None,
              help="Exercise bank: a YAML file or a folder of them (default: the bundled bank).")
@click.option("--format", "fmt", type=click.Choice(report_formats("grades")), default="text",
              show_default=True,
              help="Output: text; JSON (submissions with learner, score, max_score, results); JUnit XML; "
                   "Gradescope results.json (one submission).")
@click.option("--output", "-o", type=click.Path(), default=None,
              help="Write the grades to FILE instead of standard output (checked before grading).")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=min(4, os.cpu_count() or 1), show_default=True,
              help="Worker processes that check answers (each with memory and CPU limits).")
@click.option("--timeout", type=click.FloatRange(0.1, 60.0), default=2.0, show_default=True,
              help="Seconds one answer may take; past it the answer gets 0 as too complex to grade.")
@click.option("--allow-weak-sandbox", is_flag=True, default=False,
              help="Grade code answers even where only the weak sandbox (rlimits, the host's files visible) "
                   "can run; the report says what it does not prevent. Without it, such a machine refuses them.")
@click.option("--summary", is_flag=True, default=False,
              help="Add a class summary (text and json): per problem the mean score, success rate, "
                   "unanswered count and the most common wrong answers grouped by their feedback.")
@click.option("--plots", "plots", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write a score histogram per problem and a class overview (class.png) to DIR.")
@click.option("--plot-format", "plot_formats", type=click.Choice(["png", "svg"]), multiple=True,
              default=("png",), show_default=True, help="Image format of --plots (repeat for both).")
@scheduler_option("Check the answers on a Dask cluster: a scheduler's address (tcp://HOST:8786), or local:N "
                   "for N worker processes on this machine (see docs/cluster.md). --jobs is then unused.")
def grade(answers: tuple[str, ...], exercises: str | None, fmt: str, output: str | None, jobs: int,
          timeout: float, allow_weak_sandbox: bool, summary: bool = False, plots: str | None = None,
          plot_formats: tuple[str, ...] = ("png",), scheduler: str | None = None) -> None:
    """Grade the answer files ANSWERS (YAML or JSON files, or folders of them).

    \b
    A file holds one submission or many under `submissions:`:
      learner: alice
      answers:
        17-08/practice-1: 64
        17-08/params-formula: "4d^2 + 4d"

    Every answer given is reported once. An unknown problem id scores 0 with its file:line;
    a malformed submission is reported with its location and the rest is still graded.
    Exit status: 0 when grading ran, whatever the scores; 2 for bad usage, an invalid bank,
    an --output that cannot be written, an answer path that does not exist or cannot be
    read, or an answer refused for its key (null, empty, a number, a list: no problem id);
    the readable files and the other answers are still graded and written.
    """
    from grader.api import AnswerLimits, LocalPoolExecutor, grade_class, load_bank, load_submissions, plural, render_report, summarize_class, write_summary_plots
    from grader.api.shells import cannot_write
    from grader.errors import GraderError

    from . import echo_errors

    ctx = click.get_current_context()
    why = cannot_write(output) if output else None
    if why:
        click.echo(f"error: --output {output}: {why}; nothing was graded", err=True)
        ctx.exit(2)
    try:
        bank = load_bank(exercises)
        loaded = load_submissions(answers)
    except GraderError as e:
        echo_errors(e)
        ctx.exit(2)
    if not loaded.submissions and not loaded.errors:
        click.echo("error: no answer files (*.yaml, *.yml, *.json) found", err=True)
        ctx.exit(2)
    if summary and fmt not in report_formats("summary"):
        raise click.UsageError(f"--summary goes with --format text or json, not {fmt}")
    if fmt == "gradescope" and len(loaded.submissions) != 1:
        raise click.UsageError(f"--format gradescope writes one submission's results.json; "
                               f"got {len(loaded.submissions)} submissions")
    weak_before = os.environ.get("GRADER_ALLOW_WEAK_SANDBOX")
    if allow_weak_sandbox:   # read by grader.code.grade, in this process and in any worker it starts
        os.environ["GRADER_ALLOW_WEAK_SANDBOX"] = "1"
    cluster: Any = None
    progress = None
    try:    # the environment put back and the cluster closed, however this ends (a refused cluster too)
        cluster = _cluster(scheduler) if scheduler else None
        if _has_code(bank, loaded):     # where the code answers run: here, or on the cluster's workers
            _say_about_the_sandbox(cluster)
        progress = _progress_bar() if sys.stderr.isatty() else None
        if cluster is not None:
            report = _grade_on(cluster, bank, loaded, AnswerLimits(timeout_s=timeout), progress)
        else:
            report = grade_class(bank, loaded, executor=LocalPoolExecutor(jobs), limits=AnswerLimits(timeout_s=timeout),
                                 progress=progress, tune_gc=True)
    finally:
        if progress:
            progress.close()
        if cluster is not None:
            cluster.close()
        if allow_weak_sandbox:
            if weak_before is None:
                os.environ.pop("GRADER_ALLOW_WEAK_SANDBOX", None)
            else:
                os.environ["GRADER_ALLOW_WEAK_SANDBOX"] = weak_before
    points = {p.id: float(p.points) for p in bank.problems}
    class_summary = summarize_class(report, points) if summary or plots else None
    text = render_report("grades", report, fmt, points=points, summary=class_summary if summary else None,
                         text_errors=False)
    if plots and class_summary is not None:
        written = write_summary_plots(class_summary, plots, formats=plot_formats)
        click.echo(f"{plural(len(written), 'plot')} written to {plots}", err=True)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        n = sum(len(s.results) for s in report.submissions)
        click.echo(f"{plural(len(report.submissions), 'submission')}, {plural(n, 'answer')} graded; "
                   f"written to {output}", err=True)
    else:
        click.echo(text, nl=False)
    echo_errors(report.errors)          # input errors go to stderr, whatever the format
    ctx.exit(2 if report.unreadable or loaded.refused else 0)


def _cluster(scheduler: str) -> Any:
    """The Dask executor for ``--scheduler`` (connected, the workers' versions checked), or exit 2
    with the one line that says why not."""
    from grader.api import ClusterError, cluster_executor
    try:
        return cluster_executor(scheduler)
    except ClusterError as e:
        click.echo(f"error: {e.message}", err=True)
        click.get_current_context().exit(2)


def _grade_on(cluster: Any, bank: Any, loaded: Any, limits: Any, progress: Any) -> Any:
    """The class graded with the cluster's executor; a cluster lost mid-batch: exit 2, nothing written."""
    from grader.api import ClusterError, grade_class
    try:
        return grade_class(bank, loaded, executor=cluster, limits=limits, progress=progress, tune_gc=True)
    except ClusterError as e:
        click.echo(f"error: {e.message}", err=True)
        click.get_current_context().exit(2)


def _has_code(bank: Any, loaded: Any) -> bool:
    from grader.api.shells import graded_by_tests
    return any(graded_by_tests(bank.get(a.problem_id)) for s in loaded.submissions
               for a in s.answers if isinstance(a.problem_id, str))


def _say_about_the_sandbox(cluster: Any) -> None:
    """One line on stderr when code answers will be refused (no safe sandbox) or run in the weak
    one: this machine's sandbox, or under ``--scheduler`` each worker's (where they run)."""
    from grader.api import cluster_sandboxes
    from grader.api.shells import sandbox_status
    if cluster is None:
        boxes = {"": sandbox_status()}
    else:
        allow_weak = os.environ.get("GRADER_ALLOW_WEAK_SANDBOX", "").strip().lower() in ("1", "true", "yes")
        try:
            boxes = {f"on worker {w}: ": box for w, box in cluster_sandboxes(cluster, allow_weak).items()}
        except Exception as e:  # noqa: BLE001  (advice only: each code answer says the rest)
            click.echo(f"warning: the workers did not say which sandbox they have ({type(e).__name__})", err=True)
            return
    for where, status in sorted(boxes.items()):
        if not status.usable:
            click.echo(f"error: {where}{status.refusal}", err=True)
        elif status.weak:
            click.echo(f"warning: {where}code answers run in the weak sandbox: {status.description}", err=True)


class _progress_bar:
    """A rich progress bar on stderr, shown only once a batch turns out to be long."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, advance: int, total: int | None) -> None:
        if total is not None:
            if total >= PROGRESS_FROM:
                from rich.console import Console
                from rich.progress import Progress
                self.bar = Progress(console=Console(stderr=True), transient=True)
                self.bar.start()
                self.task = self.bar.add_task("grading", total=total)
            return
        if self.bar is not None:
            self.bar.advance(self.task, advance)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
