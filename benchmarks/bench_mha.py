"""Time of mha.MultiHeadAttention against torch's own attention, same weights, medians of one run.

    python benchmarks/bench_mha.py [--repeats 15] [--threads 16]         # CPU rows, then the GPU table
    python benchmarks/bench_mha.py --gpu-only [--mask both] [--profile DIR] [--json FILE]
    python benchmarks/bench_mha.py --gpu-only --device cpu --quick       # the GPU code path, small, on CPU

CPU rows (fp32, eval, self-attention, batch-first): need_weights=False (the fused kernel) and
need_weights=True (the weights averaged over heads come back), with autograd recording and under
torch.inference_mode() (where nn.MultiheadAttention takes its native fast path); the target is
mha / nn.MultiheadAttention <= 1.05.

GPU table (bf16, d 4096, h 32, batch 1, n 512 ... 16,384; forward under inference_mode, and
forward+backward: gradients of the input and every weight), four contenders on the same input:
  mha         mha.MultiHeadAttention(need_weights=False), the fused path
  sdpa-layer  the same math written minimally: F.linear -> F.scaled_dot_product_attention -> F.linear
  sdpa-core   F.scaled_dot_product_attention alone on q, k, v (B, h, n, d/h): the attention core
  nn.MHA      torch.nn.MultiheadAttention(need_weights=False)
run interleaved (A B C D A B C D ...), each call timed from a synchronised start to a synchronised
end (its Python overhead counted, as a caller sees it); figures are medians. Targets: mha /
sdpa-layer <= 1.05 and mha / nn.MHA <= 1.00. FLOPs by formula, 1 multiply-add = 2 FLOPs: forward
8·n·d² (four d×d projections) + 4·n²·d (Q·Kᵀ and A·V over all heads), the attention part halved
when causal; forward+backward 3 × forward (the backward's two matmuls per forward matmul;
flash attention's recomputation of the scores in the backward is not counted). sdpa-core is
credited with the attention part only. Achieved TFLOP/s are set against the peak measured in
the same run (a large bf16 matmul). The decode rows time one new token against a KV cache of L
tokens (mha with mha.KVCache, and the minimal layer) and set the bytes it must read, 4·d²
weights + 4·d biases + 2·(L+1)·d cached keys and values (2 bytes each in bf16), against the
bandwidth measured in the same run (a large device-to-device copy, bytes read + bytes written).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere: mha is beside benchmarks/
import mha  # noqa: E402

TARGET = 1.05          # mha / nn.MultiheadAttention on CPU, mha / sdpa-layer on the GPU
GPU_SIZES = (512, 1024, 2048, 4096, 8192, 16384)


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


# ---------------------------------------------------------------------------------------- CPU rows

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


def cpu_rows(repeats):
    worst = 0.0
    for need_weights in (False, True):
        for inference in (False, True):
            for batch, n, d, h in ((8, 512, 512, 8), (1, 2048, 1024, 16)):
                worst = max(worst, cpu_case(batch, n, d, h, repeats, inference, need_weights))
    print(f"worst ratio {worst:.3f} ({'target met' if worst <= TARGET else 'target NOT met'})")
    return worst


# ------------------------------------------------------------------------------------ GPU table

def layer_flops(n, d, causal, backward):
    """8·n·d² + 4·n²·d (attention part halved when causal); × 3 with the backward."""
    attention = 4 * n * n * d // (2 if causal else 1)
    return (8 * n * d * d + attention) * (3 if backward else 1), attention * (3 if backward else 1)


def measure_peak(dev, dt, size, repeats, sync):
    """The device's ceilings, measured here: a (size × size) @ (size × size) matmul in dt, TFLOP/s;
    a device-to-device copy of size² · 16 elements, GB/s counting bytes read + bytes written."""
    a, b = (torch.randn(size, size, device=dev, dtype=dt) for _ in range(2))
    src = torch.randn(size * size * 16, device=dev, dtype=dt)
    dst = torch.empty_like(src)
    med = compare({"matmul": lambda: a @ b, "copy": lambda: dst.copy_(src)}, repeats, sync)
    return 2 * size ** 3 / med["matmul"] / 1e12, 2 * src.numel() * src.element_size() / med["copy"] / 1e9


class Minimal(torch.nn.Module):
    """The same math as mha's fused path, written with nothing else: F.linear → SDPA → F.linear."""

    def __init__(self, ref: torch.nn.MultiheadAttention) -> None:
        super().__init__()
        self.h = ref.num_heads
        self.w_in, self.b_in = ref.in_proj_weight, ref.in_proj_bias  # shared with ref: the same weights
        self.w_out, self.b_out = ref.out_proj.weight, ref.out_proj.bias

    def forward(self, x, causal=False, cache=None):
        B, T, C = x.size()
        hs = C // self.h
        qkv = F.linear(x, self.w_in, self.b_in).view(B, T, 3, self.h, hs)  # (B, T, 3, h, hs)
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))  # 3 × (B, h, T, hs)
        if cache is not None:  # decode: (K, V, length) with K, V (B, h, max_len, hs)
            K, V, L = cache
            K[:, :, L:L + T], V[:, :, L:L + T] = k, v
            k, v = K[:, :, :L + T], V[:, :, :L + T]  # (B, h, L + T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, h, T, hs)
        return F.linear(y.transpose(1, 2).reshape(B, T, C), self.w_out, self.b_out)  # (B, T, C)


