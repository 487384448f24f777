#!/usr/bin/env bash
# Sets up, builds, and imports the bundled example model, printing the MLIR
# of the `dnn` dialect that dnnc produces.
#
# Usage: bash scripts/demo.sh [MODEL.onnx]   (default: examples/mlp.onnx)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"

MODEL="${1:-examples/mlp.onnx}"

bash scripts/setup.sh
bash scripts/build.sh
dnnc_log "running: build/bin/dnnc $MODEL --compile-to=import"
"$DNNC_BUILD/bin/dnnc" "$MODEL" --compile-to=import
