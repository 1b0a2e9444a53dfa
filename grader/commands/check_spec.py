"""`grader check-spec`: check every claim of a spec — holds, refuted, error or unverifiable."""
from __future__ import annotations

import math
import shutil
import sys

import click

DEFAULT_TIMEOUT = 60.0      # grader.spec.run.DEFAULT_TIMEOUT (not imported: it would load the engine)
MAX_TIMEOUT = 1e6           # grader.spec.run.MAX_TIMEOUT


class Seconds(click.FloatRange):
    """A number of seconds > 0 and at most MAX_TIMEOUT (not nan, not inf)."""

    name = "seconds"

    def __init__(self):
        super().__init__(min=0, min_open=True, max=MAX_TIMEOUT)

    def convert(self, value, param, ctx):
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds (a number > 0 and at most {MAX_TIMEOUT:g})", param, ctx)
        return seconds


@click.command("check-spec")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "html"]), default="text", show_default=True,
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
@click.option("-v", "--verbose", is_flag=True, help="Show every check's evidence and the corrected statements.")
def check_spec(paths, fmt, output, device, only, timeout, verbose):
    """Check every claim of the spec(s) at PATHS (files or folders; none: the bundled subject 17-08).

    Exit status: 0 when every verdict is what the spec expects, 1 when one is not (or a check
    failed), 2 for an invalid spec or bad usage.
    """
    from grader.output import cannot_write

    if output:
        why = cannot_write(output)
        if why:
            raise click.BadParameter(f"{output}: {why}; nothing was checked", param_hint="--output")
    from grader.spec.files import may_measure
    from grader.spec.measurer import Measurer

    # The measuring process (torch) starts now, before even the YAML reader is imported, so that
    # its import overlaps the loading of the spec and the symbolic checks; with --only, once the
    # selection is known to need it.
    measurer = None
    if device == "cuda" or (only is None and may_measure(list(paths) or None)):
        measurer = Measurer().start()
    try:
        from grader.spec.load import load_subjects
        from grader.spec.run import needs_measurement, run_subjects, select

        if device == "cuda":
            info = measurer.ready()
            if not info.get("cuda"):
                why = info.get("fatal") or "CUDA is not available on this machine"
                raise click.BadParameter(why, param_hint="--device")
        subjects = load_subjects(list(paths) or None)
        claims = [c for s in subjects for c in select(s, only)]
        if only and not claims:
            raise click.BadParameter(f"no claim id matches {only!r}", param_hint="--only")
        if measurer is None and needs_measurement(claims):
            measurer = Measurer().start()
        elif measurer is not None and device != "cuda" and not needs_measurement(claims):
            measurer.close()
            measurer = None
        results = run_subjects(subjects, only=only, device=device, timeout=timeout, measurer=measurer)
    finally:
        if measurer is not None:
            measurer.close()
    from grader.spec.report import render

    terminal = output is None and fmt == "text" and sys.stdout.isatty()
    width = shutil.get_terminal_size().columns if terminal else None
    if fmt == "html":
        from grader.web.report import render_html
        text = render_html(results)
    else:
        text = render(results, fmt, verbose=verbose, colour=terminal, width=width)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise click.FileError(output, hint=e.strerror or str(e)) from None
    else:
        click.echo(text, nl=False)
    ok = all(r.ok for r in results)
    if output:
        n = sum(len(r.results) for r in results)
        click.echo(f"{n} claim{'' if n == 1 else 's'} checked; report written to {output}"
                   + ("" if ok else "; some not as expected"), err=True)
    click.get_current_context().exit(0 if ok else 1)
