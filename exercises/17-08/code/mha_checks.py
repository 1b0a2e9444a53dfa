"""Checks of a learner's 17-08 functions against the real multi-head attention (``mha``).

Each ``check_*`` builds a seeded case, runs the learner's function and the real thing, and on
a difference fails with a message that teaches: what was expected, what was found, and —
when the learner's result matches a known mistake computed here — which mistake it is.

Messages go through ``pytest.fail(..., pytrace=False)``: the learner sees the message, not a
traceback into these checks (an exception raised by the learner's own code is reported with
the line of their file where it happened).
"""
from __future__ import annotations

import math
import traceback
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

import mha

TOL = 1e-6          # values: |found - expected| <= TOL + TOL·|expected|, computed in float64
DROPOUT_SIGMAS = 6  # dropout: the zeroed fraction must be within this many standard deviations of p


@dataclass(frozen=True)
class Case:
    """Sizes and seed of one comparison; ``b=None`` means unbatched input (n, d_model)."""

    name: str
    d: int
    h: int
    n_q: int
    n_k: int
    b: int | None = 2
    seed: int = 0

    @property
    def d_k(self):
        return self.d // self.h

    def __str__(self):
        if self.name.startswith("hidden"):  # the learner does not see a hidden test's inputs
            return f"{self.name}: h={self.h}"
        batch = "unbatched" if self.b is None else f"b={self.b}"
        return f"{self.name}: d_model={self.d}, h={self.h}, n_q={self.n_q}, n_k={self.n_k}, {batch}, seed={self.seed}"


# ------------------------------------------------------------------ fixtures


class Setup:
    """The real module (random weights *and* biases, float64), inputs and its trace."""

    def __init__(self, case: Case, masked=False):
        self.case = case
        g = torch.Generator().manual_seed(case.seed)
        self.m = mha.MultiHeadAttention(case.d, case.h, dtype=torch.float64)
        with torch.no_grad():
            for p in self.m.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / math.sqrt(case.d) * 1.5)
        lead = () if case.b is None else (case.b,)
        self.query = torch.randn(*lead, case.n_q, case.d, generator=g, dtype=torch.float64)
        self.key = torch.randn(*lead, case.n_k, case.d, generator=g, dtype=torch.float64)
        self.value = torch.randn(*lead, case.n_k, case.d, generator=g, dtype=torch.float64)
        self.mask = make_mask(case, g) if masked else None
        kw = {"attn_mask": self.mask} if masked else {}
        with torch.no_grad():
            self.trace = mha.trace(self.m, self.query, self.key, self.value, **kw)
            self.output = self.m(self.query, self.key, self.value, need_weights=False, **kw)[0]
        bq, bk, bv = self.m.in_proj_bias.detach().chunk(3)
        self.weights = {"W_Q": self.m.W_Q.detach().clone(), "W_K": self.m.W_K.detach().clone(),
                        "W_V": self.m.W_V.detach().clone(), "W_O": self.m.W_O.detach().clone(),
                        "b_Q": bq.clone(), "b_K": bk.clone(), "b_V": bv.clone(),
                        "b_O": self.m.out_proj.bias.detach().clone()}

    def t(self, name):
        return self.trace[name].detach().clone()


def make_mask(case: Case, g) -> torch.Tensor:
    """A boolean (n_q, n_k) mask, True = may not attend: causal, plus one random padded key;
    every query keeps at least key 0, so no row is all masked."""
    causal = torch.ones(case.n_q, case.n_k, dtype=torch.bool).tril().logical_not()
    pad = torch.zeros(case.n_k, dtype=torch.bool)
    if case.n_k > 1:
        pad[int(torch.randint(1, case.n_k, (1,), generator=g))] = True
    return causal | pad


# ------------------------------------------------------------ calling learner code


