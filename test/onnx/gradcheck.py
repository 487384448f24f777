#!/usr/bin/env python3
"""Checks dnnc's gradient rules against central finite differences (float64).

Each case is a small ONNX graph in float64: one op (or a short composition
that the importer turns into one dnn op) on random inputs, reduced to a
scalar loss `sum(op(...) * R)` with a fixed random R, so that every element
of the op's result weighs differently. dnnc compiles it with `--mode=grad`
(the loss and its gradient with respect to every floating-point graph
input), dnnc-run runs it, and each gradient is compared with central
differences of the loss computed by onnxruntime (by dnnc's forward plan for
the ops onnxruntime has no float64 kernel for):

    (L(x + h e_i) - L(x - h e_i)) / 2h,  h = 1e-6,

within 1e-6 relative to the largest entry of the gradient (plus 1e-9).
Inputs are drawn away from kinks (relu, abs, max) and inside domains (log,
sqrt, asin, ...).

Usage: gradcheck.py [--dnnc dnnc] [--dnnc-run dnnc-run] [--only NAME,...]
Prints one line per case and `N passed, N failed`; exit status 1 if any
failed.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

DOUBLE = TensorProto.DOUBLE
RNG = np.random.default_rng(7)


def uniform(shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


def away_from_zero(shape):
    """Values in [-1, -0.2] U [0.2, 1]: no kinks at 0."""
    v = RNG.uniform(0.2, 1.0, size=shape)
    return v * RNG.choice([-1.0, 1.0], size=shape)


class Case:
    """One op under test: its nodes, inputs and output shape."""

    def __init__(self, name, nodes, inputs, out_shape, initializers=(),
                 opset=17):
        self.name = name
        self.nodes = nodes
        self.inputs = inputs  # list of (name, array)
        self.out_shape = out_shape
        self.initializers = list(initializers)
        self.opset = opset

    def model(self):
        weights = uniform(self.out_shape)
        nodes = list(self.nodes) + [
            helper.make_node("Mul", ["y", "R"], ["weighted"]),
            helper.make_node("ReduceSum", ["weighted"], ["loss"],
                             keepdims=0),
        ]
        graph = helper.make_graph(
            nodes, self.name,
            [helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
             for n, a in self.inputs],
            [helper.make_tensor_value_info("loss", DOUBLE, [])],
            initializer=[numpy_helper.from_array(weights, "R")] +
            self.initializers)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        return model


def unary(op, make=uniform, shape=(3, 4), name=None, **attrs):
    return Case(name or op.lower(),
                [helper.make_node(op, ["x"], ["y"], **attrs)],
                [("x", make(shape))], shape)


def binary(op, a_shape=(3, 4), b_shape=(3, 4), make_a=uniform,
           make_b=uniform, name=None):
    if op == "MatMul":
        out = np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape
    else:
        out = np.broadcast_shapes(a_shape, b_shape)
    return Case(name or op.lower(),
                [helper.make_node(op, ["a", "b"], ["y"])],
                [("a", make_a(a_shape)), ("b", make_b(b_shape))], out)


def cases():
    positive = lambda s: uniform(s, 0.5, 2.0)
    inside = lambda s: uniform(s, -0.8, 0.8)
    above_one = lambda s: uniform(s, 1.2, 2.5)
    yield unary("Relu", away_from_zero)
    yield unary("Tanh")
    yield unary("Sigmoid")
    yield unary("Exp")
    yield unary("Log", positive)
    yield unary("Sqrt", positive)
    yield unary("Reciprocal", positive)
    yield unary("Sin")
    yield unary("Cos")
    yield unary("Tan", inside)
    yield unary("Sinh")
    yield unary("Cosh")
    yield unary("Erf")
    yield unary("Asin", inside)
    yield unary("Acos", inside)
    yield unary("Atan")
    yield unary("Asinh")
    yield unary("Acosh", above_one)
    yield unary("Atanh", inside)
    yield unary("Neg")
    yield unary("Abs", away_from_zero)
    yield unary("LeakyRelu", away_from_zero, alpha=0.1)
    yield unary("Floor", lambda s: uniform(s, 0.1, 0.9) + RNG.integers(
        -3, 3, size=s))
    yield unary("Softmax", axis=1)
    yield unary("LogSoftmax", axis=1)
    yield unary("Softmax", shape=(2, 3, 4), name="softmax_last_axis", axis=-1)
    yield binary("Add")
    yield binary("Sub")
    yield binary("Mul")
    yield binary("Div", make_b=positive)
    yield binary("Pow", make_a=positive, name="pow")
    yield binary("Max", make_b=lambda s: uniform(s) + 0.05)
    yield binary("Min", make_b=lambda s: uniform(s) + 0.05)
    yield binary("Add", (3, 4), (4,), name="add_broadcast_row")
    yield binary("Mul", (2, 3, 4), (3, 1), name="mul_broadcast_inner")
    yield binary("Sub", (1, 4), (3, 1), name="sub_broadcast_both")
    yield binary("MatMul", (3, 5), (5, 4), name="matmul")
    yield binary("MatMul", (2, 3, 5), (5, 4), name="matmul_shared_rhs")
    yield binary("MatMul", (2, 3, 5), (2, 5, 4), name="matmul_batched")
    yield Case("gemm_transb",
               [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1,
                                 alpha=0.5, beta=2.0)],
               [("a", uniform((3, 5))), ("b", uniform((4, 5))),
                ("c", uniform((4,)))], (3, 4))
    yield Case("einsum_bij_bjk",
               [helper.make_node("Einsum", ["a", "b"], ["y"],
                                 equation="bij,bjk->bik")],
               [("a", uniform((2, 3, 4))), ("b", uniform((2, 4, 5)))],
               (2, 3, 5))
    yield Case("einsum_sum_label",
               [helper.make_node("Einsum", ["a", "b"], ["y"],
                                 equation="ij,jk->i")],
               [("a", uniform((3, 4))), ("b", uniform((4, 5)))], (3,))
    yield Case("where",
               [helper.make_node("Greater", ["c", "zero"], ["cond"]),
                helper.make_node("Where", ["cond", "a", "b"], ["y"])],
               [("c", away_from_zero((3, 4))), ("a", uniform((3, 4))),
                ("b", uniform((3, 4)))], (3, 4),
               [numpy_helper.from_array(np.zeros((), np.float64), "zero")])
    yield Case("reshape",
               [helper.make_node("Reshape", ["x", "shape"], ["y"])],
               [("x", uniform((2, 6)))], (3, 4),
               [numpy_helper.from_array(np.array([3, 4], np.int64),
                                        "shape")])
    yield Case("expand",
               [helper.make_node("Expand", ["x", "shape"], ["y"])],
               [("x", uniform((3, 1)))], (2, 3, 4),
               [numpy_helper.from_array(np.array([2, 3, 4], np.int64),
                                        "shape")])
    yield Case("transpose",
               [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])],
               [("x", uniform((2, 3, 4)))], (4, 2, 3))
    yield Case("slice",
               [helper.make_node("Slice", ["x", "s", "e", "ax"], ["y"])],
               [("x", uniform((4, 6)))], (2, 3),
               [numpy_helper.from_array(np.array([1, 2], np.int64), "s"),
                numpy_helper.from_array(np.array([3, 5], np.int64), "e"),
                numpy_helper.from_array(np.array([0, 1], np.int64), "ax")])
    yield Case("slice_strided",
               [helper.make_node("Slice", ["x", "s", "e", "ax", "st"],
                                 ["y"])],
               [("x", uniform((5, 7)))], (2, 2),
               [numpy_helper.from_array(np.array([4, 1], np.int64), "s"),
                numpy_helper.from_array(np.array([0, 6], np.int64), "e"),
                numpy_helper.from_array(np.array([0, 1], np.int64), "ax"),
                numpy_helper.from_array(np.array([-2, 3], np.int64), "st")])
    yield Case("concat",
               [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)],
               [("a", uniform((3, 2))), ("b", uniform((3, 4)))], (3, 6))
    for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
               "ReduceProd"):
        make = away_from_zero if op == "ReduceProd" else uniform
        if op in ("ReduceSum",):
            node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)
            inits = [numpy_helper.from_array(np.array([1], np.int64),
                                             "axes")]
            opset = 17
        else:
            node = helper.make_node(op, ["x"], ["y"], axes=[1], keepdims=0)
            inits = []
            opset = 17
        yield Case(op.lower(), [node], [("x", make((3, 4)))], (3,), inits,
                   opset)
    yield Case("layer_norm",
               [helper.make_node("LayerNormalization", ["x", "s", "b"],
                                 ["y"], axis=-1, epsilon=1e-5)],
               [("x", uniform((2, 3, 8))), ("s", uniform((8,))),
                ("b", uniform((8,)))], (2, 3, 8))
    yield Case("layer_norm_two_axes",
               [helper.make_node("LayerNormalization", ["x", "s"], ["y"],
                                 axis=1, epsilon=1e-5)],
               [("x", uniform((2, 3, 4))), ("s", uniform((3, 4)))],
               (2, 3, 4))
    def conv(name, x, w, out, bias=None, **attrs):
        inputs = [("x", uniform(x)), ("w", uniform(w))]
        names = ["x", "w"]
        if bias:
            inputs.append(("b", uniform(bias)))
            names.append("b")
        return Case(name, [helper.make_node("Conv", names, ["y"], **attrs)],
                    inputs, out)
    yield conv("conv_pad_bias", (2, 3, 5, 5), (4, 3, 3, 3), (2, 4, 5, 5),
               bias=(4,), pads=[1, 1, 1, 1])
    yield conv("conv_stride2_uneven", (1, 2, 6, 5), (3, 2, 3, 2),
               (1, 3, 3, 2), strides=[2, 2], pads=[1, 0, 1, 0])
    yield conv("conv_dilation2", (1, 2, 7, 7), (2, 2, 3, 3), (1, 2, 3, 3),
               dilations=[2, 2])
    yield conv("conv_groups2", (2, 4, 5, 5), (6, 2, 3, 3), (2, 6, 3, 3),
               group=2)
    yield conv("conv_1d_big_pad", (2, 2, 6), (3, 2, 2), (2, 3, 10),
               pads=[3, 2])
    def pool(name, op, x, out, **attrs):
        return Case(name, [helper.make_node(op, ["x"], ["y"], **attrs)],
                    [("x", uniform(x))], out)
    yield pool("maxpool_3x3_s2_p1", "MaxPool", (1, 2, 6, 6), (1, 2, 3, 3),
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    yield pool("maxpool_ceil", "MaxPool", (1, 2, 5, 5), (1, 2, 3, 3),
               kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    yield pool("maxpool_dilated", "MaxPool", (1, 1, 7, 7), (1, 1, 3, 3),
               kernel_shape=[3, 3], dilations=[2, 2])
    yield pool("avgpool_exclude_pad", "AveragePool", (1, 2, 5, 5),
               (1, 2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    yield pool("avgpool_include_pad", "AveragePool", (1, 2, 5, 5),
               (1, 2, 3, 3), kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1], count_include_pad=1)
    yield pool("avgpool_ceil_1d", "AveragePool", (2, 3, 8), (2, 3, 4),
               kernel_shape=[3], strides=[2], ceil_mode=1)
    yield Case("gather_rows",
               [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
               [("x", uniform((5, 3))),
                ("i", np.array([[4, 0], [-1, 2]], np.int64))], (2, 2, 3))
    yield Case("gather_axis1",
               [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
               [("x", uniform((2, 4, 3))),
                ("i", np.array([1, 1, 3], np.int64))], (2, 3, 3))
    labels = np.array([2, 0, 4], np.int64)
    for reduction in ("mean", "sum", "none"):
        yield Case("sce_" + reduction,
                   [helper.make_node("SoftmaxCrossEntropyLoss", ["s", "l"],
                                     ["y"], reduction=reduction)],
                   [("s", uniform((3, 5))), ("l", labels)],
                   () if reduction != "none" else (3,))
    yield Case("sce_weights_ignore",
               [helper.make_node("SoftmaxCrossEntropyLoss", ["s", "l", "w"],
                                 ["y"], reduction="mean", ignore_index=0)],
               [("s", uniform((3, 5))), ("l", labels)], (),
               [numpy_helper.from_array(uniform((5,), 0.5, 1.5), "w")])
    yield Case("sce_spatial_log_prob",
               [helper.make_node("SoftmaxCrossEntropyLoss", ["s", "l"],
                                 ["loss1", "lp"], reduction="mean"),
                helper.make_node("ReduceSum", ["lp"], ["lps"], keepdims=0),
                helper.make_node("Mul", ["lps", "tenth"], ["lpt"]),
                helper.make_node("Add", ["loss1", "lpt"], ["y"])],
               [("s", uniform((2, 4, 3))),
                ("l", np.array([[0, 3, 1], [2, 2, 0]], np.int64))], (),
               [numpy_helper.from_array(np.array(0.1), "tenth")])
    # GELU written out (dnn-fuse-gelu makes it one op), exact and tanh.
    half = numpy_helper.from_array(np.array(0.5), "half")
    one = numpy_helper.from_array(np.array(1.0), "one")
    root = numpy_helper.from_array(np.array(1.4142135623730951), "root")
    yield Case("gelu_erf",
               [helper.make_node("Div", ["x", "root"], ["d"]),
                helper.make_node("Erf", ["d"], ["e"]),
                helper.make_node("Add", ["e", "one"], ["p"]),
                helper.make_node("Mul", ["x", "p"], ["m"]),
                helper.make_node("Mul", ["m", "half"], ["y"])],
               [("x", uniform((3, 4), -2, 2))], (3, 4), [half, one, root])


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])}...: "
                           f"{(proc.stderr or proc.stdout).strip()[:400]}")


def forward_by_dnnc(path, case, opts, work):
    """The loss as dnnc's own forward plan computes it (for the ops
    onnxruntime has no float64 kernel for; dnnc's forward ops are checked
    against onnxruntime in float32 by the conformance suites)."""
    plan = os.path.join(work, "forward.bin")
    run([opts.dnnc, path, "-o", plan])

    def loss(values):
        cmd = [opts.dnnc_run, plan, "--output-dir",
               os.path.join(work, "fwd")]
        for name, value in values.items():
            pb = os.path.join(work, "fwd-" + name + ".pb")
            with open(pb, "wb") as f:
                f.write(numpy_helper.from_array(value, name)
                        .SerializeToString())
            cmd += ["--input", pb]
        run(cmd)
        t = onnx.TensorProto()
        with open(os.path.join(work, "fwd", "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        return float(numpy_helper.to_array(t))
    return loss


def check(case, opts, work):
    model = case.model()
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    plan = os.path.join(work, "plan.bin")
    run([opts.dnnc, path, "--mode=grad", "--loss-output=loss", "-o", plan])
    cmd = [opts.dnnc_run, plan, "--output-dir", os.path.join(work, "out")]
    for name, value in case.inputs:
        pb = os.path.join(work, name + ".pb")
        with open(pb, "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
        cmd += ["--input", pb]
    run(cmd)

    def output(k):
        t = onnx.TensorProto()
        with open(os.path.join(work, "out", f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    feeds = {n: v for n, v in case.inputs}
    try:
        session = ort.InferenceSession(model.SerializeToString(),
                                       providers=["CPUExecutionProvider"])

        def loss(values):
            return float(session.run(["loss"], values)[0])
    except Exception:  # onnxruntime has no float64 kernel for the op
        loss = forward_by_dnnc(path, case, opts, work)

    got_loss = float(output(0))
    want_loss = loss(feeds)
    if abs(got_loss - want_loss) > 1e-9 * (1 + abs(want_loss)):
        return f"loss {got_loss} != onnxruntime's {want_loss}"
    h = 1e-6
    floats = [(n, v) for n, v in case.inputs if v.dtype == np.float64]
    for k, (name, value) in enumerate(floats, start=1):
        grad = output(k)
        if grad.shape != value.shape:
            return f"{name}_grad has shape {grad.shape}, want {value.shape}"
        fd = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            plus = dict(feeds)
            minus = dict(feeds)
            plus[name] = value.copy()
            minus[name] = value.copy()
            plus[name][i] += h
            minus[name][i] -= h
            fd[i] = (loss(plus) - loss(minus)) / (2 * h)
        scale = max(np.abs(fd).max(), np.abs(grad).max())
        err = np.abs(grad - fd).max()
        if err > 1e-6 * scale + 1e-9:
            return (f"{name}_grad differs from finite differences by {err:.3g} "
                    f"(largest entry {scale:.3g})")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dnnc", default="dnnc")
    parser.add_argument("--dnnc-run", default="dnnc-run")
    parser.add_argument("--only", default="",
                        help="comma-separated case names")
    opts = parser.parse_args()
    only = set(filter(None, opts.only.split(",")))
    passed = failed = 0
    for case in cases():
        if only and case.name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="dnnc-gradcheck-") as work:
            try:
                reason = check(case, opts, work)
            except RuntimeError as e:
                reason = str(e)
        if reason:
            failed += 1
            print(f"FAIL {case.name}: {reason}")
        else:
            passed += 1
            print(f"PASS {case.name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
