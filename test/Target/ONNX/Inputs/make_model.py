#!/usr/bin/env python3
"""Writes small ONNX models (valid and deliberately broken) for the importer tests.

Usage: make_model.py CASE OUT.onnx
       make_model.py --list

Every case is deterministic (fixed data, fixed seeds). Some cases also write
files next to OUT.onnx (external data, `--bind` tensors); the case's docstring
says which. Invalid models are built with onnx.helper and never run through the
checker: they are meant to be wrong.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8  # What Debian's libonnx 1.12 reads natively.
OPSET = 17
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
UINT8 = TensorProto.UINT8

CASES = {}


def case(fn):
    """Registers a case under its function name."""
    CASES[fn.__name__] = fn
    return fn


def make(nodes, inputs, outputs, initializers=(), opsets=None, name="g"):
    """Returns a ModelProto with the given graph parts."""
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(initializers))
    opset_imports = [helper.make_opsetid(d, v)
                     for d, v in (opsets or {"": OPSET}).items()]
    model = helper.make_model(graph, opset_imports=opset_imports,
                              producer_name="dnnc-tests")
    model.ir_version = IR_VERSION
    return model


def vinfo(name, shape, elem_type=FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def const_node(name, output, array):
    """A Constant node holding `array`."""
    return helper.make_node("Constant", [], [output], name=name,
                            value=numpy_helper.from_array(array, output))


def side_file(out, name):
    """Path of a file that a case writes next to OUT.onnx."""
    return os.path.join(os.path.dirname(os.path.abspath(out)), name)


def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def parses(data):
    try:
        onnx.ModelProto().ParseFromString(data)
        return True
    except Exception:
        return False


# ----------------------------------------------------------------------------
# Files that are no ONNX model at all.


@case
def empty(out):
    """A 0-byte file."""
    return b""


@case
def truncated(out):
    """The first half of a valid model's bytes (cut inside a weight)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((64, 64), np.float32), "w")
    data = make([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                [vinfo("x", [4, 64])], [vinfo("y", [4, 64])],
                [w]).SerializeToString()
    data = data[:len(data) // 2]
    assert not parses(data), "truncated model still parses"
    return data


@case
def garbage(out):
    """Random bytes (starting with an invalid protobuf tag)."""
    data = b"\x07" + np.random.default_rng(1).bytes(1023)
    assert not parses(data), "garbage parses as a model"
    return data


# ----------------------------------------------------------------------------
# Operators, domains and opsets the importer does not know.


@case
def unknown_op(out):
    """Node 'foo' of op type FooBar in the default domain."""
    return make([helper.make_node("FooBar", ["x"], ["y"], name="foo")],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


@case
def unknown_domain(out):
    """Node 'ext' of type Relu in domain com.example."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="ext",
                                  domain="com.example")],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])],
                opsets={"": OPSET, "com.example": 1})


@case
def future_opset(out):
    """A Relu model that imports ai.onnx opset 99."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])], opsets={"": 99})


# ----------------------------------------------------------------------------
# Shapes and types.


@case
def broadcast_mismatch(out):
    """Node 'add': Add of [2,3] and [4,5]."""
    return make([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                [vinfo("a", [2, 3]), vinfo("b", [4, 5])], [vinfo("y", None)])


@case
def matmul_mismatch(out):
    """Node 'mm': MatMul of [2,3] and [4,5]."""
    return make([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                [vinfo("a", [2, 3]), vinfo("b", [4, 5])], [vinfo("y", None)])


@case
def negative_dim(out):
    """Graph input x of shape [2,-3]."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [2, -3])], [vinfo("y", None)])


@case
def huge_input(out):
    """Graph input x of shape [2^30, 2^30, 2^30] (2^90 elements)."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [1 << 30, 1 << 30, 1 << 30])], [vinfo("y", None)])


@case
def huge_reshape(out):
    """Node 'rs': Reshape of x [2,3] to [49149, 2^50 - 1, -1] (the product
    overflows int64)."""
    return make([const_node("shape", "s",
                            np.array([49149, (1 << 50) - 1, -1], np.int64)),
                 helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                [vinfo("x", [2, 3])], [vinfo("y", None)])


@case
def empty_input(out):
    """Graph input x of shape [3,0]."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [3, 0])], [vinfo("y", None)])


@case
def empty_leading(out):
    """Relu of x [0,3] (empty, the zero extent first); writes x.npy."""
    np.save(side_file(out, "x.npy"), np.zeros((0, 3), np.float32))
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [0, 3])], [vinfo("y", None)])


@case
def empty_output(out):
    """Node 'cut' slices columns 5..9 of x [2,3]: output y has shape [2,0]."""
    nodes = [
        const_node("starts", "st", np.array([5], np.int64)),
        const_node("ends", "en", np.array([9], np.int64)),
        const_node("axes", "ax", np.array([1], np.int64)),
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"], name="cut"),
    ]
    return make(nodes, [vinfo("x", [2, 3])], [vinfo("y", None)])


@case
def string_tensor(out):
    """Node 'add': Add of two STRING tensors."""
    return make([helper.make_node("Add", ["s", "s"], ["y"], name="add")],
                [vinfo("s", [2], TensorProto.STRING)],
                [vinfo("y", [2], TensorProto.STRING)])


@case
def attr_type(out):
    """Node 'softmax': Softmax whose axis is a FLOAT attribute."""
    return make([helper.make_node("Softmax", ["x"], ["y"], name="softmax",
                                  axis=1.0)],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


# ----------------------------------------------------------------------------
# Graph structure.


@case
def cycle(out):
    """Nodes 'first' and 'second' feed each other."""
    return make([
        helper.make_node("Add", ["x", "t2"], ["t1"], name="first"),
        helper.make_node("Relu", ["t1"], ["t2"], name="second"),
    ], [vinfo("x", [2, 3])], [vinfo("t1", [2, 3])])


@case
def undefined_input(out):
    """Node 'relu' reads tensor 'nowhere', which nothing defines."""
    return make([helper.make_node("Relu", ["nowhere"], ["y"], name="relu")],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


@case
def no_outputs(out):
    """A Relu of x [2,3] and no graph outputs."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [2, 3])], [])


@case
def undefined_output(out):
    """Graph output 'z', which no node, initializer or input defines."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", [2, 3])], [vinfo("z", [2, 3])])


@case
def huge_matmul(out):
    """Node 'mm': a MatMul of two 10^6 x 10^6 float inputs."""
    n = 1000000
    return make([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                [vinfo("a", [n, n]), vinfo("b", [n, n])], [vinfo("y", [n, n])])


@case
def double_producer(out):
    """Nodes 'first' and 'second' both produce tensor 't'."""
    return make([
        helper.make_node("Relu", ["x"], ["t"], name="first"),
        helper.make_node("Neg", ["x"], ["t"], name="second"),
    ], [vinfo("x", [2, 3])], [vinfo("t", [2, 3])])


@case
def if_node(out):
    """Node 'branch': an If with two constant branches."""
    then_g = helper.make_graph(
        [const_node("then_c", "then_out", np.ones((2, 3), np.float32))],
        "then", [], [vinfo("then_out", [2, 3])])
    else_g = helper.make_graph(
        [const_node("else_c", "else_out", np.zeros((2, 3), np.float32))],
        "else", [], [vinfo("else_out", [2, 3])])
    return make([helper.make_node("If", ["cond"], ["y"], name="branch",
                                  then_branch=then_g, else_branch=else_g)],
                [vinfo("cond", [], TensorProto.BOOL)], [vinfo("y", [2, 3])])


@case
def if_outer_scope(out):
    """Node 'branch': an If on a constant condition computed from a shape
    (Shape, Gather, Equal) whose branches use x from the outer scope: the
    then branch a Relu, the else branch a Neg; nested, an If in the taken
    branch on a constant false."""
    inner_then = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["inner_t"], name="inner_exp")],
        "inner_then", [], [vinfo("inner_t", [2, 3])])
    inner_else = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["inner_e"], name="inner_relu")],
        "inner_else", [], [vinfo("inner_e", [2, 3])])
    then_g = helper.make_graph(
        [const_node("false", "f", np.array(False)),
         helper.make_node("If", ["f"], ["then_out"], name="nested",
                          then_branch=inner_then, else_branch=inner_else)],
        "then", [], [vinfo("then_out", [2, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"], name="else_neg")],
        "else", [], [vinfo("else_out", [2, 3])])
    return make([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        const_node("zero", "i", np.array(0, np.int64)),
        helper.make_node("Gather", ["s", "i"], ["d"], name="dim0"),
        const_node("two", "t", np.array(2, np.int64)),
        helper.make_node("Equal", ["d", "t"], ["cond"], name="is_two"),
        helper.make_node("If", ["cond"], ["y"], name="branch",
                         then_branch=then_g, else_branch=else_g)],
        [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


@case
def loop_node(out):
    """Node 'loop': a Loop that doubles x three times."""
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
        helper.make_node("Add", ["v_in", "v_in"], ["v_out"], name="double"),
    ], "body", [
        vinfo("iter", [], INT64),
        vinfo("cond_in", [], TensorProto.BOOL),
        vinfo("v_in", [2, 3]),
    ], [vinfo("cond_out", [], TensorProto.BOOL), vinfo("v_out", [2, 3])])
    return make([
        const_node("trips", "m", np.array(3, np.int64)),
        const_node("true", "c", np.array(True)),
        helper.make_node("Loop", ["m", "c", "x"], ["y"], name="loop",
                         body=body),
    ], [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


@case
def relu_chain(out):
    """20,000 Relu nodes in a chain (relu_0 ... relu_19999)."""
    n = 20000
    names = ["x"] + [f"t{i}" for i in range(n - 1)] + ["y"]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]],
                              name=f"relu_{i}") for i in range(n)]
    return make(nodes, [vinfo("x", [1, 8])], [vinfo("y", [1, 8])])


@case
def locations(out):
    """Nodes 'first_relu' and 'my_add'."""
    return make([
        helper.make_node("Relu", ["x"], ["r"], name="first_relu"),
        helper.make_node("Add", ["r", "x"], ["y"], name="my_add"),
    ], [vinfo("x", [2, 3])], [vinfo("y", [2, 3])])


# ----------------------------------------------------------------------------
# Tensor data: raw data and external data files.

W22 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


def external_model(out, location, write_to=None):
    """y = Add(x, w), w [2,2] stored in external file `location`; writes the
    data to `write_to` (relative to OUT's directory) unless None."""
    w = numpy_helper.from_array(W22, "w")
    raw = w.raw_data
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"),
                       ("length", str(len(raw)))):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    if write_to is not None:
        path = os.path.normpath(side_file(out, write_to))
        with open(path, "wb") as f:
            f.write(raw)
    return make([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                [vinfo("x", [2, 2])], [vinfo("y", [2, 2])], [w])


@case
def external_data(out):
    """Weight w = [[1,2],[3,4]] in weights.bin next to OUT (written)."""
    return external_model(out, "weights.bin", "weights.bin")


@case
def external_escape(out):
    """Weight w in ../escape.bin (written, outside OUT's directory)."""
    return external_model(out, "../escape.bin", "../escape.bin")


@case
def external_missing(out):
    """Weight w in missing.bin next to OUT (removed if present)."""
    path = side_file(out, "missing.bin")
    if os.path.exists(path):
        os.remove(path)
    return external_model(out, "missing.bin")


@case
def raw_data_size(out):
    """Initializer w of shape [2,3] float with 20 bytes of raw data."""
    w = TensorProto(name="w", data_type=FLOAT, dims=[2, 3], raw_data=b"\0" * 20)
    return make([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                [vinfo("x", [2, 3])], [vinfo("y", [2, 3])], [w])


# ----------------------------------------------------------------------------
# Compile-time values: symbolic dims, --bind, shape subgraphs.


@case
def symbolic_batch(out):
    """Relu of x with shape [N,3] (N symbolic)."""
    return make([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                [vinfo("x", ["N", 3])], [vinfo("y", ["N", 3])])


@case
def bind_add(out):
    """y = Add(x, b), x and b [2,3] float inputs. Writes next to OUT:
    b.pb ([2,3] float, values 0..5), b_wrong_shape.pb ([3,2] float),
    b_wrong_type.pb ([2,3] double)."""
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_tensor(side_file(out, "b.pb"), b, "b")
    write_tensor(side_file(out, "b_wrong_shape.pb"), b.reshape(3, 2), "b")
    write_tensor(side_file(out, "b_wrong_type.pb"), b.astype(np.float64), "b")
    return make([helper.make_node("Add", ["x", "b"], ["y"], name="add")],
                [vinfo("x", [2, 3]), vinfo("b", [2, 3])], [vinfo("y", [2, 3])])


def shape_subgraph_model(batch):
    """PyTorch's `x.reshape(x.shape[0], -1)` on x [batch,3,4]:
    Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape."""
    return make([
        helper.make_node("Shape", ["x"], ["shape"], name="/Shape"),
        const_node("/Constant", "idx", np.array(0, np.int64)),
        helper.make_node("Gather", ["shape", "idx"], ["dim0"], name="/Gather",
                         axis=0),
        const_node("/Constant_1", "axes", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["dim0", "axes"], ["dim0_1d"],
                         name="/Unsqueeze"),
        const_node("/Constant_2", "minus1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["dim0_1d", "minus1"], ["new_shape"],
                         name="/Concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["y"],
                         name="/Reshape"),
    ], [vinfo("x", [batch, 3, 4])], [vinfo("y", [batch, "Reshapey_dim_1"])])


@case
def shape_subgraph(out):
    """Shape subgraph feeding a Reshape, x [2,3,4] -> y [2,12]."""
    return shape_subgraph_model(2)


@case
def shape_subgraph_dynamic(out):
    """Same with a symbolic batch: x [batch,3,4] -> y [batch,12]."""
    return shape_subgraph_model("batch")


def single_node(op, attrs=None, inits=(), shape=(2, 3), elem_type=FLOAT,
                opset=OPSET):
    """Node `op` (named 'n') of x [shape] and the initializers `inits`
    (name -> array), with output y."""
    node = helper.make_node(op, ["x"] + [name for name, _ in inits], ["y"],
                            name="n", **(attrs or {}))
    return make([node], [vinfo("x", list(shape), elem_type)],
                [vinfo("y", None, elem_type)],
                [numpy_helper.from_array(a, name) for name, a in inits],
                opsets={"": opset})


@case
def legacy_no_broadcast(out):
    """Opset 6: Add of x [2,3] and b [3] without `broadcast = 1`."""
    return single_node("Add", inits=[("b", np.ones(3, np.float32))], opset=6)


@case
def legacy_axis(out):
    """Opset 6: Add of x [2,3] and b [3] with broadcast = 1, axis = 0."""
    return single_node("Add", {"broadcast": 1, "axis": 0},
                       inits=[("b", np.ones(3, np.float32))], opset=6)


@case
def tile_negative(out):
    """Tile of x [2,3] with repeats [-1, 2]."""
    return single_node("Tile", inits=[("r", np.array([-1, 2], np.int64))])


@case
def tile_huge(out):
    """Tile of x [2,3] with repeats [2^40, 2^40]."""
    return single_node("Tile",
                       inits=[("r", np.array([1 << 40, 1 << 40], np.int64))])


@case
def pad_crop(out):
    """Pad of x [2,3] with pads [0,-2,0,-2] (crops 4 of 3 columns)."""
    return single_node("Pad", inits=[("p", np.array([0, -2, 0, -2], np.int64))])


@case
def pad_huge(out):
    """Pad of x [2,3] with pads [0,2^62,0,2^62]."""
    return single_node(
        "Pad", inits=[("p", np.array([0, 1 << 62, 0, 1 << 62], np.int64))])


@case
def pad_wrap_early(out):
    """Pad of x [2,3] in mode wrap at opset 17 (wrap is from opset 19)."""
    return single_node("Pad", {"mode": "wrap"},
                       inits=[("p", np.array([0, 1, 0, 1], np.int64))])


@case
def pad_reflect_wide(out):
    """Pad of x [2,3] in mode reflect with 3 columns before."""
    return single_node("Pad", {"mode": "reflect"},
                       inits=[("p", np.array([0, 3, 0, 0], np.int64))])


@case
def pad_value_type(out):
    """Pad of float x [2,3] with an INT64 constant_value."""
    return single_node("Pad", inits=[("p", np.array([0, 1, 0, 1], np.int64)),
                                     ("v", np.array(7, np.int64))])


@case
def depth_to_space_channels(out):
    """DepthToSpace of x [1,3,2,2] with blocksize 2 (4 does not divide 3)."""
    return single_node("DepthToSpace", {"blocksize": 2}, shape=(1, 3, 2, 2))


@case
def elu_int(out):
    """Elu of an INT64 x [2,3]."""
    return single_node("Elu", elem_type=INT64)


@case
def mod_float_floored(out):
    """Mod of float x [2,3] and b [3] with fmod = 0 (integers only)."""
    return single_node("Mod", inits=[("b", np.ones(3, np.float32))])


@case
def mod_fmod_two(out):
    """Mod of INT64 x [2,3] and b [3] with fmod = 2."""
    return single_node("Mod", {"fmod": 2}, elem_type=INT64,
                       inits=[("b", np.ones(3, np.int64))])


@case
def bitshift_direction(out):
    """BitShift of UINT8 x [2,3] and b [3] with direction UP."""
    return single_node("BitShift", {"direction": "UP"}, elem_type=UINT8,
                       inits=[("b", np.ones(3, np.uint8))])


@case
def isinf_int(out):
    """IsInf of an INT64 x [2,3]."""
    return single_node("IsInf", elem_type=INT64)


@case
def sin_int(out):
    """Sin of an INT64 x [2,3]."""
    return single_node("Sin", elem_type=INT64)


@case
def eyelike_rank3(out):
    """EyeLike of x [2,3,4]."""
    return single_node("EyeLike", shape=(2, 3, 4))


@case
def celu_alpha_zero(out):
    """Celu of x [2,3] with alpha = 0."""
    return single_node("Celu", {"alpha": 0.0})


@case
def argmax_bool(out):
    """ArgMax of a bool x [2,3]."""
    return single_node("ArgMax", elem_type=TensorProto.BOOL)


@case
def cumsum_two_axes(out):
    """CumSum of x [2,3] with axis [0, 1]."""
    return single_node("CumSum", inits=[("a", np.array([0, 1], np.int64))])


@case
def gather_elements_rank(out):
    """GatherElements of x [2,3] with indices [3] (rank mismatch)."""
    return single_node("GatherElements",
                       inits=[("i", np.array([0, 1, 0], np.int64))])


@case
def gather_elements_range(out):
    """GatherElements of x [2,3] with constant index 2 on axis 0."""
    return single_node("GatherElements",
                       inits=[("i", np.array([[0, 2, 0]], np.int64))])


@case
def gathernd_batch(out):
    """GatherND of x [2,3] with indices [2,1] and batch_dims 2."""
    return single_node("GatherND", {"batch_dims": 2},
                       inits=[("i", np.zeros((2, 1), np.int64))])


@case
def gathernd_tuple(out):
    """GatherND of x [2,3] with index tuples of 3 elements."""
    return single_node("GatherND", inits=[("i", np.zeros((1, 3), np.int64))])


@case
def nllloss_target_shape(out):
    """NegativeLogLikelihoodLoss of x [2,3] with target [3]."""
    return single_node("NegativeLogLikelihoodLoss",
                       inits=[("t", np.zeros(3, np.int64))])


@case
def nllloss_weight(out):
    """NegativeLogLikelihoodLoss of x [2,3] with a weight of 2 elements."""
    return single_node("NegativeLogLikelihoodLoss",
                       inits=[("t", np.zeros(2, np.int64)),
                              ("w", np.ones(2, np.float32))])


def resize_node(attrs, inputs, inits, elem_type=FLOAT):
    """Resize (opset 19) of x [1,1,2,3] with the given inputs after x."""
    node = helper.make_node("Resize", ["x"] + inputs, ["y"], name="n", **attrs)
    return make([node], [vinfo("x", [1, 1, 2, 3], elem_type)],
                [vinfo("y", None, elem_type)],
                [numpy_helper.from_array(a, name) for name, a in inits],
                opsets={"": 19})


@case
def resize_scales_and_sizes(out):
    """Resize with both scales and sizes."""
    return resize_node({}, ["", "s", "z"],
                       [("s", np.ones(4, np.float32)),
                        ("z", np.array([1, 1, 2, 3], np.int64))])


@case
def resize_scales_count(out):
    """Resize of a 4-D x with 3 scales."""
    return resize_node({}, ["", "s"], [("s", np.ones(3, np.float32))])


@case
def resize_mode(out):
    """Resize with mode 'area'."""
    return resize_node({"mode": "area"}, ["", "s"],
                       [("s", np.ones(4, np.float32))])


@case
def resize_linear_int(out):
    """Linear Resize of an int32 x."""
    return resize_node({"mode": "linear"}, ["", "s"],
                       [("s", np.full(4, 2, np.float32))],
                       TensorProto.INT32)


@case
def resize_scale_zero(out):
    """Resize with a zero scale."""
    return resize_node({}, ["", "s"],
                       [("s", np.array([1, 1, 0, 1], np.float32))])


@case
def convtranspose_channels(out):
    """ConvTranspose of x [2,3] (as [N, C, L]) with a weight of 2 input
    channels."""
    return single_node("ConvTranspose",
                       inits=[("w", np.ones((2, 1, 1), np.float32))],
                       shape=(1, 3, 4))


@case
def convtranspose_pads(out):
    """ConvTranspose of x [1,1,2] with kernel 2 and pads that leave no
    output."""
    return single_node("ConvTranspose", {"pads": [2, 2]},
                       inits=[("w", np.ones((1, 1, 2), np.float32))],
                       shape=(1, 1, 2))


@case
def onehot_values(out):
    """OneHot of x [2,3] with values of 3 elements."""
    return single_node("OneHot", inits=[("d", np.array(4, np.int64)),
                                        ("v", np.zeros(3, np.float32))],
                       elem_type=TensorProto.INT64)


@case
def compress_long(out):
    """Compress of x [2,3] along axis 1 with a condition of 4 entries."""
    return single_node("Compress", {"axis": 1},
                       inits=[("c", np.ones(4, bool))])


@case
def reverse_sequence_len(out):
    """ReverseSequence of x [2,3] (time 0, batch 1) with a length of 5."""
    return single_node("ReverseSequence", {"time_axis": 0, "batch_axis": 1},
                       inits=[("l", np.array([1, 5, 2], np.int64))])


@case
def quantize_axis_scale(out):
    """QuantizeLinear of x [2,3] with 2 scales along axis 1."""
    return single_node("QuantizeLinear", {"axis": 1},
                       inits=[("s", np.ones(2, np.float32))])


@case
def scatter_runtime_indices(out):
    """ScatterElements of x [2,3] with indices from a graph input."""
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                            name="n")
    return make([node], [vinfo("x", [2, 3], FLOAT),
                         vinfo("i", [2, 3], TensorProto.INT64)],
                [vinfo("y", None, FLOAT)],
                [numpy_helper.from_array(np.ones((2, 3), np.float32), "u")],
                opsets={"": 17})


@case
def topk_too_long(out):
    """TopK over an axis of 10000 elements of x [8, 10000]."""
    return single_node("TopK", inits=[("k", np.array([2], np.int64))],
                       shape=(8, 10000))


@case
def einsum_ellipsis_mismatch(out):
    """Einsum '...i,...i' of x [2,3] and a weight [4,3]."""
    node = helper.make_node("Einsum", ["x", "w"], ["y"], name="n",
                            equation="...i,...i")
    return make([node], [vinfo("x", [2, 3], FLOAT)], [vinfo("y", None, FLOAT)],
                [numpy_helper.from_array(np.ones((4, 3), np.float32), "w")],
                opsets={"": 17})


def _batch_norm_graph(shared):
    """Conv 'conv' [4,3,3,3] then BatchNormalization 'bn' in training mode
    with running statistics 'bn.mean'/'bn.var'; a second one, 'bn2', after
    it, with its own statistics, or the same ones when `shared`."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(
        rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.w")]
    nodes = [helper.make_node("Conv", ["x", "conv.w"], ["c"], name="conv")]
    for bn in ("bn", "bn2"):
        stats = "bn" if shared else bn
        inits += [numpy_helper.from_array(np.ones(4, np.float32), bn + ".g"),
                  numpy_helper.from_array(np.zeros(4, np.float32), bn + ".b")]
        if bn == "bn" or not shared:
            inits += [numpy_helper.from_array(np.zeros(4, np.float32),
                                              stats + ".mean"),
                      numpy_helper.from_array(np.ones(4, np.float32),
                                              stats + ".var")]
        src = "c" if bn == "bn" else "y"
        nodes.append(helper.make_node(
            "BatchNormalization",
            [src, bn + ".g", bn + ".b", stats + ".mean", stats + ".var"],
            ["y" if bn == "bn" else "z", bn + ".rm", bn + ".rv"], name=bn,
            training_mode=1, momentum=0.9))
    nodes.append(helper.make_node("ReduceMean", ["z"], ["logits"],
                                  name="pool", axes=[2, 3], keepdims=0))
    return make(nodes, [vinfo("x", [2, 3, 6, 6], FLOAT)],
                [vinfo("logits", [2, 4], FLOAT)], inits, opsets={"": 17})


@case
def batch_norm_training(out):
    """Conv, then two BatchNormalization nodes in training mode (batch
    statistics), each with its running mean and variance."""
    return _batch_norm_graph(False)


@case
def batch_norm_shared_stats(out):
    """batch_norm_training, but 'bn2' updates the running statistics of
    'bn' too."""
    return _batch_norm_graph(True)


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        for name, fn in CASES.items():
            print(f"{name}: {fn.__doc__.splitlines()[0]}")
        return 0
    if len(argv) != 3 or argv[1] not in CASES:
        print(__doc__, file=sys.stderr)
        print("cases: " + " ".join(CASES), file=sys.stderr)
        return 2
    out = argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    result = CASES[argv[1]](out)
    data = result if isinstance(result, bytes) else result.SerializeToString()
    with open(out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
