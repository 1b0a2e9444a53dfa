"""ONE independent LMS for the end-to-end tests (tests/lti/test_lti_end_to_end.py): the launch
side of tests/lti/platform_lti.py (OIDC login, signed launches, its check of the tool's
deep-linking response against the tool's key set) and the services of
tests/lti/lti_ags_platform.py (its token endpoint checking the tool's assertion against the
tool's key set URL, AGS line items and scores, NRPS members) on one port, one issuer, one key
pair, all of it lti1p3platform's code.

A verified deep-linking response is *placed*: each ``ltiResourceLink`` becomes a resource link
of the course (``links``: id -> title, custom parameters, line item URL) with a line item made
from its ``lineItem`` (label, scoreMaximum, resourceId, the link's id); a later launch of that
link (:meth:`Lms.launch_of`) carries the AGS claim (line items URL, the line item's URL) and the
NRPS claim (the memberships URL), as an LMS's does."""
from __future__ import annotations

import typing as t

from fastapi import FastAPI

import lti_ags_platform
from platform_lti import Platform


class Lms(Platform):
    def __init__(self, tool_url: str) -> None:
        super().__init__(tool_url)
        self.lineitems_url = self.local + "/lineitems"
        self.memberships_url = self.local + "/memberships"
        # the services: the same issuer, client id, deployment and platform key pair; the tool's
        # key set fetched from its URL (the tool's /.well-known/jwks.json) on the first token request
        self.services = lti_ags_platform.Platform(registration=self.registration(), port=self.port)
        self.links: dict[str, dict[str, t.Any]] = {}

    # what the services keep
    @property
    def lineitems(self) -> dict[str, dict[str, t.Any]]:
        return self.services.lineitems

    @property
    def roster(self) -> list[dict[str, t.Any]]:
        return self.services.roster

    def received(self) -> list[dict[str, t.Any]]:
        return self.services.received()

    def app(self) -> FastAPI:
        app = super().app()
        app.router.routes.extend(self.services.app().routes)     # /token, /lineitems..., /memberships
        return app

    def place(self, items: list[dict[str, t.Any]]) -> None:
        for item in items:
            if item.get("type") != "ltiResourceLink":
                continue
            link_id = f"placed-{len(self.links) + 1}"
            lineitem = None
            if isinstance(item.get("lineItem"), dict):
                lineitem = f"{self.local}/lineitems/{len(self.lineitems) + 1}"
                li = item["lineItem"]
                self.lineitems[lineitem] = {"id": lineitem, "label": li.get("label"),
                                            "scoreMaximum": li.get("scoreMaximum"),
                                            "resourceId": li.get("resourceId"), "resourceLinkId": link_id}
            self.links[link_id] = {"title": item.get("title"), "url": item.get("url"),
                                   "custom": dict(item.get("custom") or {}), "lineitem": lineitem}

    def launch_of(self, link_id: str, sub: str, roles: list[str], name: str, email: str | None = None) -> str:
        """A launch of a placed link by this person, prepared; the path the browser starts it at."""
        link = self.links[link_id]
        key = f"{link_id}-{len(self.launches)}"
        self.launches[key] = {"kind": "resource", "sub": sub, "roles": roles, "name": name, "email": email,
                              "link": link_id, "title": link["title"], "custom": link["custom"],
                              "lineitem": link["lineitem"]}
        return f"{self.browser_url}/start/{key}"

    # the platform down, and back
    @property
    def down(self) -> bool:
        return self.services.down

    @down.setter
    def down(self, value: bool) -> None:
        self.services.down = value
