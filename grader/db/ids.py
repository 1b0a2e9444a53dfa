"""The one rule for the ids of the service's accounts (a learner's id is the ``learner:`` of
answer files): wherever an account is made (`grader users add-*`, a roster's import, a batch
of answers files), the id passes :func:`login_problem` first.

An id is letters, digits and ``. _ - @ +``, starting with a letter or digit, at most 200
characters: nothing a page, a CSV cell (``=HYPERLINK(...)``), a URL path (``/``) or a log line
(NUL, newline) could read as anything but a name."""
from __future__ import annotations

import re

from grader.errors import InputError, Location

LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+\-]{0,199}")
RULE = "letters, digits and . _ - @ +, starting with a letter or digit, at most 200 characters"


def login_problem(login: str) -> str | None:
    """What is wrong with ``login`` as an account's id (None: nothing)."""
    if not isinstance(login, str) or not login:
        return "an id cannot be empty"
    if len(login) > 200:
        return f"an id has at most 200 characters (this one has {len(login)})"
    if not LOGIN.fullmatch(login):
        return f"not a valid id: {RULE}"
    return None


def check_login(login: str, where: Location | None = None) -> str:
    """``login`` without surrounding spaces if it is a valid id; else :class:`InputError`
    saying where and what."""
    login = (login or "").strip()
    why = login_problem(login)
    if why:
        raise InputError(f"{shown(login)}: {why}", where)
    return login


def shown(login: str, limit: int = 60) -> str:
    """An id as an error message may quote it: Python's repr (control characters escaped), cut."""
    text = repr(login)
    return text if len(text) <= limit else text[:limit] + "…'"
