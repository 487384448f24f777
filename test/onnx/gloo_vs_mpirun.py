#!/usr/bin/env python3
"""Runs dnnc plans under mpirun and torchrun-style (Gloo) and compares them.

For each MODEL (a directory under --data-dir holding `model.onnx` and
`test_data_set_0` with onnxruntime's reference outputs, e.g. test/models/
gpt2) and each CONFIG (`RANKS:DNNC-FLAGS`, the flags separated by spaces),
this compiles `plan.bin` with `dnnc MODEL/model.onnx DNNC-FLAGS`, runs it
with `dnnc-run` on every input of `test_data_set_0`

* under `mpirun -np RANKS` (the MPI data path), and
* as RANKS processes launched torchrun-style (RANK, WORLD_SIZE,
  MASTER_ADDR=127.0.0.1, a free MASTER_PORT: the Gloo data path),

and checks that every output of the Gloo run matches the MPI run's (same
dtype and shape; floats within --rtol of each output's scale, since the two
libraries sum in different orders; other types exactly) and that both match
the reference (conformance.py's tolerances). Prints one line per model and
config, then `N passed, N failed`; exits 0 when all pass, 1 otherwise, 77
(CTest's skip) when mpirun is missing or dnnc-run has no Gloo.

    gloo_vs_mpirun.py --dnnc build/bin/dnnc --dnnc-run build/bin/dnnc-run \\
        --data-dir test/models gpt2 bert \\
        --config "2:--parallel=tp=2" \\
        --config "4:--parallel=pp=2,tp=2 --microbatches=2"
"""

import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402


def launcher_difference(a, b):
    """The largest |a - b| over every output_K.pb of directories a and b,
    relative to each output's scale; raises RuntimeError when the files,
    dtypes or shapes differ, or non-float outputs are not equal."""
    names = sorted(os.listdir(a))
    if names != sorted(os.listdir(b)):
        raise RuntimeError(f"different output files: {names} and "
                           f"{sorted(os.listdir(b))}")
    worst = 0.0
    for name in names:
        ta = onnx.load_tensor(os.path.join(a, name))
        tb = onnx.load_tensor(os.path.join(b, name))
        x, y = numpy_helper.to_array(ta), numpy_helper.to_array(tb)
        if ta.data_type != tb.data_type or x.shape != y.shape:
            raise RuntimeError(f"{name}: dtype or shape differs")
        if not np.issubdtype(x.dtype, np.floating):
            if not np.array_equal(x, y):
                raise RuntimeError(f"{name}: values differ")
            continue
        x, y = x.astype(np.float64), y.astype(np.float64)
        finite = np.isfinite(x)
        if not np.array_equal(finite, np.isfinite(y)):
            raise RuntimeError(f"{name}: non-finite values differ")
        if finite.any():
            scale = max(float(np.max(np.abs(x[finite]))), 1e-30)
            worst = max(worst, float(np.max(np.abs(x[finite] - y[finite])))
                        / scale)
    return worst


def check(model_dir, ranks, flags, opts, tmp):
    """Compiles and runs one model and config; returns None when it passes,
    else the reason."""
    model = os.path.join(model_dir, "model.onnx")
    data_set = os.path.join(model_dir, "test_data_set_0")
    binds, inputs = conformance.bind_args(model, model_dir, set())
    plan = os.path.join(tmp, "plan.bin")
    rc, _, err = conformance.run([opts.dnnc, model, "-o", plan] + flags +
                                 binds, opts.timeout)
    if rc != 0:
        return f"dnnc exit code {rc}: {conformance.first_line(err)}"
    inputs = conformance.retyped_inputs(model, inputs, tmp)
    outs = {}
    for launcher in ("mpirun", "torchrun"):
        outdir = os.path.join(tmp, launcher)
        cmd = [opts.dnnc_run, plan, "--output-dir", outdir]
        for _, pb in inputs:
            cmd += ["--input", pb]
        if launcher == "torchrun":
            rc, _, err = conformance.run_torchrun(cmd, ranks, opts.timeout)
        else:
            rc, _, err = conformance.run(
                [opts.mpirun, "-np", str(ranks), "--oversubscribe",
                 "--allow-run-as-root"] + cmd, opts.timeout)
        if rc != 0:
            return (f"{launcher}: dnnc-run exit code {rc}: "
                    f"{conformance.first_line(err)}")
        k = 0
        while os.path.isfile(os.path.join(data_set, f"output_{k}.pb")):
            reason = conformance.compare(
                os.path.join(outdir, f"output_{k}.pb"),
                os.path.join(data_set, f"output_{k}.pb"), opts.ref_rtol,
                opts.ref_atol)
            if reason:
                return f"{launcher}: output {k} vs the reference: {reason}"
            k += 1
        outs[launcher] = outdir
    try:
        diff = launcher_difference(outs["mpirun"], outs["torchrun"])
    except RuntimeError as e:
        return f"torchrun vs mpirun: {e}"
    if diff > opts.rtol:
        return (f"torchrun vs mpirun: largest difference {diff:.3g} of the "
                f"output's scale (limit {opts.rtol:g})")
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", metavar="MODEL")
    parser.add_argument("--config", action="append", required=True,
                        metavar="RANKS:FLAGS",
                        help="ranks and dnnc flags (repeatable)")
    parser.add_argument("--data-dir", required=True,
                        help="the directory holding the MODEL directories")
    parser.add_argument("--dnnc", default="dnnc")
    parser.add_argument("--dnnc-run", default="dnnc-run")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--rtol", type=float, default=1e-5,
                        help="largest torchrun-vs-mpirun difference, relative "
                             "to each output's scale (default: 1e-5)")
    parser.add_argument("--ref-rtol", type=float, default=1e-3)
    parser.add_argument("--ref-atol", type=float, default=1e-4)
    parser.add_argument("--timeout", type=float, default=300)
    opts = parser.parse_args(argv)

    if not shutil.which(opts.mpirun):
        print(f"{opts.mpirun} not found; skipping")
        return 77
    rc, version, _ = conformance.run([opts.dnnc_run, "--version"], 60)
    if "Gloo" not in version:
        print(f"{opts.dnnc_run} is built without Gloo; skipping")
        return 77
    passed = failed = 0
    for name in opts.models:
        for config in opts.config:
            ranks, _, flags = config.partition(":")
            with tempfile.TemporaryDirectory(prefix="dnnc-gloo-mpi-") as tmp:
                try:
                    reason = check(os.path.join(opts.data_dir, name),
                                   int(ranks), flags.split(), opts, tmp)
                except RuntimeError as e:
                    reason = str(e)
            if reason is None:
                passed += 1
                print(f"PASS {name} {config}")
            else:
                failed += 1
                print(f"FAIL {name} {config}: {reason}")
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
