#!/usr/bin/env bash
# Installs everything dnnc needs to build and test, on Debian 12 (bookworm).
# Idempotent: installs only what is missing; `apt-get update` runs only when
# some Debian package is missing. Works as root without a tty (CI).
#
# Usage: bash scripts/setup.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export DEBIAN_FRONTEND=noninteractive

APT_PACKAGES=(
  # Toolchain and build system.
  g++ cmake ninja-build
  # LLVM/MLIR 22: headers, libMLIR, mlir-tblgen, lit/FileCheck/not, lld.
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  # compiler-rt builtins, linked into rank code (bf16 conversion libcalls).
  libclang-rt-22-dev
  # ONNX protobuf schema and its runtime; ONNX backend test data.
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # CPU backend: BLAS and MPI; Gloo for RANK/WORLD_SIZE (torchrun-style)
  # launches of cpu plans.
  libopenblas-dev libopenmpi-dev openmpi-bin libgloo-dev
  # Runtime unit tests (runtime/test).
  libgtest-dev
)
PIP_MODULES=(onnx onnxruntime numpy)

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  SUDO=(sudo -E)
fi

apt_missing() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
        grep -q '^install ok installed$'; then
      printf '%s\n' "$p"
    fi
  done
}

APT_UPDATED=0
apt_install() {
  local missing
  mapfile -t missing < <(apt_missing "$@")
  [ "${#missing[@]}" -eq 0 ] && return 0
  dnnc_log "installing Debian packages: ${missing[*]}"
  if [ "$APT_UPDATED" -eq 0 ]; then
    "${SUDO[@]}" apt-get update -q
    APT_UPDATED=1
  fi
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends \
    -o Dpkg::Use-Pty=0 "${missing[@]}"
}

apt_install "${APT_PACKAGES[@]}"

# Python: pip installs go into the python3 on PATH (pyenv's), never into
# Debian's externally managed /usr/bin/python3; where that is the only one,
# into a venv under the build directory.
if ! PY="$(dnnc_python)"; then
  dnnc_log "no pip-installable python3 on PATH; creating venv $DNNC_VENV"
  apt_install python3 python3-venv
  mkdir -p "$(dirname "$DNNC_VENV")"
  /usr/bin/python3 -m venv "$DNNC_VENV"
  PY="$(dnnc_python)"
fi

missing_modules=()
for m in "${PIP_MODULES[@]}"; do
  if ! "$PY" -c "import $m" >/dev/null 2>&1; then
    missing_modules+=("$m")
  fi
done
if [ "${#missing_modules[@]}" -gt 0 ]; then
  dnnc_log "pip installing into $PY: ${missing_modules[*]}"
  "$PY" -m pip install -q --disable-pip-version-check --no-input \
    --root-user-action=ignore "${missing_modules[@]}"
fi

dnnc_log "setup done (python: $PY)"
