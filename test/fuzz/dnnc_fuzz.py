#!/usr/bin/env python3
"""Differential fuzzer: random ONNX graphs through dnnc, checked against
onnxruntime.

    dnnc_fuzz.py --seed S --count N [--modes 1rank,stress,pp,cuda-emu] [-j J]
                 [--dnnc build/bin/dnnc] [--dnnc-run build/bin/dnnc-run]
                 [--out fuzz-failures] [--no-minimize] [--minimize-time 120]

Graph i is generated from seed S + i alone (3-17 nodes, opset 17, 18, 20 or 23,
every op that lib/Target/ONNX/OpRegistry.cpp registers; OPS below has one
generator per op). Each node is evaluated with onnxruntime while the graph
grows, so generators see concrete values: Log gets positive inputs, Div
divisors away from 0, and discontinuous ops (Floor, Sign, comparisons, casts
to integers) only inputs that are not within rounding noise of a jump. A
finished graph must pass `onnx.checker.check_model(full_check=True)`, strict
shape inference and a finite onnxruntime run, else it counts as invalid.

Every valid graph is compiled by dnnc and run by dnnc-run in each mode:

    1rank     dnnc M -o plan.bin;  dnnc-run plan.bin --input ... --output-dir O
    stress    --mesh=2x2 --sharding=stress:(seed % 64), mpirun -np 4
    pp        --parallel=pp=2 --microbatches=2, mpirun -np 2 (only when the
              first graph input has an even leading (batch) dimension)
    cuda-emu  --target=cuda --cuda-emulation, 1 rank
    grad      reserved: rejected until `dnnc --help` mentions --mode=train

Outputs are compared with onnxruntime as test/onnx/conformance.py does
(same dtype and shape; floats within atol + rtol * |want|, NaN matches NaN;
other types exactly; graphs with a float16/bfloat16 rounding get rtol 2e-2
and an atol of 2e-2 times the output's largest |value|). Each (graph, mode)
is `pass`, `wrong` (values differ), `crash` (signal, timeout, a failed
dnnc-run, or a dnnc exit without a clean `error:` line), `internal` (an
internal error reached the user: an MLIR verifier message such as
`'linalg.generic' op ...`, `LLVM ERROR`, an assertion) or `refused` (dnnc
stopped with a clean `error: ...`). Failures (wrong, crash, internal) are
shrunk greedily while they keep failing in the same class (--minimize) and
saved to --out as seedN-MODE.{onnx,min.onnx,txt} with .npy inputs and the
commands that reproduce them. The last line is `N passed, N failed`; the
exit status is 1 iff something failed (2 on usage errors).
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "onnx"))
from conformance import compare, first_line  # noqa: E402

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min
MAX_ELEMENTS = 2048      # largest tensor a generator may create
MAX_FLOAT = 1e4          # largest |value| a node may produce
MAX_INT = 1 << 24
MIN_NODES, MAX_NODES = 3, 17
DIMS = (1, 2, 2, 3, 4, 4, 6, 8)


class Reject(Exception):
    """A generator cannot build its op here (no suitable operand, or
    onnxruntime or shape inference refuses the node)."""


class Invalid(Exception):
    """A finished graph fails the checker, shape inference or onnxruntime."""


# ---------------------------------------------------------------------------
# Graph building
# ---------------------------------------------------------------------------

@dataclasses.dataclass(eq=False)
class Value:
    """A tensor of the graph being built, with its onnxruntime value."""
    name: str
    array: np.ndarray
    loose: bool = False  # downstream of a float16/bfloat16 rounding

    @property
    def shape(self):
        return self.array.shape

    @property
    def rank(self):
        return self.array.ndim

    @property
    def kind(self):
        """'f' float, 'i'/'u' integer, 'b' bool."""
        return self.array.dtype.kind


def floating(v):
    return v.kind == "f"


def integer(v):
    return v.kind in "iu"


def numeric(v):
    return v.kind in "fiu"


def boolean(v):
    return v.kind == "b"


def elem_type(array):
    return helper.np_dtype_to_tensor_dtype(array.dtype)


def value_info(name, array):
    """A graph input or output with the dtype and shape of `array`."""
    return helper.make_tensor_value_info(name, elem_type(array), array.shape)


def session(model):
    """An onnxruntime CPU session for `model`, one thread, no rewrites."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def ir_version(opset):
    return 8 if opset <= 18 else 9 if opset <= 20 else 10


