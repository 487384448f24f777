#!/usr/bin/env python3
"""Writes GPT-style decoder-only ONNX models of any size (opset 17).

The graph uses only operators dnnc imports: token embedding `Gather` plus a
learned position embedding (one row per position, added whole: the sequence
length is static), then per layer

    x = x + attn(LayerNormalization(x))     separate Q, K, V projections
                                            (MatMul + Add, Megatron layout;
                                            `--fused-qkv`: one MatMul + Add
                                            of width 3 * hidden and Split),
                                            Reshape/Transpose into heads,
                                            scaled scores + causal mask,
                                            Softmax, output projection
    x = x + mlp(LayerNormalization(x))      MatMul + Add, tanh-approximated
                                            GELU (Mul/Add/Tanh; `--gelu erf`:
                                            Div/Erf/Add/Mul), MatMul + Add

and a final LayerNormalization and the LM head MatMul. Input `input_ids`
(int64 [batch, seq]), output `logits` ([batch, seq, vocab]).

`--block-only` writes just the decoder blocks (`--layers` of them, typically
one): no embeddings, no final LayerNormalization, no LM head. Input `x`
(the dtype, [batch, seq, hidden]), output `y` (same shape): the block
benchmark of scripts/gpu-check.sh (docs/gpu-check.md) uses it. Initializer
names follow Hugging Face's GPT-2: `wte.weight`, `wpe.weight`,
`h.3.ln_1.weight`, `h.3.attn.q.weight` (also `k`, `v`, `o`), `h.3.ln_2.bias`,
`h.3.mlp.fc.weight`, `h.3.mlp.proj.weight`, `ln_f.weight`,
`lm_head.weight`; matrices are stored [in, out] (`y = x @ W + b`).
`causal_mask` ([seq, seq], 0 on and below the diagonal, -10000 above) is
shared by the layers.

Weights (`--weights`):

* `none`: every weight is external data pointing into `<model>.weights`,
  which is NOT written. Nothing is allocated: each initializer is a
  TensorProto with `data_location = EXTERNAL` and its `location`, `offset`
  and `length` filled in by hand, so GPT-3 175B takes seconds. Such a model
  can only be planned (`dnnc --plan-only`).
* `random`: real weights (normal, std 0.02; layer norms near 1; fixed
  `--seed`) written as external data to `<model>.weights` next to the model.
  For small models that dnnc and onnxruntime run.
* `portable`: as `random`, but drawn from `PortableRng` instead of numpy's
  generator: bit-identical on every machine and numpy version, so another
  machine can make the same weights instead of receiving them
  (scripts/gpu-check.sh regenerates its GPT block this way).

The small constants the graph needs as values (the Reshape shapes, the
attention scale, the GELU factors) stay inline, as ONNX's own external-data
conversion keeps tensors under its size threshold. `--external-shapes` moves
the Reshape shapes into `<model>.weights` too (a test of compilers that must
read them).

Usage:

    python3 python/gen_gpt.py --layers 2 --hidden 64 --heads 4 --seq 16 \\
        --vocab 1000 --weights random -o /tmp/gpt-tiny.onnx
    # GPT-3 175B, planning only (the .weights file is not written):
    python3 python/gen_gpt.py --layers 96 --hidden 12288 --heads 96 \\
        --seq 2048 --vocab 51200 --weights none -o /tmp/gpt3.onnx
    dnnc /tmp/gpt3.onnx --plan-only --parallel=tp=8 -o /tmp/gpt3-plan.mlir

Options: --layers, --hidden, --heads, --ffn (default 4 * hidden), --seq,
--vocab, --batch (static, default 1), --symbolic-batch, --dtype
float32|float16, -o, --weights none|random|portable, --seed,
--external-shapes, --fused-qkv, --gelu tanh|erf, --block-only.
"""

import argparse
import math
import os
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 17
# External data offsets are aligned to this many bytes.
ALIGNMENT = 64


