#!/usr/bin/env bash
# Builds dnnc's libFuzzer targets with AddressSanitizer and
# UndefinedBehaviorSanitizer (clang-22 from Debian) into build-fuzz/ and runs
# them on their corpora, kept in the repository:
#
#   dnnc-onnx-import-fuzzer  test/fuzz/corpus/onnx-import   (bytes as model.onnx)
#   plan-reader-fuzzer       test/fuzz/corpus/plan-reader   (bytes as plan.bin)
#
# Usage: bash scripts/fuzz.sh [SECONDS [TARGET...]]
#   SECONDS  how long each target runs (default 3600); the targets run one
#            after the other, each on DNNC_JOBS (default 2) workers.
# New corpus entries land in the corpus folder (commit them); a crash is
# written to build-fuzz/artifacts/ and makes the script exit non-zero.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"

SECONDS_PER_TARGET="${1:-3600}"
shift || true
TARGETS=("$@")
[ "${#TARGETS[@]}" -gt 0 ] || TARGETS=(dnnc-onnx-import-fuzzer plan-reader-fuzzer)

BUILD="$(dnnc_configure_sanitized)"
ninja -C "$BUILD" -j "$DNNC_JOBS" "${TARGETS[@]}"

corpus_of() {
  case "$1" in
    dnnc-onnx-import-fuzzer) echo test/fuzz/corpus/onnx-import ;;
    plan-reader-fuzzer) echo test/fuzz/corpus/plan-reader ;;
    *) dnnc_log "unknown fuzz target $1"; exit 2 ;;
  esac
}

mkdir -p "$BUILD/artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for target in "${TARGETS[@]}"; do
  corpus="$(corpus_of "$target")"
  mkdir -p "$corpus"
  dnnc_log "$target: ${SECONDS_PER_TARGET} s on $corpus"
  if ! "$BUILD/bin/$target" "$corpus" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=4096 \
      -max_len=65536 -jobs="$DNNC_JOBS" -workers="$DNNC_JOBS" \
      -artifact_prefix="$BUILD/artifacts/$target-" -print_final_stats=1 \
      > "$BUILD/$target.log" 2>&1; then
    dnnc_log "$target FAILED: see $BUILD/$target.log and $BUILD/artifacts"
    status=1
  fi
  # -jobs writes one fuzz-N.log per job: keep their summaries.
  tail -n 3 fuzz-*.log 2>/dev/null >> "$BUILD/$target.log" || true
  rm -f fuzz-*.log
  dnnc_log "$target: $(ls "$corpus" | wc -l) corpus entries"
done
exit "$status"
