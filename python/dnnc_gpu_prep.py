#!/usr/bin/env python3
"""Prepares a folder for scripts/gpu-check.sh (docs/gpu-check.md).

Runs where dnnc is built (it needs dnnc, dnnc-run, onnx, onnxruntime, numpy
and torch); the folder it writes is all a GPU machine needs (CUDA, CMake,
Python with numpy, torch and onnx; no MLIR, no dnnc):

    OUT/runtime/                      a copy of runtime/ (dnnc-run's sources)
    OUT/googletest/                   GoogleTest's sources (for the runtime's
                                      CUDA unit tests), when installed here
    OUT/gpu-check.sh, OUT/dnnc_gpu_check.py, OUT/gen_gpt.py, OUT/README.md
                                      the checker, the block's generator and
                                      docs/gpu-check.md
    OUT/models/M/inputs/input_K_NAME.npy        model M's inputs, in graph
                                                input order
    OUT/models/M/ref/onnxruntime/output_K.npy   onnxruntime's outputs
    OUT/models/M/ref/dnnc-cpu/output_K.npy      dnnc --target=cpu (fp32) on
                                                this machine
    OUT/models/M/P/plan.bin           M compiled with --target=T (default
                                      cuda) --precision=P, for one device
    OUT/block/plan.bin                the GPT block (gen_gpt.py --block-only
                                      --weights portable) compiled at the
                                      block precision; its weights and input
                                      are not stored: the checker makes them
                                      again (bit-identical, PortableRng) and
                                      checks the manifest's digest of them
    OUT/manifest.json                 what is where, the tolerances, the
                                      block definition and seeds, what failed

Inputs: the models under test/models keep the inputs of their
test_data_set_0 (made by python/export_models.py with a fixed seed: token ids
within the vocabulary, 0/1 attention masks with padding); other models get
inputs from `--seed` (floats standard normal; integer inputs: `*mask*` all
ones, `*type*` zeros, others ids below the smallest table they index).

The reference the checker compares with is onnxruntime's output (an
independent implementation); dnnc's own cpu fp32 output is stored too, and
its agreement with onnxruntime (fp32 tolerance) is recorded in the manifest
and printed here.

The block: `gen_gpt.py --block-only` with random weights (`--seed`); for
bf16 and fp16 the weights and the input are rounded to that precision first,
so that dnnc and torch start from exactly the same values. Before anything
else the PyTorch definition the checker times (dnnc_gpu_check.gpt_block) is
checked against onnxruntime on a tiny block from the same generator.

A plan that fails to compile is reported (model, precision, dnnc's error),
marked in the manifest and counted by the checker as failed; the others go
on. The exit status is 1 when anything failed (the folder is still usable).

Usage (scripts/gpu-prep.sh passes its arguments here):

    python3 python/dnnc_gpu_prep.py OUT [--dnnc PATH] [--dnnc-run PATH]
        [--target cuda|cpu] [--models mlp,gpt2,bert,resnet18]
        [--precisions fp32,tf32,bf16] [--block-precision bf16]
        [--block-layers 1 --block-hidden 1024 --block-heads 16
         --block-seq 1024 --block-batch 8] [--no-block] [--seed 0]
        [--dnnc-flag=FLAG ...] [--timeout S] [--force]
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dnnc_gpu_check as check  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The models known by name (others: NAME=PATH on --models).
MODELS = {
    "mlp": "examples/mlp.onnx",
    "gpt2": "test/models/gpt2/model.onnx",
    "bert": "test/models/bert/model.onnx",
    "resnet18": "test/models/resnet18/model.onnx",
}
DEFAULT_MODELS = "mlp,gpt2,bert,resnet18"
DEFAULT_PRECISIONS = "fp32,tf32,bf16"

# The tiny block that validates the PyTorch block definition.
TINY_BLOCK = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "batch": 2}


def log(msg):
    """Progress on stdout, flushed (the output is read as it goes)."""
    print(msg, flush=True)


def run(cmd, timeout, **kw):
    """subprocess.run with captured text output; returns (ok, message):
    message is the last lines of stderr (or stdout) on failure."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout} s"
    except OSError as e:
        return False, str(e)
    if p.returncode == 0:
        return True, ""
    lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
    return False, (f"exit {p.returncode}: " + " | ".join(lines[-4:])
                   if lines else f"exit {p.returncode} (no output)")


