"""Forward time of mha.MultiHeadAttention against torch.nn.MultiheadAttention, same weights.

    .venv/bin/python benchmarks/bench_mha.py [--repeats 15]

CPU fp32, eval mode, self-attention, batch-first; need_weights=False (the fused kernel) and
need_weights=True (the default call: the weights averaged over heads come back). The two
modules run interleaved (A B A B ...) so that drift on a shared machine hits both alike;
each figure is a median, and the verdict is the ratio of medians from this one run.
Twice: with autograd recording (a training-style forward) and under torch.inference_mode()
(where nn.MultiheadAttention may take its native fused fast path).
On CUDA, also bf16 at n 4096, d 4096 against F.scaled_dot_product_attention alone.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import mha

TARGET = 1.05


def _time(fn, sync):
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


def compare(fns, repeats, sync=lambda: None, warmup=2):
    """Median seconds of each callable, run interleaved."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(_time(fn, sync))
    return {name: statistics.median(ts) for name, ts in times.items()}


def cpu_case(batch, n, d, h, repeats, inference, need_weights):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    ours = mha.MultiHeadAttention.from_torch(ref).eval()
    x = torch.randn(batch, n, d)
    with torch.no_grad():
        (o1, w1), (o2, w2) = ours(x, x, x, need_weights=need_weights), ref(x, x, x, need_weights=need_weights)
        diff = (o1 - o2).abs().max().item()
        if need_weights:
            diff = max(diff, (w1 - w2).abs().max().item())
    ctx = torch.inference_mode if inference else torch.enable_grad

    def run(m):
        def fn():
            with ctx():
                m(x, x, x, need_weights=need_weights)
        return fn

    med = compare({"mha": run(ours), "torch": run(ref)}, repeats)
    ratio = med["mha"] / med["torch"]
    mode = ("inference_mode" if inference else "autograd on   ") + (" weights" if need_weights else "        ")
    verdict = "ok" if ratio <= TARGET else f"OVER {TARGET}"
    print(f"cpu fp32 {mode} batch {batch:2d} n {n:5d} d {d:5d} h {h:3d}: "
          f"mha {med['mha'] * 1e3:8.2f} ms  nn.MultiheadAttention {med['torch'] * 1e3:8.2f} ms  "
          f"ratio {ratio:.3f} ({verdict}; max |diff| {diff:.1e})")
    return ratio


def cuda_case(repeats, n=4096, d=4096, h=32, batch=1):
    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True, device=dev, dtype=dt).eval()
    ours = mha.MultiHeadAttention.from_torch(ref).eval()  # the same weights
    x = torch.randn(batch, n, d, device=dev, dtype=dt)
    q, k, v = (torch.randn(batch, h, n, d // h, device=dev, dtype=dt) for _ in range(3))

    def run(fn):
        def go():
            with torch.inference_mode():
                fn()
        return go

    med = compare({"mha": run(lambda: ours(x, x, x, need_weights=False)),
                   "nn.MultiheadAttention": run(lambda: ref(x, x, x, need_weights=False)),
                   "sdpa alone": run(lambda: F.scaled_dot_product_attention(q, k, v))},
                  repeats, sync=torch.cuda.synchronize)
    print(f"cuda bf16 batch {batch} n {n} d {d} h {h}: " + "  ".join(
        f"{k} {v * 1e3:.2f} ms" for k, v in med.items()))
    print(f"  mha / nn.MultiheadAttention = {med['mha'] / med['nn.MultiheadAttention']:.3f}; "
          f"mha / sdpa alone = {med['mha'] / med['sdpa alone']:.3f} (the rest is the four projections)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeats} interleaved repeats, "
          f"target mha/nn.MultiheadAttention <= {TARGET}")
    worst = 0.0
    for need_weights in (False, True):
        for inference in (False, True):
            for batch, n, d, h in ((8, 512, 512, 8), (1, 2048, 1024, 16)):
                worst = max(worst, cpu_case(batch, n, d, h, args.repeats, inference, need_weights))
    print(f"worst ratio {worst:.3f} ({'target met' if worst <= TARGET else 'target NOT met'})")
    if torch.cuda.is_available():
        cuda_case(args.repeats)
    else:
        print("no CUDA device: bf16 n 4096 d 4096 case skipped")


if __name__ == "__main__":
    main()
