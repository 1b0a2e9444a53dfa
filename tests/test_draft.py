"""grader draft / grader check-text (issue #28): kinds of statements on hand-made sentences, the
text's own slips, hostile texts, every draft loading in check-spec, the CLI's exit status."""
from __future__ import annotations

import json
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from grader.api import check_text, draft_text
from grader.draft.engine import check_sources, draft_sources
from grader.draft.sources import from_text, read_source
from grader.claims.load import load_file

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def write(tmp_path: Path, text: str, name: str = "t.md") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def problems(tmp_path: Path, text: str, name: str = "t.md") -> list:
    return list(check_text([write(tmp_path, text, name)]).problems)


def loads(tmp_path: Path, path: str) -> int:
    """Draft the text at path, write the spec beside it, load it as check-spec does: its claims."""
    out = tmp_path / "draft.yaml"
    d = draft_text([path], output=str(out))
    out.write_text(d.yaml, encoding="utf-8")
    return len(load_file(str(out)).claims)


# ---------------------------------------------------------------- arithmetic
def test_a_correct_chain_is_no_problem(tmp_path):
    # 4·512² = 4·262,144 = 1,048,576 by hand: 512² = 262,144; ×4 = 1,048,576
    assert problems(tmp_path, "Verification: 4·512² = 4·262,144 = 1,048,576 ✓\n") == []


def test_a_wrong_product_is_found_with_what_it_should_be(tmp_path):
    # 8 × 3 × 32,768 = 786,432 by hand, not 786,000
    [p] = problems(tmp_path, "Then 8 heads × 3 matrices × 32,768 = 786,000 parameters.\n")
    assert p.kind == "arithmetic" and p.line == 1
    assert "786,000" in p.says and "786,432" in p.gives


def test_rounding_within_the_stated_digits_holds_and_beyond_does_not(tmp_path):
    # 2048·4096² = 34,359,738,368: "34.4B" is within ±0.05B; "34.6B" is not
    assert problems(tmp_path, "Cost: 2048 · 4096² ≈ 2048 · 16.8M ≈ 34.4B FLOPs\n") == []
    [p] = problems(tmp_path, "Cost: 2048 · 4096² ≈ 34.6B FLOPs\n")
    assert "34.6B" in p.says


def test_a_total_of_rounded_terms_is_found(tmp_path):
    text = ("# FLOPs\n\nProjections: 2048 · 4096² ≈ 34.4B FLOPs\n\nAttention: 2048² · 4096 ≈ 17.2B FLOPs\n\n"
            "Values: O(n²d) ≈ 17.2B FLOPs\n\nTotal: ≈ 68.8B FLOPs.\n")
    [p] = problems(tmp_path, text)
    # by hand: 34,359,738,368 + 2 × 17,179,869,184 = 68,719,476,736 ≈ 68.7B, not 68.8B
    assert p.kind == "total" and p.line == 9 and "68,719,476,736" in p.gives


def test_definitions_above_are_used(tmp_path):
    # d_k = 768/12 = 64, so h·d_k = 12·64 = 768 = d_model holds, and 12·64 = 770 does not
    ok = "Let d_model = 768 and h = 12 heads.\n\nThen h·d_k = 12·64 = 768 = d_model.\n"
    assert problems(tmp_path, ok) == []
    [p] = problems(tmp_path, "Let d_model = 768 and h = 12 heads.\n\nThen 12·64 = 770.\n")
    assert p.line == 3


# ---------------------------------------------------------------- formulas, shapes
def test_a_wrong_identity_is_found(tmp_path):
    # h·d·(d/h) is d², not d²/h
    assert problems(tmp_path, "Total for Q: h·d·(d/h) = d².\n") == []
    [p] = problems(tmp_path, "Total for Q: h·d·(d/h) = d²/h.\n")
    assert p.kind == "formula" and p.says == "h·d·(d/h) = d²/h"


def test_a_shape_that_disagrees_with_the_sizes_above(tmp_path):
    head = "Problem: d_model=768, h=12 heads. Sequence length n=128.\n\n"
    assert problems(tmp_path, head + "After projection: Q_i ∈ ℝ^(128×64)\n") == []
    [p] = problems(tmp_path, head + "After projection: Q_i ∈ ℝ^(128×96)\n")
    assert p.kind == "shape" and "(128×64)" in p.gives      # d_k = 768/12 = 64