class Dnnc:
    """The dnnc compiler: its path, whether it has --precision, and the
    extra flags to pass."""

    def __init__(self, path, extra, timeout):
        self.path = path
        self.extra = list(extra)
        self.timeout = timeout
        help_text = subprocess.run([path, "--help"], capture_output=True,
                                   text=True).stdout
        self.has_precision = "--precision" in help_text
        v = subprocess.run([path, "--version"], capture_output=True,
                           text=True)
        self.version = " ".join((v.stdout + v.stderr).split())[:200]

    def compile(self, model, target, precision, out):
        """Compiles `model` to `out`; returns (ok, error)."""
        cmd = [self.path, model, f"--target={target}", "--mesh=1", "-o", out]
        if self.has_precision:
            cmd.append(f"--precision={precision}")
        elif precision != "fp32":
            return False, (f"{self.path} has no --precision option (needed "
                           f"for {precision}); use a dnnc built with it")
        cmd += self.extra
        os.makedirs(os.path.dirname(out), exist_ok=True)
        ok, msg = run(cmd, self.timeout)
        if ok and not os.path.exists(out):
            return False, f"dnnc exited 0 but wrote no {out}"
        return ok, msg


def plan_signature(dnnc_run, plan, timeout):
    """The plan's world size and input/output signature, from
    `dnnc-run PLAN --print-plan`: {"world": N, "inputs": [(name, dtype,
    shape text)], "outputs": [...]}; None if it cannot be read."""
    p = subprocess.run([dnnc_run, plan, "--print-plan"], capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        return None
    sig = {"world": None, "inputs": [], "outputs": []}
    section = None
    for line in p.stdout.splitlines():
        m = re.match(r"plan: target (\S+), world size (\d+)", line)
        if m:
            sig["target"], sig["world"] = m.group(1), int(m.group(2))
        elif line in ("inputs:", "outputs:"):
            section = line[:-1]
        elif section and (m := re.match(r"  \d+ '([^']*)' (\w+)\[(.*)\]$",
                                        line)):
            sig[section].append((m.group(1), m.group(2), m.group(3)))
        else:
            section = None
    return sig


def check_plan(dnnc_run, plan, label, inputs, timeout):
    """Problems of a compiled plan: not one rank, or an input whose stored
    dtype is not the one the plan reads. Returns (signature, problems)."""
    sig = plan_signature(dnnc_run, plan, timeout)
    if sig is None:
        return None, [f"{label}: dnnc-run --print-plan cannot read the plan"]
    problems = []
    if sig["world"] != 1:
        problems.append(f"{label}: the plan has {sig['world']} ranks, not 1")
    for (name, dtype, _), entry in zip(sig["inputs"], inputs):
        if dtype != entry["dtype"]:
            problems.append(f"{label}: the plan reads input {name} as "
                            f"{dtype}; the stored input is {entry['dtype']}")
    for line in problems:
        log(f"{line} (warning)")
    return sig, problems


def graph_io(model):
    """(inputs, outputs) of a model: lists of (name, elem_type, shape); the
    inputs exclude initializers."""
    inits = {i.name for i in model.graph.initializer}

    def info(v):
        t = v.type.tensor_type
        return (v.name, t.elem_type,
                [d.dim_value if d.HasField("dim_value") else d.dim_param
                 for d in t.shape.dim])
    return ([info(v) for v in model.graph.input if v.name not in inits],
            [info(v) for v in model.graph.output])


def make_inputs(model_path, model, seed):
    """The model's inputs as numpy arrays in graph input order: from
    test_data_set_0 next to the model if there, else generated (see the
    module docstring)."""
    inputs, _ = graph_io(model)
    data_dir = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    if os.path.isdir(data_dir):
        arrays = []
        for k in range(len(inputs)):
            t = onnx.TensorProto()
            with open(os.path.join(data_dir, f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            arrays.append(numpy_helper.to_array(t))
        return arrays, f"{os.path.relpath(data_dir, REPO)}"
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in model.graph.initializer}
    arrays = []
    for name, elem, shape in inputs:
        if any(not isinstance(d, int) or d <= 0 for d in shape):
            raise ValueError(f"input {name} has a dynamic shape {shape}")
        np_type = onnx.helper.tensor_dtype_to_np_dtype(elem)
        if np.issubdtype(np_type, np.floating):
            arrays.append(rng.standard_normal(shape).astype(np_type))
        elif "mask" in name:
            arrays.append(np.ones(shape, np_type))
        elif "type" in name:
            arrays.append(np.zeros(shape, np_type))
        else:
            # Ids below the smallest table this input indexes (Gather).
            limit = 2
            sizes = [list(inits[n.input[0]].dims)[
                next((a.i for a in n.attribute if a.name == "axis"), 0)]
                for n in model.graph.node
                if n.op_type == "Gather" and n.input[1] == name
                and n.input[0] in inits]
            if sizes:
                limit = min(sizes)
            arrays.append(rng.integers(0, limit, shape).astype(np_type))
    return arrays, f"generated (seed {seed})"


def run_onnxruntime(model_path, model, arrays):
    """onnxruntime's outputs (CPU) for the inputs."""
    import onnxruntime as ort
    inputs, _ = graph_io(model)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(model_path, opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, {name: a for (name, _, _), a in
                           zip(inputs, arrays)})


def read_pb(path):
    """A TensorProto file via onnx, checked against the checker's own
    decoder (which the GPU machine uses, without onnx)."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    a = numpy_helper.to_array(t)
    mine = check.read_tensor_proto(path)
    if a.dtype.kind == "f" or mine.dtype.kind == "f":
        same = np.array_equal(a.astype(np.float64), mine.astype(np.float64),
                              equal_nan=True)
    else:
        same = np.array_equal(a, mine)
    if not same or a.shape != mine.shape:
        raise RuntimeError(f"dnnc_gpu_check.read_tensor_proto disagrees with "
                           f"onnx on {path}")
    return a


def prepare_model(name, model_path, args, dnnc, out, scratch):
    """Inputs, both references and the plans of one model. Returns
    (plan entries for the manifest, list of problems)."""
    problems = []
    model = onnx.load(model_path)
    mdir = os.path.join(out, "models", name)
    inputs, outputs = graph_io(model)
    arrays, source = make_inputs(model_path, model, args.seed)
    input_entries = []
    os.makedirs(os.path.join(mdir, "inputs"), exist_ok=True)
    for k, ((iname, _, _), a) in enumerate(zip(inputs, arrays)):
        rel = os.path.join("models", name, "inputs", f"input_{k}_{iname}.npy")
        np.save(os.path.join(out, rel), a)
        input_entries.append({"name": iname, "file": rel,
                              "dtype": str(a.dtype), "shape": list(a.shape)})
    log(f"{name}: inputs from {source}: " + ", ".join(
        f"{e['name']} {e['dtype']}{e['shape']}" for e in input_entries))

    # onnxruntime's reference.
    refs = {}
    ort_out = run_onnxruntime(model_path, model, arrays)
    for k, a in enumerate(ort_out):
        rel = os.path.join("models", name, "ref", "onnxruntime",
                           f"output_{k}.npy")
        os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
        np.save(os.path.join(out, rel), a)
        refs.setdefault(k, {})["onnxruntime"] = rel

    # dnnc's cpu fp32 reference, checked against onnxruntime.
    cpu_plan = os.path.join(scratch, name, "cpu-fp32.bin")
    cpu_check = {"status": "ok"}
    ok, msg = dnnc.compile(model_path, "cpu", "fp32", cpu_plan)
    if ok:
        run_dir = os.path.join(scratch, name, "cpu-out")
        ok, _, msg = check.run_dnnc(
            args.dnnc_run, cpu_plan,
            [os.path.join(out, e["file"]) for e in input_entries], run_dir,
            args.timeout)
    if not ok:
        problems.append(f"{name}: dnnc cpu fp32 reference failed: {msg}")
        log(f"{name}: FAILED dnnc cpu fp32 reference: {msg}")
        cpu_check = {"status": "failed", "error": msg}
    else:
        worst = []
        for k, ref in enumerate(ort_out):
            a = read_pb(os.path.join(run_dir, f"output_{k}.pb"))
            rel = os.path.join("models", name, "ref", "dnnc-cpu",
                               f"output_{k}.npy")
            os.makedirs(os.path.dirname(os.path.join(out, rel)),
                        exist_ok=True)
            np.save(os.path.join(out, rel), a)
            refs[k]["dnnc-cpu"] = rel
            res = check.compare(a, ref, check.TOLERANCES["fp32"])
            worst.append({"output": k, "ok": res["ok"],
                          "max_abs": res["max_abs"],
                          "rel_to_max": res["rel_to_max"]})
            log(check.format_compare(
                f"{name}: dnnc cpu fp32 vs onnxruntime output_{k}",
                a.shape, res))
            if not res["ok"]:
                problems.append(f"{name}: dnnc cpu fp32 output_{k} differs "
                                f"from onnxruntime (warning only)")
        cpu_check["outputs"] = worst
    out_entries = [{"index": k, "name": oname, "ref": refs[k]}
                   for k, (oname, _, _) in enumerate(outputs)]

    entries = []
    for prec in args.precisions:
        rel = os.path.join("models", name, prec, "plan.bin")
        start = time.monotonic()
        if args.target == "cpu" and prec == "fp32" and \
                cpu_check["status"] == "ok":
            os.makedirs(os.path.dirname(os.path.join(out, rel)),
                        exist_ok=True)
            shutil.copyfile(cpu_plan, os.path.join(out, rel))
            ok, msg = True, ""
        else:
            ok, msg = dnnc.compile(model_path, args.target, prec,
                                   os.path.join(out, rel))
        entry = {"model": name, "precision": prec, "target": args.target,
                 "source": os.path.relpath(model_path, REPO),
                 "plan": rel if ok else None,
                 "status": "ok" if ok else "compile-failed",
                 "error": msg, "inputs": input_entries,
                 "outputs": out_entries, "cpu_reference_check": cpu_check}
        entries.append(entry)
        if ok:
            log(f"{name} {prec}: compiled --target={args.target} "
                f"({time.monotonic() - start:.1f} s)")
            entry["signature"], probs = check_plan(
                args.dnnc_run, os.path.join(out, rel), f"{name} {prec}",
                input_entries, args.timeout)
            problems += probs
        else:
            log(f"{name} {prec}: FAILED to compile --target={args.target}: "
                f"{msg}")
            problems.append(f"{name} {prec}: dnnc failed: {msg}")
    return entries, problems


def gen_block(path, shape, seed, timeout):
    """Writes a block model with python/gen_gpt.py --block-only (random
    weights)."""
    cmd = [sys.executable, os.path.join(REPO, "python", "gen_gpt.py"),
           "--block-only", "--weights", "random", "--seed", str(seed),
           "-o", path]
    for key in ("layers", "hidden", "heads", "seq", "batch"):
        cmd += [f"--{key}", str(shape[key])]
    ok, msg = run(cmd, timeout)
    if not ok:
        raise RuntimeError(f"gen_gpt.py --block-only failed: {msg}")


def block_definition(shape, precision):
    """The block definition the checker's PyTorch side reproduces."""
    return {
        "layers": shape["layers"], "hidden": shape["hidden"],
        "heads": shape["heads"], "ffn": 4 * shape["hidden"],
        "seq": shape["seq"], "batch": shape["batch"], "eps": 1e-5,
        "mask_value": -10000.0, "precision": precision,
        "definition": (
            "per layer p=h.i: a=LayerNorm(x; p.ln_1, eps); q,k,v = a@W+b "
            "(W [in,out]) split into heads; scores=(q@k^T)/sqrt(hidden/heads)"
            " + causal mask (0 on/below the diagonal, mask_value above); "
            "x += (softmax(scores)@v merged)@W_o+b_o; m=LayerNorm(x; p.ln_2);"
            " m=gelu_tanh(m@W_fc+b_fc); x += m@W_proj+b_proj. Input x "
            "[batch,seq,hidden], output y (same). dnnc_gpu_check.gpt_block "
            "implements it."),
    }


def validate_torch_block(scratch, seed, timeout):
    """Checks dnnc_gpu_check.gpt_block (both attention variants, fp32, CPU)
    against onnxruntime on a tiny block. Returns (ok, summary dict)."""
    import torch
    path = os.path.join(scratch, "tiny-block.onnx")
    gen_block(path, TINY_BLOCK, seed, timeout)
    model = onnx.load(path)
    block = block_definition(TINY_BLOCK, "fp32")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((TINY_BLOCK["batch"], TINY_BLOCK["seq"],
                             TINY_BLOCK["hidden"])).astype(np.float32)
    want = run_onnxruntime(path, model, [x])[0]
    w = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
         for i in model.graph.initializer if i.name.startswith("h.")}
    summary = {"shape": TINY_BLOCK, "ok": True}
    with torch.inference_mode():
        for attention in ("eager", "sdpa"):
            got = check.gpt_block(torch.from_numpy(x), w, block,
                                  attention).numpy()
            res = check.compare(got, want, check.TOLERANCES["fp32"])
            log(check.format_compare(
                f"block: torch {attention} (fp32) vs onnxruntime on a tiny "
                f"block", got.shape, res))
            summary[attention] = {"max_abs": res["max_abs"],
                                  "ok": res["ok"]}
            summary["ok"] &= res["ok"]
    return summary["ok"], summary


def prepare_block(args, dnnc, out, scratch):
    """The GPT-block benchmark material. Returns (manifest entry,
    problems)."""
    problems = []
    shape = {k: getattr(args, f"block_{k}")
             for k in ("layers", "hidden", "heads", "seq", "batch")}
    prec = args.block_precision
    block = block_definition(shape, prec)
    ok, validation = validate_torch_block(scratch, args.seed, args.timeout)
    block["torch_validation"] = validation
    if not ok:
        problems.append("block: dnnc_gpu_check.gpt_block differs from the "
                        "ONNX block (onnxruntime)")

    # The weights and the input are not stored (they would not fit the
    # folder's budget): the checker makes them again with the folder's copy
    # of gen_gpt.py (--weights portable: bit-identical everywhere) and checks
    # the digest. The plan is compiled from the same values, rounded to the
    # block precision, so that the plan and torch use the very same ones.
    block.update(shape)
    block["generator"] = {"script": "gen_gpt.py", "weights": "portable",
                          "seed": args.seed, "x_seed": args.seed + 1}
    weights, x = check.block_arrays(os.path.join(REPO, "python",
                                                 "gen_gpt.py"),
                                    block, scratch, args.timeout)
    block["digest"] = check.block_digest(weights, x)
    model = onnx.load(os.path.join(scratch, "block.onnx"))
    for init in model.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(
                check.round_to(numpy_helper.to_array(init), prec),
                init.name))
    rounded = os.path.join(scratch, "block-rounded.onnx")
    onnx.save(model, rounded)
    block["inputs"] = [{"name": "x", "dtype": "float32",
                        "shape": list(x.shape)}]
    block["flops"] = check.block_flops(block)

    rel_plan = os.path.join("block", "plan.bin")
    start = time.monotonic()
    ok, msg = dnnc.compile(rounded, args.target, prec,
                           os.path.join(out, rel_plan))
    block.update(plan=rel_plan if ok else None,
                 status="ok" if ok else "compile-failed", error=msg,
                 target=args.target)
    if ok:
        log(f"block {prec}: compiled --target={args.target} "
            f"({time.monotonic() - start:.1f} s); {block['flops'] / 1e9:.1f}"
            f" GFLOP per forward")
        block["signature"], probs = check_plan(
            args.dnnc_run, os.path.join(out, rel_plan), f"block {prec}",
            block["inputs"], args.timeout)
        problems += probs
    else:
        log(f"block {prec}: FAILED to compile --target={args.target}: {msg}")
        problems.append(f"block {prec}: dnnc failed: {msg}")
    return block, problems


