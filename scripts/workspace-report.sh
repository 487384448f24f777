#!/usr/bin/env bash
# Prints, per model, what dnn-plan-memory did in the cpu device phase: the
# workspace arena bytes against the sum of the planned allocations (the
# bytes they would take without reuse) and the peak of the bytes live at
# once (a lower bound of the arena), summed over the model's functions, and
# the allocations left unplanned.
#
# Usage: bash scripts/workspace-report.sh [MODEL.onnx [DNNC-FLAGS...]]
# Without arguments: GPT-2, BERT, ResNet-18 (test/models) and examples/mlp.onnx.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"

report() {
  local model="$1"
  shift
  "$DNNC_BUILD/bin/dnnc" "$model" --compile-to=device "$@" |
    awk -v model="$model" '
      /dnnc\.(workspace_bytes|planned_bytes|unplanned_allocs)/ {
        funcs++
        if (match($0, /dnnc\.workspace_bytes = [0-9]+/))
          arena += substr($0, RSTART + 23, RLENGTH - 23)
        if (match($0, /dnnc\.planned_bytes = [0-9]+/))
          planned += substr($0, RSTART + 21, RLENGTH - 21)
        if (match($0, /dnnc\.peak_live_bytes = [0-9]+/))
          peak += substr($0, RSTART + 23, RLENGTH - 23)
        if (match($0, /dnnc\.unplanned_allocs = [0-9]+/))
          unplanned += substr($0, RSTART + 24, RLENGTH - 24)
      }
      END {
        printf "%-32s functions %d  planned %10d B  arena %10d B (%5.1f%%)  peak live %10d B  unplanned allocs %d\n",
          model, funcs, planned, arena, planned ? 100 * arena / planned : 0, peak, unplanned
      }'
}

if [ $# -gt 0 ]; then
  report "$@"
else
  for m in test/models/gpt2/model.onnx test/models/bert/model.onnx \
    test/models/resnet18/model.onnx examples/mlp.onnx; do
    report "$m"
  done
fi