class GraphBuilder:
    """Grows a random graph node by node; every node is run by onnxruntime
    on the values before it, so the next generators see concrete values."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.opset = self.rng.choices((17, 18, 20, 23),
                                      (0.55, 0.2, 0.15, 0.1))[0]
        self.values = []         # graph inputs and node outputs, in order
        self.by_name = {}
        self.inputs = []         # graph inputs (Values)
        self.consts = {}         # initializer name -> TensorProto
        self.nodes = []
        self.uses = collections.Counter()
        self.serial = 0

    # -- names, constants and operands --------------------------------------

    def fresh(self, prefix):
        self.serial += 1
        return f"{prefix}{self.serial}"

    def const(self, array, prefix="c"):
        """Adds an initializer holding `array`; returns its name."""
        name = self.fresh(prefix)
        self.consts[name] = numpy_helper.from_array(np.asarray(array), name)
        return name

    def ints(self, values, dtype=np.int64):
        """An initializer holding the 1-D integer list `values`."""
        return self.const(np.array(values, dtype=dtype))

    def random_array(self, shape, dtype=np.float32, kind="any"):
        """Random data: normal floats ('any'), floats in [0.5, 2] ('pos'),
        floats with |x| in [0.5, 2] ('nonzero'), small integers, bools."""
        shape = tuple(int(d) for d in shape)
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return self.np_rng.random(shape) < 0.5
        if dtype.kind in "iu":
            lo = 1 if kind in ("pos", "nonzero") else (0 if dtype.kind == "u"
                                                       else -5)
            a = self.np_rng.integers(lo, 6, shape).astype(dtype)
            if kind == "nonzero" and dtype.kind == "i":
                a = a * self.np_rng.choice(np.array([-1, 1], dtype), shape)
            return a
        if kind == "pos":
            a = self.np_rng.uniform(0.5, 2.0, shape)
        elif kind == "nonzero":
            a = self.np_rng.uniform(0.5, 2.0, shape) * self.np_rng.choice(
                [-1.0, 1.0], shape)
        else:
            a = self.np_rng.standard_normal(shape)
        return a.astype(dtype)

    def weight(self, shape, dtype=np.float32, kind="any"):
        """An initializer of random data (see random_array)."""
        return self.const(self.random_array(shape, dtype, kind), "w")

    def pick(self, pred=lambda v: True):
        """A random non-empty graph input or node output satisfying `pred`,
        favouring unused and recent values; raises Reject if there is none.
        (Empty tensors, from rare empty slices, are only graph outputs.)"""
        cands = [(i, v) for i, v in enumerate(self.values)
                 if v.array.size and pred(v)]
        if not cands:
            raise Reject("no operand")
        n = len(self.values)
        weights = [(4.0 if self.uses[v.name] == 0 else 1.0) * (1 + i / n)
                   for i, v in cands]
        return self.rng.choices([v for _, v in cands], weights)[0]

    def partner(self, a, kind="any", pred=lambda v: True):
        """The name of a second operand for `a` of its dtype whose shape
        broadcasts with a's: an existing value satisfying `pred` (40% of the
        time, when there is one) or a new initializer of `kind` data."""
        def fits(v):
            if v.array.dtype != a.array.dtype or not pred(v):
                return False
            try:
                out = np.broadcast_shapes(v.shape, a.shape)
            except ValueError:
                return False
            return int(np.prod(out)) <= MAX_ELEMENTS
        if self.rng.random() < 0.4:
            try:
                return self.pick(fits).name
            except Reject:
                pass
        return self.weight(self.broadcast_shape(a.shape), a.array.dtype, kind)

    def broadcast_shape(self, shape):
        """A random shape that numpy-broadcasts with `shape`: dims set to 1,
        size-1 dims widened, leading dims dropped or added."""
        out = []
        for d in shape:
            r = self.rng.random()
            if r < 0.3:
                out.append(1)
            elif d == 1 and r < 0.45:
                out.append(self.rng.choice((2, 3, 4)))
            else:
                out.append(d)
        if out and self.rng.random() < 0.3:
            out = out[self.rng.randint(1, len(out)):]
        elif self.rng.random() < 0.1:
            out.insert(0, self.rng.choice((1, 2)))
        return tuple(out)

    def margin(self, *values):
        """Relative distance to a discontinuity that rounding noise cannot
        cross: larger downstream of float16/bfloat16 roundings."""
        return 1e-2 if any(v.loose for v in values) else 1e-4

    def clear_of(self, x, points, *values):
        """Whether every element of x is farther than the noise margin from
        the discontinuities `points(x)` (an array of the nearest ones)."""
        x = x.astype(np.float64)
        return bool(np.all(np.abs(x - points(x)) >
                           self.margin(*values) * (1 + np.abs(x))))

    # -- graph inputs and nodes ---------------------------------------------

    def add_input(self, array):
        v = Value(self.fresh("in"), array)
        self.inputs.append(v)
        self._add_value(v)
        return v

    def _add_value(self, v):
        self.values.append(v)
        self.by_name[v.name] = v

    def emit(self, op_type, inputs, attrs=None, outputs=1, allow_empty=False):
        """Adds one node; returns its output Values."""
        names = [self.fresh(op_type.lower()[:8] + "_") for _ in range(outputs)]
        node = helper.make_node(op_type, inputs, names,
                                name=self.fresh(f"n_{op_type}_"),
                                **(attrs or {}))
        return self.emit_nodes([node], names, allow_empty)

    def emit_nodes(self, nodes, keep, allow_empty=False):
        """Adds `nodes` after running them with onnxruntime; the outputs
        named in `keep` become Values later nodes may use. Raises Reject if
        they do not run, exceed the node budget or produce empty (unless
        allowed), huge or non-finite tensors."""
        if len(self.nodes) + len(nodes) > MAX_NODES:
            raise Reject("node budget")
        arrays = self._run_fragment(nodes, keep)
        for a in arrays:
            if a.size > MAX_ELEMENTS or (a.size == 0 and not allow_empty):
                raise Reject("size")
            if a.dtype.kind == "f" and not (
                    np.all(np.isfinite(a)) and np.all(np.abs(a) <= MAX_FLOAT)):
                raise Reject("non-finite or huge")
            if a.dtype.kind in "iu" and a.size and np.abs(
                    a.astype(np.int64)).max() > MAX_INT:
                raise Reject("huge integers")
        used = [i for n in nodes for i in n.input if i in self.by_name]
        loose = any(self.by_name[i].loose for i in used) or any(
            n.op_type == "Cast" and helper.get_attribute_value(n.attribute[0])
            in (TensorProto.FLOAT16, TensorProto.BFLOAT16) for n in nodes) or \
            any(a.dtype == np.float16 for a in arrays)
        self.nodes += nodes
        self.uses.update(used)
        out = [Value(k, a, loose) for k, a in zip(keep, arrays)]
        for v in out:
            self._add_value(v)
        return out

    def _run_fragment(self, nodes, keep):
        produced = {o for n in nodes for o in n.output}
        inputs, inits, feeds = [], [], {}
        for name in dict.fromkeys(i for n in nodes for i in n.input):
            if not name or name in produced:
                continue
            if name in self.by_name:
                feeds[name] = self.by_name[name].array
                inputs.append(value_info(name, feeds[name]))
            else:
                inits.append(self.consts[name])
        graph = helper.make_graph(
            nodes, "fragment", inputs,
            [helper.make_value_info(k, onnx.TypeProto()) for k in keep], inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", self.opset)],
            ir_version=ir_version(self.opset))
        try:
            inferred = onnx.shape_inference.infer_shapes(model,
                                                         strict_mode=True)
            arrays = session(model).run(keep, feeds)
        except Exception as e:  # onnx or onnxruntime refuses the node
            raise Reject(str(e)) from e
        for vi, a in zip(inferred.graph.output, arrays):
            dims = vi.type.tensor_type.shape.dim
            if any(d.HasField("dim_value") and d.dim_value != n
                   for d, n in zip(dims, a.shape)) or len(dims) != a.ndim:
                raise Reject("onnx and onnxruntime disagree on the shape")
        return arrays

    def model(self):
        """The graph as a model: every unused node output is a graph output,
        and sometimes a used one too."""
        used_inputs = [v for v in self.inputs if self.uses[v.name]]
        results = [v for v in self.values
                   if v not in self.inputs and not self.uses[v.name]]
        consumed = [v for v in self.values
                    if v not in self.inputs and self.uses[v.name]]
        if consumed and self.rng.random() < 0.3:
            results.append(self.rng.choice(consumed))
        graph = helper.make_graph(
            self.nodes, "fuzz",
            [value_info(v.name, v.array) for v in used_inputs],
            [value_info(v.name, v.array) for v in results],
            [t for name, t in self.consts.items()
             if any(name in n.input for n in self.nodes)])
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", self.opset)],
            ir_version=ir_version(self.opset), producer_name="dnnc_fuzz")
        return model, {v.name: v.array for v in used_inputs}


# ---------------------------------------------------------------------------
# Op generators: OPS maps each op type to its generator; a generator picks
# operands with `g.pick`, adds constants and calls `g.emit`, or raises Reject.
# ---------------------------------------------------------------------------

def choose_axis(g, rank):
    """A random axis of a tensor of `rank`, as a negative index 40% of the
    time."""
    a = g.rng.randrange(rank)
    return a - rank if g.rng.random() < 0.4 else a


def unary(pred=floating, domain=None, attrs=None):
    """An elementwise op of one operand satisfying `pred` and `domain(g, v)`,
    with attributes `attrs(g)`."""
    def gen(g, op):
        v = g.pick(lambda v: pred(v) and (domain is None or domain(g, v)))
        g.emit(op, [v.name], attrs(g) if attrs else None)
    return gen


def positive(minimum):
    return lambda g, v: bool(np.all(v.array > minimum))


def off_integers(g, v):
    return g.clear_of(v.array, np.round, v)


def off_zero(g, v):
    return g.clear_of(v.array, np.zeros_like, v)


def small(limit):
    return lambda g, v: bool(np.all(v.array < limit))


def within(limit):
    return lambda g, v: bool(np.all(np.abs(v.array) < limit))


def off_half_integers(g, v):
    return g.clear_of(v.array, lambda x: np.floor(x) + 0.5, v)


def gen_shrink(g, op):
    """Shrink of floats clear of the jumps at +-lambd, or of integers."""
    lambd = g.rng.choice((0.5, 1.0, 1.5))
    bias = g.rng.choice((0.0, 0.5, 1.5))
    v = g.pick(lambda v: numeric(v) and (not floating(v) or g.clear_of(
        v.array, lambda x: np.where(x < 0, -lambd, lambd), v)))
    g.emit(op, [v.name], {"lambd": lambd, "bias": bias})


def operand_array(g, name):
    """The value of a graph value or initializer called `name`."""
    if name in g.by_name:
        return g.by_name[name].array
    return numpy_helper.to_array(g.consts[name])


def gen_mod(g, op):
    """Mod of integers (fmod 0 or 1, divisors nonzero) or of floats (fmod 1,
    quotients clear of integers, where fmod jumps)."""
    a = g.pick(numeric)
    b = g.partner(a, "nonzero", lambda v: bool(np.all(
        np.abs(v.array) >= (0.25 if v.kind == "f" else 1))))
    if a.kind == "f":
        q = a.array.astype(np.float64) / operand_array(g, b).astype(np.float64)
        if not g.clear_of(q, np.round, a):
            raise Reject("quotient near an integer")
        fmod = 1
    else:
        fmod = g.rng.randint(0, 1)
    g.emit(op, [a.name, b], {"fmod": fmod})


def gen_bit_shift(g, op):
    """BitShift of uint8 values (cast from other small integers, modulo 256,
    when the graph has none) by constant amounts."""
    v = g.pick(lambda v: integer(v) and (v.array.dtype == np.uint8 or (
        np.abs(v.array.astype(np.int64)).max() <= 255)))
    direction = g.rng.choice(("LEFT", "RIGHT"))
    amounts = g.const(g.np_rng.integers(0, 4 if direction == "LEFT" else 8,
                                        g.broadcast_shape(v.shape))
                      .astype(np.uint8))
    if v.array.dtype == np.uint8:
        g.emit(op, [v.name, amounts], {"direction": direction})
        return
    mid, out = g.fresh("u8_"), g.fresh("bitshif_")
    g.emit_nodes([
        helper.make_node("Cast", [v.name], [mid], name=g.fresh("n_Cast_"),
                         to=TensorProto.UINT8),
        helper.make_node(op, [mid, amounts], [out], name=g.fresh("n_" + op),
                         direction=direction)], [out])


def gen_cast_like(g, op):
    """CastLike to the type of another value, where the cast is exact."""
    v = g.pick()
    like = g.pick(lambda w: w.name != v.name and castable(g, v,
                                                          w.array.dtype))
    g.emit(op, [v.name, like.name])


def gen_thresholded_relu(g, op):
    alpha = g.rng.choice((0.0, 0.5, 1.0))
    v = g.pick(lambda v: floating(v) and g.clear_of(
        v.array, lambda x: np.full_like(x, alpha), v))
    g.emit(op, [v.name], {"alpha": alpha})


def binary(pred=numeric, divisor=False):
    """A broadcasting binary op; with `divisor` the second operand is away
    from zero (|x| >= 0.25, integers nonzero)."""
    def ok_divisor(v):
        a = v.array
        return bool(np.all(np.abs(a) >= (0.25 if v.kind == "f" else 1)))

    def gen(g, op):
        a = g.pick(pred)
        b = g.partner(a, "nonzero" if divisor else "any",
                      ok_divisor if divisor else (lambda v: True))
        g.emit(op, [a.name, b] if divisor or g.rng.random() < 0.7
               else [b, a.name])
    return gen


def gen_pow(g, op):
    """Pow: a positive base with a fractional exponent, or any base with an
    integral exponent (float or integer typed)."""
    if g.rng.random() < 0.5:
        base = g.pick(lambda v: floating(v) and np.all(v.array > 0.1))
        exponent = g.const(np.round(g.np_rng.uniform(-2, 2.5, g.broadcast_shape(
            base.shape)), 1).astype(base.array.dtype))
    else:
        base = g.pick(lambda v: numeric(v) and v.array.dtype != np.uint8 and
                      np.all(np.abs(v.array) < 50))
        dtype = g.rng.choice((base.array.dtype, np.int64, np.int32))
        exponent = g.const(g.np_rng.integers(0 if base.kind != "f" else -1, 4,
                                             g.broadcast_shape(base.shape))
                           .astype(dtype))
    g.emit(op, [base.name, exponent])


def logical(g, op):
    a = g.pick(boolean)
    g.emit(op, [a.name, g.partner(a)])


def compare_op(g, op):
    """A comparison; float operands only where no pair of elements is
    within rounding noise of each other (Equal: integers and bools only)."""
    ok = (lambda v: integer(v) or boolean(v)) if op == "Equal" else numeric
    a = g.pick(ok)
    b_name = g.partner(a, pred=ok)
    b = g.by_name.get(b_name) or Value(
        b_name, numpy_helper.to_array(g.consts[b_name]))
    if a.kind == "f":
        x, y = np.broadcast_arrays(a.array.astype(np.float64),
                                   b.array.astype(np.float64))
        if not np.all(np.abs(x - y) > g.margin(a, b) *
                      (1 + np.maximum(np.abs(x), np.abs(y)))):
            raise Reject("operands too close")
    g.emit(op, [a.name, b_name])


def gen_where(g, op):
    x = g.pick()
    y = g.partner(x)
    try:
        cond = g.pick(lambda v: boolean(v) and broadcasts(v.shape, x.shape))
        cond_name = cond.name
    except Reject:
        cond_name = g.weight(g.broadcast_shape(x.shape), np.bool_)
    g.emit(op, [cond_name, x.name, y])


def broadcasts(*shapes):
    try:
        return int(np.prod(np.broadcast_shapes(*shapes))) <= MAX_ELEMENTS
    except ValueError:
        return False


def variadic(pred=numeric):
    """Sum/Mean/Max/Min of one to three broadcasting operands."""
    def gen(g, op):
        a = g.pick(pred)
        others = [g.partner(a) for _ in range(g.rng.choice((0, 1, 1, 2)))]
        g.emit(op, [a.name] + others)
    return gen


def gen_prelu(g, op):
    x = g.pick(floating)
    if x.rank >= 3 and g.rng.random() < 0.5:
        shape = (x.shape[1],) + (1,) * (x.rank - 2)
    else:
        shape = x.shape[g.rng.randint(0, x.rank):]
        shape = tuple(d if g.rng.random() < 0.7 else 1 for d in shape)
    slope = g.const(g.np_rng.uniform(-0.5, 0.5, shape).astype(x.array.dtype))
    g.emit(op, [x.name, slope])


def gen_clip(g, op):
    x = g.pick(numeric)
    lo, hi = sorted(g.random_array((2,), x.array.dtype))
    inputs = [x.name, g.const(lo) if g.rng.random() < 0.7 else "",
              g.const(hi) if g.rng.random() < 0.7 else ""]
    while inputs[-1] == "":
        inputs.pop()
    g.emit(op, inputs)


CAST_TARGETS = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def castable(g, v, dtype):
    """Whether casting v to dtype is exact enough to compare: float to
    integer only clear of integers and in range, float to bool clear of 0,
    integer narrowing in range."""
    a = v.array
    if dtype == np.bool_:
        return v.kind != "f" or off_zero(g, v)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if a.size and not (info.min <= float(a.min()) and
                           float(a.max()) <= info.max):
            return False
        return v.kind != "f" or off_integers(g, v)
    return True


def gen_cast(g, op):
    """Cast to any type dnnc imports; bfloat16 as a round trip (numpy has no
    bfloat16), float16 kept so later ops may use it."""
    v = g.pick()
    targets = [t for t in CAST_TARGETS if castable(g, v, t)]
    if v.kind == "f" and g.rng.random() < 0.15:
        mid, out = g.fresh("bf16_"), g.fresh("cast_")
        g.emit_nodes([
            helper.make_node("Cast", [v.name], [mid], name=g.fresh("n_Cast_"),
                             to=TensorProto.BFLOAT16),
            helper.make_node("Cast", [mid], [out], name=g.fresh("n_Cast_"),
                             to=CAST_TARGETS[v.array.dtype])], [out])
        return
    g.emit(op, [v.name], {"to": CAST_TARGETS[g.rng.choice(targets)]})


def gen_identity(g, op):
    g.emit(op, [g.pick().name])


def gen_dropout(g, op):
    """Dropout in inference: no ratio, a ratio, or training_mode = false;
    sometimes with its mask output."""
    x = g.pick(floating)
    inputs = [x.name]
    form = g.rng.randrange(3)
    if form >= 1:
        inputs.append(g.const(np.array(0.3, x.array.dtype)))
    if form == 2:
        inputs.append(g.const(np.array(False)))
    g.emit(op, inputs, {"seed": g.rng.randrange(100)},
           outputs=g.rng.choice((1, 2)))


def gen_constant(g, op):
    form = g.rng.choice(("value", "value", "value_float", "value_floats",
                         "value_int", "value_ints"))
    if form == "value":
        dtype = g.rng.choice((np.float32, np.float32, np.int64, np.int32))
        shape = tuple(g.rng.choice(DIMS) for _ in range(g.rng.randint(0, 3)))
        value = numpy_helper.from_array(g.random_array(shape, dtype))
    elif form == "value_float":
        value = float(np.float32(g.np_rng.standard_normal()))
    elif form == "value_floats":
        value = [float(x) for x in g.random_array((g.rng.randint(1, 4),))]
    elif form == "value_int":
        value = g.rng.randint(-5, 5)
    else:
        value = [g.rng.randint(-5, 5) for _ in range(g.rng.randint(1, 4))]
    g.emit(op, [], {form: value})


def gen_shape(g, op):
    x = g.pick()
    attrs = {}
    if g.rng.random() < 0.4:
        attrs["start"] = g.rng.randint(-x.rank - 1, x.rank)
    if g.rng.random() < 0.4:
        attrs["end"] = g.rng.randint(-x.rank, x.rank + 1)
    g.emit(op, [x.name], attrs)


def gen_size(g, op):
    g.emit(op, [g.pick().name])


def gen_constant_of_shape(g, op):
    shape = g.ints([g.rng.choice(DIMS) for _ in range(g.rng.randint(0, 3))])
    attrs = {}
    if g.rng.random() < 0.7:
        dtype = g.rng.choice((np.float32, np.int64, np.int32))
        attrs["value"] = numpy_helper.from_array(g.random_array((1,), dtype))
    g.emit(op, [shape], attrs)


def gen_range(g, op):
    dtype = g.rng.choice((np.float32, np.int64, np.int32))
    start = g.rng.randint(-4, 4)
    delta = g.rng.choice((1, 2, 3, -1, -2)) if dtype != np.float32 else \
        g.rng.choice((0.5, 1.5, -0.75, 2.0))
    limit = start + delta * g.rng.randint(1, 8)
    g.emit(op, [g.const(np.array(v, dtype)) for v in (start, limit, delta)])


def random_factors(g, total, rank):
    """A random shape of `rank` dims with `total` elements."""
    dims = []
    for _ in range(rank - 1):
        divisors = [d for d in range(1, min(total, 8) + 1) if total % d == 0]
        dims.append(g.rng.choice(divisors))
        total //= dims[-1]
    return dims + [total]


def gen_reshape(g, op):
    """Reshape to a random factorisation, with 0 (copy) and -1 entries."""
    x = g.pick()
    dims = random_factors(g, x.array.size, g.rng.randint(1, 4))
    spec = [0 if i < x.rank and d == x.shape[i] and g.rng.random() < 0.3
            else d for i, d in enumerate(dims)]
    if g.rng.random() < 0.5:
        spec[g.rng.randrange(len(spec))] = -1
    g.emit(op, [x.name, g.ints(spec)])


def gen_flatten(g, op):
    x = g.pick()
    g.emit(op, [x.name], {"axis": g.rng.randint(-x.rank, x.rank)})


def gen_squeeze(g, op):
    x = g.pick(lambda v: 1 in v.shape)
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    axes = g.rng.sample(ones, g.rng.randint(1, len(ones)))
    axes = [a - x.rank if g.rng.random() < 0.4 else a for a in axes]
    g.emit(op, [x.name] + ([g.ints(axes)] if g.rng.random() < 0.8 else []))


def gen_unsqueeze(g, op):
    x = g.pick(lambda v: v.rank < 5)
    out_rank = x.rank + g.rng.choice((1, 1, 2))
    axes = g.rng.sample(range(out_rank), out_rank - x.rank)
    axes = [a - out_rank if g.rng.random() < 0.4 else a for a in axes]
    g.emit(op, [x.name, g.ints(axes)])


def gen_transpose(g, op):
    x = g.pick(lambda v: v.rank >= 1)
    perm = list(range(x.rank))
    g.rng.shuffle(perm)
    g.emit(op, [x.name], {"perm": perm} if g.rng.random() < 0.8 else None)


def gen_concat(g, op):
    """Concat of 2-3 pieces: the value itself again, a compatible value or
    a new constant of another extent along the axis."""
    x = g.pick(lambda v: v.rank >= 1)
    axis = choose_axis(g, x.rank)
    a = axis % x.rank

    def compatible(v):
        return (v.array.dtype == x.array.dtype and v.rank == x.rank and
                all(d == e for i, (d, e) in enumerate(zip(v.shape, x.shape))
                    if i != a))
    pieces = [x.name]
    for _ in range(g.rng.choice((1, 1, 2))):
        r = g.rng.random()
        if r < 0.25:
            pieces.append(x.name)
        elif r < 0.5:
            pieces.append(g.pick(compatible).name)
        else:
            shape = list(x.shape)
            shape[a] = g.rng.choice((1, 2, 3))
            pieces.append(g.weight(shape, x.array.dtype))
    g.rng.shuffle(pieces)
    g.emit(op, pieces, {"axis": axis})


def gen_split(g, op):
    """Split into 2-3 parts: explicit sizes, equal parts, or (opset 18)
    num_outputs with a smaller last part."""
    x = g.pick(lambda v: any(d >= 2 for d in v.shape))
    axis = g.rng.choice([i for i, d in enumerate(x.shape) if d >= 2])
    extent = x.shape[axis]
    n = g.rng.randint(2, min(3, extent))
    attrs = {"axis": axis - x.rank if g.rng.random() < 0.4 else axis}
    inputs = [x.name]
    form = g.rng.random()
    if form < 0.5:
        cuts = sorted(g.rng.sample(range(1, extent), n - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [extent])]
        inputs.append(g.ints(sizes))
    elif g.opset >= 18:
        attrs["num_outputs"] = n
    elif extent % n:
        raise Reject("uneven split before opset 18")
    g.emit(op, inputs, attrs, outputs=n)


def slice_bounds(g, d, step):
    """Random start and end for an axis of extent d (negative indices and
    INT64 extremes included)."""
    if step > 0:
        start = g.rng.choice((0, 0, 1, -1, -d, d // 2, -d - 3))
        end = g.rng.choice((d, INT64_MAX, -1, d // 2 + 1, d + 5, INT64_MIN))
    else:
        start = g.rng.choice((-1, d - 1, INT64_MAX, d // 2, d + 3))
        end = g.rng.choice((INT64_MIN, -d - 1, 0, -d - 5, d // 2 - 1))
    return start, end


def gen_slice(g, op):
    """Slice some axes (any order, negative ones) with steps of either sign;
    axes and steps inputs sometimes omitted. Empty results are rare."""
    x = g.pick(lambda v: v.rank >= 1)
    axes = g.rng.sample(range(x.rank), g.rng.randint(1, x.rank))
    steps = [g.rng.choice((1, 1, 1, 2, 3, -1, -1, -2)) for _ in axes]
    bounds = [slice_bounds(g, x.shape[a], s) for a, s in zip(axes, steps)]
    inputs = [x.name, g.ints([b[0] for b in bounds]),
              g.ints([b[1] for b in bounds])]
    omit_axes = axes == list(range(len(axes))) and g.rng.random() < 0.5
    inputs.append("" if omit_axes else g.ints(
        [a - x.rank if g.rng.random() < 0.4 else a for a in axes]))
    if any(s != 1 for s in steps) or g.rng.random() < 0.5:
        inputs.append(g.ints(steps))
    while inputs[-1] == "":
        inputs.pop()
    g.emit(op, inputs, allow_empty=g.rng.random() < 0.1)


def gen_gather(g, op):
    x = g.pick(lambda v: v.rank >= 1 and all(d >= 1 for d in v.shape))
    axis = choose_axis(g, x.rank)
    extent = x.shape[axis]
    shape = tuple(g.rng.choice((1, 2, 3)) for _ in range(g.rng.randint(0, 2)))
    dtype = g.rng.choice((np.int64, np.int32))
    indices = g.np_rng.integers(-extent, extent, shape).astype(dtype)
    g.emit(op, [x.name, g.const(indices)], {"axis": axis})


def gen_expand(g, op):
    x = g.pick()
    target = []
    for d in x.shape:
        r = g.rng.random()
        target.append(g.rng.choice((2, 3, 4)) if d == 1 and r < 0.5 else
                      1 if r < 0.2 else d)
    if g.rng.random() < 0.3:
        target.insert(0, g.rng.choice((1, 2, 3)))
    g.emit(op, [x.name, g.ints(target)])


def gen_tile(g, op):
    x = g.pick()
    g.emit(op, [x.name, g.ints([g.rng.choice((1, 1, 2, 3))
                                for _ in range(x.rank)])])


def gen_pad(g, op):
    """Pad in every mode the opset has (constant with negative pads too,
    edge, reflect, wrap from 19), all axes or (opset 18) an axes input."""
    x = g.pick(lambda v: v.rank >= 1 and all(d >= 1 for d in v.shape))
    modes = ["constant", "edge", "reflect"] + (["wrap"] if g.opset >= 19
                                               else [])
    mode = g.rng.choice(modes)
    axes = list(range(x.rank))
    use_axes = g.opset >= 18 and g.rng.random() < 0.4
    if use_axes:
        axes = g.rng.sample(axes, g.rng.randint(1, x.rank))

    def amount(d):
        if mode == "reflect":
            return g.rng.randint(0, min(2, d - 1))
        if mode == "wrap":
            return g.rng.randint(0, min(2, d))
        if mode == "constant" and d > 1 and g.rng.random() < 0.15:
            return -1
        return g.rng.randint(0, 2)
    pads = [amount(x.shape[a]) for a in axes] + \
        [amount(x.shape[a]) for a in axes]
    inputs = [x.name, g.ints(pads)]
    if mode == "constant" and g.rng.random() < 0.4:
        inputs.append(g.const(g.random_array((), x.array.dtype)))
    if use_axes:
        inputs += [""] * (3 - len(inputs))
        inputs.append(g.ints([a - x.rank if g.rng.random() < 0.4 else a
                              for a in axes]))
    g.emit(op, inputs, {"mode": mode})


def gen_depth_to_space(g, op):
    x = g.pick(lambda v: floating(v) and v.rank == 4 and v.shape[1] % 4 == 0)
    g.emit(op, [x.name], {"blocksize": 2,
                          "mode": g.rng.choice(("DCR", "CRD"))})


def gen_space_to_depth(g, op):
    x = g.pick(lambda v: floating(v) and v.rank == 4 and
               v.shape[2] % 2 == 0 and v.shape[3] % 2 == 0)
    g.emit(op, [x.name], {"blocksize": 2})


def gen_trilu(g, op):
    x = g.pick(lambda v: v.rank >= 2)
    inputs = [x.name]
    if g.rng.random() < 0.6:
        inputs.append(g.const(np.array(g.rng.randint(-2, 2), np.int64)))
    g.emit(op, inputs, {"upper": g.rng.randint(0, 1)})


def scaled_weight(g, shape, fan_in, dtype):
    """A weight scaled by 1/sqrt(fan_in), so products keep their size."""
    return g.const((g.random_array(shape) / np.sqrt(max(fan_in, 1)))
                   .astype(dtype), "w")


def gen_matmul(g, op):
    """MatMul with a weight or an existing value: vectors, matrices and
    broadcast batch dimensions."""
    a = g.pick(lambda v: v.kind == "f" and v.rank >= 1)
    k, n = a.shape[-1], g.rng.choice(DIMS)
    if a.rank == 1:
        shape = g.rng.choice(((k,), (k, n), (2, k, n)))
    else:
        batch = g.broadcast_shape(a.shape[:-2]) if g.rng.random() < 0.3 else ()
        shape = g.rng.choice((batch + (k, n), (k, n), (k,)))

    def fits(v):
        return v.array.dtype == a.array.dtype and v.shape == tuple(shape)
    try:
        b = g.pick(fits).name if g.rng.random() < 0.5 else None
    except Reject:
        b = None
    b = b or scaled_weight(g, shape, k, a.array.dtype)
    g.emit(op, [a.name, b])


def gen_gemm(g, op):
    a = g.pick(lambda v: v.kind == "f" and v.rank == 2)
    trans_a, trans_b = g.rng.randint(0, 1), g.rng.randint(0, 1)
    m, k = a.shape[::-1] if trans_a else a.shape
    n = g.rng.choice(DIMS)
    inputs = [a.name, scaled_weight(g, (n, k) if trans_b else (k, n), k,
                                    a.array.dtype)]
    if g.rng.random() < 0.7:
        c_shape = g.rng.choice(((), (n,), (1, n), (m, 1), (m, n)))
        inputs.append(g.weight(c_shape, a.array.dtype))
    attrs = {"transA": trans_a, "transB": trans_b}
    if g.rng.random() < 0.5:
        attrs["alpha"] = g.rng.choice((0.5, 2.0, -1.0))
    if g.rng.random() < 0.5:
        attrs["beta"] = g.rng.choice((0.0, 0.5, 2.0))
    g.emit(op, inputs, attrs)


def gen_einsum(g, op):
    """Einsum: a permutation, a partial sum, a contraction with a weight,
    an elementwise product, or a contraction over an ellipsis with
    upper-case labels, with explicit or implicit output."""
    x = g.pick(lambda v: v.kind == "f" and 1 <= v.rank <= 4)
    letters = "abcd"[:x.rank]
    form = g.rng.randrange(5)
    if form == 0:
        out = "".join(g.rng.sample(letters, len(letters)))
        g.emit(op, [x.name], {"equation": f"{letters}->{out}"})
    elif form == 1:
        out = "".join(c for c in letters if g.rng.random() < 0.5)
        g.emit(op, [x.name], {"equation": f"{letters}->{out}"})
    elif form == 2:
        n = g.rng.choice(DIMS)
        w = scaled_weight(g, (x.shape[-1], n), x.shape[-1], x.array.dtype)
        eq = f"{letters},{letters[-1]}z"
        if g.rng.random() < 0.6:
            eq += f"->{letters[:-1]}z"
        g.emit(op, [x.name, w], {"equation": eq})
    elif form == 3:
        w = g.weight(x.shape, x.array.dtype)
        g.emit(op, [x.name, w], {"equation": f"{letters},{letters}->{letters}"})
    else:
        # Ellipsis over the leading dimensions (a weight broadcasting over
        # them), upper-case labels, explicit or implicit output.
        last = g.rng.choice(("K", "k"))
        n = g.rng.choice(DIMS)
        lead = x.shape[:-1]  # onnx's shape inference wants equal ranks
        w_shape = tuple(d if g.rng.random() < 0.6 else 1 for d in lead) + (
            x.shape[-1], n)
        w = scaled_weight(g, w_shape, x.shape[-1], x.array.dtype)
        eq = f"...{last},...{last}N"
        if g.rng.random() < 0.5:
            eq += "->...N"
        g.emit(op, [x.name, w], {"equation": eq})


def window(g, spatial, kernel, pad_below_kernel):
    """Random strides, dilations and pads (or auto_pad) for a window."""
    attrs = {"strides": [g.rng.choice((1, 1, 2)) for _ in spatial]}
    if g.rng.random() < 0.15:
        attrs["auto_pad"] = g.rng.choice(("SAME_UPPER", "SAME_LOWER", "VALID"))
    else:
        limit = [k - 1 if pad_below_kernel else 2 for k in kernel]
        attrs["pads"] = [g.rng.randint(0, lim) for lim in limit] * 2
        if g.rng.random() < 0.5:
            attrs["pads"] = [g.rng.randint(0, lim) for lim in limit + limit]
    return attrs


def gen_conv(g, op):
    """Conv with groups (depthwise included), pads, strides, dilations,
    auto_pad and an optional bias."""
    x = g.pick(lambda v: v.array.dtype == np.float32 and v.rank in (3, 4))
    c = x.shape[1]
    group = g.rng.choice([d for d in (1, 1, 2, 3, c) if c % d == 0])
    m = group * g.rng.choice((1, 2, 3))
    kernel = [g.rng.choice((1, 2, 3)) for _ in x.shape[2:]]
    attrs = window(g, x.shape[2:], kernel, False)
    attrs["group"] = group
    if g.rng.random() < 0.3:
        attrs["dilations"] = [g.rng.choice((1, 2)) for _ in kernel]
    fan_in = c // group * int(np.prod(kernel))
    inputs = [x.name, scaled_weight(g, [m, c // group] + kernel, fan_in,
                                    np.float32)]
    if g.rng.random() < 0.6:
        inputs.append(g.weight((m,)))
    g.emit(op, inputs, attrs)


def gen_conv_transpose(g, op):
    """ConvTranspose with groups, strides, dilations, pads, output_padding
    (below the stride), output_shape or auto_pad, and an optional bias."""
    x = g.pick(lambda v: v.array.dtype == np.float32 and v.rank in (3, 4))
    c = x.shape[1]
    group = g.rng.choice([d for d in (1, 1, 2, 3, c) if c % d == 0])
    mg = g.rng.choice((1, 2, 3))
    spatial = x.shape[2:]
    kernel = [g.rng.choice((1, 2, 3)) for _ in spatial]
    strides = [g.rng.choice((1, 1, 2, 3)) for _ in spatial]
    dilations = [g.rng.choice((1, 1, 2)) for _ in spatial]
    attrs = {"group": group, "strides": strides, "dilations": dilations}
    full = [s * (d - 1) + (k - 1) * dl + 1
            for s, d, k, dl in zip(strides, spatial, kernel, dilations)]
    r = g.rng.random()
    if r < 0.15:
        attrs["auto_pad"] = g.rng.choice(("SAME_UPPER", "SAME_LOWER"))
    elif r < 0.3:
        attrs["output_shape"] = [max(1, f + g.rng.randint(-2, 1))
                                 for f in full]
    else:
        attrs["pads"] = [g.rng.randint(0, max(0, min(2, f // 2 - 1)))
                         for f in full + full]
        if g.rng.random() < 0.3:
            attrs["output_padding"] = [g.rng.randint(0, max(s, dl) - 1)
                                       for s, dl in zip(strides, dilations)]
    fan_in = c // group * int(np.prod(kernel))
    inputs = [x.name, scaled_weight(g, [c, mg] + kernel, fan_in, np.float32)]
    if g.rng.random() < 0.5:
        inputs.append(g.weight((mg * group,)))
    g.emit(op, inputs, attrs)


def gen_pool(g, op):
    """MaxPool (with dilations) or AveragePool (count_include_pad), pads
    below the kernel, ceil_mode."""
    x = g.pick(lambda v: v.array.dtype == np.float32 and v.rank in (3, 4))
    kernel = [g.rng.choice((1, 2, 2, 3)) for _ in x.shape[2:]]
    attrs = window(g, x.shape[2:], kernel, True)
    attrs["kernel_shape"] = kernel
    attrs["ceil_mode"] = g.rng.randint(0, 1)
    if op == "MaxPool" and g.rng.random() < 0.3:
        attrs["dilations"] = [g.rng.choice((1, 2)) for _ in kernel]
    if op == "AveragePool":
        attrs["count_include_pad"] = g.rng.randint(0, 1)
        # A floor-mode window reaching past the padded input (extent plus
        # pads below the kernel) with the pads counted: onnxruntime's result
        # there differs between a graph input and the same data as an
        # initializer (seed 105587), so it is no oracle for it.
        pads = attrs.get("pads")
        if attrs["count_include_pad"] and not attrs["ceil_mode"] and pads and \
                any(e + pads[i] + pads[i + len(kernel)] < k for i, (e, k) in
                    enumerate(zip(x.shape[2:], kernel))):
            attrs["count_include_pad"] = 0
    g.emit(op, [x.name], attrs)


def gen_global_pool(g, op):
    g.emit(op, [g.pick(lambda v: floating(v) and v.rank >= 3).name])


def gen_softmax(g, op):
    x = g.pick(lambda v: floating(v) and v.rank >= 1)
    g.emit(op, [x.name], {"axis": choose_axis(g, x.rank)})


def spread_enough(g, v, axes):
    """Whether every group normalized over `axes` has a spread well above
    rounding noise: a (near) constant group makes `(x - mean) /
    sqrt(var + eps)` amplify that noise by up to 1/sqrt(eps), so two correct
    implementations disagree (seeds 101092, 101565)."""
    a = v.array.astype(np.float64)
    axes = tuple(axes)
    spread = a.std(axis=axes)
    scale = 1 + np.abs(a.mean(axis=axes))
    return bool(np.all(spread > 100 * g.margin(v) * scale))


def gen_layer_norm(g, op):
    x = g.pick(lambda v: floating(v) and v.rank >= 1)
    axis = choose_axis(g, x.rank)
    if not spread_enough(g, x, range(axis % x.rank, x.rank)):
        raise Reject("near-constant normalization group")
    norm = x.shape[axis:]
    inputs = [x.name, g.weight(norm, x.array.dtype)]
    if g.rng.random() < 0.6:
        inputs.append(g.weight(norm, x.array.dtype))
    g.emit(op, inputs, {"axis": axis,
                        "epsilon": g.rng.choice((1e-5, 1e-3))},
           outputs=g.rng.choice((1, 1, 1, 3)))


def gen_mvn(g, op):
    """MeanVarianceNormalization over random axes (default 0, 2, 3 on 4-D
    inputs), groups spread above rounding noise (see spread_enough)."""
    x = g.pick(lambda v: floating(v) and v.rank >= 1)
    attrs = {}
    axes = [0, 2, 3]
    if x.rank != 4 or g.rng.random() < 0.5:
        axes = sorted(g.rng.sample(range(x.rank), g.rng.randint(1, x.rank)))
        attrs["axes"] = [a - x.rank if g.rng.random() < 0.3 else a
                         for a in axes]
    if not spread_enough(g, x, axes):
        raise Reject("near-constant normalization group")
    g.emit(op, [x.name], attrs)


def gen_eye_like(g, op):
    """EyeLike of a 2-D value, diagonal k, sometimes another dtype."""
    x = g.pick(lambda v: v.rank == 2 and v.kind in "fiu")
    attrs = {"k": g.rng.choice((0, 0, 1, -1, 2, -3))}
    if g.rng.random() < 0.4:
        attrs["dtype"] = g.rng.choice((TensorProto.FLOAT, TensorProto.INT64,
                                       TensorProto.DOUBLE))
    g.emit(op, [x.name], attrs)


def gen_batch_norm(g, op):
    x = g.pick(lambda v: floating(v) and v.rank >= 2)
    c, dtype = (x.shape[1],), x.array.dtype
    g.emit(op, [x.name, g.weight(c, dtype), g.weight(c, dtype),
                g.weight(c, dtype), g.weight(c, dtype, "pos")],
           {"epsilon": g.rng.choice((1e-5, 1e-3))})


def gen_instance_norm(g, op):
    x = g.pick(lambda v: floating(v) and v.rank >= 3 and
               spread_enough(g, v, range(2, v.rank)))
    c = (x.shape[1],)
    g.emit(op, [x.name, g.weight(c, x.array.dtype),
                g.weight(c, x.array.dtype)], {"epsilon": 1e-5})


def reduce(pred=numeric):
    """A reduction over random (negative too) axes, keepdims 0/1; axes an
    attribute, or an input from opset 18 (ReduceSum: 13), sometimes empty
    (reduce all, or nothing with noop_with_empty_axes)."""
    def gen(g, op):
        x = g.pick(lambda v: pred(v) and v.rank >= 1)
        attrs = {"keepdims": g.rng.randint(0, 1)}
        axes = None
        if g.rng.random() < 0.8:
            axes = g.rng.sample(range(x.rank), g.rng.randint(1, x.rank))
            axes = [a - x.rank if g.rng.random() < 0.4 else a for a in axes]
        inputs = [x.name]
        if g.opset >= 18 or op == "ReduceSum":
            if axes is None and g.rng.random() < 0.3:
                axes = []
                attrs["noop_with_empty_axes"] = g.rng.randint(0, 1)
            if axes is not None:
                inputs.append(g.ints(axes))
        elif axes is not None:
            attrs["axes"] = axes
        g.emit(op, inputs, attrs)
    return gen


def gen_softmax_cross_entropy(g, op):
    """SoftmaxCrossEntropyLoss over [N, C] or [N, C, D] scores, with
    optional weights and ignore_index, every reduction, log_prob output."""
    x = g.pick(lambda v: floating(v) and v.rank in (2, 3) and v.shape[1] >= 2)
    n, c = x.shape[0], x.shape[1]
    labels = g.np_rng.integers(0, c, (n,) + x.shape[2:]).astype(np.int64)
    attrs = {"reduction": g.rng.choice(("mean", "sum", "none"))}
    if g.rng.random() < 0.3:
        attrs["ignore_index"] = int(labels.flat[0])
    inputs = [x.name, g.const(labels)]
    if g.rng.random() < 0.3:
        inputs.append(g.weight((c,), x.array.dtype, "pos"))
    g.emit(op, inputs, attrs, outputs=g.rng.choice((1, 2)))


def gen_nll_loss(g, op):
    """NegativeLogLikelihoodLoss over [N, C] or [N, C, D] log-probabilities
    (a LogSoftmax of a picked value, or the value itself), with optional
    weights and ignore_index, every reduction."""
    x = g.pick(lambda v: floating(v) and v.rank in (2, 3) and v.shape[1] >= 2)
    n, c = x.shape[0], x.shape[1]
    dtype = g.rng.choice((np.int64, np.int32))
    labels = g.np_rng.integers(0, c, (n,) + x.shape[2:]).astype(dtype)
    attrs = {"reduction": g.rng.choice(("mean", "sum", "none"))}
    if g.rng.random() < 0.3:
        attrs["ignore_index"] = int(labels.flat[0]) if g.rng.random() < 0.5 \
            else -1
    inputs = [x.name, g.const(labels)]
    if g.rng.random() < 0.3:
        inputs.append(g.weight((c,), x.array.dtype, "pos"))
    g.emit(op, inputs, attrs)


def gen_arg_extreme(g, op):
    """ArgMax/ArgMin along a random axis, keepdims and select_last_index
    0/1; float inputs must not tie (within noise) with the extreme."""
    x = g.pick(lambda v: numeric(v) and v.rank >= 1)
    axis = choose_axis(g, x.rank)
    if x.kind == "f":
        a = np.sort(x.array.astype(np.float64), axis=axis)
        top = np.take(a, [-1, -2] if op == "ArgMax" else [0, 1], axis=axis) \
            if x.shape[axis] >= 2 else None
        if top is not None and not np.all(
                np.abs(np.diff(top, axis=axis)) >
                g.margin(x) * (1 + np.abs(np.take(top, [0], axis=axis)))):
            raise Reject("near tie")
    g.emit(op, [x.name], {"axis": axis, "keepdims": g.rng.randint(0, 1),
                          "select_last_index": g.rng.randint(0, 1)})


def gen_hardmax(g, op):
    """Hardmax along a random axis of a float value without near ties."""
    x = g.pick(lambda v: floating(v) and v.rank >= 1)
    axis = choose_axis(g, x.rank)
    if x.shape[axis] >= 2:
        a = np.sort(x.array.astype(np.float64), axis=axis)
        gap = np.take(a, [-1], axis=axis) - np.take(a, [-2], axis=axis)
        if not np.all(gap > g.margin(x) * (1 + np.abs(np.take(a, [-1],
                                                               axis=axis)))):
            raise Reject("near tie")
    g.emit(op, [x.name], {"axis": axis})


def gen_cumsum(g, op):
    """CumSum along a constant (sometimes negative, int32) axis, exclusive
    and reverse 0/1."""
    x = g.pick(lambda v: v.kind in "fi" and v.rank >= 1)
    axis = choose_axis(g, x.rank)
    axis_dtype = g.rng.choice((np.int64, np.int32))
    g.emit(op, [x.name, g.const(np.array(axis, axis_dtype))],
           {"exclusive": g.rng.randint(0, 1), "reverse": g.rng.randint(0, 1)})


def gen_gather_elements(g, op):
    """GatherElements along a random axis with constant (negative too)
    indices no larger than the data outside the axis."""
    x = g.pick(lambda v: v.rank >= 1 and all(d >= 1 for d in v.shape))
    axis = choose_axis(g, x.rank)
    extent = x.shape[axis]
    shape = [g.rng.randint(1, d) for d in x.shape]
    shape[axis] = g.rng.choice((1, 2, 3, 4))
    dtype = g.rng.choice((np.int64, np.int32))
    indices = g.np_rng.integers(-extent, extent, shape).astype(dtype)
    g.emit(op, [x.name, g.const(indices)], {"axis": axis})


def gen_gather_nd(g, op):
    """GatherND with batch_dims 0 or 1 and index tuples of 1 to the rest of
    the rank, constant (negative too) indices."""
    x = g.pick(lambda v: v.rank >= 1 and all(d >= 1 for d in v.shape))
    b = g.rng.choice((0, 0, 1)) if x.rank >= 2 else 0
    k = g.rng.randint(1, x.rank - b)
    lead = list(x.shape[:b]) + [g.rng.choice((1, 2, 3))
                                for _ in range(g.rng.randint(0, 2))]
    columns = [g.np_rng.integers(-x.shape[b + j], x.shape[b + j],
                                 lead + [1]) for j in range(k)]
    indices = np.concatenate(columns, axis=-1).astype(np.int64)
    g.emit(op, [x.name, g.const(indices)], {"batch_dims": b})


def gen_resize(g, op):
    """Resize of the trailing 1-2 dims (an `axes` subset from opset 18):
    nearest (every nearest_mode), linear or cubic, most coordinate modes,
    by sizes or by scales whose products with the extents are integers
    (onnxruntime and the ONNX reference differ otherwise)."""
    x = g.pick(lambda v: v.rank >= 1 and all(d >= 1 for d in v.shape) and
               v.kind in "fiu" and v.array.dtype != np.int32)
    mode = g.rng.choice(("nearest", "linear", "cubic")) if x.kind == "f" \
        else "nearest"
    resized = list(range(max(0, x.rank - g.rng.randint(1, 2)), x.rank))
    if mode == "cubic":
        # onnxruntime's cubic takes 2-D inputs or the inner 2 of 4-D ones.
        if x.rank not in (2, 4):
            raise Reject("cubic rank")
        resized = list(range(x.rank - 2, x.rank))
    coords = ["half_pixel", "asymmetric", "pytorch_half_pixel",
              "align_corners"]
    attrs = {"mode": mode,
             "coordinate_transformation_mode": g.rng.choice(coords)}
    if mode == "nearest":
        attrs["nearest_mode"] = g.rng.choice(
            ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"))
    if mode == "cubic":
        attrs["cubic_coeff_a"] = g.rng.choice((-0.75, -0.5))
        attrs["exclude_outside"] = g.rng.randint(0, 1)
    out = {a: g.rng.choice((1, 2, 3, 4, 5, 6, 8)) for a in resized}
    partial = g.opset >= 18 and g.rng.random() < 0.5
    if partial:
        attrs["axes"] = resized
    listed = resized if partial else list(range(x.rank))
    full = [out.get(a, x.shape[a]) for a in listed]
    if g.rng.random() < 0.5:
        inputs = [x.name, "", "", g.ints(full)]
    else:
        scales = np.array([f / x.shape[a] for f, a in zip(full, listed)],
                          np.float32)
        if any(np.floor(np.float64(s) * x.shape[a]) != f
               for s, f, a in zip(scales, full, listed)):
            raise Reject("scale does not give an integer extent")
        inputs = [x.name, "", g.const(scales)]
    g.emit(op, inputs, attrs)


def gen_window(g, op):
    """Hann/Hamming/BlackmanWindow of a constant size, periodic 0/1, a float
    output type."""
    size = g.rng.randint(1, 12)
    g.emit(op, [g.const(np.array(size, g.rng.choice((np.int64, np.int32))))],
           {"periodic": g.rng.randint(0, 1),
            "output_datatype": g.rng.choice((TensorProto.FLOAT,
                                             TensorProto.DOUBLE))})


def gen_one_hot(g, op):
    """OneHot of an integer value (negative indices too) or of a constant,
    at a random axis, a constant depth, [off, on] values of a numeric type."""
    depth = g.rng.randint(1, 6)
    try:
        x = g.pick(lambda v: v.kind in "iu" and v.rank <= 3)
        name, rank = x.name, x.rank
    except Reject:
        shape = tuple(g.rng.choice((1, 2, 3)) for _ in range(
            g.rng.randint(0, 2)))
        name = g.const(g.np_rng.integers(-depth, depth + 2, shape))
        rank = len(shape)
    axis = g.rng.randint(-rank - 1, rank)
    dtype = g.rng.choice((np.float32, np.int64, np.int32))
    values = g.random_array((2,), dtype)
    g.emit(op, [name, g.const(np.array(depth, np.int64)), g.const(values)],
           {"axis": axis})


def gen_compress(g, op):
    """Compress along a random axis (or the flattened input) by a constant
    condition, sometimes shorter than the axis, keeping at least one
    slice."""
    x = g.pick(lambda v: v.rank >= 1)
    if g.rng.random() < 0.7:
        axis = choose_axis(g, x.rank)
        extent, attrs = x.shape[axis], {"axis": axis}
    else:
        extent, attrs = x.array.size, {}
    cond = g.np_rng.random(g.rng.randint(1, extent)) < 0.6
    if not cond.any():
        cond[0] = True
    g.emit(op, [x.name, g.const(cond)], attrs)


def gen_reverse_sequence(g, op):
    """ReverseSequence with batch and time axes 0/1 in either order and
    constant lengths in [0, time]."""
    x = g.pick(lambda v: v.rank >= 2)
    batch_axis = g.rng.randint(0, 1)
    time_axis = 1 - batch_axis
    lens = g.np_rng.integers(0, x.shape[time_axis] + 1, x.shape[batch_axis])
    g.emit(op, [x.name, g.const(lens.astype(np.int64))],
           {"batch_axis": batch_axis, "time_axis": time_axis})


def gen_lrn(g, op):
    """LRN over the channels of a 4-D float value, an odd size."""
    x = g.pick(lambda v: v.array.dtype == np.float32 and v.rank == 4)
    g.emit(op, [x.name], {"size": g.rng.choice((1, 3, 5)),
                          "alpha": g.rng.choice((1e-4, 0.01, 0.5)),
                          "beta": g.rng.choice((0.75, 0.5)),
                          "bias": g.rng.choice((1.0, 2.0))})


def quant_params(g, x, dtype):
    """A scale and a zero point of `dtype` for `x`, per tensor or per slice
    along an axis; returns (names, attrs)."""
    attrs, shape = {}, ()
    if x.rank >= 1 and g.rng.random() < 0.4:
        axis = choose_axis(g, x.rank)
        attrs["axis"] = axis
        shape = (x.shape[axis],)
    scale = g.np_rng.uniform(0.01, 0.2, shape).astype(np.float32)
    info = np.iinfo(dtype)
    zero = g.np_rng.integers(max(info.min, -20), min(info.max, 20) + 1,
                             shape).astype(dtype)
    names = [g.const(scale)]
    if dtype != np.uint8 or g.rng.random() < 0.7:
        names.append(g.const(zero))
    return names, attrs


def gen_quantize(g, op):
    """QuantizeLinear of a float value to uint8/int8 (no value within
    rounding noise of a half step)."""
    x = g.pick(lambda v: v.array.dtype == np.float32)
    dtype = g.rng.choice((np.uint8, np.int8))
    names, attrs = quant_params(g, x, dtype)
    scale = numpy_helper.to_array(g.consts[names[0]])
    if "axis" in attrs:
        shape = [1] * x.rank
        shape[attrs["axis"]] = -1
        scale = scale.reshape(shape)
    q = x.array.astype(np.float64) / scale
    if not g.clear_of(q, lambda v: np.floor(v) + 0.5, x):
        raise Reject("near a half step")
    g.emit(op, [x.name] + names, attrs)


def gen_dequantize(g, op):
    """DequantizeLinear of a uint8/int8 value (a cast of one, or a graph
    value of that type)."""
    x = g.pick(lambda v: v.array.dtype in (np.uint8, np.int8))
    names, attrs = quant_params(g, x, x.array.dtype.type)
    g.emit(op, [x.name] + names, attrs)


def gen_dynamic_quantize(g, op):
    """DynamicQuantizeLinear of a float value whose quantized values are not
    within noise of a half step."""
    x = g.pick(lambda v: v.array.dtype == np.float32)
    a = x.array.astype(np.float64)
    hi, lo = max(0.0, a.max()), min(0.0, a.min())
    if hi - lo < 1e-3:
        raise Reject("flat")
    scale = np.float32((hi - lo) / 255)
    if not (g.clear_of(a / scale, lambda v: np.floor(v) + 0.5, x) and
            g.clear_of(np.array([-lo / scale]), lambda v: np.floor(v) + 0.5,
                       x)):
        raise Reject("near a half step")
    g.emit(op, [x.name], outputs=3)


def gen_scatter_elements(g, op):
    """ScatterElements (and Scatter-9, 10) along a random axis with constant
    indices (negative too; duplicates only with a reduction) and updates of
    their shape (a constant, or an existing value of that shape)."""
    x = g.pick(lambda v: v.kind in "fi" and v.rank >= 1 and
               all(d >= 1 for d in v.shape))
    axis = choose_axis(g, x.rank)
    shape = [g.rng.randint(1, d) for d in x.shape]
    extent = x.shape[axis]
    shape[axis] = g.rng.randint(1, extent)
    reduction = "none"
    if op == "ScatterElements" and g.opset >= 18 and g.rng.random() < 0.5:
        reduction = g.rng.choice(("add", "mul", "max", "min"))
    if reduction == "none":
        # Distinct positions along the axis for each line.
        moved = np.moveaxis(np.zeros(shape, np.int64), axis, -1)
        for line in np.ndindex(moved.shape[:-1]):
            moved[line] = g.np_rng.permutation(extent)[:shape[axis]]
        indices = np.moveaxis(moved, -1, axis)
    else:
        indices = g.np_rng.integers(0, extent, shape)
    indices = np.where(g.np_rng.random(shape) < 0.3, indices - extent, indices)
    attrs = {"axis": axis}
    if reduction != "none":
        attrs["reduction"] = reduction
    updates = g.weight(shape, x.array.dtype)
    g.emit(op, [x.name, g.const(indices.astype(np.int64)), updates], attrs)


def gen_scatter_nd(g, op):
    """ScatterND with constant index tuples of 1 to rank elements (distinct
    without a reduction) and updates of the addressed slices."""
    x = g.pick(lambda v: v.kind in "fi" and v.rank >= 1 and
               all(d >= 1 for d in v.shape))
    k = g.rng.randint(1, x.rank)
    space = int(np.prod(x.shape[:k]))
    count = g.rng.randint(1, min(space, 4))
    reduction = "none"
    if g.opset >= 18 and g.rng.random() < 0.5:
        reduction = g.rng.choice(("add", "mul", "max", "min"))
    flat = (g.np_rng.permutation(space)[:count] if reduction == "none"
            else g.np_rng.integers(0, space, count))
    tuples = np.stack(np.unravel_index(flat, x.shape[:k]), axis=-1)
    tuples = np.where(g.np_rng.random(tuples.shape) < 0.3,
                      tuples - np.array(x.shape[:k]), tuples)
    updates = g.weight((count,) + x.shape[k:], x.array.dtype)
    attrs = {"reduction": reduction} if reduction != "none" else {}
    g.emit(op, [x.name, g.const(tuples.astype(np.int64)), updates], attrs)


def gen_top_k(g, op):
    """TopK along a random axis, a constant k in [0, extent], largest and
    sorted; float inputs without near ties among the kept elements."""
    x = g.pick(lambda v: v.kind in "fi" and v.rank >= 1 and
               all(d >= 1 for d in v.shape))
    axis = choose_axis(g, x.rank)
    if x.kind == "f":
        a = np.sort(x.array.astype(np.float64), axis=axis)
        gaps = np.abs(np.diff(a, axis=axis))
        if gaps.size and not np.all((gaps == 0) | (gaps > g.margin(x) * (
                1 + np.abs(np.take(a, range(1, a.shape[axis]), axis=axis))))):
            raise Reject("near tie")
    k = g.rng.randint(0, x.shape[axis])
    g.emit(op, [x.name, g.const(np.array([k], np.int64))],
           {"axis": axis, "largest": g.rng.randint(0, 1)}, outputs=2,
           allow_empty=True)


def gen_rms_norm(g, op):
    """RMSNormalization over the trailing dims from a random axis, a scale
    of the normalized shape (or broadcasting to it), epsilon."""
    x = g.pick(lambda v: floating(v) and v.rank >= 1)
    axis = choose_axis(g, x.rank)
    shape = list(x.shape[axis:])
    if g.rng.random() < 0.3:
        shape = shape[g.rng.randint(0, len(shape) - 1):]
    # onnx 1.23's shape inference rejects negative axes here.
    attrs = {"axis": axis, "epsilon": g.rng.choice((1e-5, 1e-3))}
    g.emit(op, [x.name, g.weight(shape, x.array.dtype)], attrs)


@dataclasses.dataclass(frozen=True)
class OpSpec:
    """How to generate one op type: `gen(g, op_type)` adds a node or raises
    Reject; `since` is the lowest opset it is generated for."""
    gen: Callable
    since: int = 1


def _attrs(**choices):
    """Attributes drawn from `choices` (name -> tuple of values)."""
    return lambda g: {k: g.rng.choice(v) for k, v in choices.items()}


OPS = {
    # Elementwise unary.
    "Relu": OpSpec(unary()),
    "Tanh": OpSpec(unary()),
    "Sigmoid": OpSpec(unary()),
    "Erf": OpSpec(unary()),
    "Exp": OpSpec(unary(domain=small(8))),
    "Log": OpSpec(unary(domain=positive(0.05))),
    "Sqrt": OpSpec(unary(domain=positive(1e-3))),
    "Reciprocal": OpSpec(unary(domain=lambda g, v: bool(
        np.all(np.abs(v.array) > 0.1)))),
    "Floor": OpSpec(unary(domain=off_integers)),
    "Ceil": OpSpec(unary(domain=off_integers)),
    "Round": OpSpec(unary(domain=off_half_integers)),
    "Sin": OpSpec(unary(domain=within(50))),
    "Cos": OpSpec(unary(domain=within(50))),
    "Tan": OpSpec(unary(domain=lambda g, v: bool(
        np.all(np.abs(np.cos(v.array.astype(np.float64))) > 0.1)))),
    "Asin": OpSpec(unary(domain=within(0.95))),
    "Acos": OpSpec(unary(domain=within(0.95))),
    "Atan": OpSpec(unary()),
    "Sinh": OpSpec(unary(domain=within(8))),
    "Cosh": OpSpec(unary(domain=within(8))),
    "Asinh": OpSpec(unary()),
    "Acosh": OpSpec(unary(domain=positive(1.05))),
    "Atanh": OpSpec(unary(domain=within(0.95))),
    "Neg": OpSpec(unary(pred=lambda v: v.kind in "fi")),
    "Abs": OpSpec(unary(pred=numeric)),
    "Sign": OpSpec(unary(pred=numeric, domain=lambda g, v:
                         v.kind != "f" or off_zero(g, v))),
    "Not": OpSpec(unary(pred=boolean)),
    "IsNaN": OpSpec(unary()),
    "Celu": OpSpec(unary(attrs=_attrs(alpha=(1.0, 0.5, 2.0))), 12),
    "IsInf": OpSpec(unary(attrs=_attrs(detect_positive=(0, 1),
                                       detect_negative=(0, 1)))),
    "Shrink": OpSpec(gen_shrink),
    "Gelu": OpSpec(unary(attrs=_attrs(approximate=("none", "tanh"))), 20),
    "LeakyRelu": OpSpec(unary(attrs=_attrs(alpha=(0.01, 0.2, 1.5)))),
    "Softplus": OpSpec(unary()),
    "Softsign": OpSpec(unary()),
    "Elu": OpSpec(unary(attrs=_attrs(alpha=(1.0, 0.5, 2.0)))),
    "Selu": OpSpec(unary(attrs=_attrs(alpha=(1.67326, 1.0),
                                      gamma=(1.0507, 2.0)))),
    "HardSigmoid": OpSpec(unary(attrs=_attrs(alpha=(0.2, 0.5),
                                             beta=(0.5, 0.3)))),
    "HardSwish": OpSpec(unary()),
    "ThresholdedRelu": OpSpec(gen_thresholded_relu),
    # Elementwise binary and variadic, with numpy broadcasting.
    "Add": OpSpec(binary()),
    "Sub": OpSpec(binary()),
    "Mul": OpSpec(binary()),
    "Div": OpSpec(binary(divisor=True)),
    "Pow": OpSpec(gen_pow),
    "Mod": OpSpec(gen_mod),
    "BitShift": OpSpec(gen_bit_shift),
    "And": OpSpec(logical),
    "Or": OpSpec(logical),
    "Xor": OpSpec(logical),
    "Max": OpSpec(variadic()),
    "Min": OpSpec(variadic()),
    "Sum": OpSpec(variadic(floating)),
    "Mean": OpSpec(variadic(floating)),
    "Equal": OpSpec(compare_op),
    "Less": OpSpec(compare_op),
    "LessOrEqual": OpSpec(compare_op),
    "Greater": OpSpec(compare_op),
    "GreaterOrEqual": OpSpec(compare_op),
    "Where": OpSpec(gen_where),
    "PRelu": OpSpec(gen_prelu),
    "Clip": OpSpec(gen_clip),
    "Cast": OpSpec(gen_cast),
    "CastLike": OpSpec(gen_cast_like, 15),
    # Identity-like and constants.
    "Identity": OpSpec(gen_identity),
    "Dropout": OpSpec(gen_dropout),
    "Constant": OpSpec(gen_constant),
    "Shape": OpSpec(gen_shape),
    "Size": OpSpec(gen_size),
    "ConstantOfShape": OpSpec(gen_constant_of_shape),
    "Range": OpSpec(gen_range),
    # Shapes and data movement.
    "Reshape": OpSpec(gen_reshape),
    "Flatten": OpSpec(gen_flatten),
    "Squeeze": OpSpec(gen_squeeze),
    "Unsqueeze": OpSpec(gen_unsqueeze),
    "Transpose": OpSpec(gen_transpose),
    "Concat": OpSpec(gen_concat),
    "Split": OpSpec(gen_split),
    "Slice": OpSpec(gen_slice),
    "Gather": OpSpec(gen_gather),
    "Expand": OpSpec(gen_expand),
    "Tile": OpSpec(gen_tile),
    "Pad": OpSpec(gen_pad),
    "DepthToSpace": OpSpec(gen_depth_to_space),
    "SpaceToDepth": OpSpec(gen_space_to_depth),
    "Trilu": OpSpec(gen_trilu),
    # Contractions, convolution, pooling.
    "MatMul": OpSpec(gen_matmul),
    "Gemm": OpSpec(gen_gemm),
    "Einsum": OpSpec(gen_einsum),
    "Conv": OpSpec(gen_conv),
    "ConvTranspose": OpSpec(gen_conv_transpose),
    "MaxPool": OpSpec(gen_pool),
    "AveragePool": OpSpec(gen_pool),
    "GlobalAveragePool": OpSpec(gen_global_pool),
    "GlobalMaxPool": OpSpec(gen_global_pool),
    # Normalisation, softmax, reductions, losses.
    "Softmax": OpSpec(gen_softmax),
    "LogSoftmax": OpSpec(gen_softmax),
    "LayerNormalization": OpSpec(gen_layer_norm, 17),
    "BatchNormalization": OpSpec(gen_batch_norm),
    "InstanceNormalization": OpSpec(gen_instance_norm),
    "MeanVarianceNormalization": OpSpec(gen_mvn),
    "EyeLike": OpSpec(gen_eye_like),
    "ReduceSum": OpSpec(reduce()),
    "ReduceMean": OpSpec(reduce()),
    "ReduceMax": OpSpec(reduce()),
    "ReduceMin": OpSpec(reduce()),
    "ReduceProd": OpSpec(reduce()),
    "ReduceSumSquare": OpSpec(reduce()),
    "ReduceL1": OpSpec(reduce()),
    "ReduceL2": OpSpec(reduce(floating)),
    "ReduceLogSum": OpSpec(reduce(lambda v: floating(v) and
                                  bool(np.all(v.array > 0.05)))),
    "ReduceLogSumExp": OpSpec(reduce(floating)),
    "SoftmaxCrossEntropyLoss": OpSpec(gen_softmax_cross_entropy),
    "NegativeLogLikelihoodLoss": OpSpec(gen_nll_loss),
    "ArgMax": OpSpec(gen_arg_extreme),
    "ArgMin": OpSpec(gen_arg_extreme),
    "Hardmax": OpSpec(gen_hardmax),
    "CumSum": OpSpec(gen_cumsum),
    "GatherElements": OpSpec(gen_gather_elements),
    "GatherND": OpSpec(gen_gather_nd),
    "Resize": OpSpec(gen_resize),
    "HannWindow": OpSpec(gen_window, 17),
    "HammingWindow": OpSpec(gen_window, 17),
    "BlackmanWindow": OpSpec(gen_window, 17),
    "OneHot": OpSpec(gen_one_hot),
    "Compress": OpSpec(gen_compress),
    "ReverseSequence": OpSpec(gen_reverse_sequence),
    "LRN": OpSpec(gen_lrn),
    "QuantizeLinear": OpSpec(gen_quantize),
    "DequantizeLinear": OpSpec(gen_dequantize),
    "DynamicQuantizeLinear": OpSpec(gen_dynamic_quantize),
    "ScatterElements": OpSpec(gen_scatter_elements, 11),
    "ScatterND": OpSpec(gen_scatter_nd, 11),
    "TopK": OpSpec(gen_top_k, 11),
    "RMSNormalization": OpSpec(gen_rms_norm, 23),
}


# ---------------------------------------------------------------------------
# Whole graphs
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    """A valid graph, its inputs and onnxruntime's outputs."""
    seed: int
    model: onnx.ModelProto
    feeds: dict
    want: list

    @property
    def ops(self):
        return sorted({n.op_type for n in self.model.graph.node})

    @property
    def loose(self):
        """Whether a float16/bfloat16 rounding happens (looser tolerance)."""
        g = self.model.graph
        types = [vi.type.tensor_type.elem_type
                 for vi in list(g.input) + list(g.output)]
        types += [t.data_type for t in g.initializer]
        types += [helper.get_attribute_value(a) for n in g.node
                  for a in n.attribute if n.op_type == "Cast"]
        return any(t in (TensorProto.FLOAT16, TensorProto.BFLOAT16)
                   for t in types)


