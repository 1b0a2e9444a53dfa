"""One module per ``grader`` subcommand; see :data:`grader.cli.COMMANDS`.

:func:`echo_errors` is the one way every command (and the CLI's edge) prints engine errors:
``error: file:line:column: message``, one line each, on standard error.
"""
from __future__ import annotations

from collections.abc import Iterable

import click

from grader.errors import GraderError, each


def echo_errors(errors: GraderError | Iterable[GraderError]) -> None:
    """Each error (an :class:`~grader.errors.ErrorList` stands for its errors) as ``error: ...``
    on standard error."""
    for err in [errors] if isinstance(errors, GraderError) else errors:
        for e in each(err):
            click.echo(f"error: {e}", err=True)