# ---------------------------------------------------------------- kinds
@pytest.mark.parametrize("sentence,kind", [
    ("Verification: 4·512² = 4·262,144 = 1,048,576 ✓", "arithmetic"),
    ("So for d_model = 512, h = 8: each head works with d_k = d_v = 64.", "definition"),
    ("Single-head attention computes softmax(QKᵀ/√d_k)V for every query.", "formula"),
    ("The weights are W_i^Q ∈ ℝ^(d_model × d_k) for each head.", "shape"),
    ("The layer has 4d² parameters in total.", "count"),
    ("The cost of the layer is O(n²d + nd²) overall.", "asymptotic"),
    ("For long sequences n > d: n²d dominates the projections.", "comparison"),
    ("GPT-3, one of the most well-known models, uses 96 attention heads.", "configuration"),
    ("Each head learns to focus on different aspects of the data.", "judgement"),
])
def test_each_kind_on_a_hand_made_sentence(sentence, kind):
    d = draft_sources([from_text(sentence + "\n", "t.md", utf8=False)])
    assert d.statements and kind in d.statements[0].kinds


def test_a_configuration_becomes_a_model_for_the_author_to_confirm(tmp_path):
    path = write(tmp_path, "GPT-3, one of the most well-known models, uses 96 attention heads.\n")
    d = draft_text([path], output=str(tmp_path / "s.yaml"))
    [m] = d.models
    assert dict(m.values) == {"h": "96"}
    assert "citation: \"DRAFT" in d.yaml
    assert loads(tmp_path, path) == 1


# ---------------------------------------------------------------- the bundled texts
@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed texts (../shared/seeds) are not there")
def test_the_seeds_slips_and_nothing_that_is_correct():
    r = check_text([str(SEEDS / "001_412c6d998a5765e1.txt"), str(SEEDS / "000_0111365cf5101783.txt")])
    assert [(p.kind, p.says) for p in r.problems] == [("total", "68.8B")]
    here = Path(__file__).resolve().parents[1] / "spec" / "sources"
    assert check_text([str(p) for p in sorted(here.glob("*.txt"))]).problems == ()


# ---------------------------------------------------------------- formats
def test_html_latex_and_notebook_quotes_are_found_in_the_files(tmp_path):
    html = write(tmp_path, "<html><body><h2>Count</h2><p>Then <b>4·512²</b> = 1,048,576 &amp; more.</p>"
                           "<p>Each head learns &lt;something&gt; of its own.</p></body></html>", "t.html")
    tex = write(tmp_path, "\\section{Count}\nThen $4 \\cdot 512^{2} = 1{,}048{,}576$ parameters. % note\n"
                          "\\textbf{Each head} learns its own pattern of attention.\n", "t.tex")
    nb = write(tmp_path, json.dumps({"cells": [{"cell_type": "markdown", "source": ["# Count\n", "\n",
                                                "Then 4·512² = 1,048,576 \"weights\" in all.\n"]},
                                               {"cell_type": "code", "source": ["x = 1\n"]}]}), "t.ipynb")
    for path in (html, tex, nb):
        assert loads(tmp_path, path) >= 1, path
    assert check_text([tex]).problems == ()
    [p] = check_text([write(tmp_path, "\\section{A}\nThen $4 \\cdot 512^{2} = 1{,}048{,}000$.\n", "u.tex")]).problems
    assert "1,048,576" in p.gives


