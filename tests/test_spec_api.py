"""grader.spec's public API (used by the exercise bank): load_subject, evaluate, measure."""
import pytest

from grader.spec import evaluate, load_subject, measure
from grader.spec.measure import QuantityError


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
