"""An independent LTI 1.3 platform for the tests, built on PyPI's ``lti1p3platform`` (its
registration, OIDC login, message launch with deep linking, NRPS and AGS claims, and its check
of the tool's deep-linking response), served by uvicorn in a thread on 127.0.0.1.

The browser reaches it as ``http://localhost:PORT``, the tool as ``http://127.0.0.1:PORT``: two
different sites, so the platform's form POST to the tool is cross-site, as with a real LMS (the
registry accepts plain http for localhost and 127.0.0.1 only). The tool fetches the platform's
key set at ``http://127.0.0.1:PORT/jwks``; the platform fetches the tool's at its
``/.well-known/jwks.json``.

A launch is prepared under a name (``platform.launches[name] = {...}``) and started by the
browser at ``/start/<name>``; the name travels as the ``lti_message_hint``."""
from __future__ import annotations

import json
import os
import threading
import time
import typing as t
from datetime import datetime, timedelta, timezone

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jwcrypto.jwk import JWK
from lti1p3platform.framework.fastapi.oidc_login import FastAPIOIDCLogin
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.registration import Registration

from serve_helpers import free_port

import lti1p3platform.framework as _fw
from jinja2 import Environment, FileSystemLoader

# lti1p3platform's own launch form (its templates package imports pkg_resources, absent from
# a fresh venv: the template is read from its folder)
LAUNCH_FORM = Environment(loader=FileSystemLoader(os.path.join(os.path.dirname(_fw.__file__), "templates")),
                          autoescape=True).get_template("launch.html")

NOW = datetime.now(timezone.utc).replace(second=0, microsecond=0)
DUE = NOW + timedelta(days=3)


def _at(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:00Z")


COURSE = f"""course: {{timezone: UTC}}
assessments:
  - id: hw1
    title: Homework <1> & "A"
    problems: [17-08/practice-1]
    opens: "{_at(NOW - timedelta(days=1))}"
    due: "{_at(DUE)}"
  - id: hw2
    title: Homework 2
    problems: [17-08/practice-1.check, 17-08/quiz-1]
    opens: "{_at(NOW - timedelta(days=1))}"
    due: "{_at(DUE + timedelta(days=7))}"
"""


LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTRUCTOR, LEARNER = LIS + "Instructor", LIS + "Learner"


def rsa_pair() -> tuple[str, str, str]:
    """(private PEM, public PEM, kid)."""
    k = JWK.generate(kty="RSA", size=2048)
    return (k.export_to_pem(private_key=True, password=None).decode(), k.export_to_pem().decode(), k.thumbprint())


class Platform:
    def __init__(self, tool_url: str, context_title: str = "Deep Learning 101") -> None:
        self.port = free_port()
        self.local = f"http://127.0.0.1:{self.port}"
        self.browser_url = f"http://localhost:{self.port}"
        self.issuer = self.browser_url
        self.client_id, self.deployment = "grader-client-1", "deployment-1"
        self.tool_url, self.context_title = tool_url, context_title
        self.private_pem, self.public_pem, self.kid = rsa_pair()
        self.launches: dict[str, dict[str, t.Any]] = {}
        self.sent: list[dict[str, str]] = []            # the launch forms posted to the tool
        self.deep_links: list[dict[str, t.Any]] = []   # the content items of valid deep-linking responses
        self.deep_link_errors: list[str] = []
        self._server: uvicorn.Server | None = None

    # ------------------------------------------------------------------ lti1p3platform's pieces
    def registration(self) -> Registration:
        return (Registration().set_iss(self.issuer).set_client_id(self.client_id)
                .set_deployment_id(self.deployment)
                .set_oidc_login_url(self.tool_url + "/lti/login")
                .set_launch_url(self.tool_url + "/lti/launch")
                .set_deeplink_launch_url(self.tool_url + "/lti/launch")
                .set_platform_public_key(self.public_pem).set_platform_private_key(self.private_pem)
                .set_tool_key_set_url(self.tool_url + "/.well-known/jwks.json"))      # the tool's key set, fetched

    def conf(self) -> LTI1P3PlatformConfAbstract:
        platform = self

        class Conf(LTI1P3PlatformConfAbstract):
            def init_platform_config(self, **kwargs: t.Any) -> None:
                pass

            def get_registration_by_params(self, **kwargs: t.Any) -> Registration:
                return platform.registration()
        return Conf()

    def app(self) -> FastAPI:
        app = FastAPI()
        platform = self

        class Login(FastAPIOIDCLogin):
            def set_lti_message_hint(self, **kwargs: t.Any) -> None:
                self._lti_message_hint = kwargs["hint"]

        class Launch(LTIAdvantageMessageLaunchAbstract):
            def get_preflight_response(self) -> dict[str, t.Any]:
                return dict(self._request.query_params)

            def render_launch_form(self, launch_data: dict[str, t.Any], **kwargs: t.Any) -> Response:
                platform.sent.append({"id_token": launch_data["id_token"], "state": launch_data["state"]})
                return HTMLResponse(LAUNCH_FORM.render(launch_data))

        @app.get("/jwks")
        def jwks() -> JSONResponse:
            return JSONResponse({"keys": platform.registration().get_jwks()})

        @app.get("/start/{name}")
        def start(name: str, request: Request) -> Response:
            spec = platform.launches[name]
            login = Login(request, platform.conf())
            login.set_lti_message_hint(hint=name)
            if spec.get("kind") == "deep_link":
                login.set_deeplinking_launch_url()
            return login.initiate_login(spec["sub"])

        @app.get("/authorize")
        def authorize(request: Request) -> Response:
            spec = platform.launches[request.query_params["lti_message_hint"]]
            launch = Launch(request, platform.conf())
            launch.set_user_data(spec["sub"], spec["roles"], spec.get("name"), spec.get("email"))
            launch.set_launch_context_claim(spec.get("context", "course-1"), context_title=platform.context_title)
            launch.set_nrps(platform.local + "/nrps/course-1/members")
            launch.set_ags(platform.local + "/ags/course-1/lineitems",
                           lineitem_url=spec.get("lineitem"))
            if spec.get("kind") == "deep_link":
                launch.set_dl(platform.browser_url + "/deep-link-return", title="Add content")
            else:
                launch.set_resource_link_claim(spec["link"], title=spec.get("title", "Assessment"))
                launch.set_custom_parameters_claim(spec.get("custom", {}))
            return launch.lti_launch()

        @app.post("/deep-link-return")
        async def deep_link_return(request: Request) -> Response:
            form = await request.form()
            try:
                conf = platform.conf()
                conf.get_registration()
                items = conf.validate_deeplinking_resp({"JWT": form.get("JWT")})
            except Exception as e:         # the test reads the reason
                platform.deep_link_errors.append(repr(e))
                return HTMLResponse("<p id='refused'>deep-linking response refused</p>", status_code=400)
            platform.deep_links.append({"items": items})
            return HTMLResponse(f"<p id='received'>received {len(items)} item(s): "
                                f"{json.dumps([i.get('title') for i in items])}</p>")
        return app

    # ------------------------------------------------------------------ the server
    def start(self) -> "Platform":
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        threading.Thread(target=self._server.run, name="lti-platform", daemon=True).start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test platform did not start in 30 s")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
