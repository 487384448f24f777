#!/usr/bin/env bash
# Builds dnnc (compiler and runtime) with AddressSanitizer and
# UndefinedBehaviorSanitizer (clang-22 from Debian; the same build folder,
# build-fuzz/, as scripts/fuzz.sh) and runs, with those builds:
#   1. the lit suite,
#   2. the runtime and planner unit tests,
#   3. the ONNX regression graphs (test/onnx/regress) on 1 and 2x2 ranks,
#   4. a batch of the differential tester (test/fuzz/dnnc_fuzz.py).
# Any sanitizer report fails the step that hit it (halt_on_error). Run it
# before resolving an issue that touches the compiler or the runtime; it is
# too slow for CI (the sanitized build alone takes about an hour on 2 cores).
#
# Usage: bash scripts/sanitize.sh [FUZZ-COUNT]   (default 200 graphs)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"
FUZZ_COUNT="${1:-200}"

BUILD="$(dnnc_configure_sanitized)"
ninja -C "$BUILD" -j "$DNNC_JOBS"

# LeakSanitizer stays on: a leak in dnnc or dnnc-run is a failure too. MLIR
# contexts that live to exit are not leaks (still reachable).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Open MPI's allocations live from MPI_Init to exit (scripts/lsan.supp);
# full unwinding lets the suppressions see frames in the MPI libraries.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$DNNC_ROOT/scripts/lsan.supp:fast_unwind_on_malloc=0:print_suppressions=0}"
status=0
step() {
  local name="$1"
  shift
  dnnc_log "sanitize: $name"
  if ! "$@"; then
    dnnc_log "sanitize: $name FAILED"
    status=1
  fi
}
step "lit" ctest --test-dir "$BUILD" -R '^lit$' --output-on-failure
step "unit tests" ctest --test-dir "$BUILD" -R '^(runtime|planner)\.' \
  -E 'Cuda|mpi' -j "$DNNC_JOBS" --output-on-failure
step "regression graphs" ctest --test-dir "$BUILD" \
  -R '^onnx-regress-run-(1rank|2x2-stress28)$' --output-on-failure
step "differential tester ($FUZZ_COUNT graphs)" "$(dnnc_python)" \
  test/fuzz/dnnc_fuzz.py --seed 1 --count "$FUZZ_COUNT" \
  --modes 1rank,stress --dnnc "$BUILD/bin/dnnc" \
  --dnnc-run "$BUILD/bin/dnnc-run" -j "$DNNC_JOBS" \
  --out "$BUILD/fuzz-failures"
exit "$status"
