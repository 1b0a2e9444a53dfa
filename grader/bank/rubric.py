"""A problem's rubric for the person who grades it (``rubric:`` in a bank file).

::

    rubric:
      cap: 2                      # optional: at most this many points (default: the problem's points)
      items:
        - {id: a, text: "names the W^O projection", points: 1}
        - {id: b, text: "no reason given", points: -0.5}

Each item adds its points (positive or negative) when the reviewer applies it; the score is
the sum of the applied items clamped to ``[0, cap]`` (:meth:`Rubric.score`). Pure: no I/O.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from grader.errors import GraderError, Location, SpecError

RUBRIC_KEYS = {"items", "cap"}
ITEM_KEYS = {"id", "text", "points"}
ITEM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,19}$")
MAX_ITEMS = 20


@dataclass(frozen=True)
class RubricItem:
    id: str
    text: str
    points: float


@dataclass(frozen=True)
class Rubric:
    items: tuple[RubricItem, ...]
    cap: float | None = None        # None: the problem's points

    def get(self, item_id: str) -> RubricItem | None:
        return next((i for i in self.items if i.id == item_id), None)

    def ceiling(self, points: float) -> float:
        return float(points) if self.cap is None else float(self.cap)

    def score(self, applied: Iterable[str], points: float) -> float:
        """The sum of the applied items' points, clamped to ``[0, cap or points]``; an id not in
        the rubric raises ``KeyError``."""
        total = 0.0
        for item_id in applied:
            item = self.get(item_id)
            if item is None:
                raise KeyError(item_id)
            total += item.points
        return min(max(total, 0.0), self.ceiling(points))


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)


def read_rubric(raw: Any, where: Location | None, points: float, errors: list[GraderError],
                unknown_keys: Callable[[Any, Iterable[str], str], list[SpecError]]) -> Rubric | None:
    """A problem's ``rubric:`` (None when absent); every error found is appended, located."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("items"), list) or not raw["items"]:
        errors.append(SpecError("'rubric' must be {items: [{id, text, points}, ...], cap: number}", where))
        return None
    errors.extend(unknown_keys(raw, RUBRIC_KEYS, "'rubric'"))
    loc_of = getattr(raw, "loc_of", None)
    cap = raw.get("cap")
    if cap is not None and (not _number(cap) or cap < 0 or cap > points):
        errors.append(SpecError(f"'rubric.cap' must be a finite number from 0 to the problem's {points:g} points, "
                                f"got {cap!r}", loc_of("cap") if loc_of else where))
        cap = None
    items_raw = raw["items"]
    if len(items_raw) > MAX_ITEMS:
        errors.append(SpecError(f"'rubric' has {len(items_raw)} items; at most {MAX_ITEMS}", where))
    items: list[RubricItem] = []
    seen: set[str] = set()
    n = len(errors)
    for i, it in enumerate(items_raw[:MAX_ITEMS]):
        at = items_raw.loc_of(i) if hasattr(items_raw, "loc_of") else where
        if not isinstance(it, dict):
            errors.append(SpecError("a rubric item must be {id, text, points}", at))
            continue
        errors.extend(unknown_keys(it, ITEM_KEYS, "a rubric item"))
        iid, text, pts = it.get("id"), it.get("text"), it.get("points")
        if not isinstance(iid, str) or not ITEM_ID.match(iid):
            errors.append(SpecError(f"a rubric item's 'id' must be a short name (letters, digits, _ or -), "
                                    f"got {iid!r}", at))
        elif iid in seen:
            errors.append(SpecError(f"duplicate rubric item id {iid!r}", at))
        if not isinstance(text, str) or not text.strip():
            errors.append(SpecError("a rubric item needs its 'text' (what the reviewer checks)", at))
        if not _number(pts):
            errors.append(SpecError(f"a rubric item's 'points' must be a finite number (negative takes points "
                                    f"off), got {pts!r}", at))
        if len(errors) == n:
            seen.add(str(iid))
            items.append(RubricItem(str(iid), str(text).strip(), float(pts or 0)))
        n = len(errors)
    return Rubric(tuple(items), None if cap is None else float(cap))
