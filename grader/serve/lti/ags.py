"""LTI Advantage Assignment and Grade Services, the tool's side: the OAuth 2 access token
(client credentials with a JWT assertion signed by the tool's key), a line item per linked
assessment (found or created) and a score posted to it.

Written on httpx rather than pylti1p3's ``ServiceConnector``: that one caches a token forever
(never its ``expires_in``), sends without a timeout (an LMS that hangs would hang the sender),
lowercases the whole ``Link`` header (a case-sensitive next-page URL breaks) and raises one
exception for a refused request and a down LMS alike; the outbox must tell those apart (a 5xx
or a timeout is tried again, a 4xx that says the request is wrong is failed at once).

Every call here is blocking and made outside any database transaction (the outbox's sender,
in its own thread; NRPS's roster sync).
"""
from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx

SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
LINEITEM_READ = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
TAG = "grader"
TIMEOUT = httpx.Timeout(10.0, connect=5.0)
MAX_PAGES = 50          # pages of line items (or of a roster) followed, at most
MAX_MESSAGE = 300       # characters of an LMS's refusal kept


class ServiceError(Exception):
    """A call to the LMS that did not succeed: ``retry`` (the LMS is down, slow or overloaded:
    a transport error, a timeout, 5xx, 408, 429) or not (the request is wrong: the LMS's
    ``message``); ``status`` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, *, status: int | None = None, retry: bool = False) -> None:
        super().__init__(message)
        self.message, self.status, self.retry = message, status, retry


@dataclass(frozen=True)
class Endpoint:
    """What the tool needs to call one platform: its token URL, the client id it gave the tool,
    the audience of the assertion (default: the token URL)."""

    platform_id: int
    issuer: str
    client_id: str
    token_url: str
    token_audience: str | None = None


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_pem: str


def assertion(ep: Endpoint, key: SigningKey, now: datetime) -> str:
    """The client assertion (RFC 7523): iss = sub = the client id, aud = the token URL (or the
    platform's stated audience), 5 minutes valid, a fresh jti; signed RS256 with ``key``."""
    import jwt
    t = int(now.timestamp())
    claims = {"iss": ep.client_id, "sub": ep.client_id, "aud": ep.token_audience or ep.token_url,
              "iat": t, "exp": t + 300, "jti": "grader-" + uuid.uuid4().hex}
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})


def _message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for k in ("error_description", "message", "error", "detail", "reason"):
            if isinstance(body.get(k), str) and body[k]:
                return str(body[k])[:MAX_MESSAGE]
    text = resp.text.strip().replace("\n", " ")
    return text[:MAX_MESSAGE] or resp.reason_phrase


def check(resp: httpx.Response, what: str) -> httpx.Response:
    """``resp`` if it is a success; else a :class:`ServiceError` saying what was refused and why."""
    if resp.is_success:
        return resp
    code = resp.status_code
    retry = code >= 500 or code in (408, 429)
    raise ServiceError(f"{what}: HTTP {code}: {_message(resp)}", status=code, retry=retry)


def send(client: httpx.Client, method: str, url: str, what: str, **kw: Any) -> httpx.Response:
    """One request; a transport error or a timeout is a :class:`ServiceError` to retry."""
    try:
        resp = client.request(method, url, timeout=TIMEOUT, **kw)
    except httpx.TimeoutException:
        raise ServiceError(f"{what}: no answer from {_host(url)} within {TIMEOUT.read:g} s", retry=True) from None
    except httpx.TransportError as e:
        raise ServiceError(f"{what}: {_host(url)} cannot be reached ({type(e).__name__}: {e})"[:400],
                           retry=True) from None
    return check(resp, what)


def _host(url: str) -> str:
    return httpx.URL(url).host or url[:100]