def contenders(ref, ours, minimal, x, qkv, causal, backward):
    """name -> a callable running one forward (inference_mode) or forward+backward."""
    mask = torch.ones(x.size(1), x.size(1), dtype=torch.bool, device=x.device).triu(1) if causal else None
    calls = {
        "mha": lambda: ours(x, x, x, need_weights=False, is_causal=causal)[0],
        "sdpa-layer": lambda: minimal(x, causal),
        "sdpa-core": lambda: F.scaled_dot_product_attention(*qkv, is_causal=causal),
        # nn.MultiheadAttention wants the causal mask with the hint; without weights it passes is_causal to SDPA
        "nn.MHA": lambda: ref(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)[0],
    }
    params = list(ref.parameters())
    wrt = {"mha": [x, *ours.parameters()], "sdpa-layer": [x, *params], "sdpa-core": list(qkv), "nn.MHA": [x, *params]}

    def run(name):
        call = calls[name]
        if not backward:
            def fwd():
                with torch.inference_mode():
                    call()
            return fwd
        out0 = call()
        g = torch.randn_like(out0)

        def fwd_bwd():
            torch.autograd.grad(call(), wrt[name], g)
        return fwd_bwd
    return {name: run(name) for name in calls}


def profile_table(fns, path, title, cuda):
    """torch.profiler's key_averages of mha and sdpa-layer (3 calls each), appended to `path`."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with open(path, "a") as f:
        for name in ("mha", "sdpa-layer"):
            with profile(activities=acts, record_shapes=True) as p:
                for _ in range(3):
                    fns[name]()
                if cuda:
                    torch.cuda.synchronize()
            key = "self_device_time_total" if cuda else "self_cpu_time_total"
            f.write(f"== {title}: {name} (3 calls)\n")
            f.write(p.key_averages(group_by_input_shape=True).table(sort_by=key, row_limit=25) + "\n")


def gpu_table(args):
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    dt = torch.bfloat16
    d, h = (64, 4) if args.quick else (4096, 32)
    sizes = args.sizes or ((32, 64) if args.quick else GPU_SIZES)
    peak, bw = measure_peak(dev, dt, 256 if args.quick else 8192, args.repeats, sync)
    where = torch.cuda.get_device_name(dev) if cuda else "CPU"
    print(f"{where}, torch {torch.__version__}" + (f", CUDA {torch.version.cuda}" if cuda else "")
          + f": bf16 matmul peak {peak:.1f} TFLOP/s, copy {bw:.1f} GB/s (read + written), measured now")
    print(f"bf16 d {d} h {h} batch 1; medians of {args.repeats} interleaved calls; "
          f"targets mha/sdpa-layer <= {TARGET}, mha/nn.MHA <= 1.00")
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True, device=dev, dtype=dt).eval()
    ours = mha.MultiHeadAttention.from_torch(ref).eval()  # the same weights, copied
    minimal = Minimal(ref)
    rows, worst, profiled = [], 0.0, 0
    masks = {"none": (False,), "causal": (True,), "both": (False, True)}[args.mask]
    print(f"{'pass':8s} {'mask':6s} {'n':>6s} {'mha ms':>9s} {'layer ms':>9s} {'core ms':>9s} {'nn.MHA ms':>9s}"
          f" {'/layer':>7s} {'/nn.MHA':>7s} {'mha TF/s':>9s} {'% peak':>7s} {'core TF/s':>9s}")
    for causal in masks:
        for backward in (False, True):
            for n in sizes:
                x = torch.randn(1, n, d, device=dev, dtype=dt, requires_grad=backward)
                qkv = tuple(torch.randn(1, h, n, d // h, device=dev, dtype=dt, requires_grad=backward)
                            for _ in range(3))
                fns = contenders(ref, ours, minimal, x, qkv, causal, backward)
                med = compare(fns, args.repeats, sync)
                total, attention = layer_flops(n, d, causal, backward)
                r_layer, r_torch = med["mha"] / med["sdpa-layer"], med["mha"] / med["nn.MHA"]
                tf = total / med["mha"] / 1e12
                row = {"pass": "fwd+bwd" if backward else "fwd", "causal": causal, "n": n,
                       **{f"{k}_ms": v * 1e3 for k, v in med.items()}, "mha_over_layer": r_layer,
                       "mha_over_nn_mha": r_torch, "mha_tflops": tf, "peak_tflops": peak,
                       "core_tflops": attention / med["sdpa-core"] / 1e12}
                rows.append(row)
                worst = max(worst, r_layer)
                flag = "" if r_layer <= TARGET and r_torch <= 1.0 else "  <- over"
                print(f"{row['pass']:8s} {'causal' if causal else '-':6s} {n:6d} {med['mha'] * 1e3:9.3f} "
                      f"{med['sdpa-layer'] * 1e3:9.3f} {med['sdpa-core'] * 1e3:9.3f} {med['nn.MHA'] * 1e3:9.3f} "
                      f"{r_layer:7.3f} {r_torch:7.3f} {tf:9.2f} {100 * tf / peak:6.1f}% {row['core_tflops']:9.2f}"
                      + flag)
                if args.profile and r_layer > args.profile_over and profiled < args.profile_rows:
                    profiled += 1
                    Path(args.profile).mkdir(parents=True, exist_ok=True)
                    title = f"{row['pass']} {'causal' if causal else 'no mask'} n {n}: mha/sdpa-layer {r_layer:.3f}"
                    profile_table(fns, Path(args.profile) / "bench_mha_profile.txt", title, cuda)
                del x, qkv, fns
    rows += decode_rows(args, ref, ours, minimal, dev, dt, d, h, bw, sync)
    print(f"worst mha/sdpa-layer {worst:.3f} ({'target met' if worst <= TARGET else 'target NOT met'})")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": where, "torch": torch.__version__, "peak_tflops": peak,
                                               "copy_gbps": bw, "rows": rows}, indent=1))
    return worst


def decode_rows(args, ref, ours, minimal, dev, dt, d, h, bw, sync):
    """One token decoded after L cached ones: mha with its KVCache, the minimal layer with its own."""
    rows = []
    for L in ((32, 64) if args.quick else (4096, 16384)):
        cache = ours.new_kv_cache(1, L + 1)
        cache.k.normal_(), cache.v.normal_()  # random keys/values, not zeros (METHOD.md)
        K, V = torch.randn_like(cache.k), torch.randn_like(cache.v)  # the minimal layer's: (1, h, L + 1, d/h)
        tok = torch.randn(1, 1, d, device=dev, dtype=dt)

        def step_mha():
            cache.length = L  # the same L cached tokens every call; the new one goes to position L
            with torch.inference_mode():
                ours(tok, tok, tok, need_weights=False, is_causal=True, kv_cache=cache)

        def step_min():
            with torch.inference_mode():
                minimal(tok, cache=(K, V, L))
        med = compare({"mha": step_mha, "sdpa-layer": step_min}, args.repeats, sync)
        nbytes = (4 * d * d + 4 * d + 2 * (L + 1) * d) * torch.finfo(dt).bits // 8
        for name, t in med.items():
            gbps = nbytes / t / 1e9
            rows.append({"pass": "decode", "name": name, "L": L, "ms": t * 1e3, "bytes": nbytes, "gbps": gbps,
                         "copy_gbps": bw})
            print(f"decode   L {L:6d} {name:10s} {t * 1e3:9.3f} ms  reads {nbytes / 1e6:8.1f} MB  "
                  f"{gbps:8.1f} GB/s = {100 * gbps / bw:5.1f}% of the copy's {bw:.1f}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    ap.add_argument("--cpu-only", action="store_true", help="the CPU rows alone")
    ap.add_argument("--gpu-only", action="store_true", help="the GPU table alone")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else None,
                    help="where the GPU table runs (default cuda when there is one; cpu runs it there)")
    ap.add_argument("--quick", action="store_true", help="GPU table at d 64, h 4, n 32 and 64 (a test of the code)")
    ap.add_argument("--sizes", type=lambda s: tuple(int(n) for n in s.split(",")), default=None,
                    help="n of the GPU table, comma-separated (default 512,...,16384)")
    ap.add_argument("--mask", choices=("none", "causal", "both"), default="none")
    ap.add_argument("--profile", default=None, help="folder: a torch.profiler table for every row over the target")
    ap.add_argument("--profile-over", type=float, default=TARGET, help="profile rows with mha/sdpa-layer above this")
    ap.add_argument("--profile-rows", type=int, default=6, help="profile at most this many rows (default 6)")
    ap.add_argument("--json", default=None, help="write the GPU table's rows to this file")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    if not args.gpu_only:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.repeats} interleaved repeats, "
              f"target mha/nn.MultiheadAttention <= {TARGET}")
        cpu_rows(args.repeats)
    if args.cpu_only:
        return
    if args.device is None:
        print("no CUDA device: the GPU table is skipped (--device cpu --quick runs its code here)")
        return
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"no CUDA device: --device {args.device} skipped")
        return
    gpu_table(args)


if __name__ == "__main__":
    main()