class PortableRng:
    """Approximately standard-normal values that are the same on every
    machine and numpy version (numpy's generators promise no stream
    stability across versions): value i is (u1 + u2 + u3 + u4 - 2) * sqrt(3)
    with the u uniform on 24-bit fractions from splitmix64 of a counter
    (`seed` picks the stream). Every step is integer arithmetic or an exact
    (or correctly rounded) float64 operation, so no libm or summation order
    can change a bit. Mean 0, variance 1, range +-2 sqrt(3)."""

    def __init__(self, seed):
        import numpy as np
        self.np = np
        self.key = np.uint64((seed * 0x9E3779B97F4A7C15 + 1) % (1 << 64))
        self.counter = 0

    def _uniform24(self, n):
        """n uniform values k / 2^24 (float64), consuming n counters."""
        np = self.np
        z = np.arange(self.counter, self.counter + n, dtype=np.uint64)
        self.counter += n
        z = z * np.uint64(0x9E3779B97F4A7C15) + self.key
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        return (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)

    def standard_normal(self, shape):
        n = math.prod(shape)
        u = self._uniform24(4 * n).reshape(n, 4)
        # Partial sums of four multiples of 2^-24 below 4 are exact.
        s = ((u[:, 0] + u[:, 1]) + u[:, 2]) + u[:, 3]
        return ((s - 2.0) * math.sqrt(3.0)).reshape(shape)
# The additive causal mask above the diagonal (representable in float16).
MASK_VALUE = -10000.0

DTYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}


