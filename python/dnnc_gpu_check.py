#!/usr/bin/env python3
"""Runs a folder prepared by python/dnnc_gpu_prep.py on a GPU machine.

The work behind scripts/gpu-check.sh (docs/gpu-check.md). Needs only the
Python standard library, numpy and, for the block benchmark, torch and onnx
(no onnxruntime, no dnnc). Three steps, all driven by FOLDER/manifest.json:

* `plans`: runs every plan with `dnnc-run` (one process, one GPU, under a
  timeout), reads its `output_K.pb` files (a small TensorProto decoder, below)
  and compares each output with the stored reference (`.npy`) under the
  manifest's tolerance for the plan's precision. One line per output:

      gpt2 bf16 output_0 logits [4, 16, 1000] max_abs 1.2e-02 \
          rel_to_max 3.1e-03 worst/bound 0.06 PASS

* `block`: the GPT-block benchmark. Times the block plan with
  `dnnc-run --repeat N --warmup W --time` and a PyTorch eager implementation
  of the same block (`gpt_block` below: the graph of
  `python/gen_gpt.py --block-only`) with the same weights, in the block's
  precision, on the same device (torch.cuda.Event per iteration); prints both
  times, the ratio torch/dnnc (> 1: dnnc is faster), the achieved TFLOP/s and
  the MFU; and checks that dnnc's output equals torch's within the precision's
  tolerance (so the two really compute the same block). The block's
  weights and input are not in the folder: `block_arrays` makes them again
  with the folder's copy of gen_gpt.py (`--weights portable`, bit-identical
  on every machine) and checks them against the digest gpu-prep recorded.

* `training`: trains the folder's training plans (a small MLP, AdamW; in
  fp32 and in bf16 mixed precision) with
  `dnnc-run --train` on the device and compares the loss of every step with
  the same step compiled for the cpu target (gpu-prep ran it), within
  1e-4 relative (bf16: 2e-2); prints the median step time.

`check` runs all three and prints `N passed, M failed` last; the exit status is 0
only when everything passed. With `--cpu-dry-run` the plans are cpu plans (a
folder prepared with `--target cpu`), torch runs on the CPU and the iteration
counts are small: the logic runs without a GPU.

Tolerances (TOLERANCES, the one place they are defined; dnnc_gpu_prep.py
copies them into the manifest and this script uses the manifest's copy): an
element passes when

    |got - want| <= atol + rtol * scale

where `scale` is |want| elementwise (`"scale": "elementwise"`, fp32 and
tf32) or max|want| over the whole output (`"scale": "max_abs_ref"`, bf16 and
fp16, whose rounding error follows the output's magnitude rather than each
element's). NaN matches NaN; integer and boolean outputs must be equal.

FLOPs of the block (`block_flops`): the GEMMs count 2 * params * tokens
(params: the weight matrices, 4 * hidden^2 for attention plus 2 * hidden *
ffn for the MLP, per layer; tokens = batch * seq), attention 4 * batch *
seq^2 * hidden per layer (Q K^T and P V, 2 * b * s^2 * h each, the full
square: causality is not discounted); layer norms, softmax, GELU and the
biases are not counted. MFU = achieved FLOP/s / the GPU's dense bf16 peak
(PEAK_BF16_TFLOPS, by GPU name; unknown GPUs print TFLOP/s only).
"""

import argparse
import json
import math
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

# Tolerances per precision (see the module docstring for the criterion).
# dnnc_gpu_prep.py writes them into manifest.json; gpu-check uses those.
TOLERANCES = {
    "fp32": {"rtol": 1e-3, "atol": 1e-4, "scale": "elementwise"},
    "tf32": {"rtol": 1e-2, "atol": 1e-3, "scale": "elementwise"},
    "bf16": {"rtol": 5e-2, "atol": 0.0, "scale": "max_abs_ref"},
    "fp16": {"rtol": 5e-2, "atol": 0.0, "scale": "max_abs_ref"},
}

# Dense (no sparsity) bf16 tensor-core peak in TFLOP/s, matched in order
# against the GPU name (nvidia-smi / torch.cuda.get_device_name): the first
# entry whose every word occurs in the name wins.
PEAK_BF16_TFLOPS = [
    (("H200",), 989.0),
    (("H100", "PCIe"), 756.0),
    (("H100", "NVL"), 835.0),
    (("H100",), 989.0),  # SXM (e.g. "NVIDIA H100 80GB HBM3")
    (("A100",), 312.0),
]

