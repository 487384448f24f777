#!/usr/bin/env python3
"""Generates examples/mlp.onnx, the bundled example model.

A two-layer perceptron as PyTorch exports `nn.Linear` (Gemm with transB=1):

    x[8,16] -> fc1 (Gemm, W1[32,16], b1[32]) -> relu1 (Relu)
            -> fc2 (Gemm, W2[10,32], b2[10]) -> softmax (Softmax, axis=-1) -> y[8,10]

The weights come from a fixed seed, so the file is reproducible:

    python3 examples/make_mlp.py [OUT.onnx]     (default: examples/mlp.onnx)

When onnxruntime is installed the model is also run once as a sanity check.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, IN, HIDDEN, OUT = 8, 16, 32, 10
SEED = 0


def make_mlp():
    rng = np.random.default_rng(SEED)

    def weight(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    inits = [
        numpy_helper.from_array(weight((HIDDEN, IN), IN), "fc1.weight"),
        numpy_helper.from_array(weight((HIDDEN,), IN), "fc1.bias"),
        numpy_helper.from_array(weight((OUT, HIDDEN), HIDDEN), "fc2.weight"),
        numpy_helper.from_array(weight((OUT,), HIDDEN), "fc2.bias"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"],
                         name="fc1", alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="relu1"),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"],
                         name="fc2", alpha=1.0, beta=1.0, transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, OUT])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="dnnc-examples",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def sanity_check(path):
    try:
        import onnxruntime as ort
    except ImportError:
        return
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal((BATCH, IN)).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    assert y.shape == (BATCH, OUT)
    assert np.allclose(y.sum(axis=-1), 1.0, atol=1e-5)


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "mlp.onnx")
    with open(out, "wb") as f:
        f.write(make_mlp().SerializeToString())
    sanity_check(out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
