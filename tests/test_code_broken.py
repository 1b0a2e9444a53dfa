"""The 17-08 code tests fail on each broken solution, with the message that names its mistake.

Each broken solution in tests/broken_solutions/ is the reference with one mistake. pytest runs
exercises/17-08/code with ``--solution`` on it (in-process, through the grader plugin), and
this checks which tests fail, which pass, and what every failure says. Each runs twice:
sandboxed (the default: the functions run in the sandbox, the checks here compare what comes
back) and ``--unsandboxed`` (imported here, for learners debugging their own file).
"""
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch cannot be imported twice in
# one process, so it (and mha) are imported here, before any run
import torch  # noqa: F401
import mha.attention  # noqa: F401
import mha.measure  # noqa: F401
import mha.tracing  # noqa: F401

# ... and the checks' FLOP counts run SDPA on the "meta" device, whose meta kernel imports
# torch._dynamo (and torch.distributed with it) on first use: measure once here, both paths, so
# that no in-process run is the first to import them
for _need_weights in (False, True):
    _x = torch.empty(1, 2, 8, device="meta")
    mha.measure.measure_flops(mha.attention.MultiHeadAttention(8, 2, device="meta"), _x, _x, _x,
                              need_weights=_need_weights)

from sandbox_helpers import needs_strong

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT / "exercises" / "17-08" / "code"
BROKEN = ROOT / "tests" / "broken_solutions"

# visible tests: 6 cases each for split/merge/weights/sdpa/forward, 3 masked weights, 2 masked
# forward, 3 parameter counts, 3 FLOP counts, 2 dropout = 43; hidden: 4 + 4 + 4 + 3 + 2 = 17
N_TESTS = 6 * 5 + 3 + 2 + 3 + 3 + 2 + 4 * 3 + 3 + 2

# every test function of the exercise (visible and hidden)
ALL = {"test_split_heads", "test_merge_heads", "test_attention_weights", "test_attention_weights_masked",
       "test_scaled_dot_product_attention", "test_multi_head_forward", "test_multi_head_forward_masked",
       "test_parameter_count", "test_flop_count", "test_dropout_only_in_training", "test_dropout_in_training",
       "test_hidden_split_merge", "test_hidden_forward", "test_hidden_attention", "test_hidden_parameter_count",
       "test_hidden_flop_count"}
WEIGHTS = {"test_attention_weights", "test_attention_weights_masked", "test_scaled_dot_product_attention",
           "test_hidden_attention"}
FORWARD = {"test_multi_head_forward", "test_multi_head_forward_masked", "test_hidden_forward"}

# solution file -> (exactly the functions that fail, what every one of their failures says). A
# function that uses the broken one fails too (the forward pass uses the learner's own
# attention); the dropout tests judge dropout against the learner's own weights, so a mistake in
# the weights fails them only where the weights cannot be computed at all (K transposed twice
# raises), and then with that mistake's message.
MISTAKES = {
    "k_transposed_twice": (WEIGHTS | FORWARD | {"test_dropout_only_in_training", "test_dropout_in_training"},
                           "is K transposed twice"),
    "scaled_by_sqrt_d_model": (FORWARD, "did you scale by √d_model instead of √d_k?"),
    "softmax_wrong_axis": (WEIGHTS | FORWARD, "softmax over the wrong axis"),
    "forgot_w_o": (FORWARD, "forgot W^O"),
    "merge_without_transpose": ({"test_merge_heads", "test_hidden_split_merge"} | FORWARD, "transpose"),
    "dropout_in_eval": ({"test_dropout_only_in_training"}, "dropout is applied outside training"),
    "params_without_biases": ({"test_parameter_count", "test_hidden_parameter_count"},
                              "the four bias vectors (4·d) are missing"),
    "flops_multiply_adds": ({"test_flop_count", "test_hidden_flop_count"},
                            "exactly half: you counted multiply-adds; one multiply-add is 2 FLOPs"),
}


def run_code_tests(pytester, solution: Path, sandboxed: bool = False):
    mode = [] if sandboxed else ["--unsandboxed"]
    result = pytester.runpytest_inprocess(str(CODE), "--solution", str(solution), "-p", "no:cacheprovider", *mode)
    reports = [r for r in result.reprec.getreports("pytest_runtest_logreport")
               if r.when == "call" or (r.when == "setup" and r.failed)]
    return result, reports


def function(report) -> str:
    return report.nodeid.split("::")[-1].split("[")[0]


def test_every_mistake_has_a_broken_solution():
    assert sorted(p.stem for p in BROKEN.glob("*.py")) == sorted(MISTAKES)


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_strong), False],
                         ids=["sandboxed", "unsandboxed"])
