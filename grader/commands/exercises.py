"""`grader exercises`: list the exercise bank."""
from __future__ import annotations

import json
import sys

import click


@click.command("exercises")
@click.option("--exercises", type=click.Path(exists=True, dir_okay=True, file_okay=True), default=None,
              help="Exercise bank: a YAML file or a folder of them (default: the bundled bank).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="A table (id, kind, points, prompt), or JSON: a list of {id, kind, points, prompt, source, variant}.")
@click.option("--verify", is_flag=True,
              help="Also verify every reference against the spec and the real mha (imports torch), "
                   "and exit 1 if one is wrong.")
def exercises(exercises, fmt, verify):
    """List the problems of the exercise bank: id, kind, points and prompt."""
    from grader.bank import load_bank, verify_reference
    from grader.errors import ErrorList, GraderError

    ctx = click.get_current_context()
    try:
        bank = load_bank(exercises)
    except GraderError as e:
        for err in e.errors if isinstance(e, ErrorList) else [e]:
            click.echo(f"error: {err}", err=True)
        ctx.exit(2)
    checks = {p.id: verify_reference(p, bank) for p in bank} if verify else {}
    if fmt == "json":
        rows = [{"id": p.id, "kind": p.kind, "points": p.points, "prompt": p.prompt, "source": p.source,
                 "variant": dict(p.variant.choose) if p.variant else None,
                 **({"verified": checks[p.id].ok, "verification": checks[p.id].message} if verify else {})}
                for p in bank]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        from rich.console import Console
        from rich.table import Table
        table = Table("id", "kind", "points", "prompt", *(["verified"] if verify else []),
                      title=f"{len(bank)} problems", show_lines=False)
        for p in bank:
            extra = [("ok" if checks[p.id].ok else "WRONG: " + checks[p.id].message)] if verify else []
            table.add_row(p.id, p.kind, f"{p.points:g}", p.prompt + (" (variant per learner)" if p.variant else ""),
                          *extra)
        Console(file=sys.stdout, width=None if sys.stdout.isatty() else 160, soft_wrap=False).print(table)
    ctx.exit(1 if verify and not all(v.ok for v in checks.values()) else 0)