# ONNX TensorProto data types -> numpy (bf16 is decoded separately).
ONNX_FLOAT, ONNX_UINT8, ONNX_INT8, ONNX_UINT16, ONNX_INT16 = 1, 2, 3, 4, 5
ONNX_INT32, ONNX_INT64, ONNX_BOOL, ONNX_FLOAT16, ONNX_DOUBLE = 6, 7, 9, 10, 11
ONNX_UINT32, ONNX_UINT64, ONNX_BFLOAT16 = 12, 13, 16
NUMPY_OF_ONNX = {
    ONNX_FLOAT: np.float32, ONNX_UINT8: np.uint8, ONNX_INT8: np.int8,
    ONNX_UINT16: np.uint16, ONNX_INT16: np.int16, ONNX_INT32: np.int32,
    ONNX_INT64: np.int64, ONNX_BOOL: np.bool_, ONNX_FLOAT16: np.float16,
    ONNX_DOUBLE: np.float64, ONNX_UINT32: np.uint32, ONNX_UINT64: np.uint64,
    ONNX_BFLOAT16: np.uint16,  # bits; widened to float32 by bf16_bits_to_f32
}


# --------------------------------------------------------------------------
# Small helpers shared with dnnc_gpu_prep.py.

def round_to_bf16(a):
    """float32 array -> float32 array of bf16-representable values (round to
    nearest even, what a float -> bf16 conversion does)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    u = u.astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def round_to(a, precision):
    """Values rounded to `precision` (bf16/fp16), as float32."""
    if precision == "bf16":
        return round_to_bf16(a)
    if precision == "fp16":
        return np.asarray(a, dtype=np.float32).astype(np.float16).astype(
            np.float32)
    return np.asarray(a, dtype=np.float32)


def block_digest(weights, x):
    """SHA-256 (hex) of the block's float32 weights (by name, sorted) and
    input: what gpu-prep compiled and what the checker rebuilt must agree."""
    import hashlib
    h = hashlib.sha256()
    for name in sorted(weights):
        h.update(name.encode() + b"\0")
        h.update(np.ascontiguousarray(weights[name], np.float32).tobytes())
    h.update(np.ascontiguousarray(x, np.float32).tobytes())
    return h.hexdigest()


def block_arrays(gen_gpt, block, scratch, timeout=600):
    """The block's weights {initializer name: float32 array} (the `h.*` ones;
    the causal mask is built by gpt_block) and its input x, rounded to the
    block's precision: made by `gen_gpt` (a path to python/gen_gpt.py) with
    `--weights portable` and the recorded seeds. gpu-prep compiles the plan
    from these very values; `block["digest"]`, when present, is checked.
    Raises RuntimeError when generation fails or the digest differs."""
    import importlib.util
    import onnx
    from onnx import numpy_helper
    gen = block["generator"]
    prec = block["precision"]
    path = os.path.join(scratch, "block.onnx")
    cmd = [sys.executable, gen_gpt, "--block-only", "--weights", "portable",
           "--seed", str(gen["seed"]), "-o", path]
    for key in ("layers", "hidden", "heads", "seq", "batch"):
        cmd += [f"--{key}", str(block[key])]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("gen_gpt.py failed: " +
                           (p.stderr.strip() or p.stdout.strip()))
    model = onnx.load(path)
    weights = {i.name: round_to(numpy_helper.to_array(i), prec)
               for i in model.graph.initializer
               if i.data_type == onnx.TensorProto.FLOAT
               and i.name.startswith("h.")}
    spec = importlib.util.spec_from_file_location("dnnc_gen_gpt", gen_gpt)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = round_to(module.PortableRng(gen["x_seed"]).standard_normal(
        (block["batch"], block["seq"], block["hidden"])), prec)
    digest = block_digest(weights, x)
    if block.get("digest") and digest != block["digest"]:
        raise RuntimeError(
            f"the regenerated block weights differ from the compiled ones "
            f"(digest {digest[:16]}... vs {block['digest'][:16]}...): "
            f"gen_gpt.py changed between gpu-prep and this run?")
    return weights, x


# --------------------------------------------------------------------------
# TensorProto (.pb) decoding, as dnnc-run writes its outputs.

def _varint(buf, pos):
    """Decodes one protobuf varint at `pos`; returns (value, next pos)."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def read_tensor_proto(path):
    """Reads an ONNX TensorProto file into a numpy array (float32 for bf16).
    Handles raw_data and the typed fields (packed or not); no external
    data, no segments, no strings."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, dtype, raw, name = [], None, None, ""
    varints = {5: [], 7: [], 11: []}   # int32_data, int64_data, uint64_data
    floats, doubles = [], []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            if field == 1:
                dims.append(value)
            elif field == 2:
                dtype = value
            elif field in varints:
                varints[field].append(value)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            payload = buf[pos:pos + n]
            pos += n
            if field == 1:      # packed dims
                p = 0
                while p < len(payload):
                    v, p = _varint(payload, p)
                    dims.append(v)
            elif field == 4:
                floats.append(np.frombuffer(payload, "<f4"))
            elif field == 10:
                doubles.append(np.frombuffer(payload, "<f8"))
            elif field in varints:
                p = 0
                while p < len(payload):
                    v, p = _varint(payload, p)
                    varints[field].append(v)
            elif field == 8:
                name = payload.decode("utf-8", "replace")
            elif field == 9:
                raw = payload
        elif wire == 5:
            if field == 4:
                floats.append(np.frombuffer(buf[pos:pos + 4], "<f4"))
            pos += 4
        elif wire == 1:
            if field == 10:
                doubles.append(np.frombuffer(buf[pos:pos + 8], "<f8"))
            pos += 8
        else:
            raise ValueError(f"{path}: unsupported wire type {wire}")
    if dtype not in NUMPY_OF_ONNX:
        raise ValueError(f"{path}: unsupported TensorProto data_type {dtype}")
    np_type = np.dtype(NUMPY_OF_ONNX[dtype])
    count = math.prod(dims)
    if raw is not None:
        a = np.frombuffer(raw, np_type.newbyteorder("<")).astype(np_type)
    elif dtype == ONNX_FLOAT:
        a = np.concatenate(floats) if floats else np.zeros(0, np.float32)
    elif dtype == ONNX_DOUBLE:
        a = np.concatenate(doubles) if doubles else np.zeros(0, np.float64)
    else:
        field = 7 if dtype == ONNX_INT64 else (
            11 if dtype in (ONNX_UINT32, ONNX_UINT64) else 5)
        values = [v - (1 << 64) if v >= 1 << 63 else v
                  for v in varints[field]]
        if dtype in (ONNX_FLOAT16, ONNX_BFLOAT16):
            # int32_data holds the bit patterns of 16-bit floats.
            a = np.array([v & 0xFFFF for v in values],
                         dtype=np.uint16).view(np_type)
        else:
            a = np.array(values, dtype=np.int64).astype(np_type)
    if a.size != count:
        raise ValueError(f"{path}: {a.size} values for shape {dims}")
    a = a.reshape(dims)
    if dtype == ONNX_BFLOAT16:
        a = bf16_bits_to_f32(a)
    return a


# --------------------------------------------------------------------------
# Comparison.

def compare(got, want, tol):
    """Compares `got` with the reference `want` under `tol` (a TOLERANCES
    entry). Returns a dict: ok, max_abs, rel_to_max (max_abs / max|want|),
    worst (max over elements of |diff| / bound; <= 1 passes) and why (the
    reason of a failure, else "")."""
    res = {"ok": False, "max_abs": float("nan"), "rel_to_max": float("nan"),
           "worst": float("nan"), "why": ""}
    if tuple(got.shape) != tuple(want.shape):
        res["why"] = f"shape {list(got.shape)}, expected {list(want.shape)}"
        return res
    if not (np.issubdtype(want.dtype, np.floating)
            or np.issubdtype(got.dtype, np.floating)):
        equal = np.array_equal(got, want)
        mismatches = int(np.count_nonzero(got != want))
        res.update(ok=equal, max_abs=float(np.max(np.abs(
            got.astype(np.float64) - want.astype(np.float64)), initial=0)),
            rel_to_max=0.0, worst=0.0 if equal else float("inf"),
            why="" if equal else f"{mismatches} elements differ")
        return res
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if np.any(nan_g != nan_w):
        res["why"] = (f"NaN in {int(np.count_nonzero(nan_g & ~nan_w))} "
                      f"elements where the reference has none")
        return res
    finite = ~nan_w
    diff = np.abs(g - w)[finite]
    ref_abs = np.abs(w)[finite]
    max_ref = float(ref_abs.max(initial=0.0))
    max_abs = float(diff.max(initial=0.0))
    scale = ref_abs if tol["scale"] == "elementwise" else max_ref
    bound = tol["atol"] + tol["rtol"] * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(diff == 0, 0.0, diff / bound)
    worst = float(ratio.max(initial=0.0))
    res.update(max_abs=max_abs,
               rel_to_max=max_abs / max_ref if max_ref else float(
                   "inf" if max_abs else 0.0),
               worst=worst, ok=bool(worst <= 1.0))
    if not res["ok"]:
        res["why"] = (f"{int(np.count_nonzero(ratio > 1))} of {diff.size} "
                      f"elements out of tolerance")
    return res


def format_compare(label, got_shape, res):
    """One line for an output comparison."""
    line = (f"{label} {list(got_shape)} max_abs {res['max_abs']:.3e} "
            f"rel_to_max {res['rel_to_max']:.3e} "
            f"worst/bound {res['worst']:.3g} "
            f"{'PASS' if res['ok'] else 'FAIL'}")
    if res["why"]:
        line += f" ({res['why']})"
    return line


# --------------------------------------------------------------------------
# Running dnnc-run.

def run_dnnc(dnnc_run, plan, inputs, out_dir, timeout, extra=()):
    """Runs `dnnc-run plan --input ... --output-dir out_dir [extra]`.
    Returns (ok, stdout, message): message is the error text on failure."""
    cmd = [dnnc_run, plan]
    for path in inputs:
        cmd += ["--input", path]
    cmd += ["--output-dir", out_dir, *extra]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "", f"dnnc-run timed out after {timeout} s"
    except OSError as e:
        return False, "", f"cannot run {dnnc_run}: {e}"
    if p.returncode != 0:
        err = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return False, p.stdout, (f"dnnc-run exit {p.returncode}: " +
                                 (" | ".join(err[-3:]) if err else
                                  "(no output)"))
    return True, p.stdout, ""


TIME_LINE = re.compile(
    r"time: mean ([0-9.eE+-]+) ms/run, min ([0-9.eE+-]+) ms, (\d+) runs")


def parse_time(stdout):
    """(mean_ms, min_ms) from dnnc-run's `--time` line, or None."""
    m = TIME_LINE.search(stdout)
    return (float(m.group(1)), float(m.group(2))) if m else None


