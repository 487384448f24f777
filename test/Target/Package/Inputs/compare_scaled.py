"""compare_scaled.py GOT.pb WANT.pb RTOL ATOL [--min-error E]: exits 1 unless
|got - want| <= ATOL * scale + RTOL * |want| elementwise, with scale the
largest |want| (the tolerance of reduced-precision runs, docs/precision.md).
Prints the largest absolute error relative to the scale. With --min-error,
also exits 1 when that relative error is below E (the run was not in reduced
precision)."""
import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper

parser = argparse.ArgumentParser()
parser.add_argument("got")
parser.add_argument("want")
parser.add_argument("rtol", type=float)
parser.add_argument("atol", type=float)
parser.add_argument("--min-error", type=float, default=None)
args = parser.parse_args()

got = numpy_helper.to_array(onnx.load_tensor(args.got))
want = numpy_helper.to_array(onnx.load_tensor(args.want))
if got.dtype != want.dtype or got.shape != want.shape:
    sys.exit(f"type mismatch: {got.dtype}{list(got.shape)} vs "
             f"{want.dtype}{list(want.shape)}")
g, w = got.astype(np.float64), want.astype(np.float64)
scale = float(np.abs(w).max())
error = float(np.abs(g - w).max())
print(f"error/scale {error / scale:.3e}")
if not np.all(np.abs(g - w) <= args.atol * scale + args.rtol * np.abs(w)):
    sys.exit("values differ")
if args.min_error is not None and error / scale < args.min_error:
    sys.exit(f"error/scale {error / scale:.3e} below {args.min_error}: "
             "not a reduced-precision result")
