"""pylti1p3 on FastAPI: the library's request, cookie, session (launch-data storage), redirect
and tool-configuration interfaces, the way its Django and Flask adapters implement them.

- :class:`LtiRequest`: the launch's parameters (query and form) and cookies, read once by the
  route (pylti1p3 asks for them synchronously).
- :class:`LtiCookies`: the OIDC login's state cookie (``lti1p3-<state>``, path ``/lti``,
  httpOnly): ``SameSite=None; Secure`` over HTTPS, where the platform's cross-site form POST
  must carry it; ``SameSite=Lax`` over plain HTTP (a browser drops ``SameSite=None`` without
  ``Secure``), where the state stored server-side is what the launch checks. The state is
  stored bound to its login's nonce and platform: a launch must bring the nonce of its own
  state's login, from that login's platform;
  over HTTPS, the cookie is required too (the launch comes from the browser that logged in).
- :class:`DbStorage`: pylti1p3's launch-data storage in the ``lti_states`` table (every key
  expires; one global namespace, shared by every instance on the database: no session cookie).
- :class:`DbToolConf`: the platforms and deployments registered (``grader lti add-platform``)
  read from the database through :mod:`.registry`.
- :class:`LtiLogin` / :class:`LtiLaunch`: pylti1p3's ``OIDCLogin`` and ``MessageLaunch`` on these.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import jwt
import requests

from pylti1p3.cookie import CookieService
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException
from pylti1p3.launch_data_storage.base import LaunchDataStorage
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.registration import Registration
from pylti1p3.request import Request
from pylti1p3.session import SessionService
from pylti1p3.tool_config.abstract import ToolConfAbstract
from sqlalchemy import delete, insert, select
from starlette.responses import RedirectResponse, Response

from grader.db import Database
from grader.db.models import LtiState

from . import logins, registry

COOKIE_PREFIX = "lti1p3"
LOGIN_S = 600           # a login's state and nonce are good for 10 minutes
LAUNCH_DATA_S = 3600    # a deep-linking launch's data, for its picker: an hour
KEYSET_TIMEOUT_S = 10   # fetching a platform's key set
MAX_KEYSET = 256 * 1024  # a key set is a few kB: a longer answer is refused, never read whole
KEYSET_CACHE_S = 300    # a platform's key set is kept (lti_states, every instance) for 5 minutes ...
KEYSET_REFRESH_S = 30   # ... and read again sooner for a kid it lacks, but at most every 30 s
LEEWAY_S = 60          # clock skew allowed on the id_token's exp, iat and nbf (LMSs' clocks drift)
MAX_PARAM = 20_000      # an id_token is a few kB; anything longer is cut (then refused as malformed)


class LtiRequest(Request):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """One HTTP request as pylti1p3 reads it."""

    def __init__(self, params: Mapping[str, str], cookies: Mapping[str, str], secure: bool) -> None:
        self._params = {str(k): str(v)[:MAX_PARAM] for k, v in params.items()}
        self._cookies = dict(cookies)
        self._secure = secure

    @property
    def session(self) -> None:          # no framework session: the storage is the database
        return None

    def is_secure(self) -> bool:
        return self._secure

    def get_param(self, key: str) -> str:
        return self._params.get(key, "")

    def get_cookie(self, key: str) -> str | None:
        return self._cookies.get(key)


class LtiCookies(CookieService):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """The cookies pylti1p3 reads and sets (``lti1p3-`` + name); :meth:`apply` writes the ones set."""

    def __init__(self, request: LtiRequest) -> None:
        self._request = request
        self._to_set: dict[str, tuple[str, int | None]] = {}
        self.states: list[str] = []      # the OIDC states set at this login (stored server-side too)

    def get_cookie(self, name: str) -> str | None:
        return self._request.get_cookie(f"{COOKIE_PREFIX}-{name}")

    def set_cookie(self, name: str, value: str | int, exp: int | None = 3600) -> None:
        if name.startswith("state-"):
            self.states.append(name)
        self._to_set[f"{COOKIE_PREFIX}-{name}"] = (str(value), exp)

    def apply(self, response: Response) -> None:
        secure = self._request.is_secure()
        for key, (value, exp) in self._to_set.items():
            response.set_cookie(key, value, max_age=exp, path="/lti", httponly=True, secure=secure,
                                samesite="none" if secure else "lax")


class DbStorage(LaunchDataStorage[Any]):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """Launch data, nonces and states in ``lti_states``: ``key`` -> JSON until ``expires_at``."""

    _session_cookie_name = ""           # no per-browser namespace: keys are random and global

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._db, self._clock = db, clock

    def can_set_keys_expiration(self) -> bool:
        return True

    def get_value(self, key: str) -> Any:
        with self._db.read() as conn:
            row = conn.execute(select(LtiState.value).where(LtiState.key == self._prepare_key(key)[:255],
                                                           LtiState.expires_at > self._clock())).first()
        return row.value if row else None

    def set_value(self, key: str, value: Any, exp: int | None = None) -> None:
        k, now = self._prepare_key(key)[:255], self._clock()
        with self._db.write() as conn:
            conn.execute(delete(LtiState).where((LtiState.key == k) | (LtiState.expires_at <= now)))
            conn.execute(insert(LtiState).values(key=k, value=value, expires_at=now + (exp or LAUNCH_DATA_S)))

    def key(self, key: str) -> str:
        """The row's key for pylti1p3's ``key``."""
        return str(self._prepare_key(key))[:255]

    def check_value(self, key: str) -> bool:
        return self.get_value(key) is not None

    def now(self) -> float:
        return self._clock()

    def take(self, key: str) -> Any:
        """The value, deleted (None if absent or expired): a one-time value is used once."""
        k = self._prepare_key(key)[:255]
        with self._db.write() as conn:
            row = conn.execute(select(LtiState.value).where(LtiState.key == k,
                                                           LtiState.expires_at > self._clock())).first()
            conn.execute(delete(LtiState).where(LtiState.key == k))
        return row.value if row else None


class DbSession(SessionService):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """pylti1p3's session service on :class:`DbStorage` (its nonces, states and launch data)."""

    def __init__(self, request: LtiRequest, storage: DbStorage, lifetime_s: int = LOGIN_S) -> None:
        super().__init__(request)
        self.set_data_storage(storage)
        self.storage = storage
        self.set_launch_data_lifetime(lifetime_s)