class Budget:
    """Time limits: each dnnc-run gets at most `per_run` seconds and no more
    than what is left of `total` (counted from creation), so that the check
    ends, with its summary, within `total` seconds plus the torch work."""

    def __init__(self, per_run, total):
        self.per_run = per_run
        self.end = time.monotonic() + total

    def next(self):
        """Seconds for the next run; 0 when the budget is spent."""
        left = int(self.end - time.monotonic())
        return 0 if left < 5 else min(self.per_run, left)


def check_plans(folder, manifest, dnnc_run, budget, work):
    """Runs and compares every plan of the manifest. Returns (passed,
    failed, lines of failures)."""
    passed = failed = 0
    failures = []
    ref_kind = manifest["reference"]
    for entry in manifest["plans"]:
        label = f"{entry['model']} {entry['precision']}"
        tol = manifest["tolerances"][entry["precision"]]
        if entry["status"] != "ok":
            print(f"{label}: FAIL (not compiled by gpu-prep: "
                  f"{entry['error']})", flush=True)
            failed += 1
            failures.append(f"{label}: not compiled")
            continue
        out_dir = os.path.join(work, entry["model"], entry["precision"])
        inputs = [os.path.join(folder, e["file"]) for e in entry["inputs"]]
        start = time.monotonic()
        timeout = budget.next()
        if not timeout:
            print(f"{label}: FAIL (not run: the time budget is spent)",
                  flush=True)
            failed += 1
            failures.append(f"{label}: not run (time budget)")
            continue
        ok, _, msg = run_dnnc(dnnc_run, os.path.join(folder, entry["plan"]),
                              inputs, out_dir, timeout)
        seconds = time.monotonic() - start
        if not ok:
            print(f"{label}: FAIL ({msg})", flush=True)
            failed += 1
            failures.append(f"{label}: {msg}")
            continue
        all_ok = True
        for out in entry["outputs"]:
            tag = f"{label} output_{out['index']} {out['name']}"
            try:
                got = read_tensor_proto(
                    os.path.join(out_dir, f"output_{out['index']}.pb"))
                want = np.load(os.path.join(folder, out["ref"][ref_kind]))
            except (OSError, ValueError) as e:
                print(f"{tag}: FAIL ({e})", flush=True)
                all_ok = False
                continue
            res = compare(got, want, tol)
            print(format_compare(tag, got.shape, res), flush=True)
            all_ok &= res["ok"]
        print(f"{label}: {'PASS' if all_ok else 'FAIL'} "
              f"({seconds:.1f} s, vs {ref_kind})", flush=True)
        if all_ok:
            passed += 1
        else:
            failed += 1
            failures.append(f"{label}: output mismatch")
    return passed, failed, failures