def add_graph_inputs(g):
    """The first input has a leading batch dimension (mostly even); up to
    two more of its shape, a broadcast of it or their own, mostly float."""
    batch = g.rng.choice((2, 2, 2, 4, 4, 1, 3))
    if g.rng.random() < 0.35:
        rest = (g.rng.choice((1, 2, 3, 4, 4, 8)), g.rng.choice((2, 3, 4, 6, 8)),
                g.rng.choice((2, 3, 4, 5, 8)))
    else:
        rest = tuple(g.rng.choice(DIMS) for _ in range(g.rng.randint(0, 2)))
    first = g.add_input(g.random_array((batch,) + rest))
    for _ in range(g.rng.choices((0, 1, 2), (0.4, 0.4, 0.2))[0]):
        dtype = g.rng.choices((np.float32, np.int64, np.int32, np.bool_),
                              (0.75, 0.07, 0.05, 0.13))[0]
        r = g.rng.random()
        shape = first.shape if r < 0.5 else (
            (batch,) + g.broadcast_shape(rest) if r < 0.75 else
            tuple(g.rng.choice(DIMS) for _ in range(g.rng.randint(1, 3))))
        g.add_input(g.random_array(shape, dtype))


def generate(seed):
    """The graph of `seed` as a Case; raises Invalid if it fails a check."""
    g = GraphBuilder(seed)
    add_graph_inputs(g)
    ops = [op for op, spec in OPS.items() if spec.since <= g.opset]
    target = g.rng.randint(MIN_NODES, MAX_NODES)
    for _ in range(400):
        if len(g.nodes) >= target:
            break
        op = g.rng.choice(ops)
        try:
            OPS[op].gen(g, op)
        except Reject:
            pass
    if len(g.nodes) < MIN_NODES:
        raise Invalid(f"only {len(g.nodes)} nodes could be generated")
    model, feeds = g.model()
    return Case(seed, model, feeds, reference(model, feeds))


