"""`unverifiable`: nothing to check; the reason is reported."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .common import result

if TYPE_CHECKING:
    from ..model import Check, CheckResult
    from .common import Context

NAME = "unverifiable"
FIELDS = {"reason": ("text", True)}
MEASURES = False
HELP = "nothing to check; the reason is reported"


def run(ctx: Context, check: Check) -> CheckResult:
    return result("unverifiable", "unverifiable", check["reason"])
