"""grader.claims's public API (used by the exercise bank): load_subject, evaluate, measure."""
import pytest

from grader.claims import evaluate, load_subject
from grader.claims.measure import measure  # (the package's name `measure` is rebound once the submodule is imported)
from grader.claims.measure import QuantityError


@pytest.fixture(scope="module")
def subject():
    return load_subject()


def test_evaluate_named_formulas_and_expressions(subject):
    # 8·2048·4096² + 4·2048²·4096 = 2^38 + 2^36 = 274,877,906,944 + 68,719,476,736
    assert evaluate(subject, "flops", {"n": 2048, "d": 4096}) == 343_597_383_680
    assert evaluate(subject, "d_k", {"d_model": 768, "h": 12}) == 64          # alias d_model -> d
    assert evaluate(subject, "4*d^2", {"d": 512}) == 1_048_576
    assert evaluate(subject, "params", {"d": 512}) == 1_050_624             # 4·512² + 4·512


def test_subject_exposes_table_and_formulas(subject):
    assert subject.id == "17-08" and subject.title == "Multi-Head Attention"
    assert {"params", "params_nobias", "flops", "flops_projections", "flops_attention"} <= set(subject.formulas)
    assert subject.table is not None


@pytest.mark.parametrize("quantity, at, expected", [
    ("params", {"d": 512, "h": 8}, 1_050_624),                       # 4d² + 4d
    ("params_nobias", {"d": 12288, "h": 96}, 603_979_776),           # 4·12288² (GPT-3 layer, meta)
    ("flops.projections", {"d": 4096, "h": 32, "n": 2048}, 2**38),   # 8nd² = 8·2^11·2^24
    ("flops.attention", {"d": 4096, "h": 32, "n": 2048}, 2**36),     # 4n²d = 4·2^22·2^12
    ("attention.count", {"d": 512, "h": 8, "n": 128, "b": 32}, 256),
    ("attention.bytes.fp32", {"d": 512, "h": 8, "n": 128, "b": 32}, 16_777_216),
    ("shape.Q_i", {"d": 768, "h": 12, "n": 128}, (128, 64)),
    ("tensor.A_i", {"d": 768, "h": 12, "n": 128}, (12, 128, 128)),
    ("shape.concat", {"d_model": 768, "h": 12, "n": 128}, (128, 768)),
])
def test_measure(quantity, at, expected):
    assert measure(quantity, at) == expected


def test_measure_errors_name_what_is_expected():
    with pytest.raises(QuantityError, match="unknown quantity 'flops.everything'"):
        measure("flops.everything", {"d": 8, "h": 2, "n": 2})
    with pytest.raises(QuantityError, match="missing size n"):
        measure("flops.total", {"d": 8, "h": 2})


def test_measure_refuses_sizes_that_are_not_positive_integers():
    with pytest.raises(QuantityError, match=r"size d must be a positive integer, got 8\.5"):
        measure("params", {"d": 8.5, "h": 2})
    with pytest.raises(QuantityError, match="size n must be a positive integer, got -4"):
        measure("flops.total", {"d": 8, "h": 2, "n": -4})
    assert measure("params", {"d": 8.0, "h": 2}) == 288          # 8.0 is 8: 4·8² + 4·8


CONFIGS = [  # (d, h, n, b, layout, bias)
    (64, 4, 16, None, "fused", True), (64, 4, 16, 3, "fused", False), (48, 6, 5, 2, "per_head", True),
    (48, 6, 5, None, "per_head", False), (4096, 32, 2048, None, "fused", True),
]
QUANTITIES = ["flops.total", "flops.projections", "flops.attention", "flops.qk", "flops.av", "flops.softmax",
              "flops.scaling", "flops.bias", "attention.count", "attention.elements", "attention.bytes.fp16",
              "shape.Q_i", "shape.S_i", "shape.A_i", "shape.head_i", "shape.concat", "shape.output",
              "tensor.Q_i", "tensor.A_i", "tensor.concat"]


@pytest.mark.parametrize("d, h, n, b, layout, bias", CONFIGS)
def test_measure_agrees_with_torchs_own_meta_kernels(d, h, n, b, layout, bias):
    """measure() gives mm, bmm, the bias add and softmax their outputs on "meta" by their shape
    rules (grader.claims.measure._shape_kernels); torch's own meta kernels, run here directly
    through mha, must give every quantity the same, the expected figures worked out by hand."""
    import mha
    from grader.claims.measure import import_torch

    torch = import_torch()
    m = mha.MultiHeadAttention(d, h, layout=layout, bias=bias, device="meta").eval()
    x = torch.empty((n, d) if b is None else (b, n, d), device="meta")
    flops = mha.measure_flops(m, x, x, x, need_weights=True, average_attn_weights=False).as_dict()
    trace = mha.trace(m, x, x, x)
    fp16 = mha.attention_matrices(m, x, x, dtype=torch.float16)
    torch_says = {"flops.total": flops["matmul_total"], "attention.count": fp16.count,
                  "attention.elements": fp16.elements, "attention.bytes.fp16": fp16.bytes,
                  **{f"flops.{k}": v for k, v in flops.items()},
                  **{f"shape.{k}": trace.shape(k) for k in ("Q_i", "S_i", "A_i", "head_i", "concat", "output")},
                  **{f"tensor.{k}": tuple(trace[k].shape) for k in ("Q_i", "A_i", "concat")}}
    at = {"d": d, "h": h, "n": n, **({} if b is None else {"b": b})}
    ours = {q: measure(q, at, layout=layout, bias=bias) for q in QUANTITIES}
    assert ours == {q: torch_says[q] for q in QUANTITIES}
    # and by hand: B sequences, 8·B·n·d² projection FLOPs, 4·B·n²·d attention FLOPs, B·h matrices
    B, dk = b or 1, d // h
    assert ours["flops.projections"] == 8 * B * n * d * d and ours["flops.attention"] == 4 * B * n * n * d
    assert ours["attention.count"] == B * h and ours["shape.Q_i"] == (n, dk)
    assert ours["flops.bias"] == (4 * B * n * d if bias else 0)


def test_the_measuring_process_imports_neither_dynamo_nor_sympy():
    """What makes a measured run cost little more than `import torch`: no op of the measured paths
    reaches a torch meta kernel that imports torch._dynamo (1 s) or SymPy (0.5 s)."""
    import subprocess
    import sys
    code = ("import sys\n"
            "from grader.claims.measure import import_torch, measure, equivalence\n"
            "from grader.claims.worker import _warm_up\n"
            "import_torch(); _warm_up()\n"
            "at = {'d': 4096, 'h': 32, 'n': 2048, 'b': 2}\n"
            "for layout in ('fused', 'per_head'):\n"
            "    for bias in (True, False):\n"
            "        for q in ('params', 'flops.total', 'shape.A_i', 'tensor.concat', 'attention.bytes.fp32'):\n"
            "            v = {**at, 'h': 8} if layout == 'per_head' else at\n"
            "            v = {'d': v['d'], 'h': v['h']} if q == 'params' else v\n"
            "            measure(q, v, layout=layout, bias=bias)\n"
            "for a, b in (('fused', 'per_head'), ('per_head', 'torch'), ('fused', 'single_head')):\n"
            "    equivalence(a, b, {'d': 16, 'h': 4, 'n': 5, 'b': 2}, device='cpu')\n"
            "print(sorted(m for m in ('torch._dynamo', 'sympy') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr[-2000:]
    assert r.stderr == ""                                    # no "Failed to initialize NumPy" warning
