#!/usr/bin/env python3
"""Property test of dnnc's automatic plan search: on random small graphs and
random clusters, the automatic plan's estimated step is never slower than
the estimate of any forced configuration dnnc accepts.

Each case draws a graph (a GPT from python/gen_gpt.py with random sizes,
fused or separate q/k/v projections, tanh or erf GELU, float16 or float32;
or a random MLP written here with LayerNorm, GELU or ReLU and residual
adds), a cluster JSON file (1 to 4 nodes of 2 or 4 devices, random peaks,
bandwidths and latencies, and a memory small enough that some plans do not
fit), a mode (training or inference), a precision (the model's types,
bf16 or fp16) and a global batch. It plans `--plan-only --mesh=N
--cluster=FILE --precision=P` automatically, then forces random
`(dp, tp, pp, micro-batches, schedule, recompute, zero)` choices with
`--parallel=dp=D,tp=T,pp=P --microbatches (or --micro-batch-size)
--schedule --recompute --zero`.
A forced plan dnnc accepts (exit 0) must not be estimated faster than the
automatic one (relative slack 1e-9); when the automatic search finds no
plan, no forced plan may be accepted either. Every accepted plan's
reported degrees must be the applied ones: a dp or tp above 1 splits some
value of the plan's IR over that axis, a pp above 1 stages its ops.
Refusals of forced choices
(degrees that do not divide, plans that do not fit) are counted, not
failures.

Usage: search_property.py --dnnc build/bin/dnnc [--cases 12] [--forced 12]
       [--seed 1] [--keep DIR]
Exit 0 when every case holds; 1 with the cases that did not, each with the
commands that reproduce it.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GEN_GPT = os.path.join(ROOT, "python", "gen_gpt.py")
RELATIVE_SLACK = 1e-9


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def make_cluster(rng, path):
    nodes = rng.choice([1, 1, 2, 4])
    per_node = rng.choice([2, 4])
    f32 = rng.uniform(5e12, 60e12)
    cluster = {
        "name": f"random-{nodes}x{per_node}",
        "nodes": nodes,
        "devices_per_node": per_node,
        "device": {
            "name": "RandomGPU",
            "peak_flops": {"f32": f32, "f16": f32 * rng.uniform(2, 16),
                           "bf16": f32 * rng.uniform(2, 16)},
            "vector_flops": f32 * rng.uniform(0.5, 1.5),
            # Small enough that the larger graphs do not fit everywhere.
            "memory_bytes": rng.choice([2e7, 6e7, 2e8, 1e9, 8e9]),
            "memory_bandwidth": rng.uniform(0.5e12, 3e12),
        },
        "intra_node": {"name": "intra", "bandwidth": rng.uniform(50e9, 500e9),
                       "latency": rng.uniform(1e-6, 1e-5)},
    }
    if nodes > 1:
        cluster["inter_node"] = {"name": "inter",
                                 "bandwidth": rng.uniform(5e9, 50e9),
                                 "latency": rng.uniform(2e-6, 3e-5)}
    with open(path, "w") as f:
        json.dump(cluster, f)
    return nodes * per_node, cluster


def make_gpt(rng, path, batch):
    heads = rng.choice([2, 4, 8])
    hidden = heads * rng.choice([8, 16, 32])
    args = [sys.executable, GEN_GPT, "--layers", str(rng.randint(2, 6)),
            "--hidden", str(hidden), "--heads", str(heads),
            "--seq", str(rng.choice([16, 32, 64])),
            "--vocab", str(rng.choice([64, 128, 256])),
            "--batch", str(batch),
            "--dtype", rng.choice(["float16", "float32"]),
            "--weights", "none", "--gelu", rng.choice(["tanh", "erf"])]
    if rng.random() < 0.5:
        args.append("--fused-qkv")
    args += ["-o", path]
    subprocess.run(args, check=True, capture_output=True, text=True)
    return "gpt " + " ".join(args[2:-2])


def make_mlp(rng, path, batch):
    """A residual MLP: per layer LayerNorm, a widening MatMul, an
    activation, a narrowing MatMul and a residual Add."""
    width = rng.choice([16, 32, 64])
    wide = width * rng.choice([2, 4])
    layers = rng.randint(2, 8)
    activation = rng.choice(["Relu", "Gelu", "Tanh"])
    nodes, inits = [], []
    x = "x"
    for i in range(layers):
        g = np.ones(width, np.float32)
        b = np.zeros(width, np.float32)
        w1 = (np.random.default_rng(i).standard_normal((width, wide)) *
              0.1).astype(np.float32)
        w2 = (np.random.default_rng(100 + i).standard_normal((wide, width)) *
              0.1).astype(np.float32)
        for name, arr in ((f"g{i}", g), (f"b{i}", b), (f"w1_{i}", w1),
                          (f"w2_{i}", w2)):
            inits.append(numpy_helper.from_array(arr, name))
        nodes += [
            helper.make_node("LayerNormalization", [x, f"g{i}", f"b{i}"],
                             [f"ln{i}"], axis=-1, name=f"ln{i}"),
            helper.make_node("MatMul", [f"ln{i}", f"w1_{i}"], [f"h{i}"],
                             name=f"fc1_{i}"),
            helper.make_node(activation, [f"h{i}"], [f"a{i}"],
                             name=f"act{i}"),
            helper.make_node("MatMul", [f"a{i}", f"w2_{i}"], [f"o{i}"],
                             name=f"fc2_{i}"),
            helper.make_node("Add", [x, f"o{i}"], [f"x{i + 1}"],
                             name=f"res{i}"),
        ]
        x = f"x{i + 1}"
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT,
                                       [batch, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("",
                                                                        20)])
    onnx.save(model, path)
    return f"mlp layers={layers} width={width} wide={wide} {activation}"


SHARDING = re.compile(r"#dist\.sharding<@\w+, \[([^\]]*)\]")


def applied_degrees_mismatch(report, plan_text):
    """The reported degrees against the plan's IR: a dp or tp above 1 must
    split some value, a pp above 1 must stage ops. Returns the reason or
    None."""
    used = set()
    for dims in SHARDING.findall(plan_text):
        used.update(re.findall(r'"(\w+)"', dims))
    degrees = report["degrees"]
    for axis in ("dp", "tp"):
        if degrees[axis] > 1 and axis not in used:
            return (f"the report says {axis}={degrees[axis]} but no value "
                    f"of the plan is split over '{axis}'")
    if degrees["pp"] > 1 and "dist.stage" not in plan_text:
        return f"the report says pp={degrees['pp']} but no op has a stage"
    return None


def run_plan(dnnc, model, flags, report):
    """Plans; returns (command, process, step or None, mismatch or None)."""
    plan = report[:-len(".json")] + ".mlir"
    cmd = [dnnc, model, "--plan-only", f"--report-json={report}",
           "-o", plan, "--mlir-elide-elementsattrs-if-larger=1"] + flags
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    step = mismatch = None
    if proc.returncode == 0:
        with open(report) as f:
            parsed = json.load(f)
        step = parsed["step_time_s"]
        with open(plan) as f:
            mismatch = applied_degrees_mismatch(parsed, f.read())
    return cmd, proc, step, mismatch


def shell(cmd):
    return " ".join(cmd)


def check_case(args, rng, index, work):
    case_dir = os.path.join(work, f"case{index}")
    os.makedirs(case_dir, exist_ok=True)
    cluster_path = os.path.join(case_dir, "cluster.json")
    devices, cluster = make_cluster(rng, cluster_path)
    train = rng.random() < 0.75
    batch = rng.choice([4, 8, 16, 32])
    model = os.path.join(case_dir, "model.onnx")
    if rng.random() < 0.6:
        what = make_gpt(rng, model, batch)
    else:
        what = make_mlp(rng, model, batch)
    precision = rng.choice(["fp32", "fp32", "bf16", "fp16"])
    common = [f"--mesh={devices}", f"--cluster={cluster_path}",
              f"--mode={'train' if train else 'infer'}",
              f"--precision={precision}"]
    auto_cmd, auto_proc, auto_step, auto_mismatch = run_plan(
        args.dnnc, model, common, os.path.join(case_dir, "auto.json"))
    header = (f"case {index}: {what}; {cluster['name']} "
              f"({cluster['device']['memory_bytes']:.0e} B per device), "
              f"{'train' if train else 'infer'}, {precision}, batch {batch}")
    failures = []
    if auto_proc.returncode != 0 and "no plan" not in auto_proc.stderr:
        failures.append(f"automatic search failed: {auto_proc.stderr.strip()}"
                        f"\n    {shell(auto_cmd)}")
    if auto_mismatch:
        failures.append(f"{auto_mismatch}\n    {shell(auto_cmd)}")
    accepted = refused = 0
    triples = [(d, t, devices // (d * t)) for d in divisors(devices)
               for t in divisors(devices // d)]
    for _ in range(args.forced):
        d, t, p = rng.choice(triples)
        flags = [f"--parallel=dp={d},tp={t},pp={p}"]
        if train or p > 1:
            if rng.random() < 0.5:
                flags.append(f"--microbatches={rng.choice([1, 2, 4])}")
            else:
                flags.append(f"--micro-batch-size={rng.choice([1, 2, 4])}")
        schedules = ["gpipe"] + (["1f1b", "interleaved:2"] if train else [])
        flags.append(f"--schedule={rng.choice(schedules)}")
        if train:
            flags.append("--recompute=" +
                         rng.choice(["off", "selective", "full"]))
            flags.append(f"--zero={rng.choice(['on', 'off'])}")
        cmd, proc, step, mismatch = run_plan(
            args.dnnc, model, common + flags,
            os.path.join(case_dir, "forced.json"))
        if mismatch:
            failures.append(f"{mismatch}\n    {shell(cmd)}")
        if proc.returncode != 0:
            refused += 1
            if "error:" not in proc.stderr or proc.returncode < 0:
                failures.append(f"forced plan crashed "
                                f"(exit {proc.returncode}): "
                                f"{proc.stderr.strip()[-400:]}\n    "
                                f"{shell(cmd)}")
            continue
        accepted += 1
        if auto_step is None:
            failures.append(f"forced plan accepted ({step:.6g} s) where "
                            f"the search found none\n    {shell(cmd)}\n"
                            f"    {shell(auto_cmd)}")
        elif auto_step > step * (1 + RELATIVE_SLACK):
            failures.append(f"forced plan {step:.6g} s beats the automatic "
                            f"{auto_step:.6g} s ({auto_step / step:.4f}x)"
                            f"\n    {shell(cmd)}\n    {shell(auto_cmd)}")
    status = "FAIL" if failures else "ok"
    auto_text = f"{auto_step:.6g} s" if auto_step else "no plan"
    print(f"{status}: {header}: auto {auto_text}; forced {accepted} "
          f"accepted, {refused} refused", flush=True)
    for failure in failures:
        print("  " + failure, flush=True)
    return not failures, accepted


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dnnc", required=True)
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--forced", type=int, default=12,
                        help="forced configurations tried per case")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", help="keep the cases' files in this folder")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="dnnc-search-property-")
    os.makedirs(work, exist_ok=True)
    passed = accepted = 0
    try:
        for index in range(args.cases):
            rng = random.Random(args.seed * 1000 + index)
            ok, n = check_case(args, rng, index, work)
            passed += ok
            accepted += n
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.cases} cases, {accepted} accepted forced plans compared")
    print(f"{passed} passed, {args.cases - passed} failed")
    return 0 if passed == args.cases else 1


if __name__ == "__main__":
    sys.exit(main())
