#!/usr/bin/env python3
"""Measures this machine for the cost model: a cluster JSON like cpu-local.

`cpu-local` assumes a 2.5 GHz core with AVX-512 FMA and 10 GB/s of memory
bandwidth per core. This script measures, with dnnc's own generated code
and BLAS calls on one thread:

* the matrix rate: a 1024 x 1024 x 1024 float32 MatMul (the f32 peak, with
  `matrix_efficiency` 1);
* the memory bandwidth: a 16M-element float32 Add (three 64 MB streams);
* the vector rate: Tanh over 4M elements (elementwise work that is not
  bandwidth bound).

and writes a cluster file (`--cluster=FILE`) with one device per core, each
with those rates, and cpu-local's shared-memory link. `bench/train_step.py
--cluster FILE` prices the training step on it.

Usage: python3 bench/calibrate_cpu.py [-o cpu-calibrated.json]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def model(path, nodes, inputs, output, inits=()):
    graph = helper.make_graph(
        nodes, "calibrate",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
         for n, s in inputs],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT,
                                       output[1])], list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def time_ms(opts, work, name, path, inputs):
    plan = os.path.join(work, name + ".bin")
    subprocess.run([opts.dnnc, path, "-o", plan], check=True)
    args = []
    for i, shape in enumerate(inputs):
        f = os.path.join(work, f"{name}_{i}.npy")
        np.save(f, np.random.default_rng(i).standard_normal(shape)
                .astype(np.float32))
        args += ["--input", f]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([opts.dnnc_run, plan] + args +
                         ["--warmup", "3", "--repeat", str(opts.repeat)],
                         capture_output=True, text=True, env=env, check=True)
    for line in out.stdout.splitlines():
        if line.startswith("time:"):
            return float(line.split()[5])  # the minimum
    raise RuntimeError(out.stdout + out.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dnnc", default=os.path.join(HERE, "..", "build",
                                                       "bin", "dnnc"))
    parser.add_argument("--dnnc-run", default=os.path.join(
        HERE, "..", "build", "bin", "dnnc-run"))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("-o", "--output", default="cpu-calibrated.json")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        n = 1024
        mm = os.path.join(work, "mm.onnx")
        model(mm, [helper.make_node("MatMul", ["a", "b"], ["c"])],
              [("a", [n, n]), ("b", [n, n])], ("c", [n, n]))
        gemm_ms = time_ms(opts, work, "mm", mm, [[n, n], [n, n]])
        e = 1 << 24
        add = os.path.join(work, "add.onnx")
        model(add, [helper.make_node("Add", ["a", "b"], ["c"])],
              [("a", [e]), ("b", [e])], ("c", [e]))
        add_ms = time_ms(opts, work, "add", add, [[e], [e]])
        t = 1 << 22
        tanh = os.path.join(work, "tanh.onnx")
        model(tanh, [helper.make_node("Tanh", ["a"], ["c"])],
              [("a", [t])], ("c", [t]))
        tanh_ms = time_ms(opts, work, "tanh", tanh, [[t]])
    matrix = 2 * n ** 3 / (gemm_ms / 1e3)
    bandwidth = 3 * 4 * e / (add_ms / 1e3)
    # The cost model counts a transcendental function as 8 FLOPs per
    # element (kTranscendentalFlops in include/dnnc/Dialect/Dnn/IR/
    # DnnCost.h): the rate that prices Tanh as measured.
    transcendental_flops = 8
    vector = transcendental_flops * t / (tanh_ms / 1e3)
    cores = os.cpu_count() or 1
    try:
        with open("/proc/meminfo") as f:
            total = int(f.readline().split()[1]) * 1024
    except OSError:
        total = 8 << 30
    cluster = {
        "name": "cpu-calibrated",
        "nodes": 1,
        "devices_per_node": cores,
        "device": {
            "name": "CPU core (calibrated)",
            "peak_flops": {"f32": matrix},
            "vector_flops": vector,
            "memory_bytes": total * 0.9 / cores,
            "memory_bandwidth": bandwidth,
        },
        "intra_node": {"name": "shared memory", "bandwidth": bandwidth / 2,
                       "latency": 1e-6},
    }
    with open(opts.output, "w") as f:
        json.dump(cluster, f, indent=2)
    print(f"{opts.output}: matrix {matrix / 1e9:.1f} GFLOP/s, memory "
          f"{bandwidth / 1e9:.1f} GB/s, vector {vector / 1e9:.2f} Gop/s "
          f"(one thread)")


if __name__ == "__main__":
    sys.exit(main())