# ---------------------------------------------------------------- hostile texts
HOSTILE = [
    "Then 9" + "9" * 5000 + " = 1 and 10^10^10^10 = 5.\n",
    "x = " + "(" * 3000 + "1" + ")" * 3000 + " = 2\n",
    "d = " + "+".join(["d"] * 3000) + " = 3000d\n",
    "\u202e\u0301\u200b\ufeff\x00\x07 ℝ^(∞×∞) \U0001F600 = ２ × ３ = ６\n\u2028next\u2029 line\x85\n",
    "\\newcommand{\\x}{\\x}\\x \\frac{\\frac{\\frac{1}{2}}{3}}{4} = \\sqrt{\\sqrt{16}} $$\\begin{align}a&=b\\end{align}\n",
    ("A = 1 = " * 130000) + "\n",                 # a 1 MB line
    "Q1: what?\n" * 2000,
    "\"num_attention_heads\": 99999999999999999999999999,\n" * 50,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_texts_are_bounded_and_still_load(tmp_path, text):
    path = write(tmp_path, text)
    check_text([path])                              # no exception
    loads(tmp_path, path)


def test_a_file_too_large_is_one_clear_error(tmp_path):
    from grader.errors import GraderError
    path = tmp_path / "big.md"
    path.write_bytes(b"a" * (5 * 2**20))
    with pytest.raises(GraderError) as e:
        check_text([str(path)])
    assert "big.md" in str(e.value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["d_model", "=", "≈", "512", "4·512²", "1,048,576", "16.8M", "O(n²d)", "h", "×",
                                 "∈ ℝ^(128×64)", "Q_i", "\n", "\n\n", "# Title\n", "GPT-3", "96 heads", ".", "(",
                                 ")", "\\frac{1}{2}", "params", "Total:", "≈ 68.8B", "\"", "…", "...", "é", "\u0301",
                                 "\t", "-", "1."]), max_size=60))
def test_any_text_drafts_a_spec_that_loads(tmp_path, words):
    path = write(tmp_path, " ".join(words))
    loads(tmp_path, path)


# ---------------------------------------------------------------- the commands
def test_check_text_exit_status_and_formats(tmp_path):
    from grader.cli import main
    bad = write(tmp_path, "Then 2 + 2 = 5.\n", "bad.md")
    good = write(tmp_path, "Then 2 + 2 = 4.\n", "good.md")
    for args, rc in (([good], 0), ([bad], 1)):
        with pytest.raises(SystemExit) as e:
            main(["check-text", *args])
        assert e.value.code == rc
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit):
        main(["check-text", bad, "--format", "json", "-o", str(out)])
    data = json.loads(out.read_text())
    assert data["problems"][0]["line"] == 1 and data["summary"]["ok"] is False
    with pytest.raises(SystemExit):
        main(["check-text", bad, "--format", "junit", "-o", str(tmp_path / "r.xml")])
    assert ET.parse(tmp_path / "r.xml").getroot().get("failures") == "1"


def test_draft_command_writes_a_spec_that_check_spec_loads(tmp_path, capsys):
    from grader.cli import main
    text = write(tmp_path, "# Count\n\nVerification: 4·512² = 4·262,144 = 1,048,576 ✓\n")
    out = tmp_path / "spec" / "s.yaml"
    out.parent.mkdir()
    with pytest.raises(SystemExit) as e:
        main(["draft", text, "-o", str(out), "--subject", "my-sub"])
    assert e.value.code == 0
    assert "1 statements found" in capsys.readouterr().out or "statements found" in capsys.readouterr().out
    s = load_file(str(out))
    assert s.id == "my-sub" and not s.unchecked          # the quote was checked against the text
    [claim] = s.claims
    assert claim.quote == "Verification: 4·512² = 4·262,144 = 1,048,576 ✓"


def test_the_commands_do_not_import_torch(tmp_path):
    import subprocess
    import sys
    path = write(tmp_path, "Then 2 + 2 = 4.\n")
    code = ("import sys; from grader.cli import main\ntry: main(['check-text', %r])\nexcept SystemExit: pass\n"
            "assert 'torch' not in sys.modules" % path)
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- measured checks, expectations
def test_a_count_mha_measures_is_proposed_with_what_mha_gives(tmp_path):
    # by hand: mha's projections cost 8·n·d² = 8 · 2048 · 4096² = 274,877,906,944 FLOPs, so the text's
    # "34.4B" (2048 · 4096², one projection's multiply-adds) is refuted; its arithmetic is right
    text = ("# Example\n\nProblem: For n=2048, d=4096, h=32, compute the FLOPs.\n\n"
            "Projections: O(nd²) = 2048 · 4096² ≈ 34.4B FLOPs\n")
    d = draft_text([write(tmp_path, text)], output=str(tmp_path / "s.yaml"))
    [st] = [s for s in d.statements if "Projections" in s.quote]
    [m] = [c for c in st.checks if c.kind == "measure"]
    f = dict(m.fields)
    assert f["quantity"] == "flops.projections" and dict(f["at"]) == {"d": "4096", "h": "32", "n": "2048"}
    assert m.holds is False and "274,877,906,944" in m.evidence
    assert [c.holds for c in st.checks if c.kind == "numeric"] == [True]
    assert "expect: refuted" in d.yaml and "corrected: \"DRAFT" in d.yaml
    assert check_text([write(tmp_path, text)]).problems == ()      # the text's own arithmetic is right


