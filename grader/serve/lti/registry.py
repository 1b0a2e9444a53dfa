"""The platforms (LMSs) this tool trusts, and what to paste into them.

A platform is an issuer (the LMS's URL, the ``iss`` of its messages) and the client id it gave
this tool, with its OIDC authorisation URL (``login_url``), OAuth 2 token URL and key set URL;
a launch must also name one of its deployment ids. One issuer may register the tool several
times (several client ids: e.g. a test and a production developer key).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, insert, select

from grader.db.models import LtiDeployment, LtiPlatform, now

MAX_ID = 255


class LtiError(Exception):
    """Bad registration input (``where``: the option or field; ``message``: what is wrong)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.message, self.where = message, where


@dataclass(frozen=True)
class Platform:
    id: int
    issuer: str
    client_id: str
    name: str
    login_url: str
    token_url: str
    keyset_url: str
    token_audience: str | None
    deployments: tuple[str, ...]


def check_url(url: str, where: str) -> str:
    """An absolute http(s) URL with a host (plain http only for a loopback host, as in tests)."""
    parts = urlsplit(url.strip())
    if len(url) > 1000 or parts.scheme not in ("https", "http") or not parts.hostname:
        raise LtiError(f"{url[:80]!r} is not an absolute https:// URL", where)
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise LtiError(f"{url[:80]!r} is plain http: only https is accepted (but for 127.0.0.1/localhost)", where)
    return url.strip()


def check_public_url(url: str, where: str = "--public-url") -> str:
    """The tool's public base URL (``grader serve --public-url``): what :func:`check_url` accepts,
    with no user information, query or fragment; without its trailing ``/``."""
    base = check_url(url, where)
    parts = urlsplit(base)
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment \
            or "?" in base or "#" in base:
        raise LtiError(f"{url[:80]!r} has a user, a query or a fragment: give the base URL alone "
                       f"(https://grader.example.edu, or with a path prefix)", where)
    try:
        parts.port
    except ValueError:
        raise LtiError(f"{url[:80]!r} has an invalid port", where) from None
    return base.rstrip("/")


def check_id(value: str, where: str) -> str:
    v = value.strip()
    if not v or len(v) > MAX_ID or any(ord(c) < 32 for c in v):
        raise LtiError(f"must be 1 to {MAX_ID} printable characters", where)
    return v


def _platform(conn: Connection, row: Any) -> Platform:
    deps = conn.execute(select(LtiDeployment.deployment_id).where(LtiDeployment.platform_id == row.id)
                        .order_by(LtiDeployment.id)).scalars().all()
    return Platform(row.id, row.issuer, row.client_id, row.name, row.login_url, row.token_url, row.keyset_url,
                    row.token_audience, tuple(deps))


def add_platform(conn: Connection, *, issuer: str, client_id: str, login_url: str, token_url: str,
                 keyset_url: str, deployments: Sequence[str], name: str = "",
                 token_audience: str | None = None) -> Platform:
    """Register a platform (issuer + client id, once) with its deployment ids."""
    issuer = check_url(issuer, "issuer") if issuer.startswith("http") else check_id(issuer, "issuer")
    if len(issuer) > MAX_ID:
        raise LtiError(f"an issuer is at most {MAX_ID} characters", "issuer")
    client_id = check_id(client_id, "--client-id")
    values = dict(issuer=issuer, client_id=client_id, name=name.strip()[:200],
                  login_url=check_url(login_url, "--login-url"), token_url=check_url(token_url, "--token-url"),
                  keyset_url=check_url(keyset_url, "--keyset-url"),
                  token_audience=check_url(token_audience, "--token-audience") if token_audience else None)
    deps = [check_id(d, "--deployment") for d in deployments]
    if not deps:
        raise LtiError("give at least one deployment id (the LMS shows it once the tool is deployed)", "--deployment")
    if find(conn, issuer, client_id) is not None:
        raise LtiError(f"{issuer} with client id {client_id} is already registered "
                       "(add a deployment with `grader lti add-deployment`)", "issuer")
    key = conn.execute(insert(LtiPlatform).values(**values, created_at=now())).inserted_primary_key
    assert key is not None
    pid = key[0]
    for d in dict.fromkeys(deps):
        conn.execute(insert(LtiDeployment).values(platform_id=pid, deployment_id=d, created_at=now()))
    p = find(conn, issuer, client_id)
    assert p is not None
    return p


def add_deployment(conn: Connection, issuer: str, client_id: str | None, deployment_id: str) -> Platform:
    p = find(conn, issuer, client_id)
    if p is None:
        raise LtiError(f"no platform {issuer}" + (f" with client id {client_id}" if client_id else
                                                   " (or several: give --client-id)"), "issuer")
    d = check_id(deployment_id, "deployment")
    if d not in p.deployments:
        conn.execute(insert(LtiDeployment).values(platform_id=p.id, deployment_id=d, created_at=now()))
    found = find(conn, p.issuer, p.client_id)
    assert found is not None
    return found


def platforms(conn: Connection) -> list[Platform]:
    return [_platform(conn, r) for r in conn.execute(select(LtiPlatform).order_by(LtiPlatform.id))]


def find(conn: Connection, issuer: str, client_id: str | None) -> Platform | None:
    """The platform of ``issuer`` and ``client_id``; without a client id, the issuer's only one
    (None when it has none or several)."""
    q = select(LtiPlatform).where(LtiPlatform.issuer == issuer)
    if client_id is not None:
        q = q.where(LtiPlatform.client_id == client_id)
    rows = conn.execute(q.limit(2)).all()
    return _platform(conn, rows[0]) if len(rows) == 1 else None


def get(conn: Connection, platform_id: int) -> Platform | None:
    row = conn.execute(select(LtiPlatform).where(LtiPlatform.id == platform_id)).first()
    return _platform(conn, row) if row is not None else None


SCOPES = ("https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
          "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
          "https://purl.imsglobal.org/spec/lti-ags/scope/score",
          "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")


def tool_configuration(base_url: str, title: str = "grader", *, check: bool = True) -> dict[str, Any]:
    """What an LMS asks for when the tool is registered: the URLs (login, launch, key set, deep
    linking), the services' scopes and the placements; Canvas's "LTI key JSON" shape, whose
    fields also name what Moodle's external tool form asks."""
    base = (check_url(base_url, "--url") if check else base_url).rstrip("/")
    host = urlsplit(base).hostname or ""
    launch = f"{base}/lti/launch"
    return {
        "title": title,
        "description": "Graded exercises on the math of transformers: answers, code and assessments, "
                       "with feedback; grades sent back to the LMS.",
        "oidc_initiation_url": f"{base}/lti/login",
        "target_link_uri": launch,
        "redirect_uris": [launch],
        "public_jwk_url": f"{base}/.well-known/jwks.json",
        "deep_linking_url": launch,
        "scopes": list(SCOPES),
        "extensions": [{
            "platform": "canvas.instructure.com",
            "domain": host,
            "privacy_level": "public",
            "settings": {"placements": [
                {"placement": "link_selection", "message_type": "LtiDeepLinkingRequest",
                 "target_link_uri": launch, "text": title},
                {"placement": "assignment_selection", "message_type": "LtiDeepLinkingRequest",
                 "target_link_uri": launch, "text": title},
            ]},
        }],
        "custom_fields": {},
    }


__all__ = ["LtiError", "Platform", "add_platform", "add_deployment", "platforms", "find", "get",
           "tool_configuration", "SCOPES", "check_url", "check_public_url"]