def reference(model, feeds):
    """onnxruntime's outputs of a model that passes the checker and strict
    shape inference; raises Invalid otherwise or if an output is not
    finite."""
    try:
        onnx.checker.check_model(model, full_check=True)
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
        outputs = session(model).run(None, feeds)
    except Exception as e:  # any checker, inference or runtime error
        raise Invalid(f"{type(e).__name__}: {first_line(str(e))}") from e
    for a in outputs:
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise Invalid("onnxruntime produced a non-finite output")
    return outputs


# ---------------------------------------------------------------------------
# Running dnnc
# ---------------------------------------------------------------------------

def even_batch(case):
    inputs = case.model.graph.input
    if not inputs:
        return False
    dims = inputs[0].type.tensor_type.shape.dim
    return len(dims) >= 1 and dims[0].dim_value % 2 == 0


@dataclasses.dataclass(frozen=True)
class Mode:
    """A way to compile and run: ranks, dnnc flags for a seed, and whether
    it applies to a case."""
    ranks: int
    flags: Callable
    applies: Callable = lambda case: True


MODES = {
    "1rank": Mode(1, lambda seed: []),
    "stress": Mode(4, lambda seed: ["--mesh=2x2",
                                    f"--sharding=stress:{seed % 64}"]),
    "pp": Mode(2, lambda seed: ["--parallel=pp=2", "--microbatches=2"],
               even_batch),
    "cuda-emu": Mode(1, lambda seed: ["--target=cuda", "--cuda-emulation"]),
}
FAILURES = ("wrong", "crash", "internal")
CLASSES = ("pass",) + FAILURES + ("refused", "skipped")

