#!/usr/bin/env bash
# Checks dnnc's cuda plans on a GPU machine (docs/gpu-check.md).
#
# FOLDER comes from scripts/gpu-prep.sh (run where dnnc is built). This
# machine needs the CUDA toolkit (nvcc, cudart, cuBLASLt), NCCL, CMake, a
# C++17 compiler and Python with numpy, torch and onnx; no MLIR, no dnnc
# build, no MPI, no OpenBLAS (without it the runtime's cpu GEMMs are plain
# loops; cuda plans do not use them).
#
#   1. builds dnnc-run from FOLDER/runtime (CUDA on, MPI off, -j$(nproc));
#   2. prints the GPU (nvidia-smi);
#   3. runs every plan of FOLDER/manifest.json on one GPU (dnnc-run under a
#      timeout) and compares each output with the reference within the
#      manifest's tolerance for the plan's precision: max abs / rel error
#      and PASS/FAIL per output;
#   4. the GPT-block benchmark: dnnc-run --warmup/--repeat timing of the
#      block plan vs PyTorch eager (same weights, same precision, same GPU):
#      both times, ratio torch/dnnc (> 1: dnnc faster), TFLOP/s, MFU; and
#      dnnc's block output vs torch's within the precision's tolerance;
#   5. last line `N passed, M failed`; exit 0 only if nothing failed.
#
# Usage: bash gpu-check.sh FOLDER [--cpu-dry-run] [--dnnc-run PATH]
#            [--build-only] [--build-dir DIR] [--jobs N] [--timeout S]
#            [--budget S] [--warmup N] [--iters N]
#   --cpu-dry-run   no GPU: FOLDER prepared with `gpu-prep.sh --target cpu`,
#                   the runtime built without CUDA (or --dnnc-run), torch on
#                   the CPU, few benchmark iterations
#   --build-only    build dnnc-run as for the GPU (CUDA on) and stop; needs
#                   no GPU (checks the toolchain before the GPU time starts)
#   --dnnc-run PATH use this dnnc-run instead of building one
#   --build-dir DIR where to build the runtime (default FOLDER/build-runtime,
#                   reused by later runs)
#   --jobs N        build parallelism (default: nproc)
#   --timeout S     limit per dnnc-run (default 60 s); all runs together
#                   get 180 s (--budget S), then the rest fail as not run.
#                   With the configure (60 s) and build (180 s) limits and
#                   a hard stop 60 s after the budget, the script ends
#                   within 8 minutes
#   --warmup N, --iters N   block benchmark runs (default 10 and 50; dry
#                   run 1 and 3)
# Environment: PYTHON (default python3), CUDA_HOME / CUDAToolkit_ROOT.
set -euo pipefail

START=$(date +%s)
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[gpu-check] %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 2; }

FOLDER=""
DRY=0
BUILD_ONLY=0
DNNC_RUN=""
BUILD_DIR=""
JOBS="$(nproc 2>/dev/null || echo 4)"
TIMEOUT=60
BUDGET=180
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-dry-run) DRY=1 ;;
    --build-only) BUILD_ONLY=1 ;;
    --dnnc-run) DNNC_RUN="${2:?--dnnc-run needs a path}"; shift ;;
    --build-dir) BUILD_DIR="${2:?--build-dir needs a directory}"; shift ;;
    --jobs) JOBS="${2:?--jobs needs a count}"; shift ;;
    --timeout) TIMEOUT="${2:?--timeout needs seconds}"; shift ;;
    --budget) BUDGET="${2:?--budget needs seconds}"; shift ;;
    --warmup|--iters) BENCH_ARGS+=("$1" "${2:?$1 needs a count}"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
               exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$FOLDER" ] || die "one FOLDER only (got '$FOLDER' and '$1')"
       FOLDER="$1" ;;
  esac
  shift
done
[ -n "$FOLDER" ] || die "usage: gpu-check.sh FOLDER [--cpu-dry-run] ... (see --help)"
[ -d "$FOLDER" ] || die "no folder '$FOLDER'"
FOLDER="$(cd "$FOLDER" && pwd)"
[ -f "$FOLDER/manifest.json" ] ||
  die "$FOLDER/manifest.json missing: prepare the folder with scripts/gpu-prep.sh"

# The checker: next to this script (in a prepared folder) or in python/.
CHECKER="$HERE/dnnc_gpu_check.py"
[ -f "$CHECKER" ] || CHECKER="$HERE/../python/dnnc_gpu_check.py"
[ -f "$CHECKER" ] || die "dnnc_gpu_check.py not found next to $0 or in ../python"

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || die "$PY not found (set PYTHON)"
"$PY" -c "import numpy, torch, onnx" 2>/dev/null ||
  die "$PY cannot import numpy, torch and onnx (pip install numpy torch onnx)"
log "python: $("$PY" -c 'import sys, numpy, torch; print(sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.version.cuda)')"

# The plans' target, and the CUDA release their rank code was built with
# (gpu-prep's nvcc).
read -r PLAN_TARGET PLAN_CUDA < <("$PY" -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["target"], m.get("cuda_release") or "")' "$FOLDER/manifest.json") ||
  die "cannot read $FOLDER/manifest.json"
if [ "$DRY" = 1 ] && [ "$PLAN_TARGET" != cpu ]; then
  die "--cpu-dry-run needs a folder prepared with --target cpu; $FOLDER has $PLAN_TARGET plans"
fi
if [ "$DRY" = 0 ] && [ "$PLAN_TARGET" != cuda ]; then
  log "warning: $FOLDER has $PLAN_TARGET plans (prepared with --target $PLAN_TARGET)"
fi

# --- The GPU.
if [ "$BUILD_ONLY" = 1 ]; then
  GPU_NAME="none (build only)"
elif [ "$DRY" = 0 ]; then
  command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver?"
  GPU_INFO="$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
              --format=csv,noheader 2>&1)" || die "nvidia-smi failed: $GPU_INFO"
  log "GPU(s): $(printf '%s' "$GPU_INFO" | paste -sd ';' -)"
  GPU_NAME="$(printf '%s\n' "$GPU_INFO" | head -n1 | cut -d, -f1 | sed 's/ *$//')"
  CAP="$(printf '%s\n' "$GPU_INFO" | head -n1 | cut -d, -f2 | tr -d ' ')"
  [ "$CAP" = "9.0" ] ||
    log "warning: compute capability $CAP; dnnc's cuda plans are built for sm_90"
  # The plans' rank code was built by the prep machine's CUDA toolkit and
  # needs its libcudart.so.MAJOR and a driver that supports that release.
  DRIVER_CUDA="$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n1)"
  log "CUDA: plans built with toolkit ${PLAN_CUDA:-unknown}; driver supports ${DRIVER_CUDA:-unknown}"
  if [ -n "$PLAN_CUDA" ] && [ -n "$DRIVER_CUDA" ] &&
     [ "$(printf '%s\n%s\n' "$PLAN_CUDA" "$DRIVER_CUDA" | sort -V | tail -n1)" != "$DRIVER_CUDA" ]; then
    log "warning: the driver supports CUDA $DRIVER_CUDA < $PLAN_CUDA, the plans' toolkit: their kernels may not load"
  fi
  "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" ||
    die "torch sees no CUDA device (a CPU-only torch?)"