# --------------------------------------------------------------------------
# The GPT block in PyTorch.

def gpt_block(x, w, block, attention="eager"):
    """The decoder blocks of `python/gen_gpt.py --block-only`, op for op.

    Per layer i (prefix p = f"h.{i}"; matrices are [in, out], y = x @ W + b):

        a = LayerNorm(x; p.ln_1, eps)
        q, k, v = a @ W_q + b_q, ...          split into heads [b, nh, s, hd]
        scores = (q @ k^T) * (1 / sqrt(hd)) + causal_mask   (mask: 0 on and
                 below the diagonal, block["mask_value"] above)
        x = x + (softmax(scores) @ v, heads merged) @ W_o + b_o
        m = LayerNorm(x; p.ln_2, eps) @ W_fc + b_fc
        m = 0.5 * m * (1 + tanh(sqrt(2/pi) * (m + 0.044715 m^3)))
        x = x + m @ W_proj + b_proj

    `attention="sdpa"` computes the attention with
    torch.nn.functional.scaled_dot_product_attention(is_causal=True) instead
    (the fused kernels; the same function up to rounding, since exp(-10000)
    underflows to 0)."""
    import torch
    import torch.nn.functional as F
    b, s, h = x.shape
    nh = block["heads"]
    hd = h // nh
    eps = block["eps"]
    mask = None
    if attention == "eager":
        mask = torch.triu(torch.full((s, s), block["mask_value"],
                                     device=x.device, dtype=x.dtype), 1)
    scale = 1.0 / math.sqrt(hd)

    def linear(t, p):
        return t @ w[p + ".weight"] + w[p + ".bias"]

    for i in range(block["layers"]):
        p = f"h.{i}"
        a = F.layer_norm(x, (h,), w[p + ".ln_1.weight"], w[p + ".ln_1.bias"],
                         eps)
        q, k, v = (linear(a, f"{p}.attn.{n}").view(b, s, nh, hd)
                   .transpose(1, 2) for n in "qkv")
        if attention == "eager":
            scores = (q @ k.transpose(-1, -2)) * scale + mask
            ctx = torch.softmax(scores, dim=-1) @ v
        else:
            ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ctx = ctx.transpose(1, 2).reshape(b, s, h)
        x = x + linear(ctx, p + ".attn.o")
        m = F.layer_norm(x, (h,), w[p + ".ln_2.weight"], w[p + ".ln_2.bias"],
                         eps)
        m = F.gelu(linear(m, p + ".mlp.fc"), approximate="tanh")
        x = x + linear(m, p + ".mlp.proj")
    return x