# An internal error that reached the user: an MLIR verifier or pass error
# naming an op, an LLVM fatal error, an assertion, a crash report, or
# generated code that does not compile.
INTERNAL = re.compile(
    r"'[a-z_]+\.[\w.]+' op |LLVM ERROR|Assertion .* failed|UNREACHABLE|"
    r"PLEASE submit a bug report|Stack dump|failed to legalize|"
    r"does not dominate|unrealized_conversion_cast|"
    r"building the generated .* failed|"
    # Upstream verifiers that report without the op prefix.
    r"is out-of-bounds: ")


@dataclasses.dataclass
class Outcome:
    """The result of one (graph, mode): its class, a one-line reason, the
    details (stderr or per-output differences) and the commands run."""
    cls: str
    reason: str = ""
    details: str = ""
    commands: list = dataclasses.field(default_factory=list)


def run_command(cmd, timeout, tmpdir=None):
    """Runs cmd in its own process group (killed whole on timeout); returns
    (returncode, stderr), returncode None on timeout. With `tmpdir`, Open
    MPI keeps its session directory there: concurrent mpiruns racing to
    create the shared one under /tmp fail in orte_init otherwise."""
    env = None
    if tmpdir:
        env = dict(os.environ, OMPI_MCA_orte_tmpdir_base=tmpdir, TMPDIR=tmpdir)
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, env=env)
    except OSError as e:
        return 127, f"cannot run {cmd[0]}: {e}"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, err.decode("utf-8", "replace")
    text = err.decode("utf-8", "replace") + out.decode("utf-8", "replace")
    return proc.returncode, text


