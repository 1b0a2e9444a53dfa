"""Jinja2 (autoescaped) for the pages, security headers, MathML that is only MathML, and the
error pages."""
from __future__ import annotations

import re
import math
from functools import lru_cache
from typing import Any
from pathlib import Path
from xml.etree import ElementTree as ET

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment
from markupsafe import Markup, escape
from starlette.exceptions import HTTPException

from grader.api.service import json_number
from grader.serve.auth import Principal

from .session import CSRF, PageError, csrf_cookie, csrf_token, session_user, set_cookie

HERE = Path(__file__).parent

# No inline script anywhere; htmx from /static only, without eval. Inline styles are allowed
# (htmx's indicator style, matplotlib's SVG).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


@lru_cache(maxsize=1)
def env() -> Environment:
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    e = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                    trim_blocks=True, lstrip_blocks=True)
    e.filters["math"] = prompt_math
    e.filters["mathml"] = safe_mathml
    e.filters["num"] = num
    e.filters["plural"] = plural
    return e


def plural(n: object, word: str, many: str | None = None) -> str:
    """``1 answer``, ``2 answers``, ``0 learners`` (``many``: an irregular plural)."""
    one = n == 1
    return f"{num(n)} {word if one else (many or word + 's')}"


def num(x: object) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and math.isfinite(x):
        x = json_number(x)      # 2.0 -> 2
    return f"{x:,}" if isinstance(x, int) else f"{x:g}" if isinstance(x, float) else str(x)


def page(request: Request, template: str, status: int = 200, headers: dict[str, str] | None = None,
         **ctx: Any) -> HTMLResponse:
    ctx.setdefault("who", getattr(request.state, "who", None))
    view = getattr(request.state, "view", None)     # "view as learner" (viewas.py): the banner, links, forms off
    ctx.setdefault("view", view)
    ctx.setdefault("learn_base", view["prefix"] if view else "/learn")
    ctx["csrf"] = csrf_token(request)
    html = env().get_template(template).render(request=request, **ctx)
    resp = HTMLResponse(html, status_code=status, headers={**HEADERS, **(headers or {})})
    new = getattr(request.state, "new_csrf", None)
    if new:
        set_cookie(request, resp, CSRF, new)
    return resp


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=HEADERS)


PAGES = ("/learn", "/staff", "/spec", "/logout")


def wants_page(request: Request) -> bool:
    """An error of this request is answered as a page: a path of the pages, or a browser's
    request (``Accept: text/html``) anywhere but the API (``/api/``: always JSON)."""
    path = request.url.path
    if path == "/api" or path.startswith("/api/"):
        return False
    return path.startswith(PAGES) or "text/html" in request.headers.get("accept", "")


def page_or_json(fallback: Any) -> Any:
    """The service's handler of an error (``fallback``: its JSON answer, its log line) for the
    pages: the same status, headers (Retry-After) and message as an error page with the
    signed-in user's navigation (a 404: "There is no such page."). What a page's route does not
    catch itself ends here: a form field FastAPI refuses (too long, out of range), a value the
    database refuses, a 405, an internal error."""
    async def handle(request: Request, e: Exception) -> Response:
        out: Response = await fallback(request, e)
        if not wants_page(request):
            return out
        status = out.status_code
        message = "There is no such page." if status == 404 and isinstance(e, HTTPException) else _message(out)
        if status < 500:                # the database may be what failed: no session look-up then
            request.state.who = await _who(request)
        csrf_cookie(request)
        keep = {k: v for k, v in out.headers.items() if k.lower() in ("retry-after", "allow")}
        return page(request, "error.html", status=status, headers=keep, status_code=status, message=message)
    return handle


async def _who(request: Request) -> Principal | None:
    """The signed-in user for an error page's navigation; None where the look-up itself fails
    (an error page never fails for want of it)."""
    try:
        return await session_user(request)
    except Exception:
        return None


def _message(out: Response) -> str:
    """The JSON error's message, with the form field it is about (``body.message``: "message")."""
    import json
    try:
        err = json.loads(bytes(out.body))["error"]
        message, where = str(err["message"]), str(err.get("location") or "")
    except (ValueError, KeyError, TypeError):
        return "The request could not be handled."
    if where.startswith("body."):
        return f"The form's field {where[5:]!r}: {message}."
    if where.startswith("path."):
        return f"The address's {where[5:]!r}: {message}."
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


