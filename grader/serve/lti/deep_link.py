"""Deep linking: an instructor's ``LtiDeepLinkingRequest`` kept server-side for the picker
(``lti_states``, an hour, used once), and the answer: pylti1p3's deep-linking response, a JWT
signed with the tool's key, carrying one ``ltiResourceLink`` to the launch URL whose custom
parameter ``assessment`` names the assessment picked, with its line item (label: the title,
scoreMaximum: its points, resourceId: its id) and its dates (``available.startDateTime``: when
it opens; ``submission.endDateTime``: its due date)."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import jwt
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException
from pylti1p3.lineitem import LineItem

from grader.db import Database

from . import keys
from .adapter import LAUNCH_DATA_S, LtiLaunch, parts
from .launch import Refused

SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
PREFIX = "dl-"


@dataclass(frozen=True)
class Choice:
    """An assessment as the picker offers it."""

    id: str
    title: str
    points: float
    opens: datetime
    due: datetime


@dataclass(frozen=True)
class Answer:
    """The signed response and where the browser posts it."""

    return_url: str
    origin: str             # the return URL's scheme://host[:port] (the page's form-action)
    jwt: str
    login: str              # the instructor who picked


class AssessmentLink(DeepLinkResource):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """An ``ltiResourceLink`` with the deep-linking spec's ``available`` and ``submission`` dates."""

    def __init__(self, opens: str, due: str) -> None:
        self._opens, self._due = opens, due

    def to_dict(self) -> dict[str, object]:
        d = super().to_dict()
        d["available"] = {"startDateTime": self._opens}
        d["submission"] = {"endDateTime": self._due}
        return dict(d)


def _iso(t: datetime) -> str:
    t = t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def keep(db: Database, claims: dict[str, Any], login: str) -> str:
    """The launch's claims kept for its picker: the launch id (random) naming them."""
    launch_id = secrets.token_urlsafe(24)
    _, _, session, _ = parts(db, {}, {}, False)
    session.storage.set_value(PREFIX + launch_id, {"claims": claims, "login": login}, LAUNCH_DATA_S)
    return launch_id


def kept(db: Database, launch_id: str) -> dict[str, Any] | None:
    """The claims of a deep-linking launch still waiting for its answer, or None."""
    _, _, session, _ = parts(db, {}, {}, False)
    value = session.storage.get_value(PREFIX + launch_id[:100])
    return value if isinstance(value, dict) else None


def answer(db: Database, launch_id: str, choice: Choice, launch_url: str, now: datetime) -> Answer:
    """The deep-linking response for ``choice`` (the launch's data used up: one answer per launch)."""
    request, conf, session, cookies = parts(db, {}, {}, False)
    value = session.storage.take(PREFIX + launch_id[:100])
    if not isinstance(value, dict):
        raise Refused(400, "deep_link_expired", "This page has expired (or was already used); add the assessment "
                                                "again from your course.")
    claims: dict[str, Any] = value["claims"]
    launch = LtiLaunch(request, conf, session, cookies)
    launch.set_launch_id(launch_id).set_auto_validation(False).set_jwt({"body": claims})
    try:
        launch.set_restored().validate_registration()
        deep = launch.get_deep_link()
    except LtiException as e:
        raise Refused(400, "deep_link_invalid", "This deep-linking request can no longer be answered (its "
                                                "platform's registration changed).", str(e)) from None
    settings = claims.get(SETTINGS) or {}
    url = settings.get("deep_link_return_url") if isinstance(settings, dict) else None
    parsed = urlsplit(url) if isinstance(url, str) else None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise Refused(400, "bad_message", "The deep-linking request carries no valid return URL.")
    item = (LineItem().set_label(choice.title).set_score_maximum(choice.points).set_resource_id(choice.id))
    link = (AssessmentLink(_iso(choice.opens), _iso(choice.due)).set_title(choice.title).set_url(launch_url)
            .set_custom_params({"assessment": choice.id}).set_lineitem(item))
    message = deep.get_message_jwt([link])
    with db.write() as conn:
        key = keys.signing_key(conn, now)
    token = jwt.encode(message, key.private_pem, algorithm="RS256", headers={"kid": key.kid})
    return Answer(str(url), f"{parsed.scheme}://{parsed.netloc}", token, str(value.get("login", "")))