@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_broken_solution_fails_with_its_teaching_message(pytester, name, sandboxed):
    must_fail, says = MISTAKES[name]
    result, reports = run_code_tests(pytester, BROKEN / f"{name}.py", sandboxed)
    assert len(reports) == N_TESTS
    assert {function(r) for r in reports} == ALL
    failed = {function(r) for r in reports if r.failed}
    assert must_fail <= failed, f"{name}: expected failures in {sorted(must_fail - failed)}"
    assert failed <= must_fail, f"{name}: unrelated tests fail: {sorted(failed - must_fail)}"
    assert all(r.passed for r in reports if function(r) not in must_fail)
    for r in reports:
        if r.failed:
            text = r.longreprtext
            assert says in text, f"{r.nodeid}: {text}"
            assert "Traceback" not in text and "mha_checks.py" not in text, "a traceback into the checks"
    assert result.ret == 1


def test_the_brief_s_parameter_message_word_for_word(pytester):
    # 4·512² = 1,048,576 weights; + 4·512 = 2,048 biases = 1,050,624
    _, reports = run_code_tests(pytester, BROKEN / "params_without_biases.py")
    texts = [r.longreprtext for r in reports if r.failed]
    assert "parameter_count(512, 8) = 1048576, expected 1050624: the four bias vectors (4·d) are missing" in texts


def test_flop_message_numbers(pytester):
    # n=128, d=512: projections 4 · 2·128·512² = 268,435,456; attention 2 · 2·128²·512 = 33,554,432;
    # total 301,989,888 FLOPs, i.e. 150,994,944 multiply-adds
    _, reports = run_code_tests(pytester, BROKEN / "flops_multiply_adds.py")
    texts = [r.longreprtext for r in reports if r.failed]
    assert ("flop_count(128, 512, 8) = 150994944, expected 301989888: exactly half: you counted multiply-adds; "
            "one multiply-add is 2 FLOPs") in texts


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_strong), False],
                         ids=["sandboxed", "unsandboxed"])
def test_dropout_in_evaluation_is_told_the_same_share_on_every_run(pytester, sandboxed):
    # test_dropout_only_in_training: weights of shape (b=2, h=4, n_q=8, n_k=8), dropout p = 0.3,
    # seeded with the case's seed 6 whatever the random state of the process that grades: the
    # share of zeros is that of F.dropout's mask drawn from seed 6 on that shape (the mask does
    # not depend on the values), the same on every run
    import torch.nn.functional as F
    torch.manual_seed(6)
    share = float((F.dropout(torch.ones(2, 4, 8, 8), p=0.3) == 0).double().mean())
    expected = f"but {share:.0%} of them are zero: dropout is applied outside training"
    for ambient in (0, 1):
        torch.manual_seed(ambient)
        _, reports = run_code_tests(pytester, BROKEN / "dropout_in_eval.py", sandboxed)
        (text,) = [r.longreprtext for r in reports if r.failed]
        assert expected in text, (ambient, text)


@needs_strong
def test_sandboxed_by_default_with_the_same_teaching_message(pytester):
    # what a course assistant runs: the learner's file is graded in the sandbox, not imported here
    result = pytester.runpytest_inprocess(str(CODE), "--solution", str(BROKEN / "params_without_biases.py"),
                                          "-p", "no:cacheprovider")
    failed = [r for r in result.reprec.getreports("pytest_runtest_logreport") if r.when == "call" and r.failed]
    assert {function(r) for r in failed} == {"test_parameter_count", "test_hidden_parameter_count"}
    assert any("parameter_count(512, 8) = 1048576, expected 1050624: the four bias vectors (4·d) are missing"
               in r.longreprtext for r in failed)
    assert not any(m.startswith("solution_") for m in __import__("sys").modules)


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_strong), False],
                         ids=["sandboxed", "unsandboxed"])
def test_reference_solution_passes_everything(pytester, sandboxed):
    result, reports = run_code_tests(pytester, CODE / "solution.py", sandboxed)
    assert len(reports) == N_TESTS and all(r.passed for r in reports)
    assert result.ret == 0


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_strong), False],
                         ids=["sandboxed", "unsandboxed"])
def test_template_fails_everything_saying_what_is_not_written(pytester, sandboxed):
    _, reports = run_code_tests(pytester, CODE / "template.py", sandboxed)
    assert len(reports) == N_TESTS and not any(r.passed for r in reports)
    assert all("is not written yet (it raises NotImplementedError)" in r.longreprtext for r in reports)


@needs_strong
def test_an_exception_in_the_sandbox_names_the_learner_s_file_and_line(pytester):
    # line 24 of k_transposed_twice.py: scores = Q @ K_t.transpose(-2, -1) / ...  (the mistake)
    path = BROKEN / "k_transposed_twice.py"
    assert "K_t.transpose(-2, -1)" in path.read_text().splitlines()[23]
    _, reports = run_code_tests(pytester, path, sandboxed=True)
    texts = [r.longreprtext for r in reports if r.failed and function(r) == "test_attention_weights"]
    assert texts and all("attention_weights() raised RuntimeError: " in t and
                         f"(at {path}:24: scores = Q @ K_t.transpose(-2, -1)" in t for t in texts)
