"""Helpers of the browser tests."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"


def sign_in(page, url: str, token: str) -> None:
    """Sign in with the keyboard only: the token field has focus; type, Enter."""
    page.goto(url + "/learn/login")
    # autofocus puts the caret in the token field: wait until it has (on a loaded machine the
    # first keys can come before it, and a token typed half into nothing is "not valid")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'token'")
    page.keyboard.type(token)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "/learn/login" not in page.url, page.locator("main").inner_text()


def axe_violations(page) -> list[dict]:
    """axe-core's serious and critical violations of the page (WCAG 2 A/AA rules)."""
    # evaluated through the DevTools protocol: the pages' CSP (script-src 'self') stays as it is
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;true")
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}));
    }""")
    return [v for v in found if v["impact"] in ("serious", "critical")]


def unlabelled_inputs(page) -> list[str]:
    """Form fields (not hidden) with neither a <label> nor an aria-label."""
    return page.evaluate("""() => [...document.querySelectorAll('input, textarea, select')]
        .filter(e => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
        .map(e => e.outerHTML.slice(0, 120))""")


def focused(page) -> dict:
    """The focused element: tag, id, type, text, and its outline (style, width in px)."""
    return page.evaluate("""() => { const e = document.activeElement; const s = getComputedStyle(e);
        return {tag: e.tagName, id: e.id, type: e.type || '', text: (e.textContent || '').trim(),
                outline: s.outlineStyle, width: parseFloat(s.outlineWidth)}; }""")


def tab_to(page, predicate, limit: int = 80) -> dict:
    """Tab until the focused element satisfies ``predicate``; focus must be visible on each."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        f = focused(page)
        if f["tag"] not in ("BODY", "MAIN"):
            assert f["outline"] != "none" and f["width"] >= 2, f"focus not visible on {f}"
        if predicate(f):
            return f
    raise AssertionError("never reached the element by Tab")
