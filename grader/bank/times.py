"""Times, durations and fractions as an assessments file writes them (:mod:`grader.bank.assessments`)."""
from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UNITS = {"s": 1, "sec": 1, "second": 1, "seconds": 1, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
         "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}
_DURATION_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*")


def parse_duration(raw: Any) -> timedelta | None:
    """``30 min``, ``1 h 30 min``, ``90 minutes``, ``2 days``, ``45 s``: a positive duration; None
    when it cannot be read (a bare number is refused: its unit would be a guess)."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    text, total, pos = raw.strip().lower(), 0.0, 0
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if m is None or m.group(2) not in UNITS:
            return None
        total += float(m.group(1)) * UNITS[m.group(2)]
        pos = m.end()
    return timedelta(seconds=total) if 0 < total <= 366 * 86400 else None


def parse_fraction(raw: Any) -> float | None:
    """``10%`` or ``0.1``: a fraction from 0 to 1; None otherwise."""
    if isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            value = float(raw.strip()[:-1]) / 100
        except ValueError:
            return None
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        value = float(raw)
    else:
        return None
    return value if math.isfinite(value) and 0 <= value <= 1 else None


def to_utc(raw: Any, tz: str) -> datetime | str:
    """An ISO 8601 time (text, or the datetime YAML read) as a UTC-aware datetime; a time
    without an offset is read in the zone ``tz``. A text saying why when it cannot be read."""
    if isinstance(raw, datetime):
        dt = raw
    elif isinstance(raw, date):
        return f"{raw.isoformat()} is a date without a time; write the time too, e.g. {raw.isoformat()} 23:59"
    elif isinstance(raw, str):
        try:
            dt = datetime.fromisoformat(raw.strip())
        except ValueError:
            return f"cannot read {raw!r} as a time (ISO 8601, e.g. 2026-12-07 23:59 or 2026-12-07T23:59:00+01:00)"
        if len(raw.strip()) <= 10:
            return f"{raw.strip()} is a date without a time; write the time too, e.g. {raw.strip()} 23:59"
    else:
        return f"expected a time (ISO 8601, e.g. 2026-12-07 23:59), got {raw!r}"
    if dt.tzinfo is None:
        zone = ZoneInfo(tz)
        local = dt.replace(tzinfo=zone)
        if local.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None) != dt:
            return f"{dt:%Y-%m-%d %H:%M} does not exist in {tz} (the clocks move forward then)"
        dt = local
    return dt.astimezone(timezone.utc)


def zone(raw: Any) -> ZoneInfo | None:
    if not isinstance(raw, str) or not raw or len(raw) > 64:
        return None
    try:
        return ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
