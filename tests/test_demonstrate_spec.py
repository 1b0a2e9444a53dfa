"""kind: demonstrate in a spec: its fields checked when the spec is loaded, --no-train, --figures,
the on-disk cache, a check's budget, and the report's verdicts. Tiny experiments (the bundled
configuration runs in test_check_spec_cli.py::test_bundled_subject_passes)."""
import json

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.errors import ErrorList
from grader.claims.load import load_subjects
from spec_helpers import claim, write_spec

TINY = ("{kind: demonstrate, experiment: two-relations, statistic: specialisation, at: {d: 16, n: 8, h: 2}, "
        "seeds: 1, steps: 30, effect: \"> -5\"}")
DROP = ("{kind: demonstrate, experiment: dropout, statistic: zeroed-z, at: {d: 8, h: 2, n: 8, b: 2}, "
        "seeds: 2, effect: \"< 4\"}")


def invoke(*args):
    return CliRunner().invoke(cli, ["check-spec", *map(str, args)])


def errors_of(path):
    with pytest.raises(ErrorList) as info:
        load_subjects([path])
    return [str(e) for e in info.value.errors]


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize("check, message", [
    ('{kind: demonstrate, experiment: two-relations, statistic: accuracy, effect: "> 0"}',
     "experiment two-relations has no statistic 'accuracy'; its statistics are accuracy-gain"),
    ('{kind: demonstrate, experiment: guess, statistic: x, effect: "> 0"}', "experiment must be one of two-relations"),
    ('{kind: demonstrate, experiment: dropout, statistic: zeroed-z, effect: "about 4"}',
     "effect must be a comparison with a number"),
    ('{kind: demonstrate, experiment: dropout, statistic: zeroed-z, effect: "< 4", steps: 10}',
     "experiment dropout trains nothing: it takes no steps"),
    ('{kind: demonstrate, experiment: gradients, statistic: updated-fraction, effect: "> 0", dropout: 0.5}',
     "experiment gradients takes no dropout"),
    ('{kind: demonstrate, experiment: dropout, statistic: zeroed-z, effect: "< 4", dropout: 1.5}',
     "dropout must be a probability between 0 and 1"),
    ('{kind: demonstrate, experiment: two-relations, statistic: accuracy-gain, effect: "> 0"}',
     "statistic accuracy-gain compares several h: give vary"),
    ('{kind: demonstrate, experiment: two-relations, statistic: accuracy-gain, vary: {h: [2, 4]}, effect: "> 0"}',
     "compares h = 1 with other h"),
    ('{kind: demonstrate, experiment: two-relations, statistic: specialisation, at: {d: 30, h: 4}, effect: "> 0"}',
     "h = 4 does not divide d = 30"),
    ('{kind: demonstrate, experiment: two-relations, statistic: specialisation, at: {n: 7}, effect: "> 0"}',
     "needs an even n of at least 4"),
    ('{kind: demonstrate, experiment: two-relations, statistic: specialisation, at: {d: 100000}, effect: "> 0"}',
     "d must be an integer from 1 to 256"),
    ('{kind: demonstrate, experiment: two-relations, statistic: specialisation, seeds: 1000, effect: "> 0"}',
     "the number of seeds must be an integer from 1 to 32"),
    ('{kind: demonstrate, experiment: two-relations, statistic: specialisation, steps: 99999999, effect: "> 0"}',
     "steps must be an integer from 1 to 5000"),
    ('{kind: demonstrate, experiment: dropout, statistic: zeroed-z, effect: "< 4", budget: 100000}',
     "budget must be a number of seconds above 0 and at most 600"),
    ('{kind: demonstrate, experiment: dropout, statistic: zeroed-z, effect: "< 4", at: {n_kv: 2}}',
     "takes the sizes d, h, n, b, not n_kv"),
])
def test_a_bad_demonstration_is_an_error_at_its_field(tmp_path, check, message):
    p = write_spec(tmp_path, claim("c", "demonstrated", [check]))
    errs = errors_of(p)
    assert any(message in e for e in errs), errs
    assert all(e.startswith(f"{p}:{line_of(p, 'kind: demonstrate')}:") for e in errs), errs


def test_no_train_skips_the_training_and_keeps_the_rest(tmp_path):
    p = write_spec(tmp_path, claim("t", "demonstrated", [TINY]), claim("m", "demonstrated", [DROP]))
    r = invoke(p, "--no-train", "--format", "json")
    assert r.exit_code == 0, r.output                     # a skipped claim is no mismatch
    data = json.loads(r.output)
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts == {"t": "skipped", "m": "demonstrated"}
    assert data["summary"]["skipped"] == 1 and data["summary"]["demonstrated"] == 1
    text = invoke(p, "--no-train")
    assert "1 demonstrated, 1 skipped, 0 errors; 0 not as expected" in text.output
    junit = invoke(p, "--no-train", "--format", "junit")
    assert junit.output.count("<skipped") == 1


