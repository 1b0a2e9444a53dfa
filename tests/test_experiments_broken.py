"""A deliberately broken mha changes the matching experiment's verdict; the real one is
demonstrated. The broken layers are test-only subclasses (or a monkeypatch), never spec input.

Tiny sizes and steps (d 16, 100 steps, 2 seeds): the bundled configuration runs in
test_check_spec_cli.py::test_bundled_subject_passes."""
import math

import pytest
import torch

import mha
from grader.claims.checks import demonstrate
from grader.claims.checks.common import Context, request_key
from grader.claims.load import load_subject
from mha.experiments import run
from spec_helpers import claim, write_spec


class SharedHeads(mha.MultiHeadAttention):
    """Every head uses head 1's W^Q, W^K, W^V (a shared W across heads)."""

    def _project(self, q, k, v, self_attention):
        heads = super()._project(q, k, v, self_attention)     # each (B, h, n, d_k)
        return tuple(t[:, :1].expand_as(t) for t in heads)


class DropoutInEval(mha.MultiHeadAttention):
    """Applies attention dropout in evaluation mode too."""

    def _run(self, *args, **kwargs):
        was, self.training = self.training, True
        try:
            return super()._run(*args, **kwargs)
        finally:
            self.training = was


class LastHeadCutOff(mha.MultiHeadAttention):
    """The last head's values are zeroed: its output, and so its gradients, vanish."""

    def _project(self, q, k, v, self_attention):
        Qh, Kh, Vh = super()._project(q, k, v, self_attention)
        keep = torch.ones(Vh.shape[1], 1, 1)
        keep[-1] = 0.0
        return Qh, Kh, Vh * keep


def verdict(tmp_path, check: str, attention=None):
    """The demonstrate check's result with the experiment run on ``attention`` (None: mha)."""
    subject = load_subject(write_spec(tmp_path, claim("c", "demonstrated", [check])))
    (c,) = subject.claims[0].checks
    (req,) = demonstrate.requests(Context(subject), c)
    got = run(req["experiment"], attention=attention or mha.MultiHeadAttention)
    return demonstrate.run(Context(subject, measurements={request_key(req): got}), c)


TWO = "{kind: demonstrate, experiment: two-relations, statistic: %s, at: {d: 16, n: 8%s}, %s seeds: 2, steps: 100, effect: %s}"


def test_shared_weights_across_heads_lose_the_two_relations(tmp_path):
    acc = TWO % ("accuracy-gain", "", "vary: {h: [1, 2]},", '"> 0.2"')
    good = verdict(tmp_path, acc)
    assert good.verdict == "demonstrated", good.summary
    bad = verdict(tmp_path, acc, SharedHeads)
    assert bad.verdict == "not demonstrated", bad.summary
    assert all(v < 0.1 for v in bad.details["values"])      # h = 2 with one W is h = 1 at best
    spec = TWO % ("specialisation", ", h: 2", "", '"> 1"')
    assert verdict(tmp_path, spec).verdict == "demonstrated"
    bad = verdict(tmp_path, spec, SharedHeads)
    assert bad.verdict == "not demonstrated" and bad.details["values"] == [0.0, 0.0]   # every head alike


def test_shared_weights_make_the_heads_compute_the_same_vectors(tmp_path):
    check = ("{kind: demonstrate, experiment: independent-heads, statistic: min-head-difference, "
             "at: {d: 16, h: 4, n: 8}, seeds: 3, effect: \"> 0.01\", always: true}")
    assert verdict(tmp_path, check).verdict == "demonstrated"
    bad = verdict(tmp_path, check, SharedHeads)
    assert bad.verdict == "refuted" and "says it always happens" in bad.summary
    assert bad.details["values"] == [0.0, 0.0, 0.0]


def test_dropout_left_on_in_eval_is_caught(tmp_path):
    check = ("{kind: demonstrate, experiment: dropout, statistic: eval-zeroed, at: {d: 16, h: 2, n: 32, b: 16}, "
             "dropout: 0.1, seeds: 3, effect: \"= 0\", always: true}")
    good = verdict(tmp_path, check)
    assert good.verdict == "demonstrated" and good.details["values"] == [0, 0, 0]
    bad = verdict(tmp_path, check, DropoutInEval)
    assert bad.verdict == "refuted"
    # about p·N = 0.1 · 16·2·32·32 = 3,277 zeroed weights in "evaluation"
    assert all(2800 < v < 3800 for v in bad.details["values"])
    # in training mode the broken layer is right: the zeroed fraction is p within the bound
    z = ("{kind: demonstrate, experiment: dropout, statistic: zeroed-z, at: {d: 16, h: 2, n: 32, b: 16}, "
         "dropout: 0.1, seeds: 3, effect: \"< 4\"}")
    assert verdict(tmp_path, z, DropoutInEval).verdict == "demonstrated"