def classify(stage, rc, text, timeout):
    """The Outcome of a failed dnnc or dnnc-run command."""
    lines = [line for line in text.splitlines() if line.strip()]
    tail = "\n".join(lines[-40:])
    if rc is None:
        return Outcome("crash", f"{stage} timed out after {timeout} s", tail)
    internal = next((line for line in lines if INTERNAL.search(line)), None)
    if internal:
        return Outcome("internal", f"{stage}: {internal.strip()}", tail)
    if stage == "dnnc" and rc > 0 and lines and \
            lines[0].startswith("error:"):
        return Outcome("refused", lines[0], tail)
    how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
    return Outcome("crash", f"{stage} {how}: {first_line(text)}", tail)


def commands(case, mode, model_path, inputs, plan, outdir, opts):
    """The dnnc and dnnc-run (under mpirun for several ranks) commands."""
    spec = MODES[mode]
    compile_cmd = [opts.dnnc, model_path, "-o", plan] + spec.flags(case.seed)
    run_cmd = [opts.dnnc_run, plan, "--output-dir", outdir]
    for path in inputs:
        run_cmd += ["--input", path]
    if spec.ranks > 1:
        run_cmd = [opts.mpirun, "-np", str(spec.ranks), "--oversubscribe",
                   "--allow-run-as-root"] + run_cmd
    return compile_cmd, run_cmd


