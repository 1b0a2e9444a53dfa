"""Pictures of the demonstrations: each trained head's attention maps, per seed
(`grader check-spec --figures DIR`). matplotlib (Agg, no display) is imported only here.

For every trained model a demonstration reports (the two-relation task: kind demonstrate with a
statistic about one h), one figure, written as DIR/<name>.png and DIR/<name>.svg: a column per
head; on top the head's attention averaged over the evaluation batch (query position i against
key position j: the positional head is the line j = i - 1), below its attention on one sequence
of that batch, whose ticks are the key tokens (the content head lights up where the query's key
is the key's). A model that several claims share is drawn once.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .run import SubjectResult


class AttentionFigure(TypedDict):
    """One trained model's attention maps, as a demonstration's details carry them (mha.experiments)."""

    name: str
    h: int
    seed: int
    cross: bool
    maps: list[list[list[float]]]           # per head: query position × key position, averaged
    example: list[list[list[float]]]        # per head: the same, on one sequence of the batch
    keys: Mapping[str, Sequence[object]] | None     # that sequence's "source" and "query" key tokens


def cannot_plot(folder: str | os.PathLike[str]) -> str:
    """Why figures cannot be written to ``folder`` ("" when they can); checked before a long run."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib)"
    p = Path(folder)
    if p.exists() and not p.is_dir():
        return "not a folder"
    parent = p if p.exists() else next((a for a in p.absolute().parents if a.exists()), None)
    if parent is None or not os.access(parent, os.W_OK | os.X_OK):
        return "cannot write there"
    return ""


def figures_of(subject_results: Iterable[SubjectResult]) -> list[AttentionFigure]:
    """Every distinct figure the demonstrations of these results carry (by name, first kept)."""
    seen: dict[str, AttentionFigure] = {}
    for sr in subject_results:
        for r in sr.results:
            for c in r.checks:
                for f in c.details.get("figures") or ():
                    seen.setdefault(f["name"], f)
    return list(seen.values())


def write_attention_maps(subject_results: Iterable[SubjectResult], folder: str | os.PathLike[str]) -> list[Path]:
    """Write the figures (PNG and SVG); the paths written."""
    figures = figures_of(subject_results)
    if not figures:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for f in figures:
        fig = draw(plt, f)
        for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None})):
            path = out / f"{f['name']}.{ext}"
            with matplotlib.rc_context({"svg.hashsalt": f["name"]}):
                fig.savefig(path, format=ext, metadata=meta, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written


def draw(plt: ModuleType, f: AttentionFigure) -> Figure:
    """One figure: a column per head; average map on top, one sequence's map below."""
    h = f["h"]
    fig: Figure
    fig, axes = plt.subplots(2, h, figsize=(2.9 * h + 1.2, 6.0), squeeze=False, layout="constrained")
    keys = f.get("keys") or {}
    for i in range(h):
        for row, (maps, what) in enumerate(((f["maps"], "average"), (f["example"], "one sequence"))):
            ax = axes[row][i]
            im = ax.imshow(maps[i], vmin=0.0, vmax=1.0, cmap="viridis")
            ax.set_title(f"head {i + 1}: {what}", fontsize=9)
            ax.set_xlabel("key position j" if row == 0 else "key token", fontsize=8)
            if i == 0:
                ax.set_ylabel("query position i" if row == 0 else "query key token", fontsize=8)
            ax.tick_params(labelsize=7)
            if row == 1 and keys:
                ax.set_xticks(range(len(keys["source"])), [str(k) for k in keys["source"]])
                ax.set_yticks(range(len(keys["query"])), [str(k) for k in keys["query"]])
    fig.colorbar(im, ax=axes, shrink=0.6, label="attention weight")
    sizes = f["name"].split("-seed")[0]
    fig.suptitle(f"{sizes}, seed {f['seed']}: each head's attention after training", fontsize=10)
    return fig
