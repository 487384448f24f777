#!/usr/bin/env python3
"""Checks whole-model gradients of `dnnc --mode=grad` against PyTorch autograd.

Each model is built in PyTorch in float64 with its loss (cross-entropy over
integer labels), exported with torch.onnx.export (TorchScript exporter,
opset 17), compiled by dnnc with `--mode=grad --loss-output=loss` and run by
dnnc-run on random inputs. The loss and the gradient of every parameter
(every floating-point initializer, matched to its PyTorch parameter by value,
possibly transposed by the exporter) must equal PyTorch's within 1e-7
relative (Frobenius norm per tensor).

Models: an MLP, a small CNN (convolutions with padding, stride and groups,
max and average pooling), and a one-block GPT (embeddings, layer norm,
causal attention, GELU MLP, tied-free LM head).

With `--ranks N --parallel SPEC` the plan is compiled with
`--parallel=SPEC` and run under `mpirun -np N`: the gradient program is
partitioned like any other (the backward collectives come from sharding
propagation and partitioning).

A fused projection the graph phase splits (`dnn-split-fused-projections`)
reports its gradient per slice, `NAME[a:b]_grad`; the slices are joined
along the dim they cover.

Usage: grad_vs_torch.py [--dnnc dnnc] [--dnnc-run dnnc-run] [--ranks N
[--parallel SPEC]] [--only NAME,...]. Exit status 77 when torch is missing.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

import onnx
from onnx import numpy_helper

torch.manual_seed(0)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x, labels):
        return F.cross_entropy(self.fc2(F.relu(self.fc1(x))), labels)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x, labels):
        y = F.max_pool2d(F.relu(self.c1(x)), 2)
        y = F.avg_pool2d(torch.tanh(self.c2(y)), 3, stride=1, padding=1)
        y = y.mean(dim=(2, 3))
        return F.cross_entropy(self.fc(y), labels)


class Gpt(nn.Module):
    def __init__(self, vocab=32, seq=8, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)
        self.lnf = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask.double())

    def forward(self, ids, labels):
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        split = lambda z: z.view(b, t, self.heads, -1).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        att = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5) + self.mask
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.proj(y)
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.reshape(b * t, -1), labels.reshape(-1))


def models():
    yield "mlp", Mlp(), (torch.randn(4, 16, dtype=torch.float64),
                         torch.randint(0, 10, (4,)))
    yield "cnn", Cnn(), (torch.randn(2, 3, 8, 8, dtype=torch.float64),
                         torch.randint(0, 5, (2,)))
    yield "gpt", Gpt(), (torch.randint(0, 32, (2, 8)),
                         torch.randint(0, 32, (2, 8)))


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])}: "
                           f"{(proc.stderr or proc.stdout).strip()[:600]}")


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)


def check(name, model, inputs, opts, work):
    model = model.double()
    # Distinct values everywhere (layer norms start equal), so that every
    # initializer names one parameter.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, inputs, path, dynamo=False, opset_version=17,
                      input_names=["x", "labels"], output_names=["loss"],
                      do_constant_folding=False)
    loss = model(*inputs)
    loss.backward()
    params = {n: p.detach().numpy() for n, p in model.named_parameters()}
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}

    plan = os.path.join(work, "plan.bin")
    cmd = [opts.dnnc, path, "--mode=grad", "--loss-output=loss", "-o", plan]
    if opts.parallel:
        cmd.append("--parallel=" + opts.parallel)
    run(cmd)
    run_cmd = [opts.dnnc_run, plan, "--output-dir", os.path.join(work, "out")]
    for input_name, value in zip(["x", "labels"], inputs):
        pb = os.path.join(work, input_name + ".pb")
        with open(pb, "wb") as f:
            f.write(numpy_helper.from_array(value.numpy(), input_name)
                    .SerializeToString())
        run_cmd += ["--input", pb]
    if opts.ranks > 1:
        run_cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                   str(opts.ranks)] + run_cmd
    run(run_cmd)

    graph = onnx.load(path).graph
    # Outputs: the loss, then NAME_grad per float input and parameter; each
    # TensorProto carries its name.
    outputs = {}
    k = 0
    while os.path.exists(os.path.join(work, "out", f"output_{k}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(work, "out", f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        outputs[t.name] = numpy_helper.to_array(t)
        k += 1
    problems = []
    if rel(np.asarray(outputs["loss"]), loss.detach().numpy()) > 1e-9:
        problems.append(f"loss {outputs['loss']} != torch {loss.item()}")
    matched = set()
    for init in graph.initializer:
        if init.data_type != onnx.TensorProto.DOUBLE or not init.dims:
            continue
        value = numpy_helper.to_array(init)
        owner = None
        for pname, p in params.items():
            if pname in matched:
                continue
            if p.shape == value.shape and np.array_equal(p, value):
                owner, transform = pname, lambda g: g
                break
            if p.ndim == 2 and p.T.shape == value.shape and \
                    np.array_equal(p.T, value):
                owner, transform = pname, lambda g: g.T
                break
        if owner is None:
            continue  # a buffer (the attention mask), not a parameter
        matched.add(owner)
        grad = outputs.get(init.name + "_grad")
        if grad is None:
            # A fused projection split by the graph phase: one gradient per
            # slice, `NAME[a:b]_grad`, along the dim of that extent.
            parts = sorted(
                (int(n[len(init.name) + 1:].split(":")[0]), v)
                for n, v in outputs.items()
                if n.startswith(init.name + "[") and n.endswith("]_grad"))
            if parts:
                pieces = [v for _, v in parts]
                dim = next((d for d in range(value.ndim)
                            if sum(p.shape[d] for p in pieces) ==
                            value.shape[d] and all(
                                p.shape[:d] + p.shape[d + 1:] ==
                                value.shape[:d] + value.shape[d + 1:]
                                for p in pieces)), None)
                if dim is not None:
                    grad = np.concatenate(pieces, axis=dim)
        if grad is None:
            problems.append(f"no gradient output for {init.name}")
            continue
        err = rel(transform(grad), grads[owner])
        if err > 1e-7:
            problems.append(f"{owner}: relative error {err:.3g}")
    missing = set(params) - matched
    if missing:
        problems.append("parameters without an initializer: " +
                        ", ".join(sorted(missing)))
    return "; ".join(problems)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dnnc", default="dnnc")
    parser.add_argument("--dnnc-run", default="dnnc-run")
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--parallel", default="")
    parser.add_argument("--only", default="")
    opts = parser.parse_args()
    only = set(filter(None, opts.only.split(",")))
    passed = failed = 0
    for name, model, inputs in models():
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="dnnc-grad-torch-") as work:
            try:
                reason = check(name, model, inputs, opts, work)
            except RuntimeError as e:
                reason = str(e)
        if reason:
            failed += 1
            print(f"FAIL {name}: {reason}")
        else:
            passed += 1
            print(f"PASS {name}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