def call(solution, fn_name: str, *args, **kwargs):
    """Call the learner's function; an exception becomes a message naming their file and line.

    With ``--solution`` the function runs in the sandbox (grader's proxy): what it raised comes
    back as ``SolutionRaised`` (type name, message, the learner's line), a call with no result
    (time limit, crash) as ``SolutionBroke``. With ``--unsandboxed`` it runs here."""
    from grader.code.solution_proxy import SolutionBroke, SolutionRaised

    fn = getattr(solution, fn_name, None)
    if fn is None:
        pytest.fail(f"your solution has no function {fn_name}(): define it (see the template)", pytrace=False)
    try:
        with torch.no_grad():
            return fn(*args, **kwargs)
    except SolutionBroke as e:
        raised = ("", str(e), "", "")
    except SolutionRaised as e:
        raised = (e.type_name, e.message, e.where, e.note)
    except NotImplementedError:
        raised = ("NotImplementedError", "", "", "")
    except Exception as e:  # the learner's bug (--unsandboxed), reported as theirs
        raised = (type(e).__name__, str(e), _learner_line(e, getattr(solution, "__file__", None)), "")
    type_name, text, where, note = raised
    if not type_name:  # no result at all: a time limit, the process died
        pytest.fail(text, pytrace=False)
    if type_name == "NotImplementedError":
        pytest.fail(f"{fn_name}() is not written yet (it raises NotImplementedError)", pytrace=False)
    hint = _exception_hint(fn_name, type_name, text, args)
    pytest.fail(f"{fn_name}() raised {type_name}: {text}{where}{hint}{note}", pytrace=False)


def _learner_line(e: BaseException, path) -> str:
    if not path:
        return ""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
    if not frames:
        return ""
    f = frames[-1]
    return f" (at {path}:{f.lineno}: {(f.line or '').strip()})"


def _exception_hint(fn_name, type_name, text, args) -> str:
    matmul = ("shapes cannot be multiplied", "size of tensor", "must match", "batch2", "Expected size")
    if type_name == "RuntimeError" and any(m in text for m in matmul):
        if fn_name in ("attention_weights", "scaled_dot_product_attention") and len(args) >= 2:
            q, k = shape_of(args[0]), shape_of(args[1])
            return (f"; with Q of shape {q} and K of shape {k}, Q·Kᵀ multiplies (…, n_q, d_k) by (…, d_k, n_k): "
                    f"is K transposed twice (or not at all)?")
        if fn_name == "multi_head_forward":
            return ("; check each step's shape: Q_i (…, h, n_q, d_k), Q_i·K_iᵀ (…, h, n_q, n_k), "
                    "head_i (…, h, n_q, d_v), Concat (…, n_q, h·d_v) — is K transposed twice?")
    if "view size is not compatible" in text:
        return ": the tensor is not contiguous after transpose — use .reshape, or .contiguous().view"
    return ""


# ---------------------------------------------------------------- comparing


def shape_of(t):
    return tuple(t.shape) if isinstance(t, torch.Tensor) else None


def kind_of(found) -> str:
    """What a value is, for a message: a learner object that is not plain data came back as a
    stand-in that knows only its type's name."""
    return getattr(found, "type_name", None) or type(found).__name__


def compare(label: str, found, expected: torch.Tensor, case, mistakes=(), shape_hints=()):
    """Fail unless ``found`` is a tensor of ``expected``'s shape and values (within TOL).

    mistakes: (message, tensor) pairs, the results of known mistakes on the same input; when
        ``found`` matches one, its message is the diagnosis.
    shape_hints: (shape, message) pairs for wrong shapes that point at a known mistake.
    """
    if not isinstance(found, torch.Tensor):
        pytest.fail(f"{label} returned a {kind_of(found)}, expected a torch.Tensor of shape "
                    f"{tuple(expected.shape)} [{case}]", pytrace=False)
    if tuple(found.shape) != tuple(expected.shape):
        hint = next((msg for shape, msg in shape_hints if tuple(shape) == tuple(found.shape)), "")
        if not hint:
            hint = next((msg for msg, t in mistakes if tuple(t.shape) == tuple(found.shape)), "")
        pytest.fail(f"{label} has shape {tuple(found.shape)}, expected {tuple(expected.shape)}"
                    f"{': ' + hint if hint else ''} [{case}]", pytrace=False)
    f64 = found.detach().to(torch.float64)
    if close(f64, expected):
        return
    diff = (f64 - expected).abs().nan_to_num(nan=float("inf"))
    worst = diff.argmax()
    idx = tuple(int(i) for i in torch.unravel_index(worst, diff.shape))
    for msg, t in mistakes:
        if tuple(t.shape) == tuple(expected.shape) and close(f64, t):
            pytest.fail(f"{label}: values differ {_by(diff)} (tolerance {TOL:g}): {msg} [{case}]", pytrace=False)
    if torch.isnan(f64).any() and not torch.isnan(expected).any():
        pytest.fail(f"{label} contains NaN, expected none: a fully masked row, or a division by zero? [{case}]",
                    pytrace=False)
    pytest.fail(f"{label}: values differ {_by(diff)} (tolerance {TOL:g}); at index {idx} found "
                f"{float(f64[idx]):.6g}, expected {float(expected[idx]):.6g} [{case}]", pytrace=False)


