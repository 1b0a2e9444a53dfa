#!/usr/bin/env bash
# Make (or reuse) the project's virtual environment and install grader into it.
#   scripts/venv.sh [EXTRA]     e.g. scripts/venv.sh test
# torch: a torch the user already has (CUDA or CPU) is kept; otherwise a CPU build
# is installed on a machine without an NVIDIA GPU, never a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${GRADER_VENV:-.venv}
PY=${PYTHON:-python3}
EXTRA=${1:-}
TORCH_CPU_VERSION=${TORCH_CPU_VERSION:-2.13.0}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

if [ ! -x "$VENV/bin/python" ]; then
  if "$PY" -c "import torch" >/dev/null 2>&1; then
    echo "grader: torch found in $PY; the venv will reuse it (--system-site-packages)" >&2
    "$PY" -m venv --system-site-packages "$VENV"
  else
    "$PY" -m venv "$VENV"
  fi
fi
VPY="$VENV/bin/python"
sum=$(cat pyproject.toml scripts/venv.sh | "$VPY" -c "import hashlib,sys;print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])")
stamp="$VENV/.installed-${EXTRA:-base}-$sum"
[ -f "$stamp" ] && exit 0

pip() { "$VPY" -m pip --disable-pip-version-check "$@"; }
if ! "$VPY" -c "import torch" >/dev/null 2>&1; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "grader: NVIDIA GPU found; installing a CUDA build of torch" >&2
    pip install "torch>=2.1"
  else
    # Prefer a CPU build that pip can already see (a local wheel or index);
    # otherwise take it from PyTorch's CPU index.
    report=$(mktemp)
    if pip install -q --dry-run --ignore-installed --no-deps --report "$report" "torch==$TORCH_CPU_VERSION" >/dev/null 2>&1 \
       && grep -q '+cpu' "$report"; then
      pip install "torch==$TORCH_CPU_VERSION"
    else
      echo "grader: no GPU; installing torch (CPU build) from $TORCH_CPU_INDEX" >&2
      pip install "torch==$TORCH_CPU_VERSION" --index-url "$TORCH_CPU_INDEX"
    fi
    rm -f "$report"
  fi
fi
if [ -n "$EXTRA" ]; then pip install -q -e ".[$EXTRA]"; else pip install -q -e .; fi
rm -f "$VENV"/.installed-"${EXTRA:-base}"-*
touch "$stamp"
