"""`grader lti outbox` and `grader lti roster`: the grade passbacks to the LMSs (pending, held
or failed; resend failed ones: the running service's sender posts them) and a roster sync of an
LMS course (Names and Role Provisioning). Two click commands, attached to the `grader lti`
group (grader/commands/lti.py) with ``add_command``; each action is a line of the audit log."""
from __future__ import annotations

from typing import Any

import click

from .db import DATABASE


def _db(database: str | None) -> Any:
    from grader.db import Database
    d = Database(database)
    d.ensure_schema()
    return d


@click.command("outbox")
@click.option("--resend", "resend_ids", multiple=True, type=int, metavar="ID",
              help="Send this failed passback again (repeatable).")
@click.option("--all-failed", is_flag=True, help="Send every failed passback again.")
@DATABASE
def outbox(resend_ids: tuple[int, ...], all_failed: bool, database: str | None) -> None:
    """The grade passbacks not sent yet or failed; --resend ID / --all-failed send failed ones again."""
    from grader.db import audit
    from grader.db.models import now
    from grader.serve.lti.outbox import listing, resend
    d = _db(database)
    try:
        if resend_ids or all_failed:
            with d.write() as conn:
                n = resend(conn, None if all_failed else list(resend_ids), now(), actor=audit.operator())
            if resend_ids and not all_failed and n < len(set(resend_ids)):
                raise click.ClickException(f"{len(set(resend_ids)) - n} of the ids given are not failed passbacks "
                                           f"(resent: {n})")
            click.echo(f"{n} passback(s) pending again: the running service sends them")
            return
        with d.read() as conn:
            rows = listing(conn)
    finally:
        d.dispose()
    if not rows:
        click.echo("nothing pending or failed")
        return
    for r in rows:
        shown = "" if r["status"] != "pending" else f" next {r['next_at']}"
        why = f"  {r['error']}" if r["error"] else ""
        click.echo(f"{r['id']:>6}  {r['status']:<8} {r['learner']}  {r['assessment']}  ({r['context']}, "
                   f"{r['cause']}, {r['attempts']} tries{shown}){why}")


@click.command("roster")
@click.argument("context")
@DATABASE
def roster(context: str, database: str | None) -> None:
    """Sync the roster of the LMS course CONTEXT (its LMS id, or its row id in `grader lti list`)."""
    from grader.db import audit
    from grader.db.models import now
    from grader.serve.lti.ags import ServiceError, SigningKey, Tokens
    from grader.serve.lti.keys import signing_key
    from grader.serve.lti.nrps import find_context, sync
    from grader.serve.lti.passback import Passback
    d = _db(database)

    def key() -> SigningKey:
        with d.write() as conn:
            k = signing_key(conn, now())
        return SigningKey(k.kid, k.private_pem)
    pb = Passback(key)
    try:
        with d.read() as conn:
            pk = find_context(conn, context)
        out = sync(d, pk, client=pb.client, tokens=Tokens(), key=key, now=now(), actor=audit.operator())
    except ServiceError as e:
        raise click.ClickException(e.message) from None
    finally:
        pb.close()
        d.dispose()
    click.echo(f"{out.context}: {out.members} member(s) read in {out.pages} page(s), {out.created} new user(s), "
               f"{out.removed} no longer active, {out.skipped} left out (roles grader does not map)")