def _by(diff: torch.Tensor) -> str:
    worst = float(diff.max())
    return "(some are NaN where numbers were expected)" if math.isinf(worst) else f"by {worst:.3g}"


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return tuple(a.shape) == tuple(b.shape) and bool(torch.allclose(a, b.to(a.dtype), rtol=TOL, atol=TOL,
                                                                    equal_nan=True))


# ------------------------------------------------------- known mistakes, computed


def _softmax_rows(scores, mask):
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return F.softmax(scores, dim=-1)


def weight_mistakes(Q, K, d_model, mask=None):
    """(message, A) for the usual mistakes in A = softmax(Q Kᵀ / √d_k)."""
    d_k = Q.shape[-1]
    S = Q @ K.transpose(-2, -1)
    out = [
        ("did you scale by √d_model instead of √d_k?", _softmax_rows(S / math.sqrt(d_model), mask)),
        ("did you divide by d_k instead of √d_k?", _softmax_rows(S / d_k, mask)),
        ("the scores are not scaled: divide Q·Kᵀ by √d_k", _softmax_rows(S, mask)),
        ("softmax over the wrong axis: each query's weights (dim=-1, over the keys) must sum to 1",
         F.softmax(S / math.sqrt(d_k) if mask is None else (S / math.sqrt(d_k)).masked_fill(mask, float("-inf")),
                   dim=-2)),
    ]
    if mask is not None:
        out.append(("the mask is ignored: masked positions (True) must get weight 0 (fill −∞ before softmax)",
                    _softmax_rows(S / math.sqrt(d_k), None)))
        out.append(("the mask is inverted: True means 'may not attend' (fill those with −∞)",
                    _softmax_rows(S / math.sqrt(d_k), ~mask)))
        out.append(("the mask is applied after softmax: fill the scores with −∞ before softmax, so rows sum to 1",
                    _softmax_rows(S / math.sqrt(d_k), None).masked_fill(mask, 0.0)))
    if K.shape[-2] == K.shape[-1] and Q.shape[-1] == K.shape[-2]:
        out.append(("is K transposed twice (or not at all)? Q·Kᵀ needs K's last two axes swapped once",
                    _softmax_rows(Q @ K / math.sqrt(d_k), mask)))
    return out


def weights_shape_hints(case):
    lead = () if case.b is None else (case.b,)
    return [((*lead, case.h, case.n_q, case.d_k), "that is Q·K (n_q × d_k), not Q·Kᵀ (n_q × n_k): is K "
             "transposed twice?")] if case.n_k != case.d_k else []


# ------------------------------------------------------------------ checks


def check_split_heads(solution, case: Case):
    s = Setup(case)
    x = s.query @ s.weights["W_Q"] + s.weights["b_Q"]              # Q_all: (…, n_q, d_model)
    expected = s.t("Q_i")                                            # (…, h, n_q, d_k)
    found = call(solution, "split_heads", x.clone(), case.h)
    lead = x.shape[:-2]
    mistakes = [("reshaped (n, d_model) straight to (h, n, d_k): view as (n, h, d_k) first, then transpose "
                 "to (h, n, d_k), so each head gets its own d_k columns",
                 x.reshape(*lead, case.h, case.n_q, case.d_k))]
    hints = [((*lead, case.n_q, case.h, case.d_k), "the view (…, n, h, d_k) still needs .transpose(-3, -2) to put "
              "the heads first"),
             ((*lead, case.h, case.d_k, case.n_q), "the last two axes are swapped: expected (h, n, d_k), "
              "is the result transposed once too often?")]
    compare("split_heads(Q_all, h)", found, expected, case, mistakes, hints)


