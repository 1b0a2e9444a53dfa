"""`grader demo seed`: a throwaway database with a small class (the bundled course), to see the
service's pages with data (docs/service.md, "A demo class in a minute")."""
from __future__ import annotations

import click


@click.group("demo")
def demo() -> None:
    """A demo class for the grading service: `grader demo seed --database demo.db`."""


@demo.command("seed")
@click.option("--database", "database", required=True, metavar="URL",
              help="A new SQLite file (demo.db) or an empty database's URL; one with accounts is refused.")
@click.option("--learners", type=click.IntRange(1, 500), default=30, show_default=True, help="Learners in the class.")
@click.option("--seed", "seed", type=int, default=17, show_default=True,
              help="The class drawn (names, abilities, answers, times): the same seed, the same class.")
def seed(database: str, learners: int, seed: int) -> None:
    """Seed DATABASE with the instructor `prof` and a class answering the bundled course
    (right, wrong, late and free-text answers, a timed quiz, extensions, reviews), played
    through the service's own code with a controlled clock. Prints what it made, the
    instructor's token and the command that serves it."""
    from grader.serve.demo import seed as seed_class
    made = seed_class(database, learners=learners, seed=seed)
    for line in made.lines(database):
        click.echo(line)
