"""The spec report shows each claim's quote in its place in the source text: a small spec with
its own small source file (made here), checked by `grader check-spec --format html`; the quote
is marked inside the words around it, in the HTML and in Chromium. A source with no file
shows the bare quote and says the source is not available."""
from __future__ import annotations

import html
import re
import subprocess
import sys

from web_helpers import ROOT, axe_violations

BEFORE = "Each head works in a smaller space, so the total cost stays the same."
QUOTE = "the four projection matrices hold 4·d² weights"
AFTER = "Biases add another 4·d, which is easy to forget when counting."
# the source wraps the quoted words over a line break, as a text file does
SOURCE = (f"Chapter 1.\n\n{BEFORE}\nIn a layer with model width d, the four projection\n"
          f"matrices hold 4·d² weights. {AFTER}\n<script>alert('source')</script>\n")
GAPPED = "the four projection … Biases add another 4·d"

SPEC = """\
subject:
  id: "t-src"
  title: A small subject
  sources:
    text: {{title: A small text, path: texts/chapter.txt}}
    lost: {{title: A text that is not here, path: texts/missing.txt}}
symbols:
  d: {{positive: true, integer: true}}
claims:
- id: weights
  quote: "{q}"
  source: {{document: text, section: s1}}
  expect: holds
  checks:
    - {{kind: identity, lhs: "4*d*d", rhs: "4*d^2"}}
- id: gapped
  quote: "{g}"
  source: {{document: text, section: s1}}
  expect: holds
  checks:
    - {{kind: identity, lhs: "d + d", rhs: "2*d"}}
- id: elsewhere
  quote: "a sentence of a text nobody has"
  source: {{document: lost, section: s2}}
  expect: holds
  checks:
    - {{kind: identity, lhs: "2*d", rhs: "d + d"}}
"""


def _text(fragment: str) -> str:
    """A fragment of the HTML as plain text, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def _report(tmp_path):
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "chapter.txt").write_text(SOURCE, encoding="utf-8")
    spec = tmp_path / "small.yaml"
    spec.write_text(SPEC.format(q=QUOTE, g=GAPPED), encoding="utf-8")
    out = tmp_path / "report.html"
    # run from the repository, not beside the spec: the source is found relative to the spec
    p = subprocess.run([sys.executable, "-m", "grader", "check-spec", "--format", "html", "-o", str(out), str(spec)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.is_file(), p.stderr
    return out


def test_quote_marked_in_its_source_text(tmp_path, new_page):
    out = _report(tmp_path)
    doc = out.read_text(encoding="utf-8")
    article = re.search(r'<article[^>]*id="claim-weights".*?</article>', doc, re.S).group(0)
    region = re.search(r'<div class="source-text"[^>]*>(.*?)</div>', article, re.S).group(1)
    marks = re.findall(r"<mark>(.*?)</mark>", region, re.S)
    assert [_text(m) for m in marks] == [QUOTE]                 # the quote, marked once ...
    before, after = _text(region.split("<mark>")[0]), _text(region.split("</mark>")[1])
    assert before.endswith(BEFORE + " In a layer with model width d,")   # ... inside the source's own words
    assert after.startswith(". " + AFTER)
    assert "&lt;script&gt;" in region and "<script" not in doc  # the source's text is text
    assert "not available" not in article

    gapped = re.search(r'<article[^>]*id="claim-gapped".*?</article>', doc, re.S).group(0)
    assert [_text(m) for m in re.findall(r"<mark>(.*?)</mark>", gapped, re.S)] == [
        "the four projection", "Biases add another 4·d"]        # each fragment of a " … " quote

    lost = re.search(r'<article[^>]*id="claim-elsewhere".*?</article>', doc, re.S).group(0)
    assert "<mark>" not in lost and 'class="source-text"' not in lost
    assert "a sentence of a text nobody has" in _text(re.search(r"<blockquote.*?</blockquote>", lost, re.S).group(0))
    assert "The source text is not available (texts/missing.txt was not found" in _text(lost)

    page = new_page()
    page.goto(out.as_uri())
    region = page.locator("article#claim-weights .source-text")
    mark = region.locator("mark")
    assert mark.count() == 1 and mark.is_visible()
    assert re.sub(r"\s+", " ", mark.inner_text()) == QUOTE
    seen = re.sub(r"\s+", " ", region.inner_text())
    assert f"{BEFORE} In a layer with model width d, {QUOTE}. {AFTER}" in seen
    assert mark.evaluate("e => getComputedStyle(e).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    assert page.locator("article#claim-elsewhere .no-source").is_visible()
    assert axe_violations(page) == []