def check_merge_heads(solution, case: Case):
    s = Setup(case)
    heads = s.t("head_i")                                            # (…, h, n_q, d_v)
    expected = s.t("concat")                                         # (…, n_q, h·d_v)
    found = call(solution, "merge_heads", heads.clone())
    lead = heads.shape[:-3]
    mistakes = [("merge_heads reshaped (…, h, n, d_v) straight to (…, n, h·d_v): transpose to (…, n, h, d_v) "
                 "first, or rows of different heads and positions get mixed",
                 heads.reshape(*lead, case.n_q, case.d))]
    hints = [((*lead, case.h * case.n_q, case.d_k), "the heads were stacked along n, not concatenated along "
              "the features: Concat puts head_1 … head_h side by side, (n, h·d_v)")]
    compare("merge_heads(heads)", found, expected, case, mistakes, hints)


def check_attention_weights(solution, case: Case, masked=False):
    s = Setup(case, masked)
    Q, K = s.t("Q_i"), s.t("K_i")
    mask = s.mask
    expected = s.t("A_i")
    kw = {"mask": mask.clone()} if masked else {}
    found = call(solution, "attention_weights", Q.clone(), K.clone(), **kw)
    mistakes = weight_mistakes(Q, K, case.d, mask)
    compare("attention_weights(Q_i, K_i" + (", mask)" if masked else ")"), found, expected, case, mistakes,
            weights_shape_hints(case))


def check_sdpa(solution, case: Case, masked=False):
    s = Setup(case, masked)
    Q, K, V = s.t("Q_i"), s.t("K_i"), s.t("V_i")
    expected = s.t("head_i")
    kw = {"mask": s.mask.clone()} if masked else {}
    found = call(solution, "scaled_dot_product_attention", Q.clone(), K.clone(), V.clone(), **kw)
    mistakes = [(msg, A @ V) for msg, A in weight_mistakes(Q, K, case.d, s.mask)]
    mistakes.append(("that is A = softmax(Q·Kᵀ/√d_k) itself: multiply by V (head_i = A_i·V_i)", s.t("A_i")))
    compare("scaled_dot_product_attention(Q_i, K_i, V_i" + (", mask)" if masked else ")"), found, expected,
            case, mistakes, weights_shape_hints(case))


def check_multi_head_forward(solution, case: Case, masked=False):
    s = Setup(case, masked)
    w = {k: v.clone() for k, v in s.weights.items()}
    kw = {"mask": s.mask.clone()} if masked else {}
    found = call(solution, "multi_head_forward", s.query.clone(), s.key.clone(), s.value.clone(), w, case.h, **kw)
    compare("multi_head_forward(query, key, value, weights, h" + (", mask)" if masked else ")"), found, s.output,
            case, forward_mistakes(s), ())


def forward_mistakes(s: Setup):
    """(message, output) of whole-layer mistakes, each computed from the real pieces."""
    w, c = s.weights, s.case
    lead = s.query.shape[:-2]
    Q = s.query @ w["W_Q"] + w["b_Q"]
    K = s.key @ w["W_K"] + w["b_K"]
    V = s.value @ w["W_V"] + w["b_V"]

    def split(x, n):
        return x.reshape(*lead, n, c.h, c.d_k).transpose(-3, -2)

    def merge(x):
        return x.transpose(-3, -2).reshape(*lead, c.n_q, c.d)

    Qi, Ki, Vi = split(Q, c.n_q), split(K, c.n_k), split(V, c.n_k)
    out = s.output
    concat = s.t("concat")
    mistakes = [
        ("forgot W^O: the result is Concat(head_1, …, head_h); multiply it by W^O (and add b_O)", concat),
        ("forgot W^O's bias b_O", concat @ w["W_O"]),
        ("merge_heads without the transpose: (…, h, n, d_v) must become (…, n, h, d_v) before the reshape",
         s.t("head_i").reshape(*lead, c.n_q, c.d) @ w["W_O"] + w["b_O"]),
        ("the projections' biases b_Q, b_K, b_V are missing",
         _layer_from(s.query @ w["W_Q"], s.key @ w["W_K"], s.value @ w["W_V"], s, split, merge)),
    ]
    for msg, A in weight_mistakes(Qi, Ki, c.d, s.mask):
        mistakes.append((msg, merge(A @ Vi) @ w["W_O"] + w["b_O"]))
    return [(m, t) for m, t in mistakes if tuple(t.shape) == tuple(out.shape)]