def test_parameters_of_the_attention_are_measured_without_biases_when_the_figure_says_so(tmp_path):
    # by hand: 4d² = 4 · 512² = 1,048,576 (the weights); with biases 4d² + 4d = 1,050,624
    text = "Problem: d_model=512, h=8.\n\nTotal: 786,432 + 262,144 = 1,048,576 parameters\n"
    d = draft_text([write(tmp_path, text)])
    [m] = [c for s in d.statements for c in s.checks if c.kind == "measure"]
    assert dict(m.fields)["quantity"] == "params_nobias" and m.holds is True


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    from grader.cli import main
    nb = write(tmp_path, "{not json", "bad.ipynb")
    with pytest.raises(SystemExit) as e:
        main(["check-text", nb])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "bad.ipynb" in err and "Traceback" not in err


# ---------------------------------------------------------------- the new texts (not used to write the rules)
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def test_the_ffn_text_s_four_slips_and_nothing_else():
    # its slips, by hand: 4,718,592 + 3,840 = 4,722,432 (line 31); 32 · 135,266,304 = 4,328,521,728 ≈ 4.3B
    # (line 63); 270,532,608 + 134,217,728 = 404,750,336 ≈ 404.8M (line 71); A_i is n × n = 1024 × 1024 (line 81)
    r = check_text([str(EXAMPLES / "ffn.md")])
    assert [(p.line, p.kind) for p in r.problems] == [(31, "arithmetic"), (63, "arithmetic"), (71, "total"), (81, "shape")]


def test_the_kv_cache_text_two_of_its_three_slips_and_nothing_else():
    # its slips (its first line): 32 · 16,384 = 524,288 (line 25); 536,870,912 B ≈ 537 MB (line 40);
    # "8 · 2.1 GB ≈ 18.2 GB" (line 29) is not found: a unit inside a computation is not recomputed
    r = check_text([str(EXAMPLES / "kv-cache.md")])
    assert [(p.line, p.kind) for p in r.problems] == [(25, "arithmetic"), (40, "arithmetic")]


def test_the_draft_is_deterministic(tmp_path):
    text = "# A\n\nProblem: d_model=512, h=8.\n\nVerification: 4d² = 4·512² = 1,048,576 ✓\n\nHeads learn roles.\n"
    path = write(tmp_path, text)
    assert draft_text([path]).yaml == draft_text([path]).yaml


def test_check_spec_gives_the_verdicts_the_draft_expects(tmp_path):
    """The drafted expectations (holds, refuted from mha's formulas, unverifiable) are check-spec's
    verdicts: a draft of Example 3's sentences runs with every claim as expected."""
    from grader.claims.run import check_paths
    text = ("# Example\n\nProblem: For n=2048, d=4096, h=32, compute the FLOPs.\n\n"
            "Projections: O(nd²) = 2048 · 4096² ≈ 34.4B FLOPs\n\nVerification: 4d² = 4·4096² = 67,108,864 ✓\n\n"
            "Each head might learn a different pattern.\n")
    out = tmp_path / "s.yaml"
    out.write_text(draft_text([write(tmp_path, text)], output=str(out)).yaml, encoding="utf-8")
    [subject] = check_paths([str(out)], train=False)
    verdicts = {r.claim.quote[:12]: (r.verdict, r.ok) for r in subject.results}
    assert verdicts["Projections:"] == ("refuted", True)     # 8nd² = 274.9 GFLOPs, not 34.4B
    assert verdicts["Verification"] == ("holds", True)       # 4 · 4096² = 67,108,864
    assert verdicts["Each head mi"] == ("unverifiable", True)
