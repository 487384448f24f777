# Shared helpers for dnnc's scripts; sourced, not run.
#
# DNNC_ROOT     the repository root.
# DNNC_BUILD    the build directory (default: $DNNC_ROOT/build).
# DNNC_JOBS     parallel build jobs (default: 2).
# DNNC_PYTHON   the Python interpreter that has onnx, onnxruntime and numpy
#               (default: the python3 on PATH, e.g. pyenv's; see dnnc_python).

DNNC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DNNC_BUILD="${DNNC_BUILD:-$DNNC_ROOT/build}"
DNNC_JOBS="${DNNC_JOBS:-2}"
# Fallback virtual environment, only used where the sole python3 is an
# externally managed one (Debian's /usr/bin/python3, PEP 668).
DNNC_VENV="${DNNC_VENV:-$DNNC_BUILD/.venv}"

dnnc_log() { printf '[dnnc] %s\n' "$*" >&2; }

# Prints the real path of interpreter $1 if it is one we may pip-install
# into: it runs, and it is not externally managed (or it is a venv).
dnnc_usable_python() {
  local py="$1"
  [ -n "$py" ] && [ -x "$py" ] || return 1
  "$py" - <<'PY' 2>/dev/null
import os, sys, sysconfig
in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
managed = os.path.exists(
    os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
if sys.version_info < (3, 9) or (managed and not in_venv):
    sys.exit(1)
print(sys.executable)
PY
}

# Prints the Python interpreter dnnc's tests use: $DNNC_PYTHON, else the
# python3 on PATH (pyenv's shim resolved to its interpreter), else pyenv's
# even when not on PATH, else the fallback venv. Fails if none is usable.
dnnc_python() {
  if [ -n "${DNNC_PYTHON:-}" ]; then
    printf '%s\n' "$DNNC_PYTHON"
    return 0
  fi
  local cand
  for cand in "$(command -v python3 || true)" \
              "${PYENV_ROOT:-$HOME/.pyenv}/shims/python3" \
              "$DNNC_VENV/bin/python3"; do
    if dnnc_usable_python "$cand"; then
      return 0
    fi
  done
  return 1
}

# Configures (once) the AddressSanitizer + UndefinedBehaviorSanitizer build
# with libFuzzer coverage (clang-22; installs it when missing) and prints its
# folder, $DNNC_ROOT/build-fuzz. Used by scripts/fuzz.sh and
# scripts/sanitize.sh.
dnnc_configure_sanitized() {
  local build="$DNNC_ROOT/build-fuzz" llvm=/usr/lib/llvm-22 py
  bash "$DNNC_ROOT/scripts/setup.sh" >&2
  if ! command -v clang++-22 >/dev/null; then
    dnnc_log "installing clang-22 and its sanitizer/fuzzer runtimes"
    apt-get install -y -q --no-install-recommends clang-22 \
      libclang-rt-22-dev >&2
  fi
  if [ ! -f "$build/build.ninja" ]; then
    # -O1 and line tables only: reports keep file:line, and the build takes
    # far less time than with -O2 -g.
    local san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
    san="$san -fno-omit-frame-pointer"
    # Debian's libMLIR/libLLVM are not instrumented: keep LLVM's allocator
    # poisoning out of dnnc's copies too (see the header).
    san="$san -include $DNNC_ROOT/cmake/asan-uninstrumented-llvm.h"
    py="$(dnnc_python)"
    dnnc_log "configuring $build"
    CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$DNNC_ROOT" -B "$build" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DMLIR_DIR="$llvm/lib/cmake/mlir" -DMLIR_LINK_MLIR_DYLIB=ON \
      -DDNNC_ENABLE_FUZZERS=ON -DDNNC_RUNTIME_WITH_CUDA=OFF \
      -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
      -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" -DPython3_EXECUTABLE="$py" >&2
  fi
  printf '%s\n' "$build"
}