def _layer_from(Q, K, V, s, split, merge):
    c, w = s.case, s.weights
    A = _softmax_rows(split(Q, c.n_q) @ split(K, c.n_k).transpose(-2, -1) / math.sqrt(c.d_k), s.mask)
    return merge(A @ split(V, c.n_k)) @ w["W_O"] + w["b_O"]


def check_parameter_count(solution, d: int, h: int, bias: bool = True):
    m = mha.MultiHeadAttention(d, h, bias=bias, device="meta")
    expected = mha.count_parameters(m)
    found = call(solution, "parameter_count", d, h, bias=bias)
    args = f"parameter_count({d}, {h}{'' if bias else ', bias=False'})"
    if isinstance(found, bool) or not isinstance(found, int):
        pytest.fail(f"{args} should be an int, got {kind_of(found)} {found!r}", pytrace=False)
    if found == expected:
        return
    known = {4 * d * d: "the four bias vectors (4·d) are missing" if bias else None,
             4 * d * d + 4 * d: "bias=False: no bias vectors, just the four d × d matrices" if not bias else None,
             3 * d * d + 3 * d * bias: "W^O (d × d" + (", plus its bias d" if bias else "") + ") is missing",
             3 * d * d + 4 * d * bias: "W^O (d × d) is missing",
             4 * d * d // h + 4 * d * bias // h: "that counts one head only: the h heads share the d × d "
                                                 "matrices, d_k = d/h columns each",
             4 * d * d * h + 4 * d * bias: "each head's W_i is d × d_k with d_k = d/h, not d × d: the total is "
                                           "4d², whatever h"}
    hint = known.get(found)
    pytest.fail(f"{args} = {found}, expected {expected}" + (f": {hint}" if hint else ""), pytrace=False)


def check_flop_count(solution, n_q: int, d: int, h: int, n_k: int | None = None, batch: int = 1):
    n_k = n_q if n_k is None else n_k
    m = mha.MultiHeadAttention(d, h, device="meta")
    q = torch.empty(batch, n_q, d, device="meta")
    k = torch.empty(batch, n_k, d, device="meta")
    expected = mha.measure_flops(m, q, k, k, need_weights=False).matmul_total
    kw = {} if n_k == n_q else {"n_k": n_k}
    if batch != 1:
        kw["batch"] = batch
    args = f"flop_count({n_q}, {d}, {h}" + "".join(f", {k}={v}" for k, v in kw.items()) + ")"
    found = call(solution, "flop_count", n_q, d, h, **kw)
    if isinstance(found, bool) or not isinstance(found, int):
        pytest.fail(f"{args} should be an int, got {kind_of(found)} {found!r}", pytrace=False)
    if found == expected:
        return
    proj = 2 * batch * d * d * (2 * n_q + 2 * n_k)
    att = 4 * batch * n_q * n_k * d
    known = {
        expected // 2: "exactly half: you counted multiply-adds; one multiply-add is 2 FLOPs",
        proj: "only the projections (8nd²): the attention matmuls Q·Kᵀ and A·V add 4·n_q·n_k·d",
        att: "only the attention matmuls (4n²d): the four projections add 2·n·d² each",
        expected - 2 * batch * n_q * d * d: "W^O's projection (2·n_q·d²) is missing",
        expected * h: "h times too many: the heads split d into h parts of d_k; they do not each cost a "
                      "full-width attention",
        2 * batch * d * d * 4 * n_q + 4 * batch * n_q * n_q * d: "with cross-attention, K and V have n_k rows: "
                                                                  "their projections and Q·Kᵀ, A·V use n_k",
    }
    hint = known.get(found) if found != expected else None
    pytest.fail(f"{args} = {found}, expected {expected}" + (f": {hint}" if hint else ""), pytrace=False)


