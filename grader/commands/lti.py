"""`grader lti`: register the LMS platforms that launch grader (LTI 1.3), see them, rotate the
tool's keys, print the tool's configuration to paste into the LMS. Each change is a line of
the audit log."""
from __future__ import annotations

import json
from typing import Any

import click

from .db import DATABASE


def _db(database: str | None) -> Any:
    from grader.db import Database
    d = Database(database)
    d.ensure_schema()
    return d


def _fail(e: Exception) -> click.ClickException:
    return click.ClickException(str(e))


@click.group("lti")
def lti() -> None:
    """LTI 1.3: `add-platform`, `add-deployment`, `list`, `keys`, `config`; `outbox`, `roster`."""


@lti.command("add-platform")
@click.argument("issuer")
@click.option("--client-id", required=True, help="The client id the LMS gave this tool (Canvas: the developer key's id).")
@click.option("--login-url", required=True, metavar="URL", help="The platform's OIDC authorisation URL.")
@click.option("--token-url", required=True, metavar="URL", help="The platform's OAuth 2 token URL (grades, rosters).")
@click.option("--keyset-url", required=True, metavar="URL", help="The platform's public key set (JWKS) URL.")
@click.option("--deployment", "deployments", multiple=True, metavar="ID",
              help="A deployment id the LMS shows once the tool is deployed (repeat for several).")
@click.option("--name", default="", help="A name for staff pages (e.g. 'Canvas, production').")
@click.option("--token-audience", default=None, metavar="URL",
              help="The audience of the token request's assertion when it is not the token URL (Moodle, Brightspace).")
@DATABASE
def add_platform(issuer: str, client_id: str, login_url: str, token_url: str, keyset_url: str,
                 deployments: tuple[str, ...], name: str, token_audience: str | None, database: str | None) -> None:
    """Trust the platform ISSUER (its messages' `iss`) with this client id and deployments."""
    from grader.db import audit
    from grader.serve.lti import registry
    d = _db(database)
    try:
        with d.write() as conn:
            p = registry.add_platform(conn, issuer=issuer, client_id=client_id, login_url=login_url,
                                      token_url=token_url, keyset_url=keyset_url, deployments=deployments,
                                      name=name, token_audience=token_audience)
            audit.write(conn, "lti.platform", actor=audit.operator(), target=f"{p.issuer} {p.client_id}",
                        detail={"deployments": list(p.deployments), "name": p.name})
    except registry.LtiError as e:
        raise _fail(e) from None
    finally:
        d.dispose()
    click.echo(f"platform {p.id}: {p.issuer} (client id {p.client_id}), deployments: {', '.join(p.deployments)}")


@lti.command("add-deployment")
@click.argument("issuer")
@click.argument("deployment")
@click.option("--client-id", default=None, help="Which registration of ISSUER, when it has several.")
@DATABASE
def add_deployment(issuer: str, deployment: str, client_id: str | None, database: str | None) -> None:
    """Accept launches from DEPLOYMENT of the platform ISSUER as well."""
    from grader.db import audit
    from grader.serve.lti import registry
    d = _db(database)
    try:
        with d.write() as conn:
            p = registry.add_deployment(conn, issuer, client_id, deployment)
            audit.write(conn, "lti.deployment", actor=audit.operator(), target=f"{p.issuer} {p.client_id}",
                        detail={"deployment": deployment})
    except registry.LtiError as e:
        raise _fail(e) from None
    finally:
        d.dispose()
    click.echo(f"platform {p.id}: {p.issuer} (client id {p.client_id}), deployments: {', '.join(p.deployments)}")


@lti.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@DATABASE
def list_platforms(fmt: str, database: str | None) -> None:
    """The registered platforms, their endpoints and deployments."""
    from dataclasses import asdict

    from grader.serve.lti import registry
    d = _db(database)
    try:
        with d.read() as conn:
            ps = registry.platforms(conn)
    finally:
        d.dispose()
    if fmt == "json":
        click.echo(json.dumps([asdict(p) for p in ps], indent=2))
        return
    if not ps:
        click.echo("no platform registered (grader lti add-platform ISSUER --client-id ... )")
    for p in ps:
        click.echo(f"{p.id}  {p.issuer}  client id {p.client_id}" + (f"  ({p.name})" if p.name else ""))
        click.echo(f"    login {p.login_url}\n    token {p.token_url}\n    keys  {p.keyset_url}")
        click.echo(f"    deployments: {', '.join(p.deployments)}")


@lti.command("keys")
@click.option("--rotate", is_flag=True, help="Make a new signing key; the old one is still served --overlap-days.")
@click.option("--overlap-days", default=7, show_default=True, type=click.IntRange(0, 365),
              help="How long a retired key stays in the key set.")
@DATABASE
def keys_command(rotate: bool, overlap_days: int, database: str | None) -> None:
    """The tool's RSA keys (the newest not retired signs); --rotate makes a new one."""
    from datetime import timedelta

    from grader.db import audit
    from grader.db.models import now
    from grader.serve.lti import keys
    d = _db(database)
    try:
        with d.write() as conn:
            if rotate:
                k = keys.rotate(conn, now(), timedelta(days=overlap_days))
                audit.write(conn, "lti.keys", actor=audit.operator(), target=k.kid,
                            detail={"rotated": True, "overlap_days": overlap_days})
            else:
                keys.signing_key(conn, now())                   # the first key, made on first use
            all_keys = keys.keys(conn)
    finally:
        d.dispose()
    for k in all_keys:
        status = "signing" if k.retired_at is None else f"retired {k.retired_at:%Y-%m-%d %H:%M}, served until " \
                                                         f"{k.expires_at:%Y-%m-%d %H:%M}" if k.expires_at else "retired"
        click.echo(f"{k.kid}  RSA {k.created_at:%Y-%m-%d %H:%M}  {status}")


@lti.command("config")
@click.option("--url", "url", required=True, metavar="BASE",
              help="The address learners reach grader at (https://grader.example.edu).")
@click.option("--title", default="grader", show_default=True, help="The tool's name in the LMS.")
def config(url: str, title: str) -> None:
    """The tool's configuration (JSON): login, launch, key set and deep-linking URLs, scopes,
    placements; paste it into Canvas's developer key (LTI key, paste JSON) or copy its URLs into
    Moodle's external tool form. `GET /lti/config.json` serves the same."""
    from grader.serve.lti import registry
    try:
        click.echo(json.dumps(registry.tool_configuration(url, title), indent=2))
    except registry.LtiError as e:
        raise _fail(e) from None


# grade passbacks and rosters (LTI Advantage services): grader/commands/lti_outbox.py
from .lti_outbox import outbox, roster  # noqa: E402

lti.add_command(outbox)
lti.add_command(roster)
