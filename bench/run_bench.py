#!/usr/bin/env python3
"""Benchmarks dnnc against onnxruntime on the CPU, same inputs, same threads.

Models (see bench/README.md):

* `gpt2`     test/models/gpt2 (python/export_models.py), input_ids and
             attention_mask [2, 16];
* `resnet18` test/models/resnet18, input [1, 3, 64, 64];
* `mlp`      a 4-layer MLP of width 1024 (Gemm + Relu, batch 64), generated
             here with onnx.helper (fixed seed).

For each model: compile once with `dnnc MODEL -o plan.bin` (the compile time
is reported, never counted in the run time), check once that dnnc's outputs
match onnxruntime's, then for each thread count N (`--threads`, default 1,2),
with OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = N:

* dnnc: `dnnc-run plan.bin --input ... --warmup W --repeat R`, which times R
  runs of the compiled program inside one process after W untimed ones and
  prints their mean and minimum (plan loading, input parsing and output
  writing are outside the timed region);
* onnxruntime: an `InferenceSession` with intra_op_num_threads = N,
  inter_op_num_threads = 1, sequential execution, default graph
  optimisations; W untimed `run` calls, then R timed ones (wall clock around
  each `run`): mean, median and minimum.

Prints one row per (model, threads) with the times in milliseconds and the
ratios dnnc / onnxruntime of the means and of the minima (> 1: dnnc is
slower). This is not a test: nothing is asserted about the speed.

Usage:

    python3 bench/run_bench.py [--threads 1,2] [--repeat 50] [--warmup 10]
        [--models gpt2,resnet18,mlp] [--dnnc build/bin/dnnc]
        [--dnnc-run build/bin/dnnc-run] [--json FILE]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.path.join(ROOT, "test", "models")

MLP_BATCH, MLP_WIDTH, MLP_LAYERS = 64, 1024, 4
SEED = 0


def make_mlp(out_dir):
    """Writes the MLP model and one input; returns (model, [input files])."""
    rng = np.random.default_rng(SEED)
    bound = 1.0 / np.sqrt(MLP_WIDTH)
    nodes, inits = [], []
    x = "x"
    for i in range(MLP_LAYERS):
        w = rng.uniform(-bound, bound, (MLP_WIDTH, MLP_WIDTH)).astype(np.float32)
        b = rng.uniform(-bound, bound, (MLP_WIDTH,)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"fc{i}.weight"),
                  numpy_helper.from_array(b, f"fc{i}.bias")]
        h = f"h{i}"
        nodes.append(helper.make_node("Gemm", [x, f"fc{i}.weight", f"fc{i}.bias"],
                                      [h], name=f"fc{i}", transB=1))
        if i + 1 < MLP_LAYERS:
            nodes.append(helper.make_node("Relu", [h], [f"a{i}"],
                                          name=f"relu{i}"))
            x = f"a{i}"
        else:
            x = h
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [MLP_BATCH, MLP_WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [MLP_BATCH, MLP_WIDTH])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="dnnc-bench",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, "mlp.onnx")
    onnx.save(model, path)
    xin = rng.standard_normal((MLP_BATCH, MLP_WIDTH)).astype(np.float32)
    pb = os.path.join(out_dir, "mlp_input_0.pb")
    onnx.save_tensor(numpy_helper.from_array(xin, "x"), pb)
    return path, [pb]


def exported_model(name):
    """Returns (model, [input files]) of a model under test/models."""
    model_dir = os.path.join(MODELS_DIR, name)
    data = os.path.join(model_dir, "test_data_set_0")
    inputs = sorted((f for f in os.listdir(data) if f.startswith("input_")),
                    key=lambda f: int(f[len("input_"):-len(".pb")]))
    return (os.path.join(model_dir, "model.onnx"),
            [os.path.join(data, f) for f in inputs])


def thread_env(n):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(n)
    return env


def load_feeds(pb_files):
    feeds = {}
    for pb in pb_files:
        t = onnx.load_tensor(pb)
        feeds[t.name] = numpy_helper.to_array(t)
    return feeds


def run_checked(cmd, env=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd[:2])}...: exit code "
                 f"{proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


TIME_RE = re.compile(r"time: mean ([0-9.]+) ms/run, min ([0-9.]+) ms")


def time_dnnc(dnnc_run, plan, inputs, threads, warmup, repeat):
    """Returns (mean, min) in ms of `repeat` in-process runs."""
    cmd = [dnnc_run, plan, "--warmup", str(warmup), "--repeat", str(repeat)]
    for pb in inputs:
        cmd += ["--input", pb]
    out = run_checked(cmd, env=thread_env(threads))
    m = TIME_RE.search(out)
    if not m:
        sys.exit(f"error: cannot parse the time printed by dnnc-run: {out!r}")
    return float(m.group(1)), float(m.group(2))


def ort_session(model, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, opts,
                                providers=["CPUExecutionProvider"])


def time_ort(model, feeds, threads, warmup, repeat):
    """Returns (mean, median, min) in ms of `repeat` runs."""
    session = ort_session(model, threads)
    for _ in range(warmup):
        session.run(None, feeds)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.mean(times), statistics.median(times), min(times)


def check_outputs(args, model, plan, inputs, tmp):
    """Runs dnnc and onnxruntime once; returns the largest relative error
    (max |dnnc - ort| / max(1, max |ort|)) over all outputs."""
    out_dir = os.path.join(tmp, "out-" + os.path.basename(plan))
    cmd = [args.dnnc_run, plan, "--output-dir", out_dir]
    for pb in inputs:
        cmd += ["--input", pb]
    run_checked(cmd)
    want = ort_session(model, 1).run(None, load_feeds(inputs))
    worst = 0.0
    for k, w in enumerate(want):
        got = numpy_helper.to_array(
            onnx.load_tensor(os.path.join(out_dir, f"output_{k}.pb")))
        scale = max(1.0, float(np.abs(w).max()))
        worst = max(worst, float(np.abs(got - w).max()) / scale)
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gpt2,resnet18,mlp",
                        help="comma-separated subset of gpt2,resnet18,mlp")
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts (default: 1,2)")
    parser.add_argument("--repeat", type=int, default=50,
                        help="timed runs per measurement (default: 50)")
    parser.add_argument("--warmup", type=int, default=10,
                        help="untimed runs before them (default: 10)")
    parser.add_argument("--dnnc", default=os.path.join(ROOT, "build", "bin",
                                                       "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(ROOT, "build", "bin",
                                                           "dnnc-run"))
    parser.add_argument("--json", metavar="FILE",
                        help="also write the results as JSON")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    names = args.models.split(",")
    for name in names:
        if name not in ("gpt2", "resnet18", "mlp"):
            parser.error(f"unknown model '{name}'")

    results = []
    with tempfile.TemporaryDirectory(prefix="dnnc-bench-") as tmp:
        header = (f"{'model':<9} {'thr':>3} {'compile s':>9} "
                  f"{'dnnc mean':>10} {'dnnc min':>9} {'ort mean':>9} "
                  f"{'ort median':>10} {'ort min':>8} {'mean ratio':>10} "
                  f"{'min ratio':>9}")
        print(f"times in ms; ratio = dnnc / onnxruntime; {args.warmup} "
              f"warm-up + {args.repeat} timed runs each")
        print(header)
        print("-" * len(header))
        for name in names:
            if name == "mlp":
                model, inputs = make_mlp(tmp)
            else:
                model, inputs = exported_model(name)
            plan = os.path.join(tmp, f"{name}.bin")
            start = time.perf_counter()
            run_checked([args.dnnc, model, "-o", plan])
            compile_s = time.perf_counter() - start
            error = check_outputs(args, model, plan, inputs, tmp)
            feeds = load_feeds(inputs)
            for n in threads:
                d_mean, d_min = time_dnnc(args.dnnc_run, plan, inputs, n,
                                          args.warmup, args.repeat)
                o_mean, o_median, o_min = time_ort(model, feeds, n,
                                                   args.warmup, args.repeat)
                row = dict(model=name, threads=n, compile_s=compile_s,
                           dnnc_mean_ms=d_mean, dnnc_min_ms=d_min,
                           ort_mean_ms=o_mean, ort_median_ms=o_median,
                           ort_min_ms=o_min, mean_ratio=d_mean / o_mean,
                           min_ratio=d_min / o_min, max_rel_error=error)
                results.append(row)
                print(f"{name:<9} {n:>3} {compile_s:>9.2f} {d_mean:>10.3f} "
                      f"{d_min:>9.3f} {o_mean:>9.3f} {o_median:>10.3f} "
                      f"{o_min:>8.3f} {d_mean / o_mean:>10.2f} "
                      f"{d_min / o_min:>9.2f}")
                sys.stdout.flush()
        print("max relative output error vs onnxruntime: " + ", ".join(
            f"{r['model']} {r['max_rel_error']:.1e}" for r in results
            if r["threads"] == threads[0]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