class Tokens:
    """Access tokens per (platform, scopes), kept until shortly before they expire (thread-safe)."""

    MARGIN = timedelta(seconds=30)

    def __init__(self) -> None:
        self._cache: dict[tuple[int, tuple[str, ...]], tuple[str, datetime]] = {}
        self._lock = threading.Lock()

    def drop(self, ep: Endpoint, scopes: tuple[str, ...]) -> None:
        with self._lock:
            self._cache.pop((ep.platform_id, tuple(sorted(scopes))), None)

    def get(self, client: httpx.Client, ep: Endpoint, key: SigningKey, scopes: tuple[str, ...]) -> str:
        """A token for ``scopes``: the cached one, or a new one. Its times (the assertion's iat and
        exp, the token's expiry) are the system's clock: the platform's, not a course's clock."""
        now = datetime.now(timezone.utc)
        k = (ep.platform_id, tuple(sorted(scopes)))
        with self._lock:
            hit = self._cache.get(k)
        if hit is not None and hit[1] - self.MARGIN > now:
            return hit[0]
        data = {"grant_type": "client_credentials",
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": assertion(ep, key, now), "scope": " ".join(k[1])}
        resp = send(client, "POST", ep.token_url, "the token request", data=data,
                    headers={"Accept": "application/json"})
        try:
            body = resp.json()
            token = str(body["access_token"])
            life = int(body.get("expires_in") or 3600)
        except (ValueError, KeyError, TypeError):
            raise ServiceError("the token request: the platform's answer has no access_token") from None
        with self._lock:
            self._cache[k] = (token, now + timedelta(seconds=max(0, min(life, 24 * 3600))))
        return token


def _auth(token: str, accept: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": accept}


def next_link(resp: httpx.Response) -> str | None:
    """The ``Link: <...>; rel="next"`` URL of a page (httpx parses the header, case kept)."""
    nxt = resp.links.get("next")
    url = nxt.get("url") if nxt else None
    return str(url) if url else None


def find_lineitem(client: httpx.Client, token: str, lineitems_url: str, resource_id: str,
                  resource_link_id: str) -> str | None:
    """The line item of this assessment (``resourceId``) and link (``resourceLinkId``, where the
    platform gives one) in the context's line items, following pages (bounded)."""
    url: str | None = filtered(lineitems_url, resource_id=resource_id)
    for _ in range(MAX_PAGES):
        if url is None:
            return None
        resp = send(client, "GET", url, "listing the line items", headers=_auth(token, LINEITEMS_TYPE))
        try:
            items = resp.json()
        except ValueError:
            raise ServiceError("listing the line items: the answer is not JSON") from None
        if isinstance(items, dict):         # lti1p3platform's page shape: {"content": [...]}
            items = items.get("content") or items.get("lineItems") or []
        for it in items if isinstance(items, list) else []:
            if not isinstance(it, dict) or not it.get("id"):
                continue
            if str(it.get("resourceId") or "") == resource_id and \
                    str(it.get("resourceLinkId") or resource_link_id) == resource_link_id:
                return str(it["id"])
        url = next_link(resp)
    return None


def filtered(url: str, **params: str) -> str:
    """``url`` with ``params`` added to its own query (Moodle's service URLs carry ``type_id``)."""
    return str(httpx.URL(url).copy_merge_params(params))


def create_lineitem(client: httpx.Client, token: str, lineitems_url: str, *, label: str, score_maximum: float,
                    resource_id: str, resource_link_id: str) -> str:
    body = {"label": label[:200] or resource_id, "scoreMaximum": score_maximum, "resourceId": resource_id,
            "resourceLinkId": resource_link_id, "tag": TAG}
    resp = send(client, "POST", lineitems_url, "creating the line item", json=body,
                headers={**_auth(token, LINEITEM_TYPE), "Content-Type": LINEITEM_TYPE})
    try:
        out = resp.json()
        return str(out["id"])
    except (ValueError, KeyError, TypeError):
        raise ServiceError("creating the line item: the platform's answer has no id") from None


def scores_url(lineitem_url: str) -> str:
    """The line item's scores endpoint: its path + ``/scores``, its query kept."""
    u = httpx.URL(lineitem_url)
    return str(u.copy_with(path=u.path.rstrip("/") + "/scores"))


def timestamp(at: datetime) -> str:
    """ISO 8601 with milliseconds and the zone (what AGS asks), UTC."""
    at = at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def post_score(client: httpx.Client, token: str, lineitem_url: str, score: dict[str, Any]) -> None:
    send(client, "POST", scores_url(lineitem_url), "posting the score", json=score,
         headers={**_auth(token, "application/json"), "Content-Type": SCORE_TYPE})
