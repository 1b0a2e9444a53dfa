"""Cold `grader check-spec` on the bundled subject against a bare `python -c "import torch"`.

Both run as fresh processes, interleaved, several times; the medians and their ratio are
printed. Target: ratio ≤ 1.5 (issue 3). Run:  .venv/bin/python benchmarks/bench_check_spec.py [repeats]

A third process is timed for reference: `import torch` plus one tiny forward of mha on the
"meta" device. The bundled spec measures LLM-sized layers (17-08 Example 3: n 2048, d 4096)
on meta, and torch's first meta forward loads its Python meta kernels and decompositions,
which import torch._dynamo — a cost no check-spec run that measures on meta can avoid; the
"floor" ratio shows it.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time


def wall(cmd) -> float:
    start = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return elapsed


def main(repeats: int = 7) -> None:
    py = sys.executable
    check = [py, "-m", "grader", "check-spec", "--format", "json"]
    torch_only = [py, "-c", "import torch"]
    floor = [py, "-c", "import torch, mha; x = torch.empty(4, 8, device='meta'); "
                       "mha.MultiHeadAttention(8, 2, device='meta')(x, x, x, need_weights=False)"]
    wall(torch_only)  # warm the file cache once for both (the "cold" is the process, not the disk)
    times = {"check-spec": [], "import torch": [], "torch + meta": []}
    for _ in range(repeats):
        times["import torch"].append(wall(torch_only))
        times["check-spec"].append(wall(check))
        times["torch + meta"].append(wall(floor))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"{k:>13}: median {med[k]:.3f} s  (runs: {', '.join(f'{x:.2f}' for x in v)})")
    ratio = med["check-spec"] / med["import torch"]
    print(f"ratio check-spec / import torch = {ratio:.2f}  (target ≤ 1.50: {'met' if ratio <= 1.5 else 'NOT met'})")
    print(f"floor (import torch + first meta forward) / import torch = "
          f"{med['torch + meta'] / med['import torch']:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
