"""`grader check-spec`: check every claim of a spec — holds, refuted, error or unverifiable."""
from __future__ import annotations

import sys

import click


@click.command("check-spec")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=True, file_okay=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit"]), default="text", show_default=True,
              help="Report format: a table per subject, JSON (fields: claims, summary), or JUnit XML.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to FILE instead of standard output.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Device for checks that compute real numbers (equivalence); sizes, parameters and FLOPs "
                   "are always measured on the meta device. auto: cuda if available, else cpu.")
@click.option("--only", "only", metavar="PATTERN", default=None,
              help="Check only the claims whose id matches this glob, e.g. 'ex3-*'.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Time limit per claim, in seconds.")
@click.option("-v", "--verbose", is_flag=True, help="Show every check's evidence and the corrected statements.")
def check_spec(paths, fmt, output, device, only, timeout, verbose):
    """Check every claim of the spec(s) at PATHS (files or folders; none: the bundled subject 17-08).

    Exit status: 0 when every verdict is what the spec expects, 1 when one is not (or a check
    failed), 2 for an invalid spec or bad usage.
    """
    from grader.spec.load import load_subjects
    from grader.spec.report import render
    from grader.spec.run import run_subject

    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise click.BadParameter("CUDA is not available on this machine", param_hint="--device")
    subjects = load_subjects(list(paths) or None)
    results = [run_subject(s, only=only, device=device, timeout=timeout) for s in subjects]
    if only and not any(r.results for r in results):
        raise click.BadParameter(f"no claim id matches {only!r}", param_hint="--only")
    colour = output is None and fmt == "text" and sys.stdout.isatty()
    text = render(results, fmt, verbose=verbose, colour=colour)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(text, nl=False)
    ok = all(r.ok for r in results)
    if output:
        n = sum(len(r.results) for r in results)
        click.echo(f"{n} claims checked; report written to {output}" + ("" if ok else "; some not as expected"),
                   err=True)
    click.get_current_context().exit(0 if ok else 1)
