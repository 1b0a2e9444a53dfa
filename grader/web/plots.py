"""Plots as inline SVG, drawn by matplotlib (its object API, no pyplot: thread-safe, no
display); text stays text in the SVG (searchable, read by screen readers)."""
from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure
import re
from collections.abc import Callable
from typing import Any


def _svg(fig: Figure, title: str) -> str:
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "grader"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Title": title})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    # an accessible name for the figure
    return re.sub(r"<svg ", f'<svg role="img" aria-label="{_attr(title)}" ', svg, count=1)


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _figure(w: float, h: float) -> Figure:
    from matplotlib.figure import Figure
    return Figure(figsize=(w, h), dpi=96)


def distribution(points: float, distribution: list[dict[str, Any]], title: str) -> str:
    """A bar per score: how many learners have it (the gradebook's policy)."""
    fig = _figure(6, 2.8)
    ax = fig.add_subplot()
    xs = [float(d["score"]) for d in distribution]
    ys = [int(d["learners"]) for d in distribution]
    width = max(points, 1) / 12
    ax.bar(xs, ys, width=width, color="#0b57d0")
    ax.set_xlabel("score (points)")
    ax.set_ylabel("learners")
    ax.set_xlim(-width, max(points, max(xs, default=0)) + width)
    from matplotlib.ticker import MaxNLocator
    locator = ax.yaxis.get_major_locator()
    if isinstance(locator, MaxNLocator):    # the default AutoLocator: whole learners only
        locator.set_params(integer=True)
    ax.set_title(title, fontsize=10)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    return _svg(fig, title)


def crossover(d: int, projections: Callable[[float], float], attention: Callable[[float], float], n_exact: int,
              n_text: int, title: str) -> str:
    """FLOPs of the projections and of attention against n at one d; the exact crossover and
    the text's, as vertical lines. ``projections``, ``attention``: callables of n."""
    import numpy as np
    fig = _figure(7, 3.6)
    ax = fig.add_subplot()
    n = np.linspace(1, 4 * d, 400)
    ax.plot(n, [projections(x) for x in n], label="projections 8·n·d²", color="#0b57d0")
    ax.plot(n, [attention(x) for x in n], label="attention QKᵀ + A·V 4·n²·d", color="#a40e26")
    ax.axvline(n_exact, color="#116329", linestyle="-", linewidth=1.5)
    ax.annotate(f"exact crossover n = 2d = {n_exact:,}", (n_exact, ax.get_ylim()[1] * 0.9), xytext=(6, 0),
                textcoords="offset points", color="#116329", fontsize=9)
    ax.axvline(n_text, color="#7a4d00", linestyle="--", linewidth=1.5)
    ax.annotate(f"text's claim: n > d = {n_text:,} (wrong)", (n_text, ax.get_ylim()[1] * 0.75), xytext=(-6, 0),
                textcoords="offset points", ha="right", color="#7a4d00", fontsize=9)
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("FLOPs (one layer's attention block)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    return _svg(fig, title)
