#!/usr/bin/env python3
"""Builds --target=cuda plans on a machine without a GPU and checks them.

For every model and mesh: dnnc compiles the plan (the generated CUDA C++
built by nvcc), `dnnc-run --print-plan` reads it back as a plan of target
cuda with one rank per device, the rank's shared object holds a cubin for each
requested architecture in the rank's shared object, and running the plan on
this machine fails with one clear `error:` line (no GPU here, or a runtime
without the CUDA backend) and no output left behind.

Prints one PASS/FAIL line per plan and ends with `N passed, M failed`; exits
77 (skipped) when nvcc is not installed, 1 when a plan failed.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

EM_CUDA = 190


def cubin_archs(path):
    """The SM versions of the CUDA ELF images (cubins) embedded in a host
    ELF: the fat binary holds them as whole ELF files whose e_machine is
    EM_CUDA and whose e_flags carry the SM version in bits 8-15."""
    data = open(path, "rb").read()
    archs = set()
    start = data.find(b"\x7fELF", 1)
    while start >= 0:
        if data[start + 4] == 2 and start + 52 <= len(data):  # ELF64
            machine = struct.unpack_from("<H", data, start + 18)[0]
            flags = struct.unpack_from("<I", data, start + 48)[0]
            if machine == EM_CUDA:
                archs.add(f"sm_{(flags >> 8) & 0xFF}")
        start = data.find(b"\x7fELF", start + 1)
    return archs


def find_tool(name):
    """Returns the path of a CUDA toolkit program, or None."""
    path = shutil.which(name)
    if path:
        return path
    candidate = os.path.join("/usr/local/cuda/bin", name)
    return candidate if os.access(candidate, os.X_OK) else None


def mesh_size(mesh):
    """Number of devices of a --mesh value such as 2x2."""
    size = 1
    for part in mesh.split("x"):
        size *= int(part)
    return size


def check_plan(args, name, model, mesh, workdir):
    """Compiles and checks one plan; returns an error message or None."""
    keep = os.path.join(workdir, f"{name}-{mesh}")
    os.makedirs(keep, exist_ok=True)
    plan = os.path.join(keep, "plan.bin")
    env = dict(os.environ, DNNC_CUDA_KEEP_DIR=keep)
    cmd = [args.dnnc, model, "--target=cuda", f"--mesh={mesh}",
           f"--cuda-arch={args.archs}", "-o", plan] + args.dnnc_flag
    run = subprocess.run(cmd, env=env, capture_output=True, text=True,
                         timeout=args.timeout)
    if run.returncode != 0:
        return "dnnc failed: " + (run.stderr.strip() or run.stdout.strip())
    printed = subprocess.run([args.dnnc_run, plan, "--print-plan"],
                             capture_output=True, text=True,
                             timeout=args.timeout)
    if printed.returncode != 0:
        return "dnnc-run --print-plan failed: " + printed.stderr.strip()
    header = printed.stdout.splitlines()[0] if printed.stdout else ""
    match = re.match(r"plan: target (\S+), world size (\d+)", header)
    if not match or match.group(1).rstrip(",") != "cuda":
        return f"not a cuda plan: '{header}'"
    if int(match.group(2).rstrip(",")) != mesh_size(mesh):
        return f"world size {match.group(2)} for mesh {mesh}: '{header}'"
    archs = cubin_archs(os.path.join(keep, "rank.so"))
    for arch in args.archs.split(","):  # each requested architecture
        if arch.strip() not in archs:
            return f"no {arch} cubin in the rank code (found {sorted(archs)})"
    # No GPU here: running it must be one clear error, nothing written.
    out_dir = os.path.join(keep, "out")
    ran = subprocess.run([args.dnnc_run, plan, "--output-dir", out_dir],
                         capture_output=True, text=True, timeout=args.timeout)
    if ran.returncode == 0:
        return "dnnc-run ran a cuda plan on a machine without a GPU"
    lines = [l for l in ran.stderr.splitlines() if l.strip()]
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return "running it gave no single error line: " + ran.stderr.strip()
    if os.path.exists(out_dir) and os.listdir(out_dir):
        return "a failed run left outputs behind"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="NAME=MODEL.onnx")
    parser.add_argument("--dnnc", required=True)
    parser.add_argument("--dnnc-run", required=True)
    parser.add_argument("--meshes", default="1,2,2x2")
    parser.add_argument("--archs", default="sm_90,sm_80")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--dnnc-flag", action="append", default=[],
                        help="extra dnnc flag (repeatable)")
    args = parser.parse_args()
    if not find_tool("nvcc"):
        print("nvcc not found: skipped")
        return 77
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="dnnc-cuda-plans-") as workdir:
        for entry in args.models:
            name, model = entry.split("=", 1)
            for mesh in args.meshes.split(","):
                error = check_plan(args, name, model, mesh, workdir)
                if error:
                    failed += 1
                    print(f"FAIL {name} --mesh={mesh}: {error}")
                else:
                    passed += 1
                    print(f"PASS {name} --mesh={mesh}")
                sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
