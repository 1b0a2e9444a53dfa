"""An independent LMS side for the Assignment and Grade / Names and Roles tests: PyPI's
``lti1p3platform`` (its token endpoint, which checks the tool's signed assertion against the
tool's key set, and its AGS and NRPS service handlers, which check the access token and its
scopes), in a small Starlette app served by uvicorn on 127.0.0.1 in a thread.

What it keeps is in memory: line items, the scores received per line item, a roster. ``down``
makes every route answer 503; :meth:`Platform.stop` and :meth:`Platform.start` stop the server
and bring it back on the same port."""
from __future__ import annotations

import socket
import threading
import time
import typing as t
from datetime import datetime

import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LineItemNotFoundException
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.membership import Context
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as LtiRequest
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService, NamesRoleProvisioningService
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ISSUER = "https://lms.example.test"
CLIENT_ID = "grader-client-1"
DEPLOYMENT = "deployment-1"
SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pem_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


class Conf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: t.Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
        assert self._registration is not None
        return self._registration


class Req(LtiRequest):
    def build_metadata(self, request: t.Any) -> t.Any:
        return request


class Platform:
    def __init__(self, tool_key_set: dict[str, t.Any]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        private, public = pem_pair()
        self.registration = (Registration().set_iss(ISSUER).set_client_id(CLIENT_ID).set_deployment_id(DEPLOYMENT)
                             .set_platform_private_key(private).set_platform_public_key(public)
                             .set_tool_key_set(tool_key_set))
        self.lineitems: dict[str, dict[str, t.Any]] = {}
        self.scores: dict[str, list[dict[str, t.Any]]] = {}
        self.roster: list[dict[str, t.Any]] = []
        self.granted = {SCORE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                        "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
                        "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"}
        self.down = False
        self.token_requests = 0
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the services

    def conf(self) -> Conf:
        return Conf(registration=self.registration)

    def ags(self, meta: dict[str, t.Any]) -> AssignmentsGradesService:
        platform = self

        class Ags(AssignmentsGradesService):
            def find_lineitems(self, page: int = 1, limit: t.Any = None, line_item_id: t.Any = None,
                               resource_link_id: t.Any = None, resource_id: t.Any = None, tag: t.Any = None,
                               **_: t.Any) -> t.Any:
                items = [i for i in platform.lineitems.values()
                         if (resource_id is None or i.get("resourceId") == resource_id)
                         and (resource_link_id is None or i.get("resourceLinkId") == resource_link_id)]
                return {"content": items, "has_next": False}

            def find_lineitem(self, line_item_id: str) -> t.Any:
                if line_item_id not in platform.lineitems:
                    raise LineItemNotFoundException()
                return platform.lineitems[line_item_id]

            def create_lineitem(self, creation_data: t.Any) -> t.Any:
                url = f"{platform.base}/lineitems/{len(platform.lineitems) + 1}"
                item = {**creation_data, "id": url}
                platform.lineitems[url] = item
                return item

            def update_lineitem(self, update_data: t.Any) -> t.Any:
                raise NotImplementedError

            def delete_lineitem(self, line_item_id: str) -> None:
                raise NotImplementedError

            def update_score(self, line_item_id: str, score: t.Any) -> UpdateScoreStatus:
                if line_item_id not in platform.lineitems:
                    raise LineItemNotFoundException()
                got = platform.scores.setdefault(line_item_id, [])
                mine = [s for s in got if s["userId"] == score["userId"]]
                if mine and stamp(score["timestamp"]) <= stamp(mine[-1]["timestamp"]):
                    return UpdateScoreStatus.OLD_TIMESTAMP
                got.append(score)
                return UpdateScoreStatus.SUCCESS

            def get_results(self, *a: t.Any, **kw: t.Any) -> t.Any:
                raise NotImplementedError

        return Ags(Req(meta), self.conf(), f"{self.base}/lineitems")

    def nrps(self, meta: dict[str, t.Any]) -> NamesRoleProvisioningService:
        platform = self

        class Nrps(NamesRoleProvisioningService):
            def get_member_data_page(self, page: int = 1, limit: t.Any = None, **_: t.Any) -> t.Any:
                page, size = int(page), int(limit) if limit else len(platform.roster) or 1
                chunk = platform.roster[(page - 1) * size: page * size]
                return {"content": [dict(m) for m in chunk], "has_next": page * size < len(platform.roster)}

            def get_context_by_id(self) -> Context:
                return Context(id="course-1", label="DL101", title="Deep learning 101")

        return Nrps(Req(meta), self.conf(), f"{self.base}/memberships")

    # ------------------------------------------------------------------ HTTP

    async def _meta(self, request: Request) -> dict[str, t.Any]:
        body = await request.body()
        form = dict(await request.form()) if request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded") else {}
        import json
        data: t.Any = None
        if body and request.headers.get("content-type", "").startswith("application/vnd.ims") or \
                request.headers.get("content-type", "").startswith("application/json"):
            data = json.loads(body or b"null")
        query: dict[str, t.Any] = dict(request.query_params)
        for k in ("page", "limit"):
            if k in query:
                query[k] = int(query[k])
        return {"method": request.method, "form_data": form, "get_data": query, "headers": request.headers,
                "content_type": request.headers.get("content-type"), "path": request.url.path, "json": data}

    def app(self) -> Starlette:
        async def gate(request: Request) -> Response | None:
            return JSONResponse({"error": "service unavailable"}, status_code=503) if self.down else None

        async def token(request: Request) -> Response:
            if (down := await gate(request)) is not None:
                return down
            self.token_requests += 1
            form = dict(await request.form())
            conf = self.conf()
            conf.get_registration()
            try:
                out = conf.get_access_token(form)
            except Exception as e:      # the assertion's signature, a missing claim, a wrong grant
                return JSONResponse({"error": "invalid_client", "error_description": f"{type(e).__name__}: {e}"},
                                    status_code=401)
            scopes = [s for s in out["scope"].split(" ") if s in self.granted]
            if not scopes:
                return JSONResponse({"error": "invalid_scope", "error_description": "no scope granted"},
                                    status_code=400)
            if len(scopes) != len(out["scope"].split(" ")):   # re-issued with the granted scopes only
                out = conf.get_access_token({**form, "scope": " ".join(scopes)})
            return JSONResponse(dict(out))

        def answer(resp: t.Any) -> Response:
            body = resp.result if resp.result is not None else {"message": resp.message}
            headers = {}
            if isinstance(body, dict) and body.get("next"):
                headers["Link"] = f'<{body["next"]}>; rel="next"'
            return JSONResponse(body, status_code=resp.code, headers=headers, media_type=resp.media_type)

        async def lineitems(request: Request) -> Response:
            if (down := await gate(request)) is not None:
                return down
            svc = self.ags(await self._meta(request))
            svc.platform_config.get_registration()
            fn = svc.handle_get_lineitems if request.method == "GET" else svc.handle_create_lineitem
            return answer(svc.handle_resp(fn))

        async def scores(request: Request) -> Response:
            if (down := await gate(request)) is not None:
                return down
            svc = self.ags(await self._meta(request))
            svc.platform_config.get_registration()
            line = f"{self.base}/lineitems/{request.path_params['n']}"
            return answer(svc.handle_resp(svc.handle_update_score, line_item_id=line))

        async def memberships(request: Request) -> Response:
            if (down := await gate(request)) is not None:
                return down
            svc = self.nrps(await self._meta(request))
            svc.platform_config.get_registration()
            return answer(svc.handle_resp(svc.handle_get_members))

        return Starlette(routes=[Route("/token", token, methods=["POST"]),
                                 Route("/lineitems", lineitems, methods=["GET", "POST"]),
                                 Route("/lineitems/{n}/scores", scores, methods=["POST"]),
                                 Route("/memberships", memberships, methods=["GET"])])

    def start(self) -> None:
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=self.port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the test platform did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(timeout=20)
        self.server = self.thread = None

    def received(self) -> list[dict[str, t.Any]]:
        return [s for line in self.scores.values() for s in line]


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
