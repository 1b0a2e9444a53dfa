"""LTI 1.3: what platforms fetch from the tool without a launch: its public key set
(``GET /.well-known/jwks.json``) and its configuration (``GET /lti/config.json``: the URLs to
paste into the LMS, as ``grader lti config`` prints them)."""
from __future__ import annotations

from fastapi import APIRouter, Request

from ..lti import keys, registry
from .common import FastJSON, state

router = APIRouter(tags=["lti"])


@router.get("/.well-known/jwks.json", summary="The tool's public keys (RFC 7517): platforms check its messages with them")
def jwks(request: Request) -> FastJSON:
    st = state(request)
    with st.db.read() as conn:
        ready = keys.has_signing_key(conn)
    if not ready:                                        # a fresh install: its first key is made now
        with st.db.write() as conn:
            keys.signing_key(conn, st.now())
    with st.db.read() as conn:
        body = keys.key_set(conn, st.now())
    return FastJSON(body, headers={"cache-control": "public, max-age=300"})


@router.get("/lti/config.json", summary="The tool's LTI configuration, for the LMS's developer key or tool form")
def config(request: Request) -> FastJSON:
    base = state(request).settings.public_url or str(request.base_url)    # --public-url: never the Host header
    return FastJSON(registry.tool_configuration(base, check=False))
