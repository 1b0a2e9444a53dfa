"""`grader audit`: read the service's audit log (who did what, when, from where)."""
from __future__ import annotations

import json
import re

import click

from .db import DATABASE

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _plain(text: object) -> str:
    """A field on one terminal line: control characters (newlines, escapes) as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(text))


@click.command("audit")
@click.option("--since", default=None, metavar="WHEN", help="Only lines from WHEN on (ISO date or time, UTC).")
@click.option("--user", default=None, metavar="WHO", help="Only what WHO did (a login, or os:NAME for commands).")
@click.option("--action", default=None, metavar="ACTION",
              help="Only ACTION and its sub-actions (token: token.issued and token.revoked).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 1000), help="At most this many lines.")
@click.option("--offset", default=0, type=click.IntRange(0, 10**9), help="Skip the newest OFFSET lines.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: one line per entry; json: the page as /api/v1/audit gives it.")
@DATABASE
def audit(since: str | None, user: str | None, action: str | None, limit: int, offset: int, fmt: str,
          database: str | None) -> None:
    """The audit log, newest first: tokens issued and revoked, sign-ins and failed ones, failed
    API authentication, batches, regrades, reviews, exports, upgrades and backups."""
    from grader.db import Database, audit as log
    at = log.parse_since(since)
    d = Database(database)
    d.ensure_schema()
    with d.read() as conn:
        found = log.page(conn, since=at, actor=user, action=action, limit=limit, offset=offset)
    d.dispose()
    if fmt == "json":
        click.echo(json.dumps(found, ensure_ascii=False, indent=1))
        return
    for e in found["entries"]:
        detail = json.dumps(e["detail"], ensure_ascii=False, sort_keys=True) if e["detail"] is not None else ""
        click.echo(" ".join(_plain(x) for x in (e["at"], e["actor"] or "-", e["address"], e["action"],
                                                e["target"] or "-", detail)).rstrip())
    if found["next_offset"] is not None:
        click.echo(f"(more: --offset {found['next_offset']})", err=True)
