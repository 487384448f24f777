#!/usr/bin/env python3
"""Writes trained weights back into an ONNX model, for inference.

    dnnc-run train.bin --train --steps N --data DIR --export-dir params/
    python3 python/dnnc_update_weights.py model.onnx params/ -o trained.onnx

`params/` holds what `dnnc-run --export-dir` writes: one ONNX TensorProto
per weight of the plan (`param_K.pb`, named after its initializer). Every
initializer of the model with a tensor of that name gets its value; a
weight the graph phase split into slices (`NAME[a:b]`, a fused QKV
projection) is joined back along the dimension the slices cover. Tensors
that name no initializer (constants dnnc folded from nodes) are ignored;
initializers no tensor names (frozen ones) keep their value. A tensor whose
dtype or shape differs from its initializer's is an error, and nothing is
written then.

Models over 2 GB are saved with external data next to the output.
"""

import argparse
import glob
import os
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SLICE = re.compile(r"^(.*)\[(\d+):(\d+)\]$")


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def read_params(directory):
    params = {}
    paths = sorted(glob.glob(os.path.join(directory, "param_*.pb")))
    if not paths:
        fail(f"'{directory}' holds no param_K.pb files (dnnc-run "
             "--export-dir writes them)")
    for path in paths:
        tensor = onnx.TensorProto()
        try:
            with open(path, "rb") as f:
                tensor.ParseFromString(f.read())
        except Exception as e:  # a truncated or foreign file
            fail(f"'{path}' is not an ONNX TensorProto: {e}")
        if not tensor.name:
            fail(f"'{path}' holds a tensor without a name")
        params[tensor.name] = numpy_helper.to_array(tensor)
    return params


def joined(name, shape, params):
    """The slices `name[a:b]` of `params` joined into `shape`, or None."""
    parts = []
    for key, value in params.items():
        m = SLICE.match(key)
        if m and m.group(1) == name:
            parts.append((int(m.group(2)), int(m.group(3)), value))
    if not parts:
        return None
    parts.sort(key=lambda p: p[0])
    for dim in range(len(shape)):
        if sum(v.shape[dim] for _, _, v in parts) != shape[dim]:
            continue
        whole = np.concatenate([v for _, _, v in parts], axis=dim)
        if whole.shape == tuple(shape):
            return whole
    fail(f"the slices of '{name}' do not join into its shape "
         f"{list(shape)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("params")
    parser.add_argument("-o", "--output", required=True)
    opts = parser.parse_args()
    try:
        model = onnx.load(opts.model)
    except Exception as e:
        fail(f"cannot read '{opts.model}': {e}")
    params = read_params(opts.params)
    updated = 0
    for init in model.graph.initializer:
        old = numpy_helper.to_array(init)
        value = params.get(init.name)
        if value is None:
            value = joined(init.name, old.shape, params)
        if value is None:
            continue
        if value.shape != old.shape or value.dtype != old.dtype:
            fail(f"initializer '{init.name}' is {old.dtype}{list(old.shape)}"
                 f" but the trained tensor is {value.dtype}"
                 f"{list(value.shape)}")
        init.CopyFrom(numpy_helper.from_array(value, init.name))
        updated += 1
    if updated == 0:
        fail(f"no tensor of '{opts.params}' names an initializer of "
             f"'{opts.model}'")
    large = model.ByteSize() > (2 << 30) - (64 << 20)
    tmp = opts.output + ".tmp"
    onnx.save(model, tmp, save_as_external_data=large,
              location=os.path.basename(opts.output) + ".data")
    os.replace(tmp, opts.output)
    print(f"{opts.output}: {updated} initializers updated")


if __name__ == "__main__":
    main()
