"""LTI 1.3 tests: the service's helpers (tests/serve/serve_helpers.py) are importable here."""
from __future__ import annotations

import sys
from pathlib import Path

SERVE = str(Path(__file__).resolve().parent.parent / "serve")
if SERVE not in sys.path:
    sys.path.insert(0, SERVE)