class Unregistered(LtiException):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """No registered platform (issuer, client id) or deployment fits the request."""


class UnknownDeployment(Unregistered):
    """A login naming (``lti_deployment_id``) a deployment the platform does not have here."""


class DbToolConf(ToolConfAbstract[LtiRequest]):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """The tool's configuration: the platforms registered in the database (several client ids
    per issuer, several deployments per platform)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.issuers_relation_types: dict[str, str] = {}
        self.platform: registry.Platform | None = None      # the one found last

    def check_iss_has_one_client(self, iss: str) -> bool:
        return False

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return True

    def find_platform(self, iss: str, client_id: str | None) -> registry.Platform | None:
        if not iss:
            return None
        with self._db.read() as conn:
            self.platform = registry.find(conn, iss, client_id or None)
        return self.platform

    def _registration(self, iss: str, client_id: str | None) -> Registration:
        p = self.find_platform(iss, client_id)
        if p is None:
            raise Unregistered("no registered platform has this issuer and client id")
        reg = (Registration().set_issuer(p.issuer).set_client_id(p.client_id).set_key_set_url(p.keyset_url)
               .set_auth_token_url(p.token_url).set_auth_login_url(p.login_url))
        if p.token_audience:
            reg.set_auth_audience(p.token_audience)
        return reg

    def find_registration_by_issuer(self, iss: str, *args: Any, **kwargs: Any) -> Registration:
        return self._registration(iss, None)

    def find_registration_by_params(self, iss: str, client_id: str, *args: Any, **kwargs: Any) -> Registration:
        return self._registration(iss, client_id)

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        return self.find_deployment_by_params(iss, deployment_id, "")

    def find_deployment_by_params(self, iss: str, deployment_id: str, client_id: str, *args: Any,
                                  **kwargs: Any) -> Deployment | None:
        p = self.find_platform(iss, client_id)
        if p is None or deployment_id not in p.deployments:
            return None
        return Deployment().set_deployment_id(deployment_id)


class LtiRedirect(Redirect[Response]):  # type: ignore[misc]  # pylti1p3: not followed (pyproject)
    """A 302 to the platform's login URL, with the cookies pylti1p3 set (no script redirect:
    the pages allow no inline script)."""

    def __init__(self, location: str, cookies: LtiCookies) -> None:
        self._location, self._cookies = location, cookies

    def do_redirect(self) -> Response:
        response = RedirectResponse(self._location, status_code=302)
        self._cookies.apply(response)
        return response

    def do_js_redirect(self) -> Response:
        return self.do_redirect()

    def set_redirect_url(self, location: str) -> None:
        self._location = location

    def get_redirect_url(self) -> str:
        return self._location


class LtiLogin(OIDCLogin[LtiRequest, DbToolConf, DbSession, LtiCookies, Response]):  # type: ignore[misc]
    nonce = ""          # the nonce this login issued (its state is stored bound to it)

    def get_redirect(self, url: str) -> Redirect[Response]:
        return LtiRedirect(url, self._cookie_service)

    def _generate_nonce(self) -> str:
        self.nonce = str(super()._generate_nonce())
        return self.nonce


class LtiLaunch(MessageLaunch[LtiRequest, DbToolConf, DbSession, LtiCookies]):  # type: ignore[misc]
    def _get_request_param(self, key: str) -> str:
        return str(self._request.get_param(key))

    def body(self) -> dict[str, Any]:
        """The id_token's claims as decoded so far (nothing verified by this call)."""
        return dict(self._jwt.get("body", {}))

    def get_public_key(self) -> tuple[str | bytes, str]:
        """The key of the id_token's ``kid`` from the platform's key set as kept (see
        :data:`KEYSET_CACHE_S`); read again for a kid it lacks once it is older than
        :data:`KEYSET_REFRESH_S`: a flood of forged launches cannot make grader fetch the key set
        (and wait on it, a thread each) once per request, and a platform's new key is still found."""
        url = str(self._registration.get_key_set_url())
        storage: DbStorage = self.get_session_service().storage
        kept = storage.get_value(_keyset_key(url))
        if isinstance(kept, dict) and isinstance(kept.get("keys"), dict):
            self._registration.set_key_set(kept["keys"])
            try:
                return self._key()
            except LtiException:
                if storage.now() - float(kept.get("at", 0)) < KEYSET_REFRESH_S:
                    raise
            self._registration.set_key_set(None)
        keyset = self.fetch_public_key(url)
        storage.set_value(_keyset_key(url), {"at": storage.now(), "keys": keyset}, KEYSET_CACHE_S)
        self._registration.set_key_set(keyset)
        return self._key()

    def _key(self) -> tuple[str | bytes, str]:
        """pylti1p3's key lookup; a key the platform publishes that jwcrypto cannot read (its
        own exception types, which pylti1p3 lets through) is an LtiException too."""
        try:
            public, alg = super().get_public_key()
        except LtiException:
            raise
        except Exception as e:      # jwcrypto's InvalidJWKValue & co: a hostile or broken key set
            raise LtiException(f"Can't use the platform's key: {type(e).__name__}") from None
        return public, str(alg)

    def validate_jwt_signature(self) -> "LtiLaunch":
        """pylti1p3's check (its ``validate_jwt_signature``: the signature with the platform's key,
        PyJWT's ``exp``/``iat``/``nbf`` checks, no audience check here) with :data:`LEEWAY_S` of
        clock skew allowed on the times (pylti1p3 passes none: a platform whose clock is a few
        seconds ahead would be refused); a key PyJWT cannot use for the token's algorithm (an EC
        key named RS256, say: ``InvalidKeyError``, not an ``InvalidTokenError``) is an
        LtiException too."""
        id_token = self._get_id_token()
        public_key, key_alg = self.get_public_key()
        try:
            jwt.decode(id_token, public_key, algorithms=[key_alg], options=self._jwt_verify_options,
                       leeway=LEEWAY_S)
        except jwt.InvalidTokenError as e:
            raise LtiException(f"Can't decode id_token: {e}") from e
        except jwt.PyJWTError as e:
            raise LtiException(f"Can't use the platform's key: {type(e).__name__}") from None
        return self

    def fetch_public_key(self, key_set_url: str) -> Any:
        """The platform's key set from its registered URL only: no redirect followed (a 3xx is
        refused, so the URL cannot send grader's request elsewhere), at most :data:`MAX_KEYSET`
        bytes read, a JSON object with a ``keys`` list (pylti1p3 follows redirects and reads
        any length)."""
        try:
            with self._requests_session.get(key_set_url, allow_redirects=False, stream=True) as resp:
                if resp.status_code != 200:
                    raise LtiException(f"Invalid response from {key_set_url}: HTTP {resp.status_code}")
                body = b""
                for chunk in resp.iter_content(64 * 1024):
                    body += chunk
                    if len(body) > MAX_KEYSET:
                        raise LtiException(f"Invalid response from {key_set_url}: over {MAX_KEYSET} bytes")
        except requests.exceptions.RequestException as e:
            raise LtiException(f"Error during fetch URL {key_set_url}: {e}") from e
        try:
            keyset = json.loads(body)
        except (ValueError, RecursionError) as e:
            raise LtiException(f"Invalid response from {key_set_url}: not JSON") from e
        if not isinstance(keyset, dict) or not isinstance(keyset.get("keys"), list):
            raise LtiException(f"Invalid response from {key_set_url}: no list of keys")
        keyset["keys"] = [k for k in keyset["keys"] if isinstance(k, dict)]
        return keyset