def block_flops(block):
    """FLOPs of one forward pass of the block (see the module docstring):
    2 * params * tokens for the GEMMs + 4 * b * s^2 * h for attention, per
    layer."""
    b, s, h, f = block["batch"], block["seq"], block["hidden"], block["ffn"]
    params = 4 * h * h + 2 * h * f
    return block["layers"] * (2 * params * b * s + 4 * b * s * s * h)


def peak_bf16_tflops(gpu_name):
    """Dense bf16 peak of the named GPU (TFLOP/s), or None if unknown."""
    for words, peak in PEAK_BF16_TFLOPS:
        if all(word.lower() in gpu_name.lower() for word in words):
            return peak
    return None


TORCH_DTYPES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16",
                "fp16": "float16"}


def time_torch(fn, device, warmup, iters):
    """Per-iteration times of `fn()` in ms: torch.cuda.Event pairs on a GPU,
    perf_counter on the CPU. Returns the list."""
    import torch
    for _ in range(warmup):
        fn()
    times = []
    if device.type == "cuda":
        torch.cuda.synchronize()
        events = [(torch.cuda.Event(enable_timing=True),
                   torch.cuda.Event(enable_timing=True))
                  for _ in range(iters)]
        for start, end in events:
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        times = [start.elapsed_time(end) for start, end in events]
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def check_block(folder, manifest, dnnc_run, budget, work, dry_run, warmup,
                iters, gpu_name):
    """The GPT-block benchmark and its output check. Returns (passed,
    failed, failures)."""
    block = manifest.get("block")
    if not block:
        print("block: none in the manifest (prepared with --no-block)")
        return 0, 0, []
    prec = block["precision"]
    label = f"block {prec}"
    if block["status"] != "ok":
        print(f"{label}: FAIL (not compiled by gpu-prep: {block['error']})")
        return 0, 1, [f"{label}: not compiled"]
    import torch
    device = torch.device("cpu" if dry_run else "cuda")
    if dry_run:
        torch.set_num_threads(min(2, os.cpu_count() or 1))  # a shared box
    if not dry_run and not torch.cuda.is_available():
        print(f"{label}: FAIL (torch sees no CUDA device)")
        return 0, 1, [f"{label}: torch sees no CUDA device"]
    dtype = getattr(torch, TORCH_DTYPES[prec])
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    flops = block_flops(block)
    shape = f"{block['layers']} layer(s), hidden {block['hidden']}, heads " \
            f"{block['heads']}, seq {block['seq']}, batch {block['batch']}"
    print(f"{label}: {shape}; {flops / 1e9:.1f} GFLOP per forward; "
          f"warmup {warmup}, {iters} timed runs", flush=True)

    # The weights and the input, made again (not stored in the folder).
    try:
        weights, x_np = block_arrays(os.path.join(folder, "gen_gpt.py"),
                                     block, tempfile.mkdtemp(dir=work))
    except (RuntimeError, subprocess.TimeoutExpired, ImportError) as e:
        print(f"{label}: FAIL (cannot make the block's weights: {e})")
        return 0, 1, [f"{label}: no weights"]
    os.makedirs(os.path.join(work, "inputs", "block"), exist_ok=True)
    inputs = [os.path.join(work, "inputs", "block", "x.npy")]
    np.save(inputs[0], x_np)

    # dnnc: one run that times and writes the outputs of its last run.
    out_dir = os.path.join(work, "block")
    timeout = budget.next()
    if not timeout:
        print(f"{label}: FAIL (not run: the time budget is spent)")
        return 0, 1, [f"{label}: not run (time budget)"]
    ok, stdout, msg = run_dnnc(
        dnnc_run, os.path.join(folder, block["plan"]), inputs, out_dir,
        timeout, ["--warmup", str(warmup), "--repeat", str(iters), "--time"])
    if not ok:
        print(f"{label}: FAIL ({msg})")
        return 0, 1, [f"{label}: {msg}"]
    timing = parse_time(stdout)
    if not timing:
        print(f"{label}: FAIL (no `time:` line from dnnc-run: {stdout!r})")
        return 0, 1, [f"{label}: no timing"]
    dnnc_mean, dnnc_min = timing
    got = read_tensor_proto(os.path.join(out_dir, "output_0.pb"))

    # torch: the same weights and input, in the block's precision.
    with torch.inference_mode():
        w = {name: torch.from_numpy(a).to(device=device, dtype=dtype)
             for name, a in weights.items()}
        x = torch.from_numpy(np.ascontiguousarray(x_np)).to(device, dtype)
        results = {}
        for attention in ("eager", "sdpa"):
            fn = lambda: gpt_block(x, w, block, attention)  # noqa: E731
            y = fn()
            times = time_torch(fn, device, warmup, iters)
            results[attention] = (y.float().cpu().numpy(), times)
        # An fp32 reference for context (not a pass criterion).
        torch.backends.cuda.matmul.allow_tf32 = False
        w32 = {k: v.float() for k, v in w.items()}
        y32 = gpt_block(x.float(), w32, block, "eager").cpu().numpy()
        del w, w32, x

    def tflops(ms):
        return flops / (ms * 1e-3) / 1e12

    peak = peak_bf16_tflops(gpu_name) if not dry_run else None
    unit = "GPU" if not dry_run else "CPU (dry run)"

    def perf(ms):
        text = f"{tflops(ms):.2f} TFLOP/s"
        if peak and prec == "bf16":
            text += f", MFU {100 * tflops(ms) / peak:.1f}% of {peak:g}"
        return text

    print(f"{label}: dnnc  {dnnc_mean:9.3f} ms mean, {dnnc_min:9.3f} ms min "
          f"(dnnc-run wall time per run); {perf(dnnc_mean)}")
    for attention, (_, times) in results.items():
        med, mean, best = (statistics.median(times), statistics.fmean(times),
                           min(times))
        print(f"{label}: torch {attention:5s} {med:9.3f} ms median, "
              f"{mean:9.3f} ms mean, {best:9.3f} ms min "
              f"({'cuda events' if device.type == 'cuda' else 'wall'}); "
              f"{perf(med)}; ratio torch/dnnc {med / dnnc_mean:.2f} "
              f"(torch median / dnnc mean; min/min {best / dnnc_min:.2f}; "
              f"> 1: dnnc faster)")
    if peak is None and not dry_run:
        print(f"{label}: no bf16 peak known for '{gpu_name}': MFU not shown")
    print(f"{label}: ran on {unit}")

    tol = manifest["tolerances"][prec]
    res = compare(got, results["eager"][0], tol)
    print(format_compare(f"{label} dnnc vs torch eager ({prec})", got.shape,
                         res))
    for name, arr in (("dnnc", got), ("torch eager", results["eager"][0]),
                      ("torch sdpa", results["sdpa"][0])):
        r = compare(arr, y32, tol)
        print(f"{label} {name} vs torch fp32 (context): max_abs "
              f"{r['max_abs']:.3e} rel_to_max {r['rel_to_max']:.3e}")
    if res["ok"]:
        return 1, 0, []
    return 0, 1, [f"{label}: dnnc output differs from torch's"]


