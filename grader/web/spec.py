"""``/spec`` (instructors): the check-spec report of the service's spec, as `grader check-spec
--format html` writes it. The check runs once, in a process of its own (it measures with torch
and limits each claim with signals, which need a main thread), started at the first visit;
the page says it is checking and reloads itself when the report is ready."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from grader.serve.auth import Principal

from .render import HEADERS, page
from .session import page_instructor

router = APIRouter(include_in_schema=False)
TIMEOUT_S = 900


class SpecReport:
    def __init__(self, spec: str | None) -> None:
        self.spec = spec
        self.html: str | None = None
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="grader-spec-report", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        with tempfile.TemporaryDirectory(prefix="grader-spec-") as tmp:
            out = Path(tmp) / "report.html"
            argv = [sys.executable, "-m", "grader", "check-spec", "--format", "html", "-o", str(out)]
            if self.spec:
                argv.append(self.spec)
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.error = f"the check did not finish within {TIMEOUT_S} s"
                return
            if out.is_file():                    # exit 1 means a verdict not as expected: still a report
                self.html = out.read_text(encoding="utf-8")
            else:
                self.error = (p.stderr or p.stdout or f"exit status {p.returncode}").strip()[-2000:]


def _report(request: Request) -> SpecReport:
    app = request.app
    rep = getattr(app.state, "spec_report", None)
    if rep is None:
        rep = app.state.spec_report = SpecReport(app.state.grader.settings.spec)
    return rep


@router.get("/spec")
def spec_page(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    rep = _report(request)
    if rep.html is not None:
        return HTMLResponse(rep.html, headers=HEADERS)
    rep.start()
    return page(request, "spec_wait.html", who=who, error=rep.error)


@router.get("/spec/status")
def spec_status(request: Request, who: Principal = Depends(page_instructor)) -> Response:
    rep = _report(request)
    headers: dict[str, str] = {"HX-Refresh": "true"} if rep.html is not None else {}
    return page(request, "_spec_status.html", who=who, error=rep.error, headers=headers)