class WeightWriter:
    """Lays out external data in `<model>.weights` and, with `random`,
    writes it tensor by tensor (never the whole model in memory)."""

    def __init__(self, model_path, mode, seed):
        self.location = os.path.basename(model_path) + ".weights"
        self.path = os.path.join(os.path.dirname(model_path) or ".",
                                 self.location)
        self.mode = mode
        self.offset = 0
        self.elements = 0
        self.file = None
        self.rng = None
        if mode in ("random", "portable"):
            import numpy as np
            self.np = np
            self.rng = (np.random.default_rng(seed) if mode == "random" else
                        PortableRng(seed))
            self.file = open(self.path, "wb")
        elif os.path.exists(self.path):
            # A stale file from an earlier random run would not match.
            os.remove(self.path)

    def close(self):
        if self.file:
            self.file.close()

    def external(self, name, dims, data_type, init=None):
        """Returns an external initializer `name`; with `random`, writes its
        data, made by `init(rng, shape, numpy_dtype)` (a numpy array)."""
        itemsize = 2 if data_type == TensorProto.FLOAT16 else (
            8 if data_type == TensorProto.INT64 else 4)
        length = itemsize * math.prod(dims)
        self.elements += math.prod(dims)
        self.offset = -(-self.offset // ALIGNMENT) * ALIGNMENT
        tensor = TensorProto()
        tensor.name = name
        tensor.data_type = data_type
        tensor.dims.extend(dims)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", self.location),
                           ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key = key
            entry.value = value
        if self.file:
            np_type = onnx.helper.tensor_dtype_to_np_dtype(data_type)
            data = self.np.ascontiguousarray(
                init(self.rng, dims, np_type).astype(np_type))
            assert data.nbytes == length
            self.file.seek(self.offset)
            self.file.write(data.tobytes())
        self.offset += length
        return tensor


def inline(name, data_type, dims, values):
    """A small initializer stored inline in the model."""
    return helper.make_tensor(name, data_type, dims, values)


def build(args):
    """Builds the ModelProto (external weights laid out by a WeightWriter)."""
    h, nh, f = args.hidden, args.heads, args.ffn or 4 * args.hidden
    b, s, v = args.batch, args.seq, args.vocab
    # A symbolic batch: the inputs name it, the Reshape shapes copy it (0).
    shape_b = 0 if args.symbolic_batch else b
    if args.symbolic_batch:
        b = "batch"
    if h % nh:
        sys.exit(f"error: --hidden={h} is not a multiple of --heads={nh}")
    hd = h // nh
    dt = DTYPES[args.dtype]
    weights = WeightWriter(args.output, args.weights, args.seed)

    def normal(std):
        return lambda rng, shape, t: rng.standard_normal(shape) * std

    def near_one(rng, shape, t):
        return 1.0 + 0.1 * rng.standard_normal(shape)

    def mask(rng, shape, t):
        import numpy as np
        return np.triu(np.full(shape, MASK_VALUE), k=1)

    inits, nodes = [], []

    def weight(name, dims, init=normal(0.02)):
        inits.append(weights.external(name, dims, dt, init))
        return name

    def node(op, inputs, name, **attrs):
        out = name
        nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def linear(x, prefix, n_in, n_out):
        w = weight(prefix + ".weight", [n_in, n_out])
        bias = weight(prefix + ".bias", [n_out], normal(0.01))
        y = node("MatMul", [x, w], prefix + "/MatMul")
        return node("Add", [y, bias], prefix + "/Add")

    def layer_norm(x, prefix):
        w = weight(prefix + ".weight", [h], near_one)
        bias = weight(prefix + ".bias", [h], normal(0.01))
        return node("LayerNormalization", [x, w, bias],
                    prefix + "/LayerNormalization", axis=-1, epsilon=1e-5)

    # Constants used as values: shapes (Reshape) and scalars.
    for name, dims in (("shape.heads", [shape_b, s, nh, hd]),
                       ("shape.hidden", [shape_b, s, h])):
        if args.external_shapes:
            inits.append(weights.external(
                name, [len(dims)], TensorProto.INT64,
                lambda rng, shape, t, dims=dims: weights.np.array(dims)))
        else:
            inits.append(inline(name, TensorProto.INT64, [len(dims)], dims))
    scalars = {
        "attn.scale": 1.0 / math.sqrt(hd),
        "gelu.half": 0.5,
        "gelu.one": 1.0,
    }
    if args.gelu == "erf":
        scalars["gelu.sqrt_2"] = math.sqrt(2.0)
    else:
        scalars["gelu.cubic"] = 0.044715
        scalars["gelu.sqrt_2_over_pi"] = math.sqrt(2.0 / math.pi)
    for name, value in scalars.items():
        inits.append(inline(name, dt, [], [value]))
    if args.fused_qkv:
        inits.append(inline("split.qkv", TensorProto.INT64, [3], [h, h, h]))

    # Embeddings (none with --block-only: the input is the hidden state).
    if args.block_only:
        weight("causal_mask", [s, s], mask)
        x = "x"
    else:
        wte = weight("wte.weight", [v, h])
        wpe = weight("wpe.weight", [s, h], normal(0.01))
        weight("causal_mask", [s, s], mask)
        x = node("Gather", [wte, "input_ids"], "wte/Gather", axis=0)
        x = node("Add", [x, wpe], "wpe/Add")

    for i in range(args.layers):
        p = f"h.{i}"
        a = layer_norm(x, p + ".ln_1")
        heads = {}
        if args.fused_qkv:
            # One projection for q, k and v side by side, then Split (as
            # Hugging Face GPT-2's c_attn and most exports write it).
            qkv = linear(a, f"{p}.attn.qkv", h, 3 * h)
            nodes.append(helper.make_node(
                "Split", [qkv, "split.qkv"],
                [f"{p}.attn.{proj}/Split" for proj in "qkv"],
                name=f"{p}.attn.qkv/Split", axis=-1))
        for proj, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]),
                           ("v", [0, 2, 1, 3])):
            t = (f"{p}.attn.{proj}/Split" if args.fused_qkv else
                 linear(a, f"{p}.attn.{proj}", h, h))
            t = node("Reshape", [t, "shape.heads"],
                     f"{p}.attn.{proj}/Reshape")
            heads[proj] = node("Transpose", [t], f"{p}.attn.{proj}/Transpose",
                               perm=perm)
        scores = node("MatMul", [heads["q"], heads["k"]],
                      f"{p}.attn/MatMul_qk")
        scores = node("Mul", [scores, "attn.scale"], f"{p}.attn/Mul_scale")
        scores = node("Add", [scores, "causal_mask"], f"{p}.attn/Add_mask")
        probs = node("Softmax", [scores], f"{p}.attn/Softmax", axis=-1)
        ctx = node("MatMul", [probs, heads["v"]], f"{p}.attn/MatMul_pv")
        ctx = node("Transpose", [ctx], f"{p}.attn/Transpose_ctx",
                   perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "shape.hidden"], f"{p}.attn/Reshape_ctx")
        x = node("Add", [x, linear(ctx, f"{p}.attn.o", h, h)],
                 f"{p}/Add_attn")

        m = layer_norm(x, p + ".ln_2")
        m = linear(m, f"{p}.mlp.fc", h, f)
        g = f"{p}.mlp.gelu"
        if args.gelu == "erf":
            # GELU, exact: 0.5 * m * (1 + erf(m / sqrt(2))).
            t = node("Erf", [node("Div", [m, "gelu.sqrt_2"], g + "/Div")],
                     g + "/Erf")
        else:
            # GELU, tanh approximation:
            # 0.5 * m * (1 + tanh(sqrt(2 / pi) * (m + 0.044715 * m^3))).
            cube = node("Mul", [node("Mul", [m, m], g + "/Mul_sq"), m],
                        g + "/Mul_cube")
            inner = node("Add", [m, node("Mul", [cube, "gelu.cubic"],
                                         g + "/Mul_cubic")],
                         g + "/Add_inner")
            t = node("Tanh", [node("Mul", [inner, "gelu.sqrt_2_over_pi"],
                                   g + "/Mul_scale")], g + "/Tanh")
        m = node("Mul", [node("Mul", [m, "gelu.half"], g + "/Mul_half"),
                         node("Add", [t, "gelu.one"], g + "/Add_one")],
                 g + "/Mul_out")
        m = linear(m, f"{p}.mlp.proj", f, h)
        x = node("Add", [x, m], f"{p}/Add_mlp")

    if args.block_only:
        nodes[-1].output[0] = "y"
        inputs = [helper.make_tensor_value_info("x", dt, [b, s, h])]
        outputs = [helper.make_tensor_value_info("y", dt, [b, s, h])]
    else:
        x = layer_norm(x, "ln_f")
        lm_head = weight("lm_head.weight", [h, v])
        node("MatMul", [x, lm_head], "lm_head/MatMul")
        nodes[-1].output[0] = "logits"
        inputs = [helper.make_tensor_value_info("input_ids",
                                                TensorProto.INT64, [b, s])]
        outputs = [helper.make_tensor_value_info("logits", dt, [b, s, v])]
    weights.close()

    graph = helper.make_graph(
        nodes, f"gpt_{args.layers}x{h}", inputs, outputs,
        initializer=inits)
    model = helper.make_model(graph, producer_name="dnnc-gen-gpt",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model, weights


def main():
    parser = argparse.ArgumentParser(
        description="Write a GPT-style decoder-only ONNX model.",
        epilog="See the module docstring for the graph and the weights.")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=0,
                        help="MLP width (default 4 * hidden)")
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--symbolic-batch", action="store_true",
                        help="a symbolic batch dimension named 'batch' "
                             "(--batch is then ignored)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("-o", "--output", required=True,
                        help="the model file; weights go to OUTPUT.weights")
    parser.add_argument("--weights", choices=["none", "random", "portable"],
                        default="none",
                        help="none: external data that is not written (plan "
                             "only); random: random weights written; "
                             "portable: random weights that every machine "
                             "makes bit-identically")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--external-shapes", action="store_true",
                        help="store the Reshape shapes as external data too")
    parser.add_argument("--fused-qkv", action="store_true",
                        help="one projection of width 3 * hidden for q, k "
                             "and v, then Split (h.N.attn.qkv.weight), as "
                             "Hugging Face GPT-2 and most exports")
    parser.add_argument("--gelu", choices=["tanh", "erf"], default="tanh",
                        help="GELU form: tanh approximation (default) or "
                             "exact erf")
    parser.add_argument("--block-only", action="store_true",
                        help="only the decoder blocks: input x [batch, seq, "
                             "hidden], output y; no embeddings, final layer "
                             "norm or LM head")
    args = parser.parse_args()
    for name in ("layers", "hidden", "heads", "seq", "vocab", "batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.ffn < 0:
        parser.error("--ffn must be at least 1")

    model, weights = build(args)
    with open(args.output, "wb") as f:
        f.write(model.SerializeToString())
    where = (f"written to {weights.path}" if args.weights != "none" else
             f"not written (external file {weights.location})")
    print(f"{args.output}: {args.layers} layers, hidden {args.hidden}, "
          f"{len(model.graph.node)} nodes, {weights.elements / 1e6:,.1f} M "
          f"parameters, {weights.offset / 2**30:.3f} GiB of weights {where}")


if __name__ == "__main__":
    main()