def test_the_evidence_can_be_rerun_and_a_second_run_trains_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    p = write_spec(tmp_path, claim("t", "demonstrated", [TINY]))
    runs = []
    for _ in range(2):
        r = invoke(p, "--format", "json")
        assert r.exit_code == 0, r.output
        (c,) = json.loads(r.output)["claims"]
        runs.append(c["evidence"]["checks"][0]["details"])
    first, second = runs
    assert first["trained"] == 1 and first["cached"] == 0
    assert second["trained"] == 0 and second["cached"] == 1
    assert first["values"] == second["values"] and first["seeds"] == [0]
    # the report names the figures; their data (the attention maps) stays in the API's result
    assert first["figures"] == ["two-relations-d16-n8-h2-steps30-seed0"]
    assert "python -m mha.experiments two-relations specialisation --at d=16,h=2,n=8 --seeds 0 --steps 30" \
        in first["rerun"]
    # the command in the evidence reruns it (from the cache: the same numbers)
    import subprocess
    import sys
    args = first["rerun"].split()[3:]
    out = subprocess.run([sys.executable, "-m", "mha.experiments", *args, "--json"], capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ, "GRADER_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["values"] == first["values"]


def test_figures_are_written_as_png_and_svg(tmp_path):
    p = write_spec(tmp_path, claim("t", "demonstrated", [TINY]), claim("u", "demonstrated", [TINY]))
    out = tmp_path / "figs"
    r = invoke(p, "--figures", out)
    assert r.exit_code == 0, r.output
    names = sorted(f.name for f in out.iterdir())
    # one trained model shared by the two claims: drawn once
    assert names == ["two-relations-d16-n8-h2-steps30-seed0.png", "two-relations-d16-n8-h2-steps30-seed0.svg"]
    assert (out / names[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (out / names[1]).read_bytes()[:500]
    (tmp_path / "file").write_text("x")
    bad = invoke(p, "--figures", tmp_path / "file")
    assert bad.exit_code == 2 and "is a file" in bad.output


def test_a_checks_budget_extends_its_claims_time_limit(tmp_path):
    """The measuring process is given max(the claim's limit, the check's budget)."""
    from grader.claims.load import load_subject
    from grader.claims.measurer import Measurements as Outcome
    from grader.claims.run import run_subject

    class Recorder:
        def __init__(self):
            self.budgets = []

        def submit(self, requests, budget=None):
            self.budgets.append(budget)
            return len(self.budgets) - 1

        def outcome(self, key):
            return Outcome(failure="not measured here")

    p = write_spec(tmp_path, claim("a", "demonstrated", [DROP[:-1] + ", budget: 90}"]), claim("b", "demonstrated", [DROP]))
    rec = Recorder()
    run_subject(load_subject(p), timeout=5, measurer=rec)
    assert rec.budgets[0] == pytest.approx(90, abs=0.5) and rec.budgets[1] <= 5


def test_combining_demonstrations_with_other_verdicts():
    from grader.claims.model import CheckResult
    from grader.claims.run import combine

    def c(v):
        return CheckResult("x", v, "")

    assert combine([c("holds"), c("demonstrated")]) == "demonstrated"
    assert combine([c("unverifiable"), c("demonstrated")]) == "demonstrated"
    assert combine([c("demonstrated"), c("inconclusive")]) == "inconclusive"
    assert combine([c("demonstrated"), c("not demonstrated"), c("skipped")]) == "not demonstrated"
    assert combine([c("refuted"), c("demonstrated")]) == "refuted"
    assert combine([c("error"), c("demonstrated")]) == "error"
    assert combine([c("holds"), c("skipped")]) == "skipped"


def test_the_document_lists_every_experiment_and_statistic():
    from pathlib import Path

    from mha.experiments import EXPERIMENTS
    doc = (Path(__file__).resolve().parents[1] / "docs" / "spec-language.md").read_text(encoding="utf-8")
    for e in EXPERIMENTS.values():
        assert f"`{e.name}`" in doc, e.name
        for s in e.statistics:
            assert f"`{s}`" in doc, s


def test_a_request_is_normalised_once_and_for_all():
    from mha.experiments.catalog import normalise
    for req in ({"name": "score-scale", "statistic": "log2-variance-ratio"},
                {"name": "two-relations", "statistic": "accuracy-gain", "vary": {"h": [1, 2]}, "seeds": [3, 4]},
                {"name": "dropout", "statistic": "zeroed-z", "sizes": {"d": 8}}):
        once = normalise(req)
        assert normalise(once) == once


def test_importing_the_kind_and_the_catalog_imports_no_torch():
    import subprocess
    import sys
    code = ("import sys, grader.claims.checks, grader.claims.load, mha.experiments\n"
            "assert 'torch' not in sys.modules\nprint('NO-TORCH')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "NO-TORCH" in r.stdout, r.stderr[-2000:]
