# -*- Python -*-
"""lit configuration for dnnc's regression tests (`ninja check-dnnc`)."""

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "DNNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# Inputs/ holds generators and data, not tests.
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dnnc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
config.substitutions.append(("%dnnc_src_root", config.dnnc_src_root))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
llvm_config.use_default_substitutions()
# %python is the interpreter that has onnx and numpy (chosen at configure
# time), not the one running lit, which lit's defaults would give.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.insert(0, ("%python", '"%s"' % config.python_executable))

# FileCheck, not, count and the dnnc tools are found on PATH as well as through
# substitutions (`not` at the start of a RUN line is not substituted).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dnnc_tools_dir, append_path=True)

tool_dirs = [config.dnnc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["dnnc", "dnnc-opt", "dnnc-translate", "dnnc-run"], tool_dirs)

# ONNX backend test data (Debian's libonnx-testdata).
if os.path.isdir(config.onnx_testdata_dir):
    config.available_features.add("onnx-testdata")

# Multi-rank runs (`REQUIRES: mpi`): mpirun on PATH and a dnnc-run built
# with MPI (it says so in --version).
import shutil
import subprocess

dnnc_run = os.path.join(config.dnnc_tools_dir, "dnnc-run")
if shutil.which("mpirun") and os.path.exists(dnnc_run):
    version = subprocess.run([dnnc_run, "--version"], capture_output=True,
                             text=True).stdout
    if "MPI" in version:
        config.available_features.add("mpi")

# Execution tests lower to LLVM with MLIR's own tools and JIT-run the result:
# `dnnc-opt ... | mlir-opt ... | mlir-runner -shared-libs=%mlir_runner_utils,...`
# (`REQUIRES: mlir-runner`).
llvm_config.add_tool_substitutions(["mlir-opt", "mlir-runner"],
                                   [config.llvm_tools_dir])
llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
runner_libs = {
    "%" + lib: os.path.join(llvm_lib_dir, "lib" + lib + config.llvm_shlib_ext)
    for lib in ["mlir_runner_utils", "mlir_c_runner_utils"]
}
config.substitutions.extend(runner_libs.items())
if all(map(os.path.exists, runner_libs.values())):
    config.available_features.add("mlir-runner")

# Building cuda plans (`REQUIRES: nvcc`): the CUDA toolkit's nvcc, found on
# PATH or under /usr/local/cuda. No GPU is needed.
if shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")
