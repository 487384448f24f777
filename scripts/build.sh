#!/usr/bin/env bash
# Configures (once) and builds dnnc into build/; binaries land in build/bin.
#
# Usage: bash scripts/build.sh [NINJA-TARGET...]
# Environment: DNNC_BUILD (build dir), DNNC_JOBS (default 2), DNNC_PYTHON.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DNNC_ROOT"

LLVM_PREFIX=/usr/lib/llvm-22

if [ ! -f "$DNNC_BUILD/build.ninja" ] || [ ! -f "$DNNC_BUILD/CMakeCache.txt" ]; then
  if ! PY="$(dnnc_python)"; then
    dnnc_log "no usable python3 found; run scripts/setup.sh first"
    exit 1
  fi
  dnnc_log "configuring $DNNC_BUILD (python: $PY)"
  # lld-22 installs ld.lld only in $LLVM_PREFIX/bin: -B makes the compiler
  # driver find it there for -fuse-ld=lld.
  cmake -G Ninja -S "$DNNC_ROOT" -B "$DNNC_BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DMLIR_LINK_MLIR_DYLIB=ON \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_EXE_LINKER_FLAGS="-B$LLVM_PREFIX/bin" \
    -DCMAKE_SHARED_LINKER_FLAGS="-B$LLVM_PREFIX/bin" \
    -DCMAKE_MODULE_LINKER_FLAGS="-B$LLVM_PREFIX/bin" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DPython3_EXECUTABLE="$PY"
fi

dnnc_log "building with ninja -j$DNNC_JOBS"
ninja -C "$DNNC_BUILD" -j "$DNNC_JOBS" "$@"
