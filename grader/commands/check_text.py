"""`grader check-text`: a text's own arithmetic, totals, formulas and shapes, with no spec."""
from __future__ import annotations

import click

from grader.api import TEXT_FORMATS, report_formats


@click.command("check-text")
@click.argument("texts", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(report_formats("text-check")), default="text", show_default=True,
              help="Report format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Write the report to FILE.")
@click.option("--input-format", "input_fmt", type=click.Choice(TEXT_FORMATS),
              default=None, help="Read every text as this format (default: by its suffix).")
def check_text(texts: tuple[str, ...], fmt: str, output: str | None, input_fmt: str | None) -> int:
    """Recompute the worked arithmetic of TEXTS and compare their totals, formulas and shapes
    with the definitions above them. Exit status: 0 consistent, 1 an inconsistency, 2 bad input."""
    from grader.api import check_text as run, render_text_check
    from grader.api.shells import cannot_write
    if output:
        why = cannot_write(output)
        if why:
            raise click.BadParameter(f"{output}: {why}; nothing was checked", param_hint="--output")
    r = run(list(texts), fmt=input_fmt)
    text = render_text_check(r, fmt)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(text, nl=False)
    return 0 if r.ok else 1
