"""mha.device_timing (measured inference against the measured roofline) and the timed demonstrations
(decode-time, prefill-time): on CPU with tiny sizes here; the device's own check is the CUDA test at
the end (skipped without CUDA). No timed asserts: only that timings are positive and finite and that
the roofline arithmetic is right for whatever was measured."""
from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import mha  # noqa: E402
from mha.device_timing import Config, DevicePeaks, StepTiming, measure_device, time_decode, time_prefill  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(matmul_n=32, copy_bytes=2 * 2**16, repeats=2, warmup=1)


def tiny_model(g: int = 2) -> mha.Transformer:
    return Config(16, 4, g, 1, 32, 50).build("cpu", torch.float32)


def peaks(flop_per_s: float, bytes_per_s: float) -> DevicePeaks:
    # matmul_n 10: 2·10³ = 2,000 FLOPs; copy_bytes 1,000
    return DevicePeaks("cpu", "x", "float32", 10, 2000 / flop_per_s, 1000, 1000 / bytes_per_s, 1, "t")


def test_measure_device_on_cpu_is_positive_and_finite():
    p = measure_device("cpu", "fp32", **TINY)
    assert p.device == "cpu" and p.dtype == "float32" and p.matmul_n == 32 and p.copy_bytes == 2 * 2**16
    assert p.repeats == 2
    for x in (p.matmul_seconds, p.copy_seconds, p.flop_per_s, p.bytes_per_s):
        assert math.isfinite(x) and x > 0
    # the definitions: 2·N³ FLOPs per matmul, read + written bytes per copy
    assert p.flop_per_s == pytest.approx(2 * 32**3 / p.matmul_seconds)
    assert p.bytes_per_s == pytest.approx(2 * 2**16 / p.copy_seconds)


def test_roofline_arithmetic_and_the_bound_by_hand():
    # 1,000 bytes at 100 B/s: 10 s; 50 FLOPs at 10 FLOP/s: 5 s -> memory-bound, roofline 10 s;
    # measured 40 s: fraction 10/40 = 0.25
    p = peaks(10.0, 100.0)
    assert p.flop_per_s == pytest.approx(10.0) and p.bytes_per_s == pytest.approx(100.0)
    t = StepTiming("decode", 4, 1, "float32", 40.0, (40.0,), 50, 1000, p)
    assert (t.memory_seconds, t.compute_seconds) == (pytest.approx(10.0), pytest.approx(5.0))
    assert t.roofline_seconds == pytest.approx(10.0) and t.bound == "memory" and t.fraction == pytest.approx(0.25)
    # 500 FLOPs: 50 s by compute > 10 s by memory -> compute-bound, fraction 50/40 = 1.25
    c = replace(t, flops=500)
    assert c.bound == "compute" and c.roofline_seconds == pytest.approx(50.0) and c.fraction == pytest.approx(1.25)


@pytest.mark.parametrize("phase", ["decode", "prefill"])
def test_step_timing_uses_the_traced_step_and_the_measured_peaks(phase):
    m = tiny_model()
    p = measure_device("cpu", torch.float32, **TINY)
    timed = (time_decode if phase == "decode" else time_prefill)(m, 6, 2, peaks=p, repeats=3, warmup=1)
    traced = (mha.measure_decode_step if phase == "decode" else mha.measure_prefill)(m, 6, batch=2)
    assert (timed.phase, timed.n, timed.batch, timed.dtype) == (phase, 6, 2, "float32")
    assert timed.flops == traced.flops.matmul_total > 0 and timed.bytes == traced.traffic.total > 0
    assert len(timed.times) == 3 and all(math.isfinite(x) and x > 0 for x in timed.times)
    assert timed.seconds == sorted(timed.times)[1]      # the median of three
    # the roofline from those numbers, by hand
    mem, comp = timed.bytes / p.bytes_per_s, timed.flops / p.flop_per_s
    assert timed.roofline_seconds == pytest.approx(max(mem, comp))
    assert timed.bound == ("memory" if mem >= comp else "compute")
    assert timed.fraction == pytest.approx(max(mem, comp) / timed.seconds)
    assert not m.training       # evaluated in eval mode, left as it was


def test_decode_leaves_the_model_mode_and_times_position_n():
    m = tiny_model(1).train()
    t = time_decode(m, 5, peaks=peaks(1e9, 1e9), repeats=1, warmup=0)
    assert m.training and t.n == 5
    # decode at n = 5 reads the K/V of 5 positions (mha.inference): 2·5·1·4·4 bytes a layer, MQA, fp32
    assert t.bytes == mha.measure_decode_step(m, 5).traffic.total


