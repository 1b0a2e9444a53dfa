"""`grader check-spec`: check every claim of a spec — holds, refuted, error or unverifiable."""
from __future__ import annotations

import math
import shutil
import sys

from typing import Any

import click

from . import scheduler_option

from grader.api import DEFAULT_TIMEOUT, MAX_TIMEOUT, report_formats


class Seconds(click.FloatRange):
    """A number of seconds > 0 and at most MAX_TIMEOUT (not nan, not inf)."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=MAX_TIMEOUT)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds (a number > 0 and at most {MAX_TIMEOUT:g})", param, ctx)
        return seconds


def _memory_budget(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """--memory-budget as bytes (None: the measuring process's default)."""
    if value is None:
        return None
    from grader.api.shells import parse_size
    try:
        return parse_size(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@click.command("check-spec")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--format", "fmt", type=click.Choice(report_formats("claims")), default="text", show_default=True,
              help="Report format: a table per subject, JSON (fields: claims, summary), JUnit XML, or one standalone "
                   "HTML page (with -o report.html; docs/web.md).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE instead of standard output (checked before anything runs).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Device for checks that compute real numbers (equivalence); sizes, parameters and FLOPs "
                   "are always measured on the meta device. auto: cuda if available, else cpu.")
@click.option("--only", "only", metavar="PATTERN", default=None,
              help="Check only the claims whose id matches this glob, e.g. 'ex3-*'.")
@click.option("--timeout", type=Seconds(), default=DEFAULT_TIMEOUT, show_default=True,
              help="Time limit per claim, in seconds (a number > 0): its checks and its measurements "
                   "together; PyTorch's one-time import is counted to no claim. A claim past it is an "
                   "error and the others go on.")
@click.option("--memory-budget", "memory_budget", metavar="SIZE", default=None, callback=_memory_budget,
              help="Memory one measurement may need, e.g. 2GiB, 512MB or 25% (of the memory available); "
                   "a check estimated to need more is an error saying so, before anything is allocated. "
                   "Default: half the memory available.")
@click.option("-v", "--verbose", is_flag=True, help="Show every check's evidence and the corrected statements.")
@click.option("--no-train", is_flag=True,
              help="Skip the demonstrations that train a model (kind: demonstrate); their claims report "
                   "'skipped'. Without it, trained results are cached (GRADER_CACHE_DIR, else ~/.cache/grader).")
@click.option("--figures", "figures", metavar="DIR", type=click.Path(file_okay=False), default=None,
              help="Write each trained head's average attention map, per seed, as PNG and SVG files in DIR.")
@scheduler_option("Measure on a Dask cluster: a scheduler's address (tcp://HOST:8786) or local:N; with "
                   "--device cuda only on workers that declare a GPU resource (see docs/cluster.md).")
def check_spec(paths: tuple[str, ...], fmt: str, output: str | None, device: str, only: str | None, timeout: float,
               memory_budget: int | None, verbose: bool, no_train: bool, figures: str | None,
               scheduler: str | None = None) -> None:
    """Check every claim of the spec(s) at PATHS (files or folders; none: the bundled subjects, spec/).

    Exit status: 0 when every verdict is what the spec expects, 1 when one is not (or a check
    failed), 2 for an invalid spec or bad usage.
    """
    from grader.api.shells import cannot_write

    if output:
        why = cannot_write(output)
        if why:
            raise click.BadParameter(f"{output}: {why}; nothing was checked", param_hint="--output")
    if figures:
        from grader.api.shells import cannot_plot
        why = cannot_plot(figures)
        if why:
            raise click.BadParameter(f"{figures}: {why}; nothing was checked", param_hint="--figures")
    from grader.api import ClusterError
    from grader.api.shells import check_paths
    from grader.errors import GraderError, OptionError

    cluster_errors: tuple[type[GraderError], ...] = (ClusterError,) if scheduler else ()
    try:
        results = check_paths(paths, only=only, device=device, timeout=timeout, train=not no_train,
                              memory_budget=memory_budget, scheduler=scheduler)
    except OptionError as e:
        raise click.BadParameter(e.message, param_hint=e.option) from None
    except cluster_errors as e:     # --scheduler: the cluster cannot be used
        click.echo(f"error: {e.message}", err=True)
        click.get_current_context().exit(2)
    from grader.api import render_report

    for r in results:   # sources whose quotes could not be checked: said, not an error
        for line in r.subject.unchecked:
            click.echo(f"warning: {r.subject.file}: {line}", err=True)
    terminal = output is None and fmt == "text" and sys.stdout.isatty()
    width = shutil.get_terminal_size().columns if terminal else None
    text = render_report("claims", results, fmt, verbose=verbose, colour=terminal, width=width)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise click.FileError(output, hint=e.strerror or str(e)) from None
    else:
        click.echo(text, nl=False)
    ok = all(r.ok for r in results)
    if figures:
        from grader.api.shells import write_attention_maps
        written = write_attention_maps(results, figures)
        click.echo(f"{len(written)} figure file{'' if len(written) == 1 else 's'} written to {figures}", err=True)
    if output:
        n = sum(len(r.results) for r in results)
        click.echo(f"{n} claim{'' if n == 1 else 's'} checked; report written to {output}"
                   + ("" if ok else "; some not as expected"), err=True)
    click.get_current_context().exit(0 if ok else 1)

