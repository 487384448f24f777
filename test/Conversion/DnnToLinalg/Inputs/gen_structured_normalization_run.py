#!/usr/bin/env python3
"""Generates structured-run.mlir and normalization-run.mlir.

Each case is one `dnn` op in a function of its own, the single-node ONNX
model with the same semantics, and deterministic inputs. The script

1. writes the test file (inputs as constants in @main, one print per result),
2. runs it through the test's RUN pipeline (dnnc-opt, mlir-opt, mlir-runner),
3. compares every printed value with onnxruntime's result (rtol/atol 2e-5,
   2e-3 for f16, exact for integers) and fails loudly on any mismatch,
4. writes the printed values as the CHECK lines.

So the CHECK lines are dnnc's output, verified against onnxruntime when they
were generated. Run from the repository root after building dnnc-opt:

    python3 test/Conversion/DnnToLinalg/Inputs/gen_structured_normalization_run.py
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, ValueInfoProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_DIR = os.path.dirname(HERE)
LLVM_BIN = "/usr/lib/llvm-22/bin"
LLVM_LIB = "/usr/lib/llvm-22/lib"

# Keep in sync with the RUN lines written below.
PIPELINE = ("--one-shot-bufferize=bufferize-function-boundaries "
            "--convert-linalg-to-loops --expand-strided-metadata "
            "--lower-affine --convert-scf-to-cf --convert-math-to-llvm "
            "--convert-math-to-libm --finalize-memref-to-llvm "
            "--convert-arith-to-llvm --convert-cf-to-llvm "
            "--convert-func-to-llvm --reconcile-unrealized-casts")

RUN_LINES = """\
// RUN: dnnc-opt %s --convert-dnn-to-linalg \\
// RUN: | mlir-opt --one-shot-bufferize="bufferize-function-boundaries" \\
// RUN:     --convert-linalg-to-loops --expand-strided-metadata --lower-affine \\
// RUN:     --convert-scf-to-cf --convert-math-to-llvm --convert-math-to-libm \\
// RUN:     --finalize-memref-to-llvm --convert-arith-to-llvm \\
// RUN:     --convert-cf-to-llvm --convert-func-to-llvm \\
// RUN:     --reconcile-unrealized-casts \\
// RUN: | mlir-runner -e main -entry-point-result=void \\
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \\
// RUN: | FileCheck %s
// REQUIRES: mlir-runner
"""

MLIR_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64",
              "int32": "i32", "int64": "i64"}
ONNX_TYPES = {"float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT,
              "float64": TensorProto.DOUBLE, "int32": TensorProto.INT32,
              "int64": TensorProto.INT64}


def mlir_type(array):
    return MLIR_TYPES[array.dtype.name]

PRINTER = {"f32": "printMemrefF32", "f64": "printMemrefF64",
           "i32": "printMemrefI32", "i64": "printMemrefI64"}


def tensor_type(shape, elt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


def dense(array):
    def fmt(x):
        if np.issubdtype(array.dtype, np.floating):
            return repr(float(x))
        return str(int(x))

    def rec(a):
        if a.ndim == 0:
            return fmt(a)
        return "[" + ", ".join(rec(x) for x in a) + "]"

    return f"dense<{rec(array)}>"


class Case:
    """One dnn op, its ONNX twin and its inputs.

    `dnn` is the op's text with {0}, {1}, ... for the operands and {T0}, ...,
    {R0}, ... for operand and result types.
    """

    def __init__(self, name, doc, dnn, inputs, onnx_op, attrs=None,
                 onnx_consts=(), onnx_inputs=None, num_results=1, opset=18,
                 expected=None):
        self.name, self.doc, self.dnn = name, doc, dnn
        self.inputs = inputs
        self.onnx_op, self.attrs = onnx_op, attrs or {}
        self.onnx_consts = list(onnx_consts)
        self.onnx_inputs = onnx_inputs
        self.num_results, self.opset = num_results, opset
        self.expected = expected if expected else self.run_ort()

    def run_ort(self):
        names = [f"x{i}" for i in range(len(self.inputs))]
        graph_inputs = [
            helper.make_tensor_value_info(n, ONNX_TYPES[a.dtype.name], a.shape)
            for n, a in zip(names, self.inputs)]
        inits = [numpy_helper.from_array(c, f"c{i}")
                 for i, c in enumerate(self.onnx_consts)]
        node_inputs = (self.onnx_inputs if self.onnx_inputs is not None
                       else names + [f"c{i}" for i in range(len(inits))])
        outs = [f"y{i}" for i in range(self.num_results)]
        node = helper.make_node(self.onnx_op, node_inputs, outs, **self.attrs)
        graph = helper.make_graph(
            [node], self.name, graph_inputs,
            [ValueInfoProto(name=o) for o in outs], initializer=inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", self.opset)])
        feeds = dict(zip(names, self.inputs))
        options = ort.SessionOptions()
        options.log_severity_level = 3
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, feeds)

    def func(self):
        ts = [tensor_type(a.shape, mlir_type(a))
              for a in self.inputs]
        rs = [tensor_type(e.shape, mlir_type(e))
              for e in self.expected]
        subst = {f"T{i}": t for i, t in enumerate(ts)}
        subst.update({f"R{i}": t for i, t in enumerate(rs)})
        op = self.dnn.format(*[f"%arg{i}" for i in range(len(ts))], **subst)
        args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(ts))
        if len(rs) == 1:
            res, ret = "%0", "%0"
        else:
            res = f"%0:{len(rs)}"
            ret = ", ".join(f"%0#{i}" for i in range(len(rs)))
        return (f"// {self.doc}\n"
                f"func.func @{self.name}({args}) -> ({', '.join(rs)}) {{\n"
                f"  {res} = {op}\n"
                f"  return {ret} : {', '.join(rs)}\n"
                f"}}\n")


def main_func(cases, checks):
    lines = ["func.func @main() {"]
    for ci, case in enumerate(cases):
        lines.append(f"  // {case.name}")
        args = []
        for ai, a in enumerate(case.inputs):
            t = tensor_type(a.shape, mlir_type(a))
            lines.append(f"  %c{ci}_{ai} = arith.constant {dense(a)} : {t}")
            args.append(f"%c{ci}_{ai}")
        ts = [tensor_type(a.shape, mlir_type(a))
              for a in case.inputs]
        rs = [tensor_type(e.shape, mlir_type(e))
              for e in case.expected]
        res = f"%r{ci}" + (f":{len(rs)}" if len(rs) > 1 else "")
        lines.append(f"  {res} = call @{case.name}({', '.join(args)}) : "
                     f"({', '.join(ts)}) -> ({', '.join(rs)})")
        for ri, (r, e) in enumerate(zip(rs, case.expected)):
            elt = mlir_type(e)
            val = f"%r{ci}" + (f"#{ri}" if len(rs) > 1 else "")
            if elt == "f16":
                # The runner utils print f16 only through the C interface:
                # widen to f32 first.
                r32 = r.replace("f16", "f32")
                ident = ", ".join(f"d{i}" for i in range(e.ndim))
                iterators = ", ".join(['"parallel"'] * e.ndim)
                lines.append(f"  %w{ci}_{ri}e = tensor.empty() : {r32}")
                lines.append(
                    f"  %w{ci}_{ri} = linalg.generic {{indexing_maps = "
                    f"[affine_map<({ident}) -> ({ident})>, "
                    f"affine_map<({ident}) -> ({ident})>], iterator_types = "
                    f"[{iterators}]}} "
                    f"ins({val} : {r}) outs(%w{ci}_{ri}e : {r32}) {{")
                lines.append("  ^bb0(%h: f16, %o: f32):")
                lines.append("    %f = arith.extf %h : f16 to f32")
                lines.append("    linalg.yield %f : f32")
                lines.append(f"  }} -> {r32}")
                val, r, elt = f"%w{ci}_{ri}", r32, "f32"
            lines.append(f"  %u{ci}_{ri} = tensor.cast {val} : {r} to "
                         f"tensor<*x{elt}>")
            lines.append(f"  call @{PRINTER[elt]}(%u{ci}_{ri}) : "
                         f"(tensor<*x{elt}>) -> ()")
            lines.extend(checks.get((ci, ri), []))
    lines.append("  return")
    lines.append("}")
    for elt, printer in PRINTER.items():
        lines.append(f"func.func private @{printer}(tensor<*x{elt}>)")
    return "\n".join(lines) + "\n"


def write(path, header, cases, checks):
    with open(path, "w") as f:
        f.write(RUN_LINES)
        f.write(header)
        f.write("\n")
        for case in cases:
            f.write(case.func())
            f.write("\n")
        f.write(main_func(cases, checks))


def run(path, dnnc_opt):
    lowered = subprocess.run([dnnc_opt, path, "--convert-dnn-to-linalg"],
                             check=True, capture_output=True, text=True)
    llvm = subprocess.run([f"{LLVM_BIN}/mlir-opt"] + PIPELINE.split(),
                          input=lowered.stdout, check=True,
                          capture_output=True, text=True)
    libs = ",".join(f"{LLVM_LIB}/lib{n}.so"
                    for n in ["mlir_runner_utils", "mlir_c_runner_utils"])
    out = subprocess.run([f"{LLVM_BIN}/mlir-runner", "-e", "main",
                          "-entry-point-result=void", f"-shared-libs={libs}"],
                         input=llvm.stdout, check=True, capture_output=True,
                         text=True)
    return out.stdout


NUMBER = re.compile(r"-?(?:nan|inf|[0-9.]+(?:e[-+]?[0-9]+)?)")


def split_prints(stdout):
    """Returns (header, data lines) per printed memref."""
    prints = []
    for line in stdout.splitlines():
        if line.startswith("Unranked Memref"):
            prints.append((line, []))
        else:
            prints[-1][1].append(line)
    return prints


def compare(case, ri, expected, data_lines):
    text = " ".join(data_lines)
    got = np.array([float(x) for x in NUMBER.findall(text)])
    want = expected.astype(np.float64).ravel()
    where = f"{case.name} result {ri}"
    if got.shape != want.shape:
        sys.exit(f"{where}: printed {got.size} values, expected {want.size}")
    if np.issubdtype(expected.dtype, np.integer):
        ok = np.array_equal(got, want)
    else:
        # f16 results are compared at f16 precision.
        tol = 2e-3 if expected.dtype == np.float16 else 2e-5
        ok = np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    if not ok:
        sys.exit(f"{where}: mismatch\n got  {got}\n want {want}")


def generate(path, header, cases, dnnc_opt):
    write(path, header, cases, {})
    prints = split_prints(run(path, dnnc_opt))
    slots = [(ci, ri) for ci, c in enumerate(cases)
             for ri in range(len(c.expected))]
    if len(prints) != len(slots):
        sys.exit(f"{path}: {len(prints)} prints for {len(slots)} results")
    checks = {}
    for (ci, ri), (head, data) in zip(slots, prints):
        case = cases[ci]
        compare(case, ri, case.expected[ri], data)
        sizes = re.search(r"sizes = \[[^]]*\]", head).group(0)
        lines = [f"  // CHECK: {sizes} strides = {{{{.*}}}} data ="]
        # FileCheck reads "[[" as a variable; CHECK matches substrings, so
        # one opening bracket per row is enough.
        rows = [re.sub(r"^\[+", "[", d.strip()) for d in data if d.strip()]
        lines += [f"  // CHECK-NEXT: {row}" for row in rows]
        checks[(ci, ri)] = lines
    write(path, header, cases, checks)
    print(f"{path}: {len(cases)} cases, {len(slots)} results match "
          f"onnxruntime {ort.__version__}")


#===------------------------------------------------------------------------===#
# Cases
#===------------------------------------------------------------------------===#

def rng(seed):
    return np.random.default_rng(seed)


def quarters(seed, shape, lo=-8, hi=8, dtype=np.float32):
    """Multiples of 1/4: sums of products are exact in f32."""
    return (rng(seed).integers(lo, hi, size=shape) / 4).astype(dtype)


def normal(seed, shape, scale=1.0, dtype=np.float32):
    return (rng(seed).standard_normal(shape) * scale).astype(dtype)


def conv(name, doc, x, w, b, strides, pads, dilations, group):
    n = len(strides)
    ins = [x, w] + ([b] if b is not None else [])
    operands = "{0}, {1}" + (", {2}" if b is not None else "")
    types = ", ".join(f"{{T{i}}}" for i in range(len(ins)))
    return Case(
        name, doc,
        f"dnn.conv {operands} strides = {list(strides)} pads = {list(pads)} "
        f"dilations = {list(dilations)} group = {group} : ({types}) -> {{R0}}",
        ins, "Conv",
        dict(strides=strides, pads=pads, dilations=dilations, group=group,
             kernel_shape=list(w.shape[2:])))


def max_pool(name, doc, x, kernel, strides, pads, dilations, ceil):
    return Case(
        name, doc,
        f"dnn.max_pool {{0}} kernel = {list(kernel)} strides = "
        f"{list(strides)} pads = {list(pads)} dilations = {list(dilations)} "
        f"ceil_mode = {str(ceil).lower()} : {{T0}} -> {{R0}}",
        [x], "MaxPool",
        dict(kernel_shape=kernel, strides=strides, pads=pads,
             dilations=dilations, ceil_mode=int(ceil)))


def avg_pool(name, doc, x, kernel, strides, pads, ceil, include):
    return Case(
        name, doc,
        f"dnn.avg_pool {{0}} kernel = {list(kernel)} strides = "
        f"{list(strides)} pads = {list(pads)} ceil_mode = {str(ceil).lower()} "
        f"count_include_pad = {str(include).lower()} : {{T0}} -> {{R0}}",
        [x], "AveragePool",
        dict(kernel_shape=kernel, strides=strides, pads=pads,
             ceil_mode=int(ceil), count_include_pad=int(include)))


def structured_cases():
    c = []
    mm = "dnn.matmul {0}, {1} : ({T0}, {T1}) -> {R0}"
    c.append(Case("matmul_2d", "[M, K] x [K, N]: linalg.matmul", mm,
                  [quarters(1, (3, 4)), quarters(2, (4, 5))], "MatMul"))
    c.append(Case("matmul_shared_rhs",
                  "[B, M, K] x [K, N]: batch folded into M", mm,
                  [quarters(3, (2, 3, 4)), quarters(4, (4, 5))], "MatMul"))
    c.append(Case("matmul_batch_4d",
                  "[B1, B2, M, K] x [B1, B2, K, N]: batch dims collapsed", mm,
                  [quarters(5, (2, 3, 2, 4)), quarters(6, (2, 3, 4, 3))],
                  "MatMul"))
    c.append(Case("matmul_batch_3d_i64", "integer batch_matmul", mm,
                  [rng(7).integers(-50, 50, (2, 2, 3)),
                   rng(8).integers(-50, 50, (2, 3, 2))], "MatMul"))
    c.append(Case("matmul_i32_shared_rhs", "integer matmul, 4-d lhs", mm,
                  [rng(9).integers(-9, 9, (2, 2, 2, 3)).astype(np.int32),
                   rng(10).integers(-9, 9, (3, 2)).astype(np.int32)],
                  "MatMul"))
    ein = ('dnn.einsum {0}, {1} equation = "%s" : ({T0}, {T1}) -> {R0}')
    c.append(Case("matmul_f16", "f16 matmul", mm,
                  [quarters(45, (2, 3), dtype=np.float16),
                   quarters(46, (3, 2), dtype=np.float16)], "MatMul"))
    c.append(Case("einsum_batched", "einsum bij,bjk->bik",
                  ein % "bij,bjk->bik",
                  [quarters(11, (2, 3, 4)), quarters(12, (2, 4, 2))],
                  "Einsum", dict(equation="bij,bjk->bik")))
    c.append(Case("einsum_diag_sum",
                  "einsum bii,ij->bj: diagonal and contraction",
                  ein % "bii,ij->bj",
                  [quarters(13, (2, 3, 3)), quarters(14, (3, 4))],
                  "Einsum", dict(equation="bii,ij->bj")))
    c.append(Case("einsum_outer_transpose", "einsum i,jk->kji (no sum)",
                  ein % "i,jk->kji",
                  [quarters(15, (2,)), quarters(16, (3, 2))],
                  "Einsum", dict(equation="i,jk->kji")))
    c.append(Case("einsum_three", "einsum ij,jk,k->i (three operands)",
                  'dnn.einsum {0}, {1}, {2} equation = "ij,jk,k->i" : '
                  '({T0}, {T1}, {T2}) -> {R0}',
                  [quarters(17, (2, 3)), quarters(18, (3, 4)),
                   quarters(19, (4,))],
                  "Einsum", dict(equation="ij,jk,k->i")))
    c.append(conv("conv2d_pads_strides_bias",
                  "conv 2-d, stride 2, pads 1, bias: conv_2d_nchw_fchw",
                  quarters(20, (1, 2, 5, 5)), quarters(21, (3, 2, 3, 3)),
                  quarters(22, (3,)), [2, 2], [1, 1, 1, 1], [1, 1], 1))
    c.append(conv("conv2d_groups_dilations",
                  "conv 2-d, 2 groups, dilations, asymmetric pads: "
                  "conv_2d_ngchw_gfchw",
                  quarters(23, (2, 4, 6, 6)), quarters(24, (4, 2, 3, 2)),
                  quarters(25, (4,)), [1, 2], [2, 1, 0, 2], [2, 1], 2))
    c.append(conv("conv2d_depthwise", "conv 2-d depthwise (group = C)",
                  quarters(26, (1, 3, 5, 5)), quarters(27, (3, 1, 3, 3)),
                  None, [1, 1], [1, 1, 1, 1], [1, 1], 3))
    c.append(conv("conv1d_groups_generic",
                  "conv 1-d, 2 groups, stride 2: linalg.generic",
                  quarters(28, (2, 4, 7)), quarters(29, (6, 2, 3)),
                  quarters(30, (6,)), [2], [1, 2], [1], 2))
    c.append(conv("conv1d", "conv 1-d, dilation 2: conv_1d_ncw_fcw",
                  quarters(31, (1, 2, 8)), quarters(32, (2, 2, 3)),
                  None, [1], [0, 1], [2], 1))
    c.append(conv("conv3d", "conv 3-d, pads: conv_3d_ncdhw_fcdhw",
                  quarters(33, (1, 2, 3, 4, 3)), quarters(34, (2, 2, 2, 2, 2)),
                  quarters(35, (2,)), [1, 2, 1], [1, 0, 0, 0, 1, 1],
                  [1, 1, 1], 1))
    c.append(max_pool("max_pool_ceil",
                      "max_pool 2-d, ceil_mode, pads; negative input so "
                      "pads must not win",
                      -np.abs(normal(36, (1, 2, 6, 6))) - 1.0,
                      [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True))
    c.append(max_pool("max_pool_dilations", "max_pool 2-d, dilations",
                      normal(37, (1, 1, 5, 5)), [2, 2], [1, 1], [0, 0, 1, 1],
                      [2, 2], False))
    c.append(max_pool("max_pool_1d_ceil", "max_pool 1-d, ceil_mode",
                      normal(38, (1, 2, 7)), [2], [2], [0, 0], [1], True))
    c.append(max_pool("max_pool_3d", "max_pool 3-d: linalg.generic",
                      normal(39, (1, 1, 4, 4, 3)), [2, 2, 2], [2, 2, 1],
                      [0, 0, 0, 0, 0, 1], [1, 1, 1], False))
    c.append(avg_pool("avg_pool_ceil_include_pad",
                      "avg_pool 2-d, ceil_mode, count_include_pad: the "
                      "part past the end pad is not counted",
                      quarters(40, (1, 1, 6, 6)), [3, 3], [2, 2],
                      [1, 1, 1, 1], True, True))
    c.append(avg_pool("avg_pool_ceil_exclude_pad",
                      "avg_pool 2-d, ceil_mode, count_include_pad = false",
                      quarters(41, (1, 2, 6, 5)), [3, 3], [2, 2],
                      [1, 0, 1, 1], True, False))
    c.append(avg_pool("avg_pool_include_pad", "avg_pool 2-d with pads",
                      quarters(42, (1, 1, 4, 4)), [2, 2], [1, 1],
                      [1, 1, 1, 1], False, True))
    c.append(avg_pool("avg_pool_1d", "avg_pool 1-d, exclude pad",
                      quarters(43, (1, 1, 7)), [3], [2], [2, 1], False,
                      False))
    c.append(avg_pool("avg_pool_3d", "avg_pool 3-d: linalg.generic",
                      quarters(44, (1, 1, 3, 4, 4)), [2, 2, 2], [1, 2, 2],
                      [1, 0, 0, 0, 1, 1], True, False))
    return c


def reduce(name, doc, op, onnx_op, x, axes, keep, expected=None):
    return Case(
        name, doc,
        f"dnn.{op} {{0}} axes = {list(axes)} keep_dims = "
        f"{str(keep).lower()} : {{T0}} -> {{R0}}",
        [x], onnx_op, dict(keepdims=int(keep)),
        onnx_consts=[np.array(axes, np.int64)], expected=expected)


def sce(name, doc, scores, labels, weights, reduction, ignore=None):
    ins = [scores, labels] + ([weights] if weights is not None else [])
    operands = "{0}, {1}" + (", {2}" if weights is not None else "")
    types = ", ".join(f"{{T{i}}}" for i in range(len(ins)))
    attrs = dict(reduction=reduction)
    extra = ""
    if ignore is not None:
        attrs["ignore_index"] = ignore
        extra = f" {{{{ignore_index = {ignore} : i64}}}}"
    return Case(
        name, doc,
        f"dnn.softmax_cross_entropy {operands} reduction = <{reduction}>"
        f"{extra} : ({types}) -> ({{R0}}, {{R1}})",
        ins, "SoftmaxCrossEntropyLoss", attrs, num_results=2)


def layer_norm_f64(x, scale, bias, axis, eps):
    """numpy LayerNormalization with f64 statistics (ONNX stash_type 11,
    which neither onnxruntime nor ONNX's reference evaluator implement)."""
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True)
                            + eps)
    y = (x - mean) * inv_std * scale + (bias if bias is not None else 0)
    return [y, mean, inv_std]