# Where Debian's libgtest-dev installs GoogleTest's sources.
GTEST_SOURCES = "/usr/src/googletest/googletest"


def prepare_training(args, dnnc, out, scratch, steps=10, precision="fp32"):
    """A training plan for the target: a small MLP (onnx.helper, fixed seed)
    trained `steps` AdamW steps with clipping and a warm-up, its data as
    .npy files, and the loss of every step from the same step compiled for
    the cpu target and run here (the reference). With `precision` bf16:
    mixed precision (f32 master weights), held to 2e-2 relative (bf16
    rounds to 2^-9; the GPU's GEMMs accumulate in another order). Returns
    (entry, problems)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(args.seed)
    batch, features, hidden, classes = 32, 64, 128, 10
    inits = [numpy_helper.from_array(
                 (0.2 * rng.standard_normal((features, hidden)))
                 .astype(np.float32), "w1"),
             numpy_helper.from_array(np.zeros(hidden, np.float32), "b1"),
             numpy_helper.from_array(
                 (0.2 * rng.standard_normal((hidden, classes)))
                 .astype(np.float32), "w2")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Tanh", ["hb"], ["t"]),
             helper.make_node("MatMul", ["t", "w2"], ["logits"])]
    graph = helper.make_graph(
        nodes, "train_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, features])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [batch, classes])], inits)
    model = os.path.join(out, "training", "mlp.onnx")
    data = os.path.join(out, "training", "data")
    os.makedirs(data, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), model)
    np.save(os.path.join(data, "x.npy"), rng.standard_normal(
        (batch * steps, features)).astype(np.float32))
    np.save(os.path.join(data, "labels.npy"),
            rng.integers(0, classes, (batch * steps,)))
    flags = ["--mode=train", "--loss=cross-entropy:logits,labels",
             "--optimizer=adamw", "--lr=0.01", "--clip-grad-norm=1.0",
             "--warmup-steps=3", f"--precision={precision}"]
    entry = {"model": "training/mlp.onnx", "data": "training/data",
             "steps": steps, "plan": None, "status": "prep-failed",
             "precision": precision,
             "rtol": 1e-4 if precision == "fp32" else 2e-2, "losses": None}
    suffix = "" if precision == "fp32" else f".{precision}"
    plan = os.path.join(out, "training", f"mlp.{args.target}{suffix}.bin")
    ok, msg = run([dnnc.path, model, f"--target={args.target}", "-o", plan]
                  + flags, args.timeout)
    if not ok:
        entry["error"] = msg
        return entry, [f"training: compile: {msg}"]
    cpu_plan = os.path.join(scratch, f"train.cpu{suffix}.bin")
    ok, msg = run([dnnc.path, model, "--target=cpu", "-o", cpu_plan] + flags,
                  args.timeout)
    if ok:
        p = subprocess.run([args.dnnc_run, cpu_plan, "--train", "--steps",
                            str(steps), "--data", data], capture_output=True,
                           text=True, timeout=args.timeout)
        ok, msg = p.returncode == 0, p.stderr.strip()[:300]
    if not ok:
        entry["error"] = msg
        return entry, [f"training: cpu reference: {msg}"]
    entry["losses"] = [float(line.split()[3]) for line in p.stdout.splitlines()
                       if line.startswith("step ")]
    entry["plan"] = os.path.relpath(plan, out)
    entry["status"] = "ok"
    log(f"training ({precision}): {entry['plan']} ({steps} steps; cpu losses "
        f"{entry['losses'][0]:.4f} -> {entry['losses'][-1]:.4f})")
    return entry, []


def copy_tools(out):
    """The runtime sources and the checker into the folder."""
    shutil.copytree(os.path.join(REPO, "runtime"), os.path.join(out,
                                                                "runtime"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(os.path.join(REPO, "scripts", "gpu-check.sh"), out)
    shutil.copy2(os.path.join(REPO, "python", "dnnc_gpu_check.py"), out)
    shutil.copy2(os.path.join(REPO, "python", "gen_gpt.py"), out)
    # GoogleTest's sources (Debian's libgtest-dev), so that the GPU machine
    # builds the runtime's CUDA unit tests even without an installed GTest.
    if os.path.isfile(os.path.join(GTEST_SOURCES, "CMakeLists.txt")):
        shutil.copytree(GTEST_SOURCES, os.path.join(out, "googletest"),
                        ignore=shutil.ignore_patterns("docs", "samples",
                                                      "test"))
    else:
        log(f"no GoogleTest sources at {GTEST_SOURCES}: the GPU machine "
            f"runs the runtime's CUDA unit tests only if it has GTest")
    shutil.copy2(os.path.join(REPO, "docs", "gpu-check.md"),
                 os.path.join(out, "README.md"))


def cuda_release():
    """The CUDA toolkit release ("13.0") of the nvcc on PATH or in
    /usr/local/cuda (the one dnnc's cuda target builds rank code with, whose
    libcudart.so.MAJOR the plans need at run time), or None."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        text = subprocess.run([nvcc, "--version"], capture_output=True,
                              text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def git_commit():
    """The repository's HEAD commit (with -dirty), or 'unknown'."""
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"],
                              capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain"],
                               capture_output=True, text=True).stdout
        return head + ("-dirty" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def parse_args():
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(
        description="Prepare a folder for scripts/gpu-check.sh "
                    "(docs/gpu-check.md).")
    p.add_argument("out", help="the folder to write (must not exist, or be "
                   "empty, unless --force)")
    build = os.environ.get("DNNC_BUILD", os.path.join(REPO, "build"))
    p.add_argument("--dnnc", default=os.path.join(build, "bin", "dnnc"))
    p.add_argument("--dnnc-run", default=None,
                   help="default: next to --dnnc")
    p.add_argument("--target", choices=["cuda", "cpu"], default="cuda",
                   help="plan target (cpu: to test the scripts without a "
                        "GPU)")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"comma list of {sorted(MODELS)} or NAME=PATH "
                        f"(default {DEFAULT_MODELS})")
    p.add_argument("--precisions", default=DEFAULT_PRECISIONS,
                   help=f"comma list of {sorted(check.TOLERANCES)} "
                        f"(default {DEFAULT_PRECISIONS})")
    p.add_argument("--block-precision", default="bf16",
                   choices=sorted(check.TOLERANCES))
    p.add_argument("--block-layers", type=int, default=1)
    p.add_argument("--block-hidden", type=int, default=1024)
    p.add_argument("--block-heads", type=int, default=16)
    p.add_argument("--block-seq", type=int, default=1024)
    p.add_argument("--block-batch", type=int, default=8)
    p.add_argument("--no-block", action="store_true",
                   help="no GPT-block benchmark material")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dnnc-flag", action="append", default=[],
                   help="extra flag for every dnnc compile (repeatable; "
                        "write --dnnc-flag=--x=y)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds per dnnc compile or run (default 900)")
    p.add_argument("--force", action="store_true",
                   help="replace OUT if it exists")
    args = p.parse_args()
    args.dnnc = os.path.abspath(args.dnnc)
    args.dnnc_run = os.path.abspath(
        args.dnnc_run or os.path.join(os.path.dirname(args.dnnc), "dnnc-run"))
    for tool in (args.dnnc, args.dnnc_run):
        if not os.access(tool, os.X_OK):
            p.error(f"{tool} is not an executable (build dnnc, or pass "
                    f"--dnnc / --dnnc-run)")
    args.precisions = [x for x in args.precisions.split(",") if x]
    bad = [x for x in args.precisions if x not in check.TOLERANCES]
    if bad:
        p.error(f"unknown precision(s) {bad}; known: "
                f"{sorted(check.TOLERANCES)}")
    args.models_list = []
    for item in (x for x in args.models.split(",") if x):
        name, _, path = item.partition("=")
        path = path or MODELS.get(name)
        if not path:
            p.error(f"unknown model '{name}' (known: {sorted(MODELS)}; or "
                    f"NAME=PATH)")
        args.models_list.append((name, os.path.abspath(
            os.path.join(REPO, path))))
    if args.block_hidden % args.block_heads:
        p.error("--block-hidden must be a multiple of --block-heads")
    return args


