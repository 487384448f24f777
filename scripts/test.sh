#!/usr/bin/env bash
# Sets up, builds and runs every test (lit suite and ONNX import conformance)
# through CTest; its last line is CTest's summary.
#
# Usage: bash scripts/test.sh [extra ctest args...]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"

bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir "$DNNC_BUILD" --output-on-failure "$@"
