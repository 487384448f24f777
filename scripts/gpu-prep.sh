#!/usr/bin/env bash
# Prepares the folder that scripts/gpu-check.sh runs on a GPU machine: the
# runtime sources, --target=cuda plans of the test models per precision,
# their inputs and reference outputs, the GPT-block benchmark material and
# manifest.json. Runs where dnnc is built; the work is in
# python/dnnc_gpu_prep.py (see docs/gpu-check.md).
#
# Usage: bash scripts/gpu-prep.sh OUT [--target cuda|cpu]
#            [--precisions fp32,tf32,bf16] [--models mlp,gpt2,bert,resnet18]
#            [--dnnc PATH] [...]      (all options: --help)
# dnnc defaults to $DNNC_BUILD/bin/dnnc (build/bin/dnnc).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if ! PY="$(dnnc_python)"; then
  echo "error: no usable python3 with onnx, onnxruntime, numpy and torch" \
       "(run scripts/setup.sh or set DNNC_PYTHON)" >&2
  exit 2
fi
if ! "$PY" -c "import onnx, onnxruntime, numpy, torch" 2>/dev/null; then
  echo "error: $PY cannot import onnx, onnxruntime, numpy and torch" \
       "(gpu-prep needs all four; set DNNC_PYTHON)" >&2
  exit 2
fi
exec "$PY" "$DNNC_ROOT/python/dnnc_gpu_prep.py" "$@"