def main():
    """Writes the folder; prints a summary; exit 1 if anything failed."""
    args = parse_args()
    out = os.path.abspath(args.out)
    if os.path.exists(out) and os.listdir(out):
        if not args.force:
            sys.exit(f"error: {out} exists and is not empty (use --force to "
                     f"replace it)")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    dnnc = Dnnc(args.dnnc, args.dnnc_flag, args.timeout)
    log(f"dnnc: {args.dnnc} ({dnnc.version}); --precision "
        f"{'supported' if dnnc.has_precision else 'NOT supported (fp32 only)'}"
        f"; target {args.target}")
    copy_tools(out)
    problems, plans = [], []
    with tempfile.TemporaryDirectory(prefix="dnnc-gpu-prep-") as scratch:
        for name, path in args.models_list:
            try:
                entries, probs = prepare_model(name, path, args, dnnc, out,
                                               scratch)
            except Exception as e:  # noqa: BLE001 (report, go on)
                log(f"{name}: FAILED: {type(e).__name__}: {e}")
                probs = [f"{name}: {type(e).__name__}: {e}"]
                entries = [{"model": name, "precision": prec,
                            "target": args.target, "plan": None,
                            "status": "prep-failed", "error": str(e),
                            "inputs": [], "outputs": []}
                           for prec in args.precisions]
            plans += entries
            problems += probs
        block = None
        if not args.no_block:
            try:
                block, probs = prepare_block(args, dnnc, out, scratch)
            except Exception as e:  # noqa: BLE001 (report, go on)
                log(f"block: FAILED: {type(e).__name__}: {e}")
                block = {"precision": args.block_precision,
                         "status": "prep-failed", "error": str(e)}
                probs = [f"block: {type(e).__name__}: {e}"]
            problems += probs
        training, probs = prepare_training(args, dnnc, out, scratch)
        problems += probs
        training_bf16, probs = prepare_training(args, dnnc, out, scratch,
                                                precision="bf16")
        problems += probs
    manifest = {
        "format": 1,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "repo_commit": git_commit(),
        "dnnc": dnnc.version,
        "target": args.target,
        "cuda_release": cuda_release() if args.target == "cuda" else None,
        "reference": "onnxruntime",
        "tolerances": check.TOLERANCES,
        "plans": plans,
        "block": block,
        "training": training,
        "training_bf16": training_bf16,
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    compiled = sum(e["status"] == "ok" for e in plans)
    size = sum(os.path.getsize(os.path.join(d, n))
               for d, _, names in os.walk(out) for n in names)
    log(f"\n== summary: {out} ({size / 2**20:.1f} MiB)")
    log(f"plans: {compiled} of {len(plans)} compiled "
        f"(--target={args.target})" + (
            f"; block: {block['status']}" if block else "; no block"))
    for line in problems:
        log(f"  problem: {line}")
    if not problems:
        log("no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