# --------------------------------------------------------------------------

def check_training(folder, manifest, dnnc_run, budget, key="training"):
    """Trains the manifest's training plan `key` (`training`: fp32,
    `training_bf16`: mixed precision) on the device and compares the loss of
    every step with the cpu plan's (gpu-prep ran it). Returns (passed,
    failed, failures)."""
    entry = manifest.get(key)
    if not entry:
        print(f"{key}: no such training plan in this folder (older "
              "gpu-prep)", flush=True)
        return 0, 0, []
    if entry["status"] != "ok":
        print(f"{key}: FAIL (not compiled by gpu-prep: "
              f"{entry.get('error')})", flush=True)
        return 0, 1, [f"{key}: not compiled"]
    timeout = budget.next()
    if not timeout:
        return 0, 1, [f"{key}: not run (time budget)"]
    cmd = [dnnc_run, os.path.join(folder, entry["plan"]), "--train",
           "--steps", str(entry["steps"]), "--data",
           os.path.join(folder, entry["data"])]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return 0, 1, [f"{key}: timed out"]
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit status"])[-1]
        print(f"{key}: FAIL ({msg})", flush=True)
        return 0, 1, [f"{key}: {msg}"]
    lines = [line.split() for line in p.stdout.splitlines()
             if line.startswith("step ")]
    got = [float(w[3]) for w in lines]
    times = [float(w[5]) for w in lines]
    want = entry["losses"]
    worst = max((abs(g - w) / max(abs(w), 1e-30)
                 for g, w in zip(got, want)), default=float("inf"))
    ok = len(got) == len(want) and worst <= entry["rtol"]
    step_ms = statistics.median(times[1:]) if len(times) > 1 else float("nan")
    print(f"{key}: {len(got)} steps, worst relative loss difference to "
          f"the cpu plan {worst:.1e} (bound {entry['rtol']:.0e}), median "
          f"step {step_ms:.3f} ms: {'PASS' if ok else 'FAIL'}", flush=True)
    return (1, 0, []) if ok else (0, 1, [f"{key}: loss mismatch"])


