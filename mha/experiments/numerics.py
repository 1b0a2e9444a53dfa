"""The CPU kernels the experiments compute with: the same ones whatever the x86-64 processor.

torch picks its CPU kernels by the processor it runs on: ATen's vectorised kernels for the
widest instruction set the CPU has (AVX512, AVX2, ...; ``ATEN_CPU_CAPABILITY``), and MKL a code
path of its own per CPU for the matrix products (``MKL_CBWR``). Each path sums and rounds in
its own order; one intra-op thread and torch's deterministic algorithms
(:func:`mha.experiments.tasks.deterministic`) make a run repeat bit for bit on one machine, but
not on another, and 300 steps of Adam turn last-bit differences into visibly different trained
models. On one Xeon (torch 2.13, MKL), seed 0 of the docs' accuracy-gain demonstration
(d=32, n=8, h in 1, 2, 4, 300 steps) gave 0.7519 with its own AVX512 kernels, 0.7444 with
ATen's AVX2 ones, 0.7386 with AVX2 and MKL's AVX2 path, 0.7445 with ATen's default ones: the
numbers docs/spec-language.md shows, computed on another machine, were not this machine's.

:func:`pin` selects ATen's default (non-dispatched) kernels and MKL's conditional numerical
reproducibility mode COMPATIBLE, which every x86-64 CPU runs the same way. It must run before
torch is imported (both are read once, when the first kernel runs): the measuring process
(grader's worker.py) and ``python -m mha.experiments`` call it first thing. For these tiny
models the default kernels cost nothing (a training run was no slower). What it does not
cover: another torch or MKL release, another architecture (ARM), a C library whose math
functions round differently. :func:`tag` records the kernels in the cache's key, so that a
result computed with other kernels (in a process that imported torch first) is never read as
one computed with these.
"""
from __future__ import annotations

import os
import sys

PORTABLE = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}


def pin() -> bool:
    """Select the portable kernels for this process (and the processes it starts): True, or
    False when torch is already imported (then nothing is changed: the kernels are chosen)."""
    if "torch" in sys.modules:
        return False
    os.environ.update(PORTABLE)
    return True


def tag() -> str:
    """The kernels this process computes with, e.g. "aten=DEFAULT mkl_cbwr=COMPATIBLE"."""
    import torch

    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    aten = get() if get is not None else os.environ.get("ATEN_CPU_CAPABILITY", "unknown")
    return f"aten={aten} mkl_cbwr={os.environ.get('MKL_CBWR', '')}"
