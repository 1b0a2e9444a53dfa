"""`grader draft`: a spec skeleton drafted from course texts, for the author to review."""
from __future__ import annotations

import click

from grader.api import TEXT_FORMATS


@click.command("draft")
@click.argument("texts", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the spec to FILE (its sources' paths relative to it); default: standard output.")
@click.option("--subject", default=None, metavar="ID", help="The subject's id (default: the first text's name).")
@click.option("--format", "fmt", type=click.Choice(TEXT_FORMATS), default=None,
              help="Read every text as this format (default: by its suffix).")
def draft(texts: tuple[str, ...], output: str | None, subject: str | None, fmt: str | None) -> None:
    """Draft a spec of TEXTS (Markdown, text, HTML, LaTeX, notebooks): one claim per checkable
    statement with its exact quote and section, and the checks proposed (marked DRAFT).
    The summary goes to standard error when the spec goes to standard output."""
    from grader.api import draft_summary, draft_text
    from grader.api.shells import cannot_write
    if output:
        why = cannot_write(output)
        if why:
            raise click.BadParameter(f"{output}: {why}; nothing was drafted", param_hint="--output")
    d = draft_text(list(texts), subject=subject, output=output, fmt=fmt)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(d.yaml)
        click.echo(draft_summary(d), nl=False)
        click.echo(f"wrote {output}: check it with  grader check-spec {output}")
    else:
        click.echo(d.yaml, nl=False)
        click.echo(draft_summary(d), nl=False, err=True)
