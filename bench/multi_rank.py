#!/usr/bin/env python3
"""Times dnnc plans on several ranks (mpirun) against one rank, same cores.

For each model, the same inputs are run as:

* `1rank-1t`: one rank, one BLAS thread (the baseline);
* `1rank-Nt`: one rank, N BLAS threads (the single-process peer using the
  same N cores);
* `tp=N`: Megatron-style tensor parallelism, N ranks of one thread each;
* `dp=N`: data parallelism (batch split), N ranks of one thread each;
* onnxruntime with N intra-op threads (the external peer).

Every multi-rank output is first checked against the one-rank output.
Times are `dnnc-run --warmup W --repeat R` means as rank 0 prints them
(plan loading and I/O excluded). Prints one row per (model, config) with
the mean in milliseconds and the speedup over `1rank-1t`. Not a test: no
speed is asserted. Models: `mlp` (bench/run_bench.py's 4x1024 MLP, batch
64), `gpt2` and `bert` (test/models).

Usage:

    python3 bench/multi_rank.py [--ranks 2] [--models mlp,gpt2,bert]
        [--repeat 50] [--warmup 10] [--json FILE]
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402

ROOT = run_bench.ROOT
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


def model_and_inputs(name, tmp):
    """Returns (model path, [input .pb files]) for `name`."""
    if name == "mlp":
        return run_bench.make_mlp(tmp)
    return run_bench.exported_model(name)


def time_plan(dnnc_run, plan, inputs, ranks, threads, warmup, repeat, out):
    """Runs `plan` on `ranks` ranks; returns rank 0's mean ms per run."""
    cmd = [dnnc_run, plan, "--warmup", str(warmup), "--repeat", str(repeat),
           "--output-dir", out]
    for f in inputs:
        cmd += ["--input", f]
    if ranks > 1:
        flags = []
        for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS"):
            flags += ["-x", f"{key}={threads}"]
        cmd = MPIRUN + ["-np", str(ranks)] + flags + cmd
    text = run_bench.run_checked(cmd, env=run_bench.thread_env(threads))
    match = run_bench.TIME_RE.search(text)
    if not match:
        raise RuntimeError(f"no timing in the output of {' '.join(cmd)}")
    return float(match.group(1))


def same_outputs(a, b):
    """True when the output_K.pb files of directories a and b agree."""
    for name in sorted(os.listdir(a)):
        x = numpy_helper.to_array(onnx.load_tensor(os.path.join(a, name)))
        y = numpy_helper.to_array(onnx.load_tensor(os.path.join(b, name)))
        if not np.allclose(x, y, rtol=1e-4, atol=1e-5):
            return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="mlp,gpt2,bert")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--dnnc", default=os.path.join(ROOT, "build", "bin",
                                                       "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(ROOT, "build",
                                                           "bin", "dnnc-run"))
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    n = args.ranks
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model, inputs = model_and_inputs(name, tmp)
            configs = [("1rank-1t", [], 1, 1), (f"1rank-{n}t", [], 1, n),
                       (f"tp={n}", [f"--parallel=tp={n}"], n, 1),
                       (f"dp={n}", [f"--parallel=dp={n}"], n, 1)]
            base_out = None
            base_ms = None
            for label, flags, ranks, threads in configs:
                plan = os.path.join(tmp, f"{name}-{label}.bin")
                run_bench.run_checked([args.dnnc, model, "-o", plan] + flags)
                out = os.path.join(tmp, f"{name}-{label}-out")
                ms = time_plan(args.dnnc_run, plan, inputs, ranks, threads,
                               args.warmup, args.repeat, out)
                if base_out is None:
                    base_out, base_ms = out, ms
                elif not same_outputs(base_out, out):
                    raise RuntimeError(f"{name} {label}: outputs differ from "
                                       "one rank")
                rows.append({"model": name, "config": label, "mean_ms": ms,
                             "speedup": base_ms / ms})
            feeds = run_bench.load_feeds(inputs)
            ort_ms = run_bench.time_ort(model, feeds, n, args.warmup,
                                        args.repeat)[0]
            rows.append({"model": name, "config": f"onnxruntime-{n}t",
                         "mean_ms": ort_ms, "speedup": base_ms / ort_ms})
    print(f"{'model':8} {'config':18} {'mean ms':>9} {'speedup':>8}")
    for row in rows:
        print(f"{row['model']:8} {row['config']:18} {row['mean_ms']:9.3f} "
              f"{row['speedup']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