else
  GPU_NAME="none (cpu dry run)"
  log "cpu dry run: no GPU used"
fi

# --- dnnc-run.
if [ -z "$DNNC_RUN" ]; then
  command -v cmake >/dev/null || die "cmake not found"
  BUILD_DIR="${BUILD_DIR:-$FOLDER/build-runtime}"
  CMAKE_ARGS=(-S "$FOLDER/runtime" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
              -DDNNC_RUNTIME_WITH_MPI=OFF --no-warn-unused-cli)
  if command -v ninja >/dev/null; then CMAKE_ARGS+=(-G Ninja); fi
  # GoogleTest's sources from gpu-prep, for the runtime's CUDA unit tests
  # where no GTest is installed.
  [ ! -f "$FOLDER/googletest/CMakeLists.txt" ] ||
    CMAKE_ARGS+=("-DDNNC_GTEST_SOURCE_DIR=$FOLDER/googletest")
  if [ "$DRY" = 0 ]; then
    CMAKE_ARGS+=(-DDNNC_RUNTIME_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
    CUDA_ROOT="${CUDAToolkit_ROOT:-${CUDA_HOME:-}}"
    if [ -z "$CUDA_ROOT" ] && command -v nvcc >/dev/null; then
      CUDA_ROOT="$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)"
    fi
    [ -n "$CUDA_ROOT" ] || [ ! -d /usr/local/cuda ] || CUDA_ROOT=/usr/local/cuda
    [ -z "$CUDA_ROOT" ] || CMAKE_ARGS+=("-DCUDAToolkit_ROOT=$CUDA_ROOT")
    # NCCL: the system's, else the one pip installs with torch
    # (nvidia-nccl-cu12: nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}).
    HAVE_NCCL=0
    for h in /usr/include/nccl.h /usr/local/include/nccl.h \
             "${CUDA_ROOT:-/usr/local/cuda}/include/nccl.h"; do
      [ ! -f "$h" ] || HAVE_NCCL=1
    done
    if [ "$HAVE_NCCL" = 0 ]; then
      NCCL_DIR="$("$PY" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' \
                  2>/dev/null || true)"
      NCCL_LIB=""
      for f in "$NCCL_DIR"/lib/libnccl.so*; do
        [ -n "$NCCL_LIB" ] || [ ! -f "$f" ] || NCCL_LIB="$f"
      done
      if [ -n "$NCCL_DIR" ] && [ -f "$NCCL_DIR/include/nccl.h" ] && [ -n "$NCCL_LIB" ]; then
        log "NCCL from the Python package: $NCCL_DIR"
        CMAKE_ARGS+=("-DDNNC_NCCL_INCLUDE_DIR=$NCCL_DIR/include"
                     "-DDNNC_NCCL_LIBRARY=$NCCL_LIB")
        export LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      fi
    fi
  else
    CMAKE_ARGS+=(-DDNNC_RUNTIME_WITH_CUDA=OFF)
  fi
  log "building dnnc-run in $BUILD_DIR (-j$JOBS)"
  mkdir -p "$BUILD_DIR"
  if ! timeout 60 cmake "${CMAKE_ARGS[@]}" >"$BUILD_DIR/configure.log" 2>&1; then
    tail -n 25 "$BUILD_DIR/configure.log" >&2
    die "cmake configure failed (full log: $BUILD_DIR/configure.log)"
  fi
  grep -E "dnnc runtime:" "$BUILD_DIR/configure.log" | sed 's/^-- /[gpu-check] /' || true
  if ! timeout 180 cmake --build "$BUILD_DIR" --target dnnc-run -j "$JOBS" \
       >"$BUILD_DIR/build.log" 2>&1; then
    tail -n 25 "$BUILD_DIR/build.log" >&2
    die "building dnnc-run failed (full log: $BUILD_DIR/build.log)"
  fi
  DNNC_RUN="$BUILD_DIR/bin/dnnc-run"
  if [ "$DRY" = 0 ] && [ -n "${PLAN_CUDA:-}" ]; then
    RT_MAJOR="$(ldd "$DNNC_RUN" 2>/dev/null | sed -n 's/.*libcudart\.so\.\([0-9]*\).*/\1/p' | head -n1)"
    if [ -n "$RT_MAJOR" ] && [ "$RT_MAJOR" != "${PLAN_CUDA%%.*}" ]; then
      log "warning: dnnc-run links libcudart.so.$RT_MAJOR but the plans' code needs libcudart.so.${PLAN_CUDA%%.*} (toolkit $PLAN_CUDA): install that CUDA major or prepare the plans with this machine's"
    fi
  fi
  log "built dnnc-run in $(( $(date +%s) - START )) s"
fi
[ -x "$DNNC_RUN" ] || die "$DNNC_RUN is not an executable"
VERSION="$("$DNNC_RUN" --version 2>&1)" || die "$DNNC_RUN --version failed: $VERSION"
log "$VERSION"
if [ "$DRY" = 0 ] && ! printf '%s' "$VERSION" | grep -q "targets:.*cuda"; then
  die "$DNNC_RUN has no cuda backend (configure with -DDNNC_RUNTIME_WITH_CUDA=ON)"
fi
if [ "$BUILD_ONLY" = 1 ]; then
  log "build only: $DNNC_RUN is ready ($(( $(date +%s) - START )) s)"
  exit 0
fi

# --- The runtime's own CUDA tests (cuBLASLt GEMMs of every dtype, the
# attention kernels against a CPU reference, graph replays), when this
# build could configure them (GTest installed, or the folder's googletest/
# copy); bounded, and their failure
# fails the check.
UNIT_RC=0
if [ "$DRY" = 0 ] && [ -n "$BUILD_DIR" ] &&
   cmake --build "$BUILD_DIR" --target help 2>/dev/null |
     grep -q DNNCRuntimeCudaTests; then
  if timeout 240 cmake --build "$BUILD_DIR" --target DNNCRuntimeCudaTests \
       -j "$JOBS" >"$BUILD_DIR/unit-build.log" 2>&1; then
    if timeout 180 "$BUILD_DIR/test/DNNCRuntimeCudaTests" \
         >"$BUILD_DIR/unit.log" 2>&1; then
      log "runtime CUDA unit tests: $(grep -c '^\[       OK \]' "$BUILD_DIR/unit.log") passed"
    else
      UNIT_RC=1
      grep -E '^\[  FAILED  \]|Failure|error' "$BUILD_DIR/unit.log" | head -n 20 >&2
      log "runtime CUDA unit tests FAILED (full log: $BUILD_DIR/unit.log)"
    fi
  else
    log "warning: could not build the runtime CUDA unit tests (log: $BUILD_DIR/unit-build.log)"
  fi
else
  [ "$DRY" = 1 ] || log "runtime CUDA unit tests skipped (no GTest in this build)"
fi

# --- Plans and the block benchmark (the checker bounds every dnnc-run by
# --timeout and all of them by --budget; a hard stop 60 s after that).
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dnnc-gpu-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
CHECK_ARGS=(check "$FOLDER" --dnnc-run "$DNNC_RUN" --timeout "$TIMEOUT"
            --budget "$BUDGET" --started-at "$START"
            --work "$WORK" --gpu-name "$GPU_NAME")
[ "$DRY" = 0 ] || CHECK_ARGS+=(--cpu-dry-run)
CHECK_ARGS+=(${BENCH_ARGS[@]+"${BENCH_ARGS[@]}"})
rc=0
timeout "$((BUDGET + 60))" "$PY" "$CHECKER" "${CHECK_ARGS[@]}" || rc=$?
if [ "$rc" = 124 ]; then
  echo "error: the checks ran past $((BUDGET + 60)) s and were stopped" >&2
  echo "0 passed, 1 failed (stopped after $(( $(date +%s) - START )) s)"
fi
[ "$rc" != 0 ] || rc="$UNIT_RC"
exit "$rc"
