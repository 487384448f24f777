"""compare.py GOT.pb WANT.pb: exits 1 unless the tensors match (rtol 1e-3,
atol 1e-5 for floats, exact otherwise)."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

got = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
want = numpy_helper.to_array(onnx.load_tensor(sys.argv[2]))
if got.dtype != want.dtype or got.shape != want.shape:
    sys.exit(f"type mismatch: {got.dtype}{list(got.shape)} vs "
             f"{want.dtype}{list(want.shape)}")
if np.issubdtype(want.dtype, np.floating):
    ok = np.allclose(got, want, rtol=1e-3, atol=1e-5, equal_nan=True)
else:
    ok = np.array_equal(got, want)
sys.exit(0 if ok else "values differ")