def _own_weights(solution, Q, K, A, case):
    """The learner's own weights without dropout: the dropout checks judge dropout against
    them, so that a mistake in the weights themselves (the wrong softmax axis, K transposed) is
    told by the weights' own tests, not blamed on dropout. Falls back to the real A when the
    learner's weights are not a tensor of A's shape (then the weights' tests say why)."""
    own = call(solution, "attention_weights", Q.clone(), K.clone())
    if isinstance(own, torch.Tensor) and tuple(own.shape) == tuple(A.shape) and bool(torch.isfinite(own).all()):
        return own.detach().to(torch.float64)
    return A


def check_dropout_eval(solution, case: Case, p: float = 0.3):
    """Evaluation mode: the weights are the same with dropout_p > 0 as with none."""
    s = Setup(case)
    Q, K = s.t("Q_i"), s.t("K_i")
    A = _own_weights(solution, Q, K, s.t("A_i"), case)
    torch.manual_seed(case.seed)    # a solution that drops in evaluation gets the same feedback on every run
    found = call(solution, "attention_weights", Q.clone(), K.clone(), dropout_p=p, training=False)
    if isinstance(found, torch.Tensor) and found.shape == A.shape and not close(found.to(torch.float64), A):
        zeros = float(((found == 0) & (A != 0)).double().mean())
        what = (f"{zeros:.0%} of them are zero: dropout is applied outside training" if zeros > 0 else
                "they differ from attention_weights(Q, K) without dropout: dropout_p must change nothing "
                "outside training")
        pytest.fail(f"attention_weights(…, dropout_p={p}, training=False): in evaluation the weights must be "
                    f"attention_weights(Q, K) itself, but {what} (§8: dropout on A during training only) "
                    f"[{case}]", pytrace=False)
    compare(f"attention_weights(…, dropout_p={p}, training=False)", found, A, case, (),
            weights_shape_hints(case))


def check_dropout_training(solution, case: Case, p: float = 0.25):
    """Training mode: every weight is either dropped (0) or kept and scaled by 1/(1−p); about a
    fraction p are dropped; the kept ones are A/(1−p), A being the learner's own weights without
    dropout (their correctness is the weights' tests' business)."""
    s = Setup(case)
    Q, K = s.t("Q_i"), s.t("K_i")
    A = _own_weights(solution, Q, K, s.t("A_i"), case)
    torch.manual_seed(case.seed)
    found = call(solution, "attention_weights", Q.clone(), K.clone(), dropout_p=p, training=True)
    label = f"attention_weights(…, dropout_p={p}, training=True)"
    if not isinstance(found, torch.Tensor) or tuple(found.shape) != tuple(A.shape):
        compare(label, found, A, case)
    f = found.detach().to(torch.float64)
    dropped = f == 0
    kept_ok = torch.isclose(f, A / (1 - p), rtol=TOL, atol=TOL) | dropped
    if close(f, A):
        pytest.fail(f"{label} returned A unchanged: in training, dropout(A, p) zeros each weight with "
                    f"probability p [{case}]", pytrace=False)
    if not bool(kept_ok.all()):
        unscaled = torch.isclose(f, A, rtol=TOL, atol=TOL) | dropped
        if bool(unscaled.all()):
            pytest.fail(f"{label}: the kept weights equal A, expected A/(1−p) = A/{1 - p:g}: inverted dropout "
                        f"scales what it keeps, so the expected value stays A [{case}]", pytrace=False)
        pytest.fail(f"{label}: each weight must be 0 (dropped) or A/(1−p) (kept), A = attention_weights(Q, K); "
                    f"{int((~kept_ok).sum())} of {f.numel()} are neither — dropout goes on A after softmax "
                    f"(§8), not on the scores [{case}]", pytrace=False)
    n = f.numel()
    frac = float(dropped.double().mean())
    sd = math.sqrt(p * (1 - p) / n)
    if abs(frac - p) > DROPOUT_SIGMAS * sd:
        pytest.fail(f"{label}: {frac:.1%} of the weights were dropped, expected about p = {p:.0%} "
                    f"(± {DROPOUT_SIGMAS * sd:.1%} over {n} weights): is p the probability of dropping? "
                    f"[{case}]", pytrace=False)
