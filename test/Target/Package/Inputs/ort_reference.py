"""ort_reference.py MODEL.onnx OUTDIR [--seed N]: writes a random input_K.pb
for every float graph input of MODEL (normal, seeded) and onnxruntime's fp32
outputs as output_K.pb into OUTDIR (a test_data_set for models without
one, such as examples/mlp.onnx)."""
import argparse
import os

import numpy as np
import onnx
import onnxruntime
from onnx import numpy_helper

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("outdir")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

model = onnx.load(args.model)
initializers = {t.name for t in model.graph.initializer}
rng = np.random.default_rng(args.seed)
feeds = {}
for inp in model.graph.input:
    if inp.name in initializers:
        continue
    dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    feeds[inp.name] = rng.standard_normal(dims).astype(dtype)
session = onnxruntime.InferenceSession(
    args.model, providers=["CPUExecutionProvider"])
outputs = session.run(None, feeds)
os.makedirs(args.outdir, exist_ok=True)
for k, (name, value) in enumerate(feeds.items()):
    with open(os.path.join(args.outdir, f"input_{k}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
for k, value in enumerate(outputs):
    with open(os.path.join(args.outdir, f"output_{k}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value).SerializeToString())
