"""`grader exercises`: list the exercise bank."""
from __future__ import annotations

import json
import sys

from typing import Any

import click


@click.command("exercises")
@click.option("--exercises", type=click.Path(exists=True, dir_okay=True, file_okay=True), default=None,
              help="Exercise bank: a YAML file or a folder of them (default: the bundled bank).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="A table (id, kind, points, prompt with the options of a choice and what the answer must be), "
                   "or JSON: a list of {id, title, assessment, kind, points, prompt, source, variant, choices, unit, answer_as}.")
@click.option("--learner", default=None, metavar="ID",
              help="Show each variant problem as this learner gets it: the prompt with the learner's own "
                   "numbers, the same that `grader grade` uses for that learner id.")
@click.option("--assessments", "course_file", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE",
              help="The course's assessments file to check against the bank (default: the bank folder's "
                   "assessments.yaml, if there is one); every error is printed at file:line, exit 2.")
@click.option("--verify", is_flag=True,
              help="Also verify every reference against the spec and the real mha (imports torch), "
                   "and exit 1 if one is wrong.")
def exercises(exercises: str | None, fmt: str, learner: str | None, course_file: str | None, verify: bool) -> None:
    """List the problems of the exercise bank: id, kind, points and prompt, with the options
    of a choice question (their letters) and what an answer must be (the units asked for).

    A variant problem draws its numbers per learner ("d_model = {d}, h = {h}"); with
    --learner ID its prompt is shown with that learner's numbers.

    The course's assessments file (the bank folder's assessments.yaml, or --assessments FILE)
    is checked too; with it, the list says which assessment holds each problem.
    """
    from grader.api import load_bank, load_course, verify_reference
    from grader.errors import GraderError

    from . import echo_errors

    ctx = click.get_current_context()
    try:
        bank = load_bank(exercises)
        course = load_course(bank, course_file)
    except GraderError as e:
        echo_errors(e)
        ctx.exit(2)
    held = {pid: a.id for a in course.assessments for pid in a.problem_ids} if course else {}
    if learner is not None and not learner.strip():
        raise click.BadParameter("a learner id is needed", param_hint="--learner")
    checks = {p.id: verify_reference(p, bank) for p in bank} if verify else {}
    seen = {p.id: _as_seen(p, learner.strip(), bank) for p in bank if p.variant} if learner else {}
    if fmt == "json":
        rows = [{"id": p.id, "title": p.title, "assessment": held.get(p.id), "kind": p.kind, "points": p.points, "prompt": seen[p.id][0] if p.id in seen else p.prompt,
                 "source": p.source, "variant": dict(p.variant.choose) if p.variant else None,
                 "choices": [{"letter": k, "text": t} for k, t in p.choices] if p.choices else None,
                 "unit": p.unit, "answer_as": _answer_as(p),
                 **({"learner": learner.strip(), "drawn": seen[p.id][1] if p.id in seen else None} if learner else {}),
                 **({"verified": checks[p.id].ok, "verification": checks[p.id].message} if verify else {})}
                for p in bank]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        from rich.console import Console
        from rich.table import Table
        title = f"{len(bank)} problems" + (f", as learner {learner.strip()!r} gets them" if learner else "")
        if course is not None:
            title += f"; {len(course.assessments)} assessments (course time zone {course.timezone})"
        table = Table("id", *(["assessment"] if course is not None else []), "kind", "points", "prompt", *(["verified"] if verify else []), title=title,
                      show_lines=False)
        for p in bank:
            extra = [("ok" if checks[p.id].ok else "WRONG: " + checks[p.id].message)] if verify else []
            if p.id in seen:
                prompt, drawn = seen[p.id]
                prompt += f" (your variant: {_name(drawn)})" if isinstance(drawn, dict) else f" ({drawn})"
            else:
                prompt = p.prompt + (" (variant per learner: see --learner)" if p.variant else "")
            prompt += "".join(f"\n  {k}) {t}" for k, t in p.choices)
            asks = _answer_as(p)
            if asks:
                prompt += f"\n  answer: {asks}"
            table.add_row(p.id, *([held.get(p.id, "")] if course is not None else []), p.kind, f"{p.points:g}",
                          prompt, *extra)
        Console(file=sys.stdout, width=None if sys.stdout.isatty() else 160, soft_wrap=False).print(table)
    ctx.exit(1 if verify and not all(v.ok for v in checks.values()) else 0)


def _as_seen(problem: Any, learner: str, bank: Any) -> tuple[str, Any]:
    """(prompt with the learner's numbers, {name: value} drawn), as `grader grade` draws them;
    a variant that cannot be derived gives the template and why."""
    from grader.api import learner_variant
    try:
        return learner_variant(problem, learner, bank)
    except Exception as e:  # the bank's fault, shown, not raised: the other problems still list
        return problem.prompt, f"the variant cannot be derived: {e}"


UNIT_WORDS = {"byte": "an amount of data with its unit: bytes, kB, MB, GB (10³ⁿ) or KiB, MiB, GiB (2¹⁰ⁿ)",
              "second": "a time with its unit: s, ms, µs, min, h",
              "flop": "a number of operations with its unit: FLOPs, GFLOPs, ..."}


def _answer_as(problem: Any) -> str | None:
    """What the answer must be, in words (the units a quantity asks for; the letter of a choice)."""
    if problem.kind == "quantity":
        unit = problem.unit or "byte"
        return UNIT_WORDS.get(unit, f"a quantity in {unit} or a compatible unit")
    if problem.kind == "choice" and problem.choices:
        return f"the letter of one option ({', '.join(k for k, _ in problem.choices)})"
    return None


def _name(drawn: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in drawn.items())
