"""The ``grader`` command: a thin click shell over the engine.

Each subcommand lives in :mod:`grader.commands` and is imported only when it
runs, so ``grader --help`` and commands that need no torch never import it.
Engine errors (:class:`grader.errors.GraderError`) are turned into one-line
messages here, at the edge, with exit status 2.
"""
from __future__ import annotations

import importlib
import sys

import click

from . import __version__
from .errors import GraderError

# name -> (module, attribute, one-line help shown by `grader --help`)
COMMANDS = {
    "check-spec": ("grader.commands.check_spec", "check_spec", "Check every claim of a spec: holds or refuted, with evidence."),
    "draft": ("grader.commands.draft", "draft", "Draft a spec skeleton from course texts, for the author to review."),
    "check-text": ("grader.commands.check_text", "check_text", "Check a text's own arithmetic, totals and shapes, with no spec."),
    "grade": ("grader.commands.grade", "grade", "Grade learner answer files against the exercise bank."),
    "exercises": ("grader.commands.exercises", "exercises", "List the exercise bank."),
    "serve": ("grader.commands.serve", "serve", "Run the grading service: an HTTP API over the same engine."),
    "users": ("grader.commands.users", "users", "Accounts and tokens of the grading service."),
    "db": ("grader.commands.db", "db", "The grading service's database: migrations and backups."),
    "audit": ("grader.commands.audit", "audit", "The grading service's audit log: who did what, when, from where."),
    "demo": ("grader.commands.demo", "demo", "A throwaway database with a demo class, to see the service's pages."),
    "extensions": ("grader.commands.extensions", "extensions", "Extensions of assessments' due dates, per learner."),
    "lti": ("grader.commands.lti", "lti", "LTI 1.3: the LMS platforms that launch grader, the tool's keys and configuration."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def cli() -> None:
    """Check the math claims of transformer course texts against a real
    multi-head attention, and grade learners' answers with the same engine.

    \b
    Course authors:  grader check-spec            (the bundled subjects, spec/)
    Learners/staff:  grader grade answers.yaml
                     grader exercises
    Service:         grader serve                (grader users, grader db)
    """


def report_error(err: GraderError) -> None:
    from .commands import echo_errors
    echo_errors(err)


def main(argv: list[str] | None = None) -> None:
    try:
        rv = cli.main(args=argv, prog_name="grader", standalone_mode=False)
    except GraderError as e:
        report_error(e)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code == 1 else e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
