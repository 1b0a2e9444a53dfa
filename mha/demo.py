"""python -m mha.demo — shapes, parameters and FLOPs of a real multi-head attention.

1. 17-08 Example 1 (d_model 768, h 12, n 128): the shape of every tensor in the trace.
2. Parameters of that module, against 4d² + 4d.
3. FLOPs measured on the live module, by stage, against 8nd² + 4n²d.
4. The same measurements at LLaMA 3.1 405B scale (d_model 16384, 128 heads, n 8192)
   on the "meta" device: no memory is allocated.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from mha.attention import MultiHeadAttention


def _report(m: MultiHeadAttention, x: torch.Tensor, out: Callable[[str], object]) -> None:
    import mha

    n, d = x.shape[-2], m.d_model
    p = mha.count_parameters(m)
    out(f"  parameters: {p:,}   (4d² + 4d = {4 * d * d + 4 * d:,})")
    r = mha.measure_flops(m, x, x, x, need_weights=False)
    for stage, f in r.by_stage.items():
        out(f"    {stage:9s} {f:>22,} FLOPs")
    out(f"  projections {r.projections:,} (8nd² = {8 * n * d * d:,})")
    out(f"  attention   {r.attention:,} (4n²d = {4 * n * n * d:,})")
    out(f"  matmuls     {r.matmul_total:,}; apart: softmax {r.softmax:,}, scaling {r.scaling:,}, bias {r.bias:,}")
    a = mha.attention_matrices(m, x, x)
    out(f"  attention matrices: {a.count} × {a.shape} = {a.elements:,} elements, {a.bytes:,} bytes "
        f"at {m.out_proj.weight.dtype}")


def main(out: Callable[[str], object] = print) -> int:
    import torch

    import mha

    out("17-08 Example 1: d_model 768, h 12, n 128 (unbatched input)")
    m = mha.MultiHeadAttention(768, 12)
    x = torch.randn(128, 768)
    t = mha.trace(m, x, x, x)
    for name in t.names():
        out(f"  {name:7s} one head/sequence {str(t.shape(name)):12s} stored {tuple(t[name].shape)}")
    _report(m, x, out)

    out("")
    out("LLaMA 3.1 405B attention on the meta device: d_model 16384, 128 heads, n 8192, bf16")
    big = mha.MultiHeadAttention(16384, 128, device="meta", dtype=torch.bfloat16)
    xb = torch.empty(8192, 16384, device="meta", dtype=torch.bfloat16)
    tb = mha.trace(big, xb, xb, xb)
    out(f"  Q_i {tb.shape('Q_i')}, S_i {tb.shape('S_i')}, output {tb.shape('output')}")
    _report(big, xb, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