async def page_error(request: Request, e: Exception) -> Response:
    if not isinstance(e, PageError):     # installed for PageError only
        raise e
    if e.status == 401:
        return redirect("/learn/login")
    if getattr(request.state, "who", None) is None:     # refused before the page's user was known (CSRF, NUL)
        request.state.who = await _who(request)
    csrf_cookie(request)
    return page(request, "error.html", status=e.status, headers=e.headers, status_code=e.status, message=e.message)


# ------------------------------------------------------------------ math

_MATHML = {"math", "mrow", "mi", "mn", "mo", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mfenced",
           "mtext", "mspace", "mstyle", "mtable", "mtr", "mtd", "munder", "mover", "munderover", "mpadded",
           "mphantom", "semantics", "annotation"}
_ATTRS = {"mathvariant", "stretchy", "fence", "separator", "form", "open", "close", "separators", "lspace",
          "rspace", "linethickness", "displaystyle", "scriptlevel", "width"}


_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]{1,31});")
_XML_ENTITIES = {"lt", "gt", "amp", "quot", "apos"}


def _entity(m: re.Match[str]) -> str:
    """HTML's named entities (SymPy writes &InvisibleTimes;) as characters; XML's five kept."""
    from html.entities import html5
    name = m.group(1)
    if name in _XML_ENTITIES:
        return m.group(0)
    return html5.get(name + ";", "").replace("&", "&amp;").replace("<", "&lt;") or ""


def safe_mathml(text: str | None) -> Markup:
    """SymPy's presentation MathML, rebuilt from a parse that admits only MathML elements and
    a few presentational attributes (anything else: the reading is shown as text)."""
    if not text:
        return Markup("")
    text = _ENTITY.sub(_entity, text)
    try:
        root = ET.fromstring(f"<math>{text}</math>" if not text.lstrip().startswith("<math") else text)
    except ET.ParseError:
        return Markup("")
    for el in root.iter():
        tag = el.tag.split("}")[-1]
        if tag not in _MATHML:
            return Markup("")
        el.tag = tag
        for k in list(el.attrib):
            if k not in _ATTRS or (":" in el.attrib[k]):
                del el.attrib[k]
    root.attrib.clear()
    root.set("display", "inline")
    return Markup(ET.tostring(root, encoding="unicode", method="xml"))


_SCRIPT = re.compile(r"\b([A-Za-z][A-Za-z]*)(?:_(\{[^{}<>]{1,12}\}|[A-Za-z0-9]+))?(?:\^(\{[^{}<>]{1,12}\}|[A-Za-z0-9]+|ᵀ))?")


def _mi(text: str) -> str:
    text = text.strip("{}")
    tag = "mn" if text.isdigit() else "mi"
    return f"<{tag}>{escape(text)}</{tag}>"


# a name of code: snake_case with a base and a part of two letters or more (split_heads,
# multi_head_forward; not head_i or d_model, which are math),
# a file's path (code/template.py), or a call (add(a, b)): shown as code, never as a subscript
_ARGS = r"\((?:[a-z_]\w{0,20}(?:, ?[a-z_]\w{0,20}){0,5})?\)"
_CODE = re.compile(r"\b[A-Za-z][A-Za-z0-9]+(?:_[A-Za-z0-9]+){2,}\b(?:" + _ARGS + ")?"
                   r"|\b[A-Za-z][A-Za-z0-9]+_[A-Za-z0-9]{2,}\b(?:" + _ARGS + ")?"
                   r"|\b[\w.-]+(?:/[\w.-]+)*\.py\b"
                   r"|\b[a-z][a-z0-9]+" + _ARGS)


def prompt_math(text: str | None) -> Markup:
    """A prompt (or feedback) as text, with its sub- and superscripted names (d_model, W_i^Q,
    x^2) as MathML and its names of code (split_heads, code/template.py, add(a, b)) as code;
    everything else escaped."""
    text = text or ""
    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(str(_math_names(text[last:m.start()])))
        out.append(f"<code>{escape(m.group(0))}</code>")
        last = m.end()
    out.append(str(_math_names(text[last:])))
    return Markup("".join(out))


def _math_names(text: str) -> Markup:
    out, last = [], 0
    for m in _SCRIPT.finditer(text):
        base, sub, sup = m.groups()
        if not sub and not sup:
            continue
        out.append(str(escape(text[last:m.start()])))
        b = _mi(base)
        if sub and sup:
            inner = f"<msubsup>{b}{_mi(sub)}{_mi(sup)}</msubsup>"
        elif sub:
            inner = f"<msub>{b}{_mi(sub)}</msub>"
        else:
            inner = f"<msup>{b}{_mi(sup)}</msup>"
        out.append(f'<math display="inline" aria-label="{escape(m.group(0))}">{inner}</math>')
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))
