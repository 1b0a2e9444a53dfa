"""Plots as inline SVG (the HTML report's crossover, :mod:`grader.reports.html`; the staff pages'
score distribution, through :func:`grader.api.service.distribution_plot`) drawn by matplotlib (its
object API, no pyplot: thread-safe, no display); text stays text in the SVG (searchable, read
by screen readers)."""
from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any


def _svg(fig: Any, title: str) -> str:
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


def crossover(d: int, projections: Callable[[Any], Any], attention: Callable[[Any], Any], n_exact: int,
              n_text: int, title: str) -> str:
    """FLOPs of the projections and of attention against n at one d; the exact crossover and
    the text's, as vertical lines. ``projections``, ``attention``: callables of n."""
    import numpy as np
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 3.6), dpi=96)
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


def distribution(points: float, distribution: list[dict[str, Any]], title: str) -> str:
    """A bar per score: how many learners have it (the gradebook's policy: a learner's best or
    last attempt); ``distribution``: ``{"score", "learners"}`` rows."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6, 2.8), dpi=96)
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
