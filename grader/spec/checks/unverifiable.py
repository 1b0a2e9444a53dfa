"""`unverifiable`: nothing to check; the reason is reported."""
from __future__ import annotations

from .common import result

NAME = "unverifiable"
FIELDS = {"reason": ("text", True)}
MEASURES = False
HELP = "nothing to check; the reason is reported"


def run(ctx, check):
    return result("unverifiable", "unverifiable", check["reason"])