def write_case(case, directory, stem):
    """Writes the model, its inputs (named TensorProtos, as the ONNX test
    data) and the reference outputs; returns (model, inputs, wants)."""
    model_path = os.path.join(directory, f"{stem}.onnx")
    onnx.save(case.model, model_path)
    inputs, wants = [], []
    for k, vi in enumerate(case.model.graph.input):
        inputs.append(os.path.join(directory, f"{stem}.input_{k}.pb"))
        onnx.save_tensor(numpy_helper.from_array(case.feeds[vi.name], vi.name),
                         inputs[-1])
    for k, a in enumerate(case.want):
        wants.append(os.path.join(directory, f"{stem}.want_{k}.pb"))
        onnx.save_tensor(numpy_helper.from_array(a), wants[-1])
    return model_path, inputs, wants


def run_mode(case, mode, opts):
    """Compiles and runs `case` in `mode` and compares with onnxruntime."""
    if not MODES[mode].applies(case):
        return Outcome("skipped", "no even batch dimension on the first input")
    with tempfile.TemporaryDirectory(prefix="dnnc-fuzz-") as tmp:
        model_path, inputs, wants = write_case(case, tmp, "model")
        plan, outdir = os.path.join(tmp, "plan.bin"), os.path.join(tmp, "out")
        cmds = commands(case, mode, model_path, inputs, plan, outdir, opts)
        for stage, cmd in zip(("dnnc", "dnnc-run"), cmds):
            rc, text = run_command(cmd, opts.timeout, tmpdir=tmp)
            text = text.replace(tmp + os.sep, "")
            if rc != 0:
                outcome = classify(stage, rc, text, opts.timeout)
                outcome.commands = list(cmds)
                return outcome
        outcome = compare_outputs(case, outdir, wants)
        outcome.commands = list(cmds)
        return outcome


def compare_outputs(case, outdir, wants):
    """pass, or wrong with one line per differing output."""
    rtol, atol = (2e-2, 2e-2) if case.loose else (1e-3, 1e-4)
    diffs = []
    for k, (want, vi) in enumerate(zip(wants, case.model.graph.output)):
        got = os.path.join(outdir, f"output_{k}.pb")
        if not os.path.isfile(got):
            diffs.append(f"output {k} '{vi.name}': dnnc-run wrote no file")
            continue
        reason = compare(got, want, rtol, atol, atol_scale=case.loose)
        # A loose atol scaled by an output of near-zero values (log(1) in
        # double) is tighter than the strict one: either tolerance passes.
        if reason and case.loose:
            reason = compare(got, want, 1e-3, 1e-4)
        if reason:
            diffs.append(f"output {k} '{vi.name}': {reason}")
    if diffs:
        return Outcome("wrong", diffs[0], "\n".join(diffs))
    return Outcome("pass")


# ---------------------------------------------------------------------------
# Minimizer
# ---------------------------------------------------------------------------