@pytest.mark.parametrize("call, message", [
    (lambda: measure_device("meta"), "meta"),
    (lambda: measure_device("cpu", "int8"), "dtype must be fp32, fp16 or bf16"),
    (lambda: measure_device("cpu", matmul_n=0), "matmul_n must be a positive integer"),
    (lambda: measure_device("cpu", copy_bytes=1), "copy_bytes must be at least 2"),
    (lambda: measure_device("nonsense"), "device must be a torch device"),
    (lambda: time_decode(tiny_model(), 0, peaks=peaks(1, 1)), "n must be a positive integer"),
    (lambda: time_prefill(tiny_model(), 4, 0, peaks=peaks(1, 1)), "batch must be a positive integer"),
    (lambda: time_decode(tiny_model(), 4, peaks=peaks(1, 1), repeats=0), "repeats must be a positive integer"),
    (lambda: time_decode(torch.nn.Linear(2, 2), 4), "must be an mha.Transformer"),
])
def test_bad_arguments_are_clear_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_cuda_refused_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="no CUDA device"):
        measure_device("cuda")


def test_cli_on_cpu_prints_mha_and_gqa_side_by_side():
    r = subprocess.run([sys.executable, "-m", "mha.device_timing", "--d-model", "16", "--heads", "4", "--kv-heads", "2",
                        "--layers", "1", "--n", "6", "--vocab", "50", "--dtype", "fp32", "--device", "cpu",
                        "--repeats", "2", "--matmul-n", "32", "--copy-mib", "1"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("device cpu") and "TFLOP/s" in lines[0] and "GB/s" in lines[0]
    rows = [x.split() for x in lines[3:]]
    assert [(x[0], x[1], x[2]) for x in rows] == [("MHA", "4", "decode"), ("MHA", "4", "prefill"),
                                                  ("GQA", "2", "decode"), ("GQA", "2", "prefill")]
    # the GQA step moves fewer bytes than the MHA step (a smaller cache and smaller W^K, W^V)
    assert int(rows[2][7].replace(",", "")) < int(rows[0][7].replace(",", ""))


def test_the_module_needs_torch_and_mha_only():
    # the device run is `PYTHONPATH=. python3 -m mha.device_timing` on a machine with only torch
    code = ("import sys, contextlib, io; from mha.device_timing import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    rc = main(['--d-model', '16', '--heads', '4', '--layers', '1', '--n', '4', '--vocab', '50', "
            "'--device', 'cpu', '--repeats', '1', '--matmul-n', '16', '--copy-mib', '1'])\n"
            "print(rc, sorted({m.split('.')[0] for m in sys.modules} & {'grader', 'sympy', 'yaml', 'click', 'pint'}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.stdout.strip() == "0 []", r.stderr


def test_cli_errors_are_one_line():
    r = subprocess.run([sys.executable, "-m", "mha.device_timing", "--d-model", "16", "--heads", "4", "--kv-heads", "3",
                        "--layers", "1", "--n", "4", "--device", "cpu"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "error: --kv-heads 3 must divide --heads 4, which must divide --d-model 16"]


# ------------------------------------------------------------------ the timed demonstrations

def test_timed_experiment_on_cpu_gives_per_run_statistics_and_is_not_cached(tmp_path, monkeypatch):
    from mha.experiments import run
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    req = {"name": "decode-time", "statistic": "memory-bound", "device": "cpu", "seeds": [0, 1],
           "sizes": {"d": 16, "h": 4, "g": 2, "L": 1, "V": 50, "n": 4}, "model": {"dtype": "fp32"}}
    r = run(req)
    assert r["values"] in ([1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]) and len(r["details"]) == 2
    assert "bytes /" in r["details"][0] and "of the roofline" in r["details"][0]
    assert r["rerun"].startswith("python -m mha.device_timing --d-model 16 --heads 4 --kv-heads 2 --layers 1 --n 4")
    assert not list(tmp_path.rglob("*.json"))       # nothing kept on disk
    ms = run({**req, "statistic": "ms-per-token", "seeds": [0]})
    assert ms["values"][0] > 0 and ms["rerun"].endswith("--dtype fp32 --device cpu")


@pytest.mark.parametrize("request_, field", [
    ({"name": "decode-time", "statistic": "ms-per-token", "sizes": {"d": 16, "h": 4, "g": 3}}, "at"),
    ({"name": "decode-time", "statistic": "ms-per-token", "steps": 10}, "steps"),
    ({"name": "decode-time", "statistic": "ms", "sizes": {}}, "statistic"),
    ({"name": "prefill-time", "statistic": "ms", "model": {"dtype": "int8"}}, "dtype"),
    ({"name": "dropout", "statistic": "zeroed-z", "model": {"dtype": "bf16"}}, "dtype"),
    ({"name": "decode-time", "statistic": "ms-per-token", "sizes": {"n_q": 4}}, "at"),
])
def test_timed_requests_refused_at_the_field(request_, field):
    from mha.experiments.catalog import RequestError, normalise
    with pytest.raises(RequestError) as e:
        normalise(request_)
    assert e.value.field == field


def _spec(tmp_path: Path) -> Path:
    symbols = "".join(f"  {k}: {{positive: true, integer: true, meaning: {k}}}\n" for k in ("d", "h", "g", "L", "V", "n"))
    p = tmp_path / "timed.yaml"
    p.write_text(
        'subject:\n  id: "timed"\n  title: Timed\n  sources:\n'
        f'    text: {{title: "17-10", path: {ROOT / "spec/sources/17-10-inference-arithmetic.md"}}}\n'
        f"symbols:\n{symbols}claims:\n  - id: bound\n"
        '    quote: "Since decoding is memory-bound, the time per token is bounded below by the bytes read over the '
        'bandwidth."\n'
        "    source: {document: text}\n    expect: demonstrated\n    checks:\n"
        '      - {kind: demonstrate, experiment: decode-time, statistic: fraction-of-roofline, effect: "<= 1.1", '
        "seeds: 2, at: {d: 16, h: 4, g: 2, L: 1, V: 50, n: 4}, dtype: fp32}\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_check_spec_skips_a_timed_demonstration_without_cuda_saying_why(tmp_path, device):
    import json
    r = subprocess.run([sys.executable, "-m", "grader", "check-spec", str(_spec(tmp_path)), "--device", device,
                        "--format", "json"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    (claim,) = json.loads(r.stdout)["claims"]
    assert claim["verdict"] == "skipped" and claim["ok"]
    (check,) = claim["evidence"]["checks"]
    assert check["verdict"] == "skipped"
    assert "timed only on a GPU, asked for with check-spec --device cuda" in check["summary"]
    assert f"(device {device})" in check["summary"] and "d=16, h=4, g=2" in check["summary"]


def test_the_verdict_from_a_timing_and_from_a_worker_that_skipped():
    # the check's run() on a CUDA context, given what the measuring process returned (here timed on CPU)
    from grader.claims.checks import demonstrate
    from grader.claims.checks.common import Context, request_key
    from mha.experiments import run
    check = {"experiment": "decode-time", "statistic": "fraction-of-roofline", "effect": "<= 1.1", "seeds": 2,
             "at": {"d": 16, "h": 4, "g": 2, "L": 1, "V": 50, "n": 4}, "dtype": "fp32"}
    ctx = Context(None, device="cuda", measurements={})
    (req,) = demonstrate.requests(ctx, check)
    assert req["experiment"]["device"] == "cuda" and req["experiment"]["model"]["dtype"] == "fp32"
    assert demonstrate.requests(Context(None, device="auto"), check) == []
    got = run({**req["experiment"], "device": "cpu"})
    ok = demonstrate.run(replace(ctx, measurements={request_key(req): got}), check)
    # fractions on a CPU are far below 1 (a tiny model is all overhead): <= 1.1 in every run
    assert ok.verdict == "demonstrated" and "Timed on " in ok.summary and "never cached" in ok.summary
    low = demonstrate.run(replace(ctx, measurements={request_key(req): got}), {**check, "effect": "> 1.1"})
    assert low.verdict == "not demonstrated"
    skipped = demonstrate.run(replace(ctx, measurements={request_key(req): {**got, "skipped": "needs about 9 GiB"}}),
                              check)
    assert skipped.verdict == "skipped" and "needs about 9 GiB" in skipped.summary


# ------------------------------------------------------------------ on the device

@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("g", [16, 4], ids=["MHA", "GQA"])
def test_cuda_decode_is_never_faster_than_the_roofline(g):
    # d 2048, 16 heads, 8 layers, V 32000, bf16: about 0.9 GB of weights, far beyond any L2 cache, so
    # every step reads them from device memory. Nothing runs faster than its roofline; 10 % is left for
    # the bandwidth being a copy's (read and write) while a decode step mostly reads, which may be a
    # little faster, and for timing noise.
    m = Config(2048, 16, g, 8, 8192, 32000).build("cuda", torch.bfloat16)
    t = time_decode(m, 1024, repeats=20)
    assert t.bound == "memory"
    assert t.seconds >= 0.9 * t.roofline_seconds, (t.seconds, t.roofline_seconds, t.peaks)
    assert t.peaks.flop_per_s > 1e12 and t.peaks.bytes_per_s > 1e11    # a GPU: above 1 TFLOP/s, 100 GB/s


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_check_spec_times_the_demonstration(tmp_path):
    # a tiny model is all launch overhead: far slower than its roofline, so <= 1.1 in both runs
    import json
    r = subprocess.run([sys.executable, "-m", "grader", "check-spec", str(_spec(tmp_path)), "--device", "cuda",
                        "--format", "json"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    (claim,) = json.loads(r.stdout)["claims"]
    (check,) = claim["evidence"]["checks"]
    assert check["verdict"] == "demonstrated", check["summary"]
    assert "Timed on " in check["summary"] and "(cuda:" in check["summary"]


def test_a_cluster_sends_the_timed_request_to_a_gpu_worker():
    pytest.importorskip("distributed")
    from grader.claims.checks import demonstrate
    from grader.claims.checks.common import Context
    from grader.cluster.claims import asks_gpu
    check = {"experiment": "prefill-time", "statistic": "ms", "effect": "< 100", "at": {"d": 16, "h": 4}}
    assert asks_gpu(demonstrate.requests(Context(None, device="cuda"), check))
    untimed = {"experiment": "dropout", "statistic": "zeroed-z", "effect": "< 4"}
    assert not asks_gpu(demonstrate.requests(Context(None, device="cuda"), untimed))