def layer_norm(name, doc, x, scale, bias, axis, eps):
    ins = [x, scale] + ([bias] if bias is not None else [])
    operands = "{0}, {1}" + (", {2}" if bias is not None else "")
    types = ", ".join(f"{{T{i}}}" for i in range(len(ins)))
    # dnn computes the statistics in f64 for f64 input, in f32 otherwise.
    expected = (layer_norm_f64(x, scale, bias, axis, np.float32(eps))
                if x.dtype == np.float64 else None)
    return Case(
        name, doc,
        f"dnn.layer_norm {operands} axis = {axis} epsilon = {eps:.6e} : "
        f"({types}) -> ({{R0}}, {{R1}}, {{R2}})",
        ins, "LayerNormalization", dict(axis=axis, epsilon=eps),
        num_results=3, opset=17, expected=expected)


def normalization_cases():
    c = []
    x = normal(100, (2, 3, 4))
    c.append(reduce("reduce_sum", "reduce_sum over one axis", "reduce_sum",
                    "ReduceSum", x, [1], False))
    c.append(reduce("reduce_mean_keep", "reduce_mean over [0, 2], keep_dims",
                    "reduce_mean", "ReduceMean", x, [0, 2], True))
    c.append(reduce("reduce_max_all", "reduce_max over everything",
                    "reduce_max", "ReduceMax", -np.abs(x), [0, 1, 2], False))
    c.append(reduce("reduce_min_keep", "reduce_min, keep_dims", "reduce_min",
                    "ReduceMin", np.abs(x), [1], True))
    c.append(reduce("reduce_prod", "reduce_prod over the last axis",
                    "reduce_prod", "ReduceProd", x, [2], False))
    xi = rng(101).integers(-100, 100, (2, 3, 4)).astype(np.int32)
    c.append(reduce("reduce_sum_i32", "integer reduce_sum", "reduce_sum",
                    "ReduceSum", xi, [0, 2], True))
    c.append(reduce("reduce_max_i64", "integer reduce_max (negative values)",
                    "reduce_max", "ReduceMax", -np.abs(xi.astype(np.int64)),
                    [1], False))
    c.append(reduce("reduce_min_i32", "integer reduce_min", "reduce_min",
                    "ReduceMin", xi, [2], False))
    # ONNX leaves integer mean rounding open; dnnc truncates toward zero.
    c.append(reduce("reduce_mean_i32",
                    "integer reduce_mean (truncates toward zero)",
                    "reduce_mean", "ReduceMean", xi, [1], False,
                    expected=[np.trunc(xi.sum(axis=1) / 3).astype(np.int32)]))
    c.append(reduce("reduce_sum_f64", "f64 reduce_sum", "reduce_sum",
                    "ReduceSum", x.astype(np.float64), [0], False))
    large = np.array([[0, 1, 2, 3], [10000, 10001, 10002, 10003]], np.float32)
    c.append(Case("softmax_large", "softmax of large numbers "
                  "(test_softmax_large_number)",
                  "dnn.softmax {0} axis = 1 : {R0}", [large], "Softmax",
                  dict(axis=1)))
    c.append(Case("softmax_axis0", "softmax along a leading axis",
                  "dnn.softmax {0} axis = 0 : {R0}", [normal(102, (3, 2, 2))],
                  "Softmax", dict(axis=0)))
    c.append(Case("log_softmax_large", "log_softmax of large numbers",
                  "dnn.log_softmax {0} axis = 1 : {R0}", [large],
                  "LogSoftmax", dict(axis=1)))
    c.append(Case("log_softmax_middle", "log_softmax along a middle axis",
                  "dnn.log_softmax {0} axis = 1 : {R0}",
                  [normal(103, (2, 3, 2), 3.0)], "LogSoftmax", dict(axis=1)))
    c.append(layer_norm("layer_norm_bias", "layer_norm, last axis, bias",
                        normal(104, (2, 3, 4), 2.0) + 1.0,
                        normal(105, (4,)), normal(106, (4,)), 2, 1e-5))
    c.append(layer_norm("layer_norm_axis1", "layer_norm over [1, 3), no bias",
                        normal(107, (2, 2, 3)), normal(108, (2, 3)), None, 1,
                        1e-3))
    c.append(layer_norm("layer_norm_f64", "f64 layer_norm: f64 statistics",
                        normal(109, (3, 4), dtype=np.float64),
                        normal(110, (4,), dtype=np.float64),
                        normal(111, (4,), dtype=np.float64), 1, 1e-5))
    c.append(layer_norm("layer_norm_f16",
                        "f16 layer_norm: f32 statistics, f16 scale",
                        normal(114, (2, 6), dtype=np.float16),
                        normal(115, (6,), dtype=np.float16), None, 1, 1e-5))
    c.append(Case("softmax_f16", "f16 softmax",
                  "dnn.softmax {0} axis = 1 : {R0}",
                  [normal(116, (2, 4), 2.0, dtype=np.float16)], "Softmax",
                  dict(axis=1)))
    scores = normal(112, (3, 5), 2.0)
    labels = np.array([1, 4, 0], np.int64)
    c.append(sce("sce_mean", "softmax_cross_entropy, mean", scores, labels,
                 None, "mean"))
    scores3 = normal(113, (3, 4, 2), 2.0)
    labels3 = np.array([[1, -1], [3, 0], [-1, 2]], np.int64)
    weights = np.array([0.5, 2.0, 1.0, 0.25], np.float32)
    c.append(sce("sce_weights_ignore_mean",
                 "[N, C, D] with weights and ignore_index, mean divides by "
                 "the applied weights", scores3, labels3, weights, "mean",
                 ignore=-1))
    c.append(sce("sce_ignore_mean",
                 "ignore_index without weights: mean over the kept labels",
                 scores3, labels3.astype(np.int32), None, "mean", ignore=-1))
    c.append(sce("sce_none", "reduction none, weights, ignore_index",
                 scores3, labels3, weights, "none", ignore=-1))
    c.append(sce("sce_sum", "reduction sum, weights", scores3,
                 np.abs(labels3), weights, "sum"))
    return c


STRUCTURED_HEADER = """\
// Numerical check of the structured lowerings (matmul, einsum, conv, pools):
// every case runs end to end and prints its results. Generated by
// Inputs/gen_structured_normalization_run.py, which checked the printed values
// against onnxruntime; rerun it after changing the cases.
"""

NORMALIZATION_HEADER = """\
// Numerical check of the reduction and normalisation lowerings (reduce_*,
// softmax, log_softmax, layer_norm, softmax_cross_entropy): every case runs
// end to end and prints its results. Generated by
// Inputs/gen_structured_normalization_run.py, which checked the printed values
// against onnxruntime; rerun it after changing the cases.
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dnnc-opt", default="build/bin/dnnc-opt")
    args = parser.parse_args()
    generate(os.path.join(TEST_DIR, "structured-run.mlir"), STRUCTURED_HEADER,
             structured_cases(), args.dnnc_opt)
    generate(os.path.join(TEST_DIR, "normalization-run.mlir"),
             NORMALIZATION_HEADER, normalization_cases(), args.dnnc_opt)


if __name__ == "__main__":
    main()
