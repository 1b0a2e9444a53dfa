"""The pages' HTML helpers without a browser: MathML that is only MathML, prompts escaped,
the gradebook's sort, the benchmark at a small size."""
from __future__ import annotations

import subprocess
import sys

from web_helpers import ROOT
from grader.web.render import prompt_math, safe_mathml
from grader.web.staff import sort_rows


def test_mathml_keeps_only_mathml():
    ok = safe_mathml('<mrow><mn>4</mn><mo>&InvisibleTimes;</mo><msup><mi>d</mi><mn>2</mn></msup></mrow>')
    assert ok.startswith('<math display="inline">') and "<msup><mi>d</mi><mn>2</mn></msup>" in ok
    assert "\u2062" in ok                                   # &InvisibleTimes; as its character
    assert safe_mathml('<mrow><script>alert(1)</script></mrow>') == ""
    assert safe_mathml('<mi onclick="alert(1)" href="javascript:x">d</mi>') == '<math display="inline"><mi>d</mi></math>'
    assert safe_mathml("<mi>unclosed") == ""


def test_prompt_math_escapes_the_rest():
    out = str(prompt_math("W_i^Q <b>x</b> & d_model"))
    assert "<msubsup><mi>W</mi><mi>i</mi><mi>Q</mi></msubsup>" in out
    assert "&lt;b&gt;x&lt;/b&gt; &amp;" in out and "<b>" not in out


def test_sort_rows_puts_unanswered_last():
    rows = [{"learner": "a", "name": "", "total": 1, "problems": {"p": {"score": 1}}},
            {"learner": "b", "name": "", "total": 3, "problems": {}},
            {"learner": "c", "name": "", "total": 2, "problems": {"p": {"score": 2}}}]
    assert [r["learner"] for r in sort_rows(rows, "p", "desc")] == ["c", "a", "b"]
    assert [r["learner"] for r in sort_rows(rows, "p", "asc")] == ["a", "c", "b"]
    assert [r["learner"] for r in sort_rows(rows, "total", "desc")] == ["b", "c", "a"]


def test_bench_web_runs():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_web.py"), "--learners", "20",
                        "--repeat", "1"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    from grader.bank import load_bank
    assert f"gradebook 20 learners x {len(load_bank().problems)} problems" in r.stdout   # the bundled bank
    from grader.api import load_course
    hw1 = load_course(load_bank(), ROOT / "docs" / "examples" / "course.yaml").assessments[0]   # the example course's first tab
    assert f"assessment {hw1.id} gradebook 20 learners x {len(hw1.problem_ids)} problems" in r.stdout
    assert f"assessment {hw1.id} rows from the database, 20 learners x {len(hw1.problem_ids)} problems" in r.stdout
