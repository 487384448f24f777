#!/usr/bin/env python3
"""Compile time and peak memory of dnnc against model size.

    python3 bench/compile_scaling.py [--dnnc build/bin/dnnc]
        [--chains 5000,10000,20000] [--layers 12,24,48] [--hidden 768]
        [--out DIR] [--json FILE]

Two series, each compiled with `dnnc MODEL -o plan.bin --timing` (cpu
target, one rank), so that the slope is visible:

* elementwise chains of N nodes on a 64x64 float tensor, in two mixes:
  `cheap` (Relu, Add, Mul, Neg: one scalar operation each) and
  `transcendental` (Relu, Neg, Abs, Sigmoid, Tanh: the last two are
  polynomials of ~20 operations each on the cpu target);
* GPT-2-shaped decoders (python/gen_gpt.py: 768 wide, 12 heads, vocab
  50257, seq 128, random weights) with 1x, 2x and 4x the layers of GPT-2
  124M (12, 24, 48 by default).

Each row: nodes, weights (MiB), compile seconds (wall), peak RSS (MiB), the
RSS-to-weights ratio, seconds per 1000 nodes, and the seconds of the phases
dnnc --timing reports (import, graph and plan, device, code generation,
write plan). Models are generated into --out (default a temporary folder).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ("import (ONNX to dnn)", "graph and plan", "device",
          "code generation (LLVM)", "write plan")


def chain_model(path, nodes, mix):
    """An elementwise chain of `nodes` nodes on a 64x64 float input."""
    body = []
    prev = "x"
    for i in range(nodes):
        out = f"t{i}"
        if mix == "cheap":
            op = ("Relu", "Add", "Mul", "Neg")[i % 4]
            inputs = [prev] + (["c"] if op == "Add" else
                               ["d"] if op == "Mul" else [])
        else:
            op = ("Relu", "Neg", "Abs", "Sigmoid", "Tanh")[i % 5]
            inputs = [prev]
        body.append(helper.make_node(op, inputs, [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(
        body, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 64])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "c"),
         numpy_helper.from_array(np.array(0.9, np.float32), "d")])
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 17)]),
              path)


def gpt_model(path, layers, hidden):
    """A GPT-2-shaped decoder with `layers` layers (python/gen_gpt.py)."""
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "python", "gen_gpt.py"),
         "--layers", str(layers), "--hidden", str(hidden), "--heads",
         str(max(1, hidden // 64)), "--seq", "128", "--vocab", "50257",
         "--batch", "2", "--weights", "random", "-o", path],
        check=True, stdout=subprocess.DEVNULL)


def weight_mib(path):
    """The model's initializer bytes, in MiB (external data included)."""
    model = onnx.load(path, load_external_data=False)
    total = 0
    for t in model.graph.initializer:
        count = int(np.prod(t.dims)) if t.dims else 1
        total += count * np.dtype(
            onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    return total / 2**20


def compile_once(dnnc, model, plan):
    """Compiles `model`; returns (seconds, peak RSS MiB, phase seconds), the
    RSS and phases as dnnc --timing reports them."""
    start = time.perf_counter()
    proc = subprocess.run([dnnc, model, "-o", plan, "--timing"],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"dnnc failed on {model}:\n{proc.stderr}")
    reported = re.findall(r"^\s*([\d.]+) MiB\s+write plan$", proc.stderr,
                          re.M)
    rss = float(reported[-1]) if reported else float("nan")
    phases = {}
    for line in proc.stderr.splitlines():
        # Top-level rows: "  user (pct)  wall (pct)  name" (or without the
        # user column); nested rows have more spaces before the name.
        m = re.match(r"^(?:\s+[\d.]+ \(\s*[\d.]+%\))?\s+([\d.]+) "
                     r"\(\s*[\d.]+%\)  (\S.*)$", line)
        if m and m.group(2) in PHASES:
            phases[m.group(2)] = float(m.group(1))
    return seconds, rss, phases


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--dnnc", default=os.path.join(ROOT, "build", "bin",
                                                       "dnnc"))
    parser.add_argument("--chains", default="5000,10000,20000")
    parser.add_argument("--layers", default="12,24,48")
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--out", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    out = args.out or tempfile.mkdtemp(prefix="dnnc-scaling-")
    os.makedirs(out, exist_ok=True)
    cases = []
    for mix in ("cheap", "transcendental"):
        for n in (int(v) for v in args.chains.split(",") if v):
            path = os.path.join(out, f"chain-{mix}-{n}.onnx")
            if not os.path.exists(path):
                chain_model(path, n, mix)
            cases.append((f"chain {mix}", n, path))
    for layers in (int(v) for v in args.layers.split(",") if v):
        path = os.path.join(out, f"gpt-{layers}x{args.hidden}.onnx")
        if not os.path.exists(path):
            print(f"[scaling] generating {path}", file=sys.stderr)
            gpt_model(path, layers, args.hidden)
        cases.append((f"gpt {layers} layers", layers, path))

    rows = []
    header = ("| model | nodes | weights MiB | compile s | s per 1k nodes "
              "| peak RSS MiB | RSS / weights | import | graph+plan | device "
              "| codegen | write |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for name, size, path in cases:
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        weights = weight_mib(path)
        seconds, rss, phases = compile_once(args.dnnc, path,
                                            os.path.join(out, "plan.bin"))
        ratio = rss / weights if weights > 1 else float("nan")
        row = dict(model=name, size=size, nodes=nodes, weights_mib=weights,
                   compile_s=seconds, rss_mib=rss, rss_over_weights=ratio,
                   phases=phases)
        rows.append(row)
        cells = [phases.get(p, float("nan")) for p in PHASES]
        print(f"| {name} | {nodes} | {weights:.0f} | {seconds:.2f} | "
              f"{1000 * seconds / nodes:.3f} | {rss:.0f} | "
              + (f"{ratio:.2f}" if weights > 1 else "-") + " | "
              + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
