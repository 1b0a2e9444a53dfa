"""The per-claim time limit's bounds (light: the CLI reads them to define its options)."""
from __future__ import annotations

import math

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 1e6       # seconds (11 days): beyond, the timers' arithmetic overflows


def check_timeout(timeout: object) -> float | None:
    """A per-claim limit in seconds: a number > 0 and at most MAX_TIMEOUT, or None (no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be a number of seconds > 0 and at most {MAX_TIMEOUT:g}, or None, "
                         f"got {timeout!r}")
    return float(timeout)
