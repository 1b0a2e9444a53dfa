""""View as learner" (issue 29): an instructor opens a learner's home, assessment and exercise
pages as that learner sees them now, read only.

- Only instructors (``page_instructor``), and only of an account whose role is learner (404
  otherwise); each page viewed is a line of the audit log (``view_as``: the instructor, the
  learner, the page).
- The pages are the learners' own handlers (:mod:`.learn`, :mod:`.assessments`) called with a
  learner's :class:`~grader.serve.auth.Principal`, so the learner's visibility rules apply as
  they are (scores not shown before the due date stay hidden, an assessment not open stays
  closed, the learner's variant of a prompt); they only read.
- Read only: the pages carry a banner, every form is disabled and points back under
  ``/staff/learners/{login}/view/...``, where every POST is refused (403): no answer, upload,
  regrade request or quiz start can be made in the learner's name. The instructor's own
  session, navigation and CSRF token are unchanged.
"""
from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from sqlalchemy import select

from grader.db import audit
from grader.db.models import User
from grader.serve.auth import Principal

from . import assessments, learn, service
from .session import PageError, page_instructor, page_user

router = APIRouter(include_in_schema=False)
PREFIX = "/staff/learners/{login}/view"


def as_learner(request: Request, login: str, who: Principal) -> Principal:
    """The learner ``login`` as a principal of the pages (read only, see the module), the view
    recorded in the audit log and marked on the request for the templates."""
    st = service.state(request)
    with st.db.read() as conn:
        u = conn.execute(select(User.id, User.login, User.name).where(User.login == login[:200],
                                                                      User.role == "learner")).first()
    if u is None:
        raise PageError(404, "No such learner.")
    audit.record(request, "view_as", actor=who.login, target=u.login, detail={"page": request.url.path[:300]})
    request.state.view = {"login": u.login, "name": u.name, "by": who,
                          "prefix": "/staff/learners/" + quote(u.login, safe="") + "/view"}
    return Principal(u.id, u.login, u.name, "learner", who.token_id)


@router.get(PREFIX)
def home(login: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return learn.exercises(request, who=as_learner(request, login, who))


@router.get(PREFIX + "/assessments/{assessment_id}")
def assessment(login: str, assessment_id: str, request: Request,
               who: Principal = Depends(page_instructor)) -> Response:
    return assessments.assessment_page(assessment_id, request, who=as_learner(request, login, who))


@router.get(PREFIX + "/exercise/{problem_id:path}")
def exercise(login: str, problem_id: str, request: Request, who: Principal = Depends(page_instructor)) -> Response:
    return learn._exercise(request, as_learner(request, login, who), problem_id)


@router.post(PREFIX)
@router.post(PREFIX + "/{rest:path}")
def refused(request: Request, who: Principal = Depends(page_user)) -> Response:
    """Every POST of a viewed page: nothing is done in the learner's name."""
    raise PageError(403, "Read only: viewing as a learner, nothing can be submitted in their name.")
