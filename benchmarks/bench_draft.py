"""How fast `grader draft` reads a text: words per second on a 10,000-word text made of the
bundled subject text (17-08) repeated, and on the seeds as they are.

    .venv/bin/python benchmarks/bench_draft.py
"""
from __future__ import annotations

import time
from pathlib import Path

from grader.draft.engine import check_sources, draft_sources
from grader.draft.sources import from_text

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seeds" / "001_412c6d998a5765e1.txt"


def _cold() -> None:
    from grader.draft.mathtext import symbol_ok, table_for
    from grader.expr.parser import _parse
    _parse.cache_clear()
    table_for.cache_clear()
    symbol_ok.cache_clear()


def main() -> None:
    base = SEED.read_text(encoding="utf-8") if SEED.is_file() else (ROOT / "docs/examples/kv-cache.md").read_text()
    text = base
    while len(text.split()) < 10_000:
        text += "\n\n" + base
    words = len(text.split())
    print(f"text: the 17-08 subject text repeated to {words:,} words (a repeated copy finds the parser's cache warm;"
          " the caches are emptied before each run)")
    draft_sources([from_text(base[:2000], "warm.txt", "text")])     # the imports (SymPy, pint), not timed
    for name, run in (("draft", draft_sources), ("check-text", check_sources)):
        _cold()
        src = from_text(text, "bench.txt", "text")
        t0 = time.perf_counter()
        run([src])
        dt = time.perf_counter() - t0
        print(f"{name}: {words:,} words in {dt:.2f} s = {words / dt:,.0f} words/s")


if __name__ == "__main__":
    main()