def all_values(model, feeds):
    """Every tensor of the model computed by onnxruntime (bfloat16 ones
    left out), as name -> array."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    typed = {vi.name: vi for vi in list(inferred.graph.value_info) +
             list(inferred.graph.output)}
    names = [o for n in model.graph.node for o in n.output
             if o in typed and typed[o].type.tensor_type.elem_type !=
             TensorProto.BFLOAT16]
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    m.graph.output.extend(typed[n] for n in names)
    values = dict(zip(names, session(m).run(names, feeds)))
    values.update(feeds)
    values.update({t.name: numpy_helper.to_array(t)
                   for t in model.graph.initializer})
    return values


def prune(model, feeds):
    """Removes nodes whose outputs nothing uses, then unused initializers
    and graph inputs (and their feeds)."""
    g = model.graph
    while True:
        used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
        dead = [k for k, n in enumerate(g.node)
                if not any(o in used for o in n.output)]
        if not dead:
            break
        for k in reversed(dead):
            del g.node[k]
    kept_inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept_inits)
    kept_inputs = [vi for vi in g.input if vi.name in used]
    del g.input[:]
    g.input.extend(kept_inputs)
    return {vi.name: feeds[vi.name] for vi in kept_inputs}


def copy_model(model):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def without_outputs(model, feeds, names):
    m = copy_model(model)
    kept = [o for o in m.graph.output if o.name not in names]
    if not kept:
        return None
    del m.graph.output[:]
    m.graph.output.extend(kept)
    return m, prune(m, feeds)


def without_node(model, feeds, k, replacement, values):
    """The model without node k. Each output it had is renamed to
    `replacement[output]` where given (a graph output then becomes one of
    the replacement, if a node computes it), else becomes a graph input fed
    with its value (and stops being a graph output)."""
    m = copy_model(model)
    node = m.graph.node[k]
    del m.graph.node[k]
    feeds = dict(feeds)
    computed = {o for n in m.graph.node for o in n.output}
    outputs = [o.name for o in m.graph.output]
    for o in filter(None, node.output):
        r = replacement.get(o)
        if r is None:
            if o not in values:
                return None
            m.graph.input.append(value_info(o, values[o]))
            feeds[o] = values[o]
            continue
        for n in m.graph.node:
            for i, name in enumerate(n.input):
                if name == o:
                    n.input[i] = r
        if o in outputs and r in computed and r not in outputs:
            m.graph.output.append(value_info(r, values[r]))
    return without_outputs(m, feeds, set(node.output))



def input_to_constant(model, feeds, name):
    m = copy_model(model)
    kept = [vi for vi in m.graph.input if vi.name != name]
    del m.graph.input[:]
    m.graph.input.extend(kept)
    m.graph.initializer.append(numpy_helper.from_array(feeds[name], name))
    return m, {k: v for k, v in feeds.items() if k != name}


def bypasses(model, k, values):
    """For node k, replacements of its outputs by earlier values of the same
    dtype and shape (its own inputs first), as dicts."""
    node = model.graph.node[k]
    earlier = [i for i in node.input if i] + \
        [vi.name for vi in model.graph.input] + \
        [o for n in model.graph.node[:k] for o in n.output if o]
    options = []
    for o in node.output:
        if o not in values:
            continue
        same = [e for e in dict.fromkeys(earlier) if e in values and
                values[e].dtype == values[o].dtype and
                values[e].shape == values[o].shape]
        if same:
            options.append(same[0])
        else:
            return []
    return [dict(zip([o for o in node.output if o in values], options))]


def candidates(case):
    """Smaller variants of the case's graph, as (model, feeds), most
    promising first."""
    model, feeds = case.model, case.feeds
    outputs = [o.name for o in model.graph.output]
    if len(outputs) > 1:
        for name in outputs:
            yield without_outputs(model, feeds, {name})
    values = all_values(model, feeds)
    for k in reversed(range(len(model.graph.node))):
        for replacement in bypasses(model, k, values) + [{}]:
            yield without_node(model, feeds, k, replacement, values)
    for vi in model.graph.input:
        yield input_to_constant(model, feeds, vi.name)


def minimize(case, mode, cls, opts):
    """Greedily shrinks `case` while it still fails in `mode` with `cls`,
    for at most --minimize-time seconds; returns the smallest case."""
    deadline = time.monotonic() + opts.minimize_time
    best, improved = case, True
    while improved and time.monotonic() < deadline:
        improved = False
        for cand in candidates(best):
            if time.monotonic() >= deadline:
                break
            if cand is None:
                continue
            model, feeds = cand
            try:
                smaller = Case(case.seed, model, feeds, reference(model, feeds))
            except Invalid:
                continue
            if run_mode(smaller, mode, opts).cls == cls:
                best, improved = smaller, True
                break
    return best


# ---------------------------------------------------------------------------
# Saving failures, the per-graph job and reporting
# ---------------------------------------------------------------------------

def save_case(case, directory, stem):
    """Writes STEM.onnx and STEM.input_K.npy; returns (model, inputs)."""
    model_path = os.path.join(directory, f"{stem}.onnx")
    onnx.save(case.model, model_path)
    inputs = []
    for k, vi in enumerate(case.model.graph.input):
        inputs.append(os.path.join(directory, f"{stem}.input_{k}.npy"))
        np.save(inputs[-1], case.feeds[vi.name])
    return model_path, inputs


def repro_lines(case, mode, model_path, inputs, opts):
    plan = f"/tmp/{os.path.basename(model_path)}.plan.bin"
    cmds = commands(case, mode, model_path, inputs, plan, "out", opts)
    return [" ".join(cmd) for cmd in cmds]


def save_failure(case, small, mode, outcome, small_outcome, opts):
    """Writes seedN-MODE.{onnx,min.onnx,txt} and the inputs; returns the
    path of the minimized model."""
    os.makedirs(opts.out, exist_ok=True)
    stem = os.path.join(opts.out, f"seed{case.seed}-{mode}")
    orig = save_case(case, opts.out, os.path.basename(stem))
    mini = save_case(small, opts.out, os.path.basename(stem) + ".min")
    text = [f"seed {case.seed}, mode {mode}: {outcome.cls}",
            f"reason: {outcome.reason}",
            f"opset {case.model.opset_import[0].version}; "
            f"{len(case.model.graph.node)} nodes ({', '.join(case.ops)}); "
            f"minimized: {len(small.model.graph.node)} nodes "
            f"({', '.join(small.ops)})",
            "", "regenerate:",
            f"  python3 test/fuzz/dnnc_fuzz.py --seed {case.seed} --count 1 "
            f"--modes {mode} --dnnc {opts.dnnc} --dnnc-run {opts.dnnc_run}",
            "", "reproduce the original:"]
    text += ["  " + line for line in repro_lines(case, mode, *orig, opts)]
    text += ["", "reproduce the minimized graph:"]
    text += ["  " + line for line in repro_lines(small, mode, *mini, opts)]
    text += ["", "details (original):", outcome.details or "(none)"]
    if small is not case:
        text += ["", f"details (minimized, {small_outcome.cls}):",
                 small_outcome.details or small_outcome.reason]
    text += ["", "minimized graph:", onnx.printer.to_text(small.model.graph)]
    with open(stem + ".txt", "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    return mini[0]


@dataclasses.dataclass
class GraphResult:
    """What one seed gave: invalid (with why), or its ops and an Outcome per
    mode; for failures the minimized model's path and ops."""
    seed: int
    invalid: str = ""
    ops: list = dataclasses.field(default_factory=list)
    outcomes: dict = dataclasses.field(default_factory=dict)
    minimized: dict = dataclasses.field(default_factory=dict)


def fuzz_one(seed, opts):
    """Generates the graph of `seed` and checks it in every mode."""
    try:
        case = generate(seed)
    except Invalid as e:
        return GraphResult(seed, invalid=str(e))
    result = GraphResult(seed, ops=case.ops)
    for mode in opts.modes:
        outcome = run_mode(case, mode, opts)
        result.outcomes[mode] = outcome
        if outcome.cls in FAILURES:
            small = minimize(case, mode, outcome.cls, opts) \
                if opts.minimize else case
            small_outcome = run_mode(small, mode, opts) if small is not case \
                else outcome
            path = save_failure(case, small, mode, outcome, small_outcome,
                                opts)
            result.minimized[mode] = (path, small.ops,
                                      len(small.model.graph.node))
    return result


def report(results, modes, elapsed):
    """Prints the tables; returns (passed, failed)."""
    counts = {m: collections.Counter() for m in modes}
    op_graphs, op_fail, op_min = (collections.Counter() for _ in range(3))
    invalid = [r for r in results if r.invalid]
    for r in results:
        op_graphs.update(r.ops)
        for mode, outcome in r.outcomes.items():
            counts[mode][outcome.cls] += 1
            if outcome.cls in FAILURES:
                op_fail.update(r.ops)
                op_min.update(r.minimized[mode][1])
    print(f"\n{len(results)} graphs ({len(invalid)} invalid) in "
          f"{elapsed:.0f} s")
    for r in invalid:
        print(f"  invalid seed {r.seed}: {r.invalid}")
    print(f"\n{'mode':10}" + "".join(f"{c:>10}" for c in CLASSES))
    total = collections.Counter()
    for mode in modes:
        total.update(counts[mode])
        print(f"{mode:10}" + "".join(f"{counts[mode][c]:>10}"
                                     for c in CLASSES))
    print(f"{'all':10}" + "".join(f"{total[c]:>10}" for c in CLASSES))
    print(f"\n{'op':26}{'graphs':>8}{'failures':>10}{'in min':>8}")
    for op in sorted(OPS):
        print(f"{op:26}{op_graphs[op]:>8}{op_fail[op]:>10}{op_min[op]:>8}")
    refusals = collections.defaultdict(list)
    for r in results:
        for mode, o in r.outcomes.items():
            if o.cls == "refused":
                refusals[re.sub(r"'[^']*'|\d+", "_", o.reason)].append(
                    f"seed {r.seed} {mode}")
    if refusals:
        print("\nrefusals (messages with names and numbers elided):")
        for reason, where in sorted(refusals.items(), key=lambda x: -len(x[1])):
            print(f"  {len(where):4} {reason}\n       e.g. {where[0]}")
    print()
    for r in results:
        for mode, o in r.outcomes.items():
            if o.cls in FAILURES:
                path, _, nodes = r.minimized[mode]
                print(f"FAIL seed {r.seed} {mode} {o.cls}: {o.reason} "
                      f"(minimized to {nodes} nodes: {path})")
    failed = sum(total[c] for c in FAILURES)
    return total["pass"], failed


def check_grad(opts):
    """The `grad` mode hook: dnnc has no training yet."""
    try:
        help_text = run_command([opts.dnnc, "--help"], opts.timeout)[1]
    except OSError:
        help_text = ""
    if "--mode=train" not in help_text:
        return "gradient mode needs dnnc training (issue 20)"
    return ("dnnc now mentions --mode=train: add a gradient runner to MODES "
            "in dnnc_fuzz.py")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1,
                        help="seed of the first graph (default: 1)")
    parser.add_argument("--count", type=int, default=100,
                        help="graphs to generate (default: 100)")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated modes (default: "
                             f"{','.join(MODES)}; also: grad)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="graphs checked in parallel (default: cores)")
    parser.add_argument("--dnnc", default="dnnc",
                        help="the dnnc binary (default: dnnc on PATH)")
    parser.add_argument("--dnnc-run", default="dnnc-run",
                        help="the dnnc-run binary (default: dnnc-run on PATH)")
    parser.add_argument("--mpirun", default="mpirun",
                        help="MPI launcher for the multi-rank modes")
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds per command (default: 120)")
    parser.add_argument("--out", default="fuzz-failures",
                        help="where failures are saved (default: "
                             "fuzz-failures)")
    parser.add_argument("--minimize", action=argparse.BooleanOptionalAction,
                        default=True, help="shrink failing graphs (default)")
    parser.add_argument("--minimize-time", type=float, default=120,
                        help="seconds per failure for --minimize "
                             "(default: 120)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print a line per graph")
    parser.add_argument("--check-coverage", metavar="OPREGISTRY_CPP",
                        help="only check that OPS has a generator for every "
                             "op the importer's registry registers (exit 1 "
                             "naming those without)")
    opts = parser.parse_args(argv)
    opts.modes = [m for m in opts.modes.split(",") if m]
    unknown = [m for m in opts.modes if m not in MODES and m != "grad"]
    if unknown or not opts.modes:
        parser.error(f"unknown mode(s) {', '.join(unknown)}; modes: "
                     f"{', '.join(MODES)}, grad")
    for name in ("dnnc", "dnnc_run", "out"):
        path = getattr(opts, name)
        if os.sep in path:
            setattr(opts, name, os.path.abspath(path))
    return opts


# Ops the importer registers that generated opsets (17 and later) no longer
# have or have deprecated (onnxruntime may refuse them there).
LEGACY_ONLY = {"Upsample", "Scatter"}


def check_coverage(source):
    """Ops registered in the importer's registry `source` (its
    `{"Op", {importX, N}}` table) without a generator in OPS; prints them,
    returns 1 if any."""
    with open(source, encoding="utf-8") as f:
        registered = set(re.findall(r'\{"(\w+)", \{import', f.read()))
    if not registered:
        print(f"error: no registered ops found in {source}", file=sys.stderr)
        return 2
    missing = sorted(registered - set(OPS) - LEGACY_ONLY)
    for op in missing:
        print(f"error: no generator for {op}", file=sys.stderr)
    print(f"{len(registered) - len(missing)} passed, {len(missing)} failed")
    return 1 if missing else 0


def main(argv=None):
    opts = parse_args(argv)
    if opts.check_coverage:
        return check_coverage(opts.check_coverage)
    if "grad" in opts.modes:
        print(f"error: {check_grad(opts)}", file=sys.stderr)
        return 2
    start = time.monotonic()
    results = []
    seeds = range(opts.seed, opts.seed + opts.count)
    with concurrent.futures.ProcessPoolExecutor(max(1, opts.jobs)) as pool:
        futures = [pool.submit(fuzz_one, s, opts) for s in seeds]
        for done, future in enumerate(futures, 1):  # in seed order
            r = future.result()
            results.append(r)
            if opts.verbose:
                print(f"seed {r.seed}: " + (f"invalid ({r.invalid})"
                      if r.invalid else " ".join(
                          f"{m}={o.cls}" for m, o in r.outcomes.items())),
                      flush=True)
            if done % 25 == 0 or done == len(futures):
                failed = sum(o.cls in FAILURES for x in results
                             for o in x.outcomes.values())
                print(f"[dnnc_fuzz] {done}/{len(futures)} graphs, {failed} "
                      f"failures, {time.monotonic() - start:.0f} s",
                      file=sys.stderr, flush=True)
    passed, failed = report(results, opts.modes, time.monotonic() - start)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