def test_a_missing_scale_is_caught_by_the_score_variance(tmp_path, monkeypatch):
    check = ("{kind: demonstrate, experiment: score-scale, statistic: log2-variance-ratio, at: {d: 64, n: 16, b: 8}, "
             "seeds: 2, effect: \"< 1\"}")
    good = verdict(tmp_path, check)
    # with 1/√d_k: var(S) = d_k · (1/2)(1/2) / d_k = 1/4 whatever d_k (xavier on (3d, d): var(q) = 1/2)
    assert good.verdict == "demonstrated" and all(abs(v) < 0.3 for v in good.details["values"])
    monkeypatch.setattr(mha.attention, "math", type("NoSqrt", (), {"sqrt": staticmethod(lambda x: 1.0)}))
    bad = verdict(tmp_path, check)
    # without it var(S) = d_k / 4: log2(64 / 4) = 4
    assert bad.verdict == "not demonstrated"
    assert all(abs(v - 4) < 0.5 for v in bad.details["values"])


def test_a_head_cut_off_from_the_output_gets_no_gradient(tmp_path):
    check = ("{kind: demonstrate, experiment: gradients, statistic: updated-fraction, at: {d: 16, h: 4, n: 8, b: 4}, "
             "seeds: 2, effect: \">= 1\", always: true}")
    assert verdict(tmp_path, check).verdict == "demonstrated"
    bad = verdict(tmp_path, check, LastHeadCutOff)
    # head 4's W_i^Q, W_i^K, W_i^V and W^O rows: 4 of 16 matrices not updated
    assert bad.verdict == "refuted" and bad.details["values"] == [0.75, 0.75]
    assert "head 4 W_i^Q (zero gradient)" in bad.summary


def test_head_matrices_are_each_heads_slices_in_every_layout():
    torch.manual_seed(0)
    m = mha.MultiHeadAttention(8, 2)
    from mha.experiments.mechanics import head_matrices
    for i in range(2):
        got = head_matrices(m, i)
        for name, w in zip(("W_i^Q", "W_i^K", "W_i^V"), m.head_weights(i)):
            assert torch.equal(got[name].T, w)            # fused: torch's (out, in) rows of head i
        assert torch.equal(got["W^O rows"].T, m.W_O[i * 4:(i + 1) * 4])
        p = m.to_layout("per_head")
        got = head_matrices(p, i)
        for name, w in zip(("W_i^Q", "W_i^K", "W_i^V"), p.head_weights(i)):
            assert torch.equal(got[name], w)


def test_reruns_with_the_same_seed_give_identical_numbers():
    req = {"name": "two-relations", "statistic": "specialisation", "sizes": {"d": 16, "n": 8, "h": 2},
           "seeds": [3], "steps": 40}
    a, b = run(req, attention=mha.MultiHeadAttention), run(req, attention=mha.MultiHeadAttention)
    assert a["values"] == b["values"] and a["details"] == b["details"] and a["figures"] == b["figures"]
    # bit for bit: the same seed trains the same weights
    from mha.experiments.tasks import TaskConfig, TwoRelationModel, deterministic, loss_of, sample

    def train(seed):
        cfg = TaskConfig(d=16, steps=15)
        with deterministic():
            torch.manual_seed(seed)
            model = TwoRelationModel(cfg, 2)
            g = torch.Generator().manual_seed(seed)
            opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
            for _ in range(cfg.steps):
                loss = loss_of(model, sample(g, cfg, cfg.batch))
                opt.zero_grad()
                loss.backward()
                opt.step()
        return [p.detach().clone() for p in model.parameters()]

    first, again, other = train(5), train(5), train(6)
    assert all(torch.equal(x, y) for x, y in zip(first, again))
    assert not all(torch.equal(x, y) for x, y in zip(first, other))
    assert math.isfinite(float(first[0].sum()))
