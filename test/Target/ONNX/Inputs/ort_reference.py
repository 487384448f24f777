#!/usr/bin/env python3
"""Writes onnxruntime's reference results for a model, in the ONNX
backend-test layout that test/onnx/conformance.py reads.

Usage: ort_reference.py DIR [--int-high N] [--seed S]

Runs DIR/model.onnx (external data next to it) with onnxruntime on random
inputs and writes DIR/test_data_set_0/input_K.pb (graph input order) and
output_K.pb. Float inputs are standard normal; integer inputs (such as
token ids) are uniform in [0, --int-high). Every input needs a static shape.
"""

import argparse
import os

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--int-high", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model_path = os.path.join(args.dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for inp in model.graph.input:
        if inp.name in initializers:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[inp.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[inp.name] = rng.integers(0, args.int_high,
                                           shape).astype(dtype)
    session = onnxruntime.InferenceSession(
        model_path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)

    data_set = os.path.join(args.dir, "test_data_set_0")
    os.makedirs(data_set, exist_ok=True)
    for k, (name, value) in enumerate(feeds.items()):
        onnx.save_tensor(numpy_helper.from_array(value, name),
                         os.path.join(data_set, f"input_{k}.pb"))
    for k, (out, value) in enumerate(zip(model.graph.output, outputs)):
        onnx.save_tensor(numpy_helper.from_array(value, out.name),
                         os.path.join(data_set, f"output_{k}.pb"))


if __name__ == "__main__":
    main()
