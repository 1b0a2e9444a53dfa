"""One module per ``grader`` subcommand; see :data:`grader.cli.COMMANDS`.

:func:`echo_errors` is the one way every command (and the CLI's edge) prints engine errors:
``error: file:line:column: message``, one line each, on standard error.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from grader.errors import GraderError, each


def echo_errors(errors: GraderError | Iterable[GraderError]) -> None:
    """Each error (an :class:`~grader.errors.ErrorList` stands for its errors) as ``error: ...``
    on standard error."""
    for err in [errors] if isinstance(errors, GraderError) else errors:
        for e in each(err):
            click.echo(f"error: {e}", err=True)


F = TypeVar("F", bound=Callable[..., Any])


def scheduler_option(help: str) -> Callable[[F], F]:
    """The ``--scheduler ADDR`` option of grade, check-spec and serve: the address checked
    (:func:`grader.api.check_scheduler`) before anything is read or started; a malformed one
    is a usage error (exit 2) that says what is wrong."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from grader.api import ClusterError, check_scheduler
        try:
            check_scheduler(value)
        except ClusterError as e:
            raise click.UsageError(e.message, ctx) from None
        return value

    return click.option("--scheduler", default=None, metavar="ADDR", callback=check, help=help)
