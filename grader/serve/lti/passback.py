"""One passback of the outbox (:mod:`grader.serve.lti.outbox`): what to post, read from the
database (:meth:`Passback.prepare`: the platform, the line item, the learner's LTI user id and
grader's final score of the assessment), and the post itself (:meth:`Passback.post`: the
access token, the line item found or created, the score), outside any transaction."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy import select
from sqlalchemy.engine import Connection

from grader.db.models import LtiAccount, LtiContext, LtiLink, LtiOutbox, LtiPlatform

from . import ags
from .ags import Endpoint, ServiceError, SigningKey

if TYPE_CHECKING:
    from ..engine import Engine


@dataclass(frozen=True)
class Hidden:
    """The learner's scores of the assessment are not shown yet: wait ``until`` (None: a release)."""

    until: datetime | None


@dataclass
class Job:
    outbox_id: int
    link_id: int
    endpoint: Endpoint
    lineitem_url: str | None
    lineitems_url: str | None
    scopes: tuple[str, ...]
    resource_link_id: str
    assessment_id: str
    label: str
    score_maximum: float
    score: dict[str, Any] = field(default_factory=dict)
    created_lineitem: bool = False


def endpoint(p: Any) -> Endpoint:
    return Endpoint(p.id, p.issuer, p.client_id, p.token_url, p.token_audience)


def one(conn: Connection, model: Any, pk: int) -> Any:
    """The row of ``model`` whose id is ``pk`` (its columns by name)."""
    t = model.__table__
    return conn.execute(select(t).where(t.c.id == pk)).one()


def platform_of_context(conn: Connection, context_pk: int) -> tuple[Any, Any]:
    ctx = one(conn, LtiContext, context_pk)
    return ctx, one(conn, LtiPlatform, ctx.platform_id)


def final_score(conn: Connection, engine: Engine, policy: str, assessment_id: str, user_id: int,
                now: datetime) -> tuple[dict[str, Any], float] | Hidden:
    """The score fields of the learner's assessment (grader's gradebook total, its late penalty
    applied once, there) and its maximum; or :class:`Hidden` while the learner may not see it."""
    from ..assessbook import book, points
    from ..course import Times
    course = engine.course
    a = course.get(assessment_id) if course is not None else None
    if course is None or a is None:
        raise ServiceError(f"the assessment {assessment_id!r} is no longer in the course")
    times = Times.load(conn, user_id)
    if times.hidden(a, now, course) is not None:
        w = times.window(a, now)
        return Hidden(w.due + timedelta(seconds=1) if a.show == "after_due" and w.due > now else None)
    maximum = round(sum(points(engine, a).values()), 6)
    rows = book(conn, engine, a, policy, user_id)["rows"]
    if not rows:
        raise ServiceError("this user is not a learner: no score to post")
    row = rows[0]
    cells = row["problems"]
    if not cells:
        return {"activityProgress": "Initialized", "gradingProgress": "NotReady"}, maximum
    pending = any(c.get("pending") for c in cells.values())
    return {"scoreGiven": float(row["total"] or 0), "scoreMaximum": maximum,
            "activityProgress": "Completed" if len(cells) == len(a.items) else "Submitted",
            "gradingProgress": "PendingManual" if pending else "FullyGraded"}, maximum


class Passback:
    """The HTTP side of the outbox: one ``httpx.Client`` (reused connections), access tokens
    cached per platform and scopes until they expire; ``key()``: the tool's signing key."""

    def __init__(self, key: Callable[[], SigningKey], client: httpx.Client | None = None) -> None:
        self.key = key
        self.client = client or httpx.Client(follow_redirects=False, headers={"User-Agent": "grader-lti"})
        self.tokens = ags.Tokens()

    def close(self) -> None:
        self.client.close()

    def prepare(self, conn: Connection, engine: Engine, policy: str, outbox_id: int,
                now: datetime) -> Job | Hidden:
        row = one(conn, LtiOutbox, outbox_id)
        link = one(conn, LtiLink, row.link_id)
        ctx, p = platform_of_context(conn, link.context_pk)
        subject = conn.execute(select(LtiAccount.subject).where(LtiAccount.user_id == row.user_id,
                                                                LtiAccount.issuer == p.issuer)).scalar()
        if subject is None:
            raise ServiceError(f"the learner has no account on {p.issuer} (no launch or roster sync named them)")
        if not link.lineitem_url and not ctx.lineitems_url:
            raise ServiceError("the LMS course gave no line items URL and the link no line item: the platform "
                               "does not offer Assignment and Grade Services to this tool")
        got = final_score(conn, engine, policy, row.assessment_id, row.user_id, now)
        if isinstance(got, Hidden):
            return got
        fields, maximum = got
        a = engine.course.get(row.assessment_id) if engine.course is not None else None
        granted = tuple(ctx.ags_scopes or (ags.SCORE, ags.LINEITEM))
        job = Job(outbox_id, link.id, endpoint(p), link.lineitem_url, ctx.lineitems_url, granted,
                  link.resource_link_id, row.assessment_id, a.title if a is not None else row.assessment_id, maximum)
        job.score = {"userId": subject, **fields, "timestamp": ags.timestamp(row.timestamp)}
        return job

    def _token(self, job: Job, scopes: tuple[str, ...], now: datetime) -> str:
        return self.tokens.get(self.client, job.endpoint, self.key(), scopes)

    def _call(self, job: Job, scopes: tuple[str, ...], now: datetime, fn: Callable[[str], Any]) -> Any:
        """``fn(token)``; a 401 with a cached token: the token is fetched anew, once."""
        try:
            return fn(self._token(job, scopes, now))
        except ServiceError as e:
            if e.status != 401:
                raise
            self.tokens.drop(job.endpoint, scopes)
            return fn(self._token(job, scopes, now))

    def lineitem(self, job: Job, now: datetime) -> str:
        if job.lineitem_url:
            return job.lineitem_url
        assert job.lineitems_url is not None
        can_create = ags.LINEITEM in job.scopes
        scopes = (ags.LINEITEM if can_create else ags.LINEITEM_READ,)
        found = self._call(job, scopes, now, lambda t: ags.find_lineitem(
            self.client, t, str(job.lineitems_url), job.assessment_id, job.resource_link_id))
        if found is None:
            if not can_create:
                raise ServiceError("no line item for this assessment, and the platform does not let the tool "
                                   "create one (no lineitem scope)")
            found = self._call(job, scopes, now, lambda t: ags.create_lineitem(
                self.client, t, str(job.lineitems_url), label=job.label, score_maximum=job.score_maximum,
                resource_id=job.assessment_id, resource_link_id=job.resource_link_id))
        job.lineitem_url, job.created_lineitem = found, True
        return str(found)

    def post(self, job: Job, now: datetime) -> None:
        url = self.lineitem(job, now)
        self._call(job, (ags.SCORE,), now, lambda t: ags.post_score(self.client, t, url, job.score))