def load_manifest(folder):
    """FOLDER/manifest.json, with a clear error if missing."""
    path = os.path.join(folder, "manifest.json")
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e} (prepare the folder with "
                 f"scripts/gpu-prep.sh)")


def main():
    """Command line: see the module docstring and `--help`."""
    parser = argparse.ArgumentParser(
        description="Run and check a gpu-prep folder (docs/gpu-check.md).")
    parser.add_argument("step", choices=["check", "plans", "block",
                                         "training"],
                        help="check: plans, training, then block")
    parser.add_argument("folder")
    parser.add_argument("--dnnc-run", required=True)
    parser.add_argument("--cpu-dry-run", action="store_true",
                        help="cpu plans, torch on the CPU, few iterations")
    parser.add_argument("--timeout", type=int, default=60,
                        help="seconds per dnnc-run at most (default 60)")
    parser.add_argument("--budget", type=int, default=180,
                        help="seconds for all dnnc-runs together (default "
                             "180); plans left when it is spent fail")
    parser.add_argument("--warmup", type=int, default=None,
                        help="benchmark warm-up runs (default 10; dry 1)")
    parser.add_argument("--iters", type=int, default=None,
                        help="benchmark timed runs (default 50; dry 3)")
    parser.add_argument("--gpu-name", default="",
                        help="GPU name for the peak table (default: torch's)")
    parser.add_argument("--started-at", type=float, default=None,
                        help="epoch seconds gpu-check.sh started (for the "
                             "total time printed before the summary)")
    parser.add_argument("--work", default=None,
                        help="scratch folder for outputs (default: a temp)")
    args = parser.parse_args()
    folder = os.path.abspath(args.folder)
    manifest = load_manifest(folder)
    if args.cpu_dry_run and manifest["target"] != "cpu":
        sys.exit(f"error: --cpu-dry-run needs a folder prepared with "
                 f"--target cpu; {folder} has {manifest['target']} plans")
    warmup = args.warmup if args.warmup is not None else (
        1 if args.cpu_dry_run else 10)
    iters = args.iters if args.iters is not None else (
        3 if args.cpu_dry_run else 50)
    work = args.work or tempfile.mkdtemp(prefix="dnnc-gpu-check-")
    gpu_name = args.gpu_name
    if not gpu_name and not args.cpu_dry_run and args.step != "plans":
        import torch
        if torch.cuda.is_available():
            gpu_name = torch.cuda.get_device_name(0)

    budget = Budget(args.timeout, args.budget)
    passed = failed = 0
    failures = []
    if args.step in ("check", "plans"):
        print(f"== plans ({manifest['target']}, reference "
              f"{manifest['reference']})", flush=True)
        p, f, fl = check_plans(folder, manifest, args.dnnc_run, budget,
                               work)
        passed, failed, failures = passed + p, failed + f, failures + fl
    if args.step in ("check", "training"):
        print("== training", flush=True)
        for key in ("training", "training_bf16"):
            p, f, fl = check_training(folder, manifest, args.dnnc_run, budget,
                                      key)
            passed, failed, failures = passed + p, failed + f, failures + fl
    if args.step in ("check", "block"):
        print("== GPT-block benchmark", flush=True)
        try:
            p, f, fl = check_block(folder, manifest, args.dnnc_run,
                                   budget, work, args.cpu_dry_run,
                                   warmup, iters, gpu_name)
        except Exception as e:  # noqa: BLE001 (report and count, go on)
            p, f, fl = 0, 1, [f"block: {type(e).__name__}: {e}"]
            print(f"block: FAIL ({type(e).__name__}: {e})")
        passed, failed, failures = passed + p, failed + f, failures + fl
    if failures:
        print("failures:")
        for line in failures:
            print(f"  {line}")
    if args.started_at:
        print(f"total time {time.time() - args.started_at:.0f} s "
              f"(build and checks)")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