def _keyset_key(url: str) -> str:
    return "keyset-" + hashlib.sha256(url.encode()).hexdigest()[:40]


class BoundedSession(requests.Session):
    """HTTP for the platform's key set: every request with a timeout (PyLTI1p3 sets none: a
    platform that hangs would hold the launch's thread for ever)."""

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", KEYSET_TIMEOUT_S)
        return super().request(*args, **kwargs)


def new_launch(db: Database, params: Mapping[str, str], cookies: Mapping[str, str], secure: bool) -> LtiLaunch:
    """A launch to check (:func:`grader.serve.lti.launch.verify`)."""
    request, conf, session, cookies_ = parts(db, params, cookies, secure)
    http = BoundedSession()
    http.headers["User-Agent"] = "grader (PyLTI1p3)"
    return LtiLaunch(request, conf, session, cookies_, requests_session=http)


def parts(db: Database, params: Mapping[str, str], cookies: Mapping[str, str],
          secure: bool) -> tuple[LtiRequest, DbToolConf, DbSession, LtiCookies]:
    request = LtiRequest(params, cookies, secure)
    return request, DbToolConf(db), DbSession(request, DbStorage(db)), LtiCookies(request)


def login(db: Database, params: Mapping[str, str], cookies: Mapping[str, str], secure: bool,
          launch_url: str, source: str = "?", max_outstanding: int = logins.MAX_OUTSTANDING) -> Response:
    """The third-party initiated login: a 302 to the platform's authorisation (login) URL with a
    new state and nonce; the state is set as a cookie and stored server-side. Raises pylti1p3's
    ``OIDCException`` / :class:`Unregistered` when the issuer or client id is not registered,
    :class:`UnknownDeployment` when ``lti_deployment_id`` names a deployment it does not have,
    :class:`~.logins.TooManyLogins` when ``source`` (the client's address) has
    ``max_outstanding`` logins not completed (nothing written then)."""
    request, conf, session, cookies_ = parts(db, params, cookies, secure)
    deployment = request.get_param("lti_deployment_id")
    platform = conf.find_platform(request.get_param("iss"), request.get_param("client_id"))
    if deployment and platform is not None and deployment not in platform.deployments:
        raise UnknownDeployment("the login names a deployment not registered for this platform")
    if platform is not None:            # an unregistered platform's login writes nothing: not counted
        logins.check(db, source, session.storage.now(), max_outstanding)
    oidc = LtiLogin(request, conf, session, cookies_)
    response: Response = oidc.redirect(launch_url)
    found = conf.platform
    assert found is not None            # the login found its platform (else pylti1p3 raised)
    nonce_key = session.storage.key(f"{SessionService._session_prefix}-nonce-{oidc.nonce}")
    for state in cookies_.states:       # bound to this login's nonce and platform: it fits only its own id_token
        logins.admit(db, source, session.storage.now(), session.storage.key(state),
                     {"nonce": oidc.nonce, "platform": found.id}, LOGIN_S, [nonce_key], max_outstanding)
    return response
