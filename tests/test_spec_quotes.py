"""Every quote of the bundled spec (and of the docs' worked example) is what its source text says.

A claim's ``quote`` must be the text's own words: compared with whitespace normalised (line
breaks, list indentation and double spaces read as one space), and a gap written " … " (or
" ... ") between fragments that each appear in the text, in that order. A literal "..." of the
text (Concat(head₁, ..., head_h)) may be quoted as it is. The source file comes from the spec's
``sources: {key: {path: ...}}``, a path like shared/seeds/...: looked up in the repository and
beside it (a clone with shared/ next to it, as in CI). Without the seed texts the test is skipped,
saying where it looked.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SPECS = [ROOT / "spec" / "17-08.yaml", ROOT / "spec" / "17-09.yaml", ROOT / "spec" / "17-10.yaml",
         ROOT / "docs" / "examples" / "worked.yaml"]
from grader.claims.quotes import GAP, appears, normalise, quote_pattern  # noqa: F401  (the engine's matcher)


def _claims():
    out = []
    for spec in SPECS:
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        sources = data["subject"]["sources"]
        for c in data["claims"]:
            doc = c["source"]["document"]
            out.append(pytest.param(spec, sources[doc].get("path"), c["quote"],
                                    id=f"{spec.stem}:{c['id']}"))
    return out


def resolve(path: str) -> Path:
    tried = [ROOT / path, ROOT.parent / path]
    for p in tried:
        if p.is_file():
            return p
    pytest.skip(f"source text {path} not found (looked in {', '.join(map(str, tried))}); "
                "the seed texts live in shared/ beside the repository")


@pytest.mark.parametrize("spec, path, quote", _claims())
def test_quote_is_verbatim(spec, path, quote):
    assert path, f"{spec.name}: the claim's source has no 'path', so its quote cannot be checked"
    text = resolve(path).read_text(encoding="utf-8")
    missing = [f for f in GAP.split(normalise(quote)) if f and f not in normalise(text)]
    assert appears(quote, text), (
        f"not in {path} (whitespace normalised, ' … ' a gap): "
        + ("; ".join(map(repr, missing)) if missing else "every fragment is there, but not in this order"))


def test_every_source_has_a_path():
    for spec in SPECS:
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        for key, doc in data["subject"]["sources"].items():
            assert doc.get("path"), f"{spec.name}: source {key} has no path"


# -- the matcher itself -------------------------------------------------------------------------
TEXT = """scores = Q @ K.transpose(-2, -1) / sqrt(d_k)  # (h, n, n)
attn = softmax(scores, dim=-1)

A) The definition B) A visual representation

Correct: A)
MultiHead(Q, K, V) = Concat(head₁, ..., head_h) · W^O"""


@pytest.mark.parametrize("quote", [
    "scores = Q @ K.transpose(-2, -1) / sqrt(d_k) # (h, n, n)",      # whitespace normalised
    "A) The definition … Correct: A)",                                # a gap
    "A) The definition ... Correct: A)",                              # the same gap, three dots
    "Concat(head₁, ..., head_h) · W^O",                               # the text's own "..."
    "scores = Q @ K.transpose(-2, -1) … attn = softmax(scores, dim=-1)",
])
def test_matcher_accepts(quote):
    assert appears(quote, TEXT)


@pytest.mark.parametrize("quote", [
    "scores # (h, n, n)",                                             # a splice of one line
    "Correct: A) The definition",                                     # the option moved after 'Correct:'
    "Correct: A) … A) The definition",                                # fragments out of order
    "scores = Q @ K.T / sqrt(d_k)",                                   # rewritten
])
def test_matcher_rejects(quote):
    assert not appears(quote, TEXT)
