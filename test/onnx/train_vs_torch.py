#!/usr/bin/env python3
"""Trains models with `dnnc --mode=train` + `dnnc-run --train` and PyTorch.

Each model is built in PyTorch (float32), exported with torch.onnx.export
(TorchScript exporter, opset 17, no constant folding, so that every
initializer is a parameter under its PyTorch name), compiled by dnnc with a
loss and an optimizer, and trained for --steps steps by dnnc-run on random
data written as `.npy` files. The same model, from the same initial
weights, is trained by PyTorch on the same batches with the same optimizer
(torch.optim.AdamW or SGD) and learning-rate schedule (LambdaLR). Checked:

* the loss at every step within 1e-4 relative of PyTorch's;
* on one rank, every parameter after the last step within 1e-4 relative
  (Frobenius norm) of PyTorch's, read from dnnc-run's final checkpoint; a
  parameter whose gradient is zero in exact arithmetic (a key bias) moves
  by rounding noise alone, and is instead held to three times the distance
  between PyTorch's own float32 and float64 runs (reported as "at the noise
  floor");
* the weights `dnnc-run --export-dir` writes, put back into the ONNX model
  by python/dnnc_update_weights.py, make onnxruntime compute the trained
  PyTorch model's output (within 1e-4 relative);
* with `--ranks N --parallel SPEC`, the plan is also compiled with
  `--parallel=SPEC` and run under `mpirun -np N`: its loss at every step
  within 1e-5 relative of the one-rank run's, and its exported weights
  (blocks gathered from the ranks) within 1e-4 of the one-rank run's.

Models: an MLP (cross-entropy added by `--loss`), a ResNet-style CNN
(residual blocks; batch norm with frozen statistics), the same CNN with
batch norm in training mode (`resnet-bn`: batch statistics, and the
running statistics each step updates, compared too; not split into
micro-batches, which would change its statistics, so skipped by pipeline
and micro-batch configurations), a small
GPT-2 (fused QKV, causal attention, GELU; the loss node in the graph:
`--loss-output`), a small BERT (bidirectional attention, token types, a
classification head on the first token) and a small Llama-style decoder
(RMSNorm, rotary embeddings, SwiGLU, no biases). Buffers (attention masks,
rotary tables, batch-norm statistics) are initializers like the parameters:
`--freeze` keeps them constant; the statistics of a batch norm in training
mode are updated by the step instead.

ONNX's BatchNormalization updates the running variance with the batch's
biased variance, PyTorch's with the unbiased one (`n / (n - 1)` times it):
the PyTorch reference of `resnet-bn` follows ONNX there (OnnxBatchNorm2d).

Usage: train_vs_torch.py [--dnnc dnnc] [--dnnc-run dnnc-run] [--steps N]
[--ranks N --parallel SPEC [--parallel-flag FLAG]...] [--dnnc-flag FLAG]...
[--only NAME,...] [--keep DIR]
[--optimizer sgd|adamw].
Exit status 77 when torch is missing.
"""

import argparse
import copy
import math
import os
import struct
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
import onnxruntime as ort

UPDATE_WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "..", "python", "dnnc_update_weights.py")

torch.set_num_threads(1)
torch.manual_seed(0)


class OnnxBatchNorm2d(nn.BatchNorm2d):
    """nn.BatchNorm2d whose running variance follows ONNX's
    BatchNormalization (the batch's biased variance): the reference for a
    batch norm exported in training mode. Swapped in for nn.BatchNorm2d
    after the export (same parameters and buffers)."""

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        with torch.no_grad():
            m = x.mean((0, 2, 3))
            v = x.var((0, 2, 3), unbiased=False)
            self.running_mean.mul_(1 - self.momentum).add_(
                m.to(self.running_mean.dtype) * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(
                v.to(self.running_var.dtype) * self.momentum)
        return F.batch_norm(x, None, None, self.weight, self.bias, True, 0.0,
                            self.eps)


# Models trained on the whole batch at once (batch statistics): no
# micro-batches; run only when named by --only. `resnet-bn` uses SiLU: with
# ReLU, a pre-activation within float32 rounding of zero (8e-7 in one of the
# suite's batches) takes the other side of the kink in dnnc and in PyTorch,
# and through batch statistics that one element moves the gradients of the
# blocks before it by percents, which no float32 run reproduces.
WHOLE_BATCH = {"resnet-bn"}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc3(torch.tanh(self.fc2(F.relu(self.fc1(x)))))


class Block(nn.Module):
    """A ResNet basic block."""

    def __init__(self, cin, cout, stride, act=F.relu):
        super().__init__()
        self.act = act
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.skip = None
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride,
                                                bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.act(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return self.act(y + (x if self.skip is None else self.skip(x)))


class ResNet(nn.Module):
    """ResNet-18's structure (stem, 4 stages of 2 basic blocks) at small
    width."""

    def __init__(self, width=8, classes=10, act=F.relu):
        super().__init__()
        self.act = act
        self.stem = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        layers, cin = [], width
        for i, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            for j in range(2):
                layers.append(Block(cin, cout, 2 if j == 0 and i > 0 else 1,
                                    act))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        y = self.layers(self.act(self.bn(self.stem(x))))
        return self.fc(y.mean(dim=(2, 3)))


def attention(q, k, v, heads, mask):
    b, t, d = q.shape
    split = lambda z: z.view(b, t, heads, d // heads).transpose(1, 2)
    q, k, v = split(q), split(k), split(v)
    att = q @ k.transpose(-2, -1) / math.sqrt(d // heads)
    if mask is not None:
        att = att + mask
    return (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)


class Gpt(nn.Module):
    """GPT-2's structure: learned positions, pre-norm blocks, fused QKV, the
    LM head tied to the token embedding (one parameter used by the first
    and the last layer), initialized as GPT-2's (std 0.02)."""

    def __init__(self, vocab=64, seq=16, dim=32, heads=4, layers=2):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                ln1=nn.LayerNorm(dim), qkv=nn.Linear(dim, 3 * dim),
                proj=nn.Linear(dim, dim), ln2=nn.LayerNorm(dim),
                up=nn.Linear(dim, 4 * dim), down=nn.Linear(4 * dim, dim))))
        self.lnf = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        with torch.no_grad():
            self.tok.weight.mul_(0.02)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, ids, labels):
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t))
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).chunk(3, dim=-1)
            x = x + blk["proj"](attention(q, k, v, self.heads, self.mask))
            x = x + blk["down"](F.gelu(blk["up"](blk["ln2"](x))))
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.reshape(b * t, -1), labels.reshape(-1))


class Bert(nn.Module):
    """BERT's structure: post-norm encoder, token types, a classifier on the
    first token."""

    def __init__(self, vocab=64, seq=16, dim=32, heads=4, layers=2,
                 classes=3):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.typ = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                q=nn.Linear(dim, dim), k=nn.Linear(dim, dim),
                v=nn.Linear(dim, dim), o=nn.Linear(dim, dim),
                ln1=nn.LayerNorm(dim), up=nn.Linear(dim, 4 * dim),
                down=nn.Linear(4 * dim, dim), ln2=nn.LayerNorm(dim))))
        self.pool = nn.Linear(dim, dim)
        self.cls = nn.Linear(dim, classes)

    def forward(self, ids, types):
        t = ids.shape[1]
        x = self.ln(self.tok(ids) + self.pos(torch.arange(t)) +
                    self.typ(types))
        for blk in self.blocks:
            a = attention(blk["q"](x), blk["k"](x), blk["v"](x), self.heads,
                          None)
            x = blk["ln1"](x + blk["o"](a))
            x = blk["ln2"](x + blk["down"](F.gelu(blk["up"](x))))
        return self.cls(torch.tanh(self.pool(x[:, 0])))


class RmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * \
            self.weight


class Llama(nn.Module):
    """A Llama-style decoder: RMSNorm, rotary embeddings, SwiGLU, no
    biases."""

    def __init__(self, vocab=64, seq=16, dim=32, heads=4, layers=2,
                 hidden=64):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                n1=RmsNorm(dim), q=nn.Linear(dim, dim, bias=False),
                k=nn.Linear(dim, dim, bias=False),
                v=nn.Linear(dim, dim, bias=False),
                o=nn.Linear(dim, dim, bias=False), n2=RmsNorm(dim),
                gate=nn.Linear(dim, hidden, bias=False),
                up=nn.Linear(dim, hidden, bias=False),
                down=nn.Linear(hidden, dim, bias=False))))
        self.norm = RmsNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        half = dim // heads // 2
        freq = 1.0 / (10000 ** (torch.arange(half).float() / half))
        angles = torch.arange(seq).float()[:, None] * freq[None, :]
        self.register_buffer("cos", torch.cat([angles.cos()] * 2, -1))
        self.register_buffer("sin", torch.cat([angles.sin()] * 2, -1))
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)

    def rope(self, x):
        b, t, d = x.shape
        x = x.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        h = x.shape[-1] // 2
        rotated = torch.cat([-x[..., h:], x[..., :h]], -1)
        x = x * self.cos + rotated * self.sin
        return x.transpose(1, 2).reshape(b, t, d)

    def forward(self, ids):
        x = self.tok(ids)
        for blk in self.blocks:
            h = blk["n1"](x)
            a = attention(self.rope(blk["q"](h)), self.rope(blk["k"](h)),
                          blk["v"](h), self.heads, self.mask)
            x = x + blk["o"](a)
            h = blk["n2"](x)
            x = x + blk["down"](F.silu(blk["gate"](h)) * blk["up"](h))
        return self.head(self.norm(x))


def models(batch):
    """(name, model, example inputs, data maker, dnnc loss flags, loss fn
    over (model, batch arrays))."""
    def ce(out, labels):
        return F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))

    yield ("mlp", Mlp(), ["x"],
           lambda r, n: {"x": r.standard_normal((n, 16)).astype(np.float32),
                         "labels": r.integers(0, 10, (n,))},
           ["--loss=cross-entropy:logits,labels"],
           lambda m, d: ce(m(d["x"]), d["labels"]))
    yield ("resnet", ResNet(), ["x"],
           lambda r, n: {"x": r.standard_normal((n, 3, 16, 16))
                         .astype(np.float32),
                         "labels": r.integers(0, 10, (n,))},
           ["--loss=cross-entropy:logits,labels",
            "--freeze=*running_mean,*running_var"],
           lambda m, d: ce(m(d["x"]), d["labels"]))
    yield ("gpt", Gpt(), ["ids", "labels"],
           lambda r, n: {"ids": r.integers(0, 64, (n, 16)),
                         "labels": r.integers(0, 64, (n, 16))},
           ["--loss-output=loss", "--freeze=mask"],
           lambda m, d: m(d["ids"], d["labels"]))
    yield ("bert", Bert(), ["ids", "types"],
           lambda r, n: {"ids": r.integers(0, 64, (n, 16)),
                         "types": r.integers(0, 2, (n, 16)),
                         "labels": r.integers(0, 3, (n,))},
           ["--loss=cross-entropy:logits,labels"],
           lambda m, d: ce(m(d["ids"], d["types"]), d["labels"]))
    yield ("llama", Llama(), ["ids"],
           lambda r, n: {"ids": r.integers(0, 64, (n, 16)),
                         "labels": r.integers(0, 64, (n, 16))},
           ["--loss=cross-entropy:logits,labels", "--freeze=mask,cos,sin"],
           lambda m, d: ce(m(d["ids"]), d["labels"]))
    yield ("resnet-bn", ResNet(act=F.silu), ["x"],
           lambda r, n: {"x": r.standard_normal((n, 3, 16, 16))
                         .astype(np.float32),
                         "labels": r.integers(0, 10, (n,))},
           ["--loss=cross-entropy:logits,labels"],
           lambda m, d: ce(m(d["x"]), d["labels"]))


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])}: "
                           f"{(proc.stderr or proc.stdout).strip()[:800]}")
    return proc.stdout


def losses_of(stdout):
    out = []
    for line in stdout.splitlines():
        words = line.split()
        if len(words) >= 4 and words[0] == "step" and words[2] == "loss":
            out.append(float(words[3]))
    return out


def scales_of(stdout):
    """The loss scale of each step dnnc-run printed (dynamic loss scaling),
    and whether the step was skipped."""
    out = []
    for line in stdout.splitlines():
        words = line.split()
        if words[:1] == ["step"] and "loss-scale" in words:
            out.append((float(words[words.index("loss-scale") + 1]),
                        "skipped" in words))
    return out


def check_scale_rule(scales, interval):
    """Returns a problem if the loss scales of `scales` (scale, skipped) do
    not follow torch.amp.GradScaler.update: halved after a skipped step,
    doubled after `interval` steps in a row that were not."""
    good = 0
    for k in range(len(scales) - 1):
        (scale, skipped), expected = scales[k], None
        if skipped:
            expected, good = scale * 0.5, 0
        else:
            good += 1
            expected = scale * 2 if good == interval else scale
            good %= interval
        if scales[k + 1][0] != expected:
            return (f"step {k + 2} has loss scale {scales[k + 1][0]:g}, "
                    f"GradScaler's rule gives {expected:g}")
    return ""


def read_params(directory):
    """The tensors `dnnc-run --export-dir` wrote, by name."""
    out = {}
    for f in os.listdir(directory):
        proto = onnx.TensorProto()
        with open(os.path.join(directory, f), "rb") as fh:
            proto.ParseFromString(fh.read())
        out[proto.name] = onnx.numpy_helper.to_array(proto)
    return out


def read_shard(path):
    """The tensors of a dnnc-run checkpoint shard, by name."""
    with open(path, "rb") as f:
        data = f.read()
    at = data.index(b"\n", data.index(b"\n") + 1) + 1
    (count,) = struct.unpack_from("<Q", data, at)
    at += 8
    tensors = {}
    for _ in range(count):
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        proto = onnx.TensorProto()
        proto.ParseFromString(data[at:at + size])
        at += size
        tensors[proto.name] = onnx.numpy_helper.to_array(proto)
    return tensors


def rel(a, b):
    """Relative distance in the Frobenius norm; infinities (masks) must be
    equal and are left out."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    finite = np.isfinite(b)
    if not np.array_equal(np.isfinite(a), finite) or \
            not np.array_equal(a[~finite], b[~finite]):
        return float("inf")
    return float(np.linalg.norm(a[finite] - b[finite]) /
                 max(np.linalg.norm(b[finite]), 1e-30))


def optimizer_flags(opts):
    flags = [f"--optimizer={opts.optimizer}", f"--lr={opts.lr}",
             "--clip-grad-norm=1.0", "--warmup-steps=3",
             "--lr-schedule=cosine", f"--total-steps={opts.steps + 5}"]
    if opts.optimizer == "sgd":
        flags += ["--momentum=0.9", "--weight-decay=0.01"]
    return flags


def torch_optimizer(opts, params):
    if opts.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=opts.lr, momentum=0.9,
                              weight_decay=0.01)
    else:
        opt = torch.optim.AdamW(params, lr=opts.lr)
    warmup, total = 3, opts.steps + 5

    def factor(s):
        if s < warmup:
            return (s + 1) / warmup
        p = min(1.0, (s - warmup) / max(1, total - warmup))
        return 0.5 * (1 + math.cos(math.pi * p))
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def export_for_training(model, name, input_names, example, data, work):
    """Exports `model` as WORK/NAME.onnx for dnnc --mode=train (output
    `loss` when the forward takes the labels, else `logits`) and writes
    `data` as WORK/NAME-data/KEY.npy. Returns (model path, data folder).

    Exported in training mode, so that parameters of equal values (layer
    norms start at ones and zeros) stay separate initializers (an eval
    export merges them); batch norm in eval mode (frozen statistics) but
    for the WHOLE_BATCH models, whose batch norms then become
    OnnxBatchNorm2d with the exported statistics (the export's trace ran
    the model once)."""
    model.train()
    batch_stats = name in WHOLE_BATCH
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d) and not batch_stats:
            m.eval()
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(model, tuple(example[n] for n in input_names), path,
                      dynamo=False, opset_version=17,
                      input_names=input_names,
                      output_names=["loss" if "labels" in input_names
                                    else "logits"],
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
    if batch_stats:
        exported = {t.name: onnx.numpy_helper.to_array(t)
                    for t in onnx.load(path).graph.initializer}
        with torch.no_grad():
            for n, b in model.named_buffers():
                if n in exported:
                    b.copy_(torch.from_numpy(exported[n].copy()))
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.__class__ = OnnxBatchNorm2d
    data_dir = os.path.join(work, name + "-data")
    os.makedirs(data_dir, exist_ok=True)
    for k, v in data.items():
        np.save(os.path.join(data_dir, k + ".npy"), v)
    return path, data_dir


AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def train_torch(model, loss_fn, data, opts, dtype, precision="fp32",
                scales=None):
    """Trains `model` on `data` as dnnc-run does; returns the losses. With
    `precision` bf16 or fp16: automatic mixed precision (torch.autocast on
    the CPU, float32 parameters). With fp16, `scales` (the loss scale and
    skip of each of dnnc's steps) scale the loss and skip the optimizer step
    as torch.amp.GradScaler would have with those overflow decisions (the
    scheduler steps on skipped steps too). GradScaler's own decisions
    depend on which fp16 operations overflow, which differ between
    PyTorch's CPU kernels and dnnc's (f32 GEMM accumulation): a step dnnc
    takes but that overflows here is redone at half the scale until it does
    not (`opts.torch_overflows` records which steps did)."""
    opt, sched = torch_optimizer(opts, model.parameters())
    batch, losses = opts.batch, []
    opts.torch_overflows = []
    for s in range(opts.steps):
        part = {}
        for k, v in data.items():
            t = torch.from_numpy(v[s * batch:(s + 1) * batch])
            part[k] = t.to(dtype) if t.is_floating_point() else t
        scale, skip = scales[s] if scales else (1.0, False)
        overflow = False
        buffers = {n: b.clone() for n, b in model.named_buffers()}
        for _ in range(64):
            # (A step redone forwards again: running statistics as before.)
            with torch.no_grad():
                for n, b in model.named_buffers():
                    b.copy_(buffers[n])
            opt.zero_grad()
            with torch.autocast("cpu", dtype=AUTOCAST.get(precision),
                                enabled=precision in AUTOCAST):
                loss = loss_fn(model, part)
            (loss.float() * scale).backward()
            grads = [p.grad for p in model.parameters()
                     if p.grad is not None]
            for g in grads:
                g.div_(scale)
            if skip or all(torch.isfinite(g).all() for g in grads):
                break
            overflow, scale = True, scale / 2
        opts.torch_overflows.append(overflow)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if not skip:
            opt.step()
        sched.step()
        losses.append(loss.float().item())
    return losses


def check(name, model, input_names, make_data, loss_flags, loss_fn, opts,
          work):
    torch.manual_seed(1)
    batch = opts.batch
    rng = np.random.default_rng(2)
    data = make_data(rng, batch * opts.steps)
    example = {k: torch.from_numpy(v[:batch]) for k, v in data.items()}
    path, data_dir = export_for_training(model, name, input_names, example,
                                         data, work)

    def dnnc_train(tag, extra, ranks):
        plan = os.path.join(work, f"{name}-{tag}.bin")
        ckpt = os.path.join(work, f"{name}-{tag}-ckpt")
        precision = []
        if opts.precision != "fp32":
            precision = [f"--precision={opts.precision}"]
        if opts.precision == "fp16":
            precision += [f"--loss-scale-init={opts.loss_scale_init!r}",
                          f"--loss-scale-growth-interval="
                          f"{opts.growth_interval}"]
        run([opts.dnnc, path, "--mode=train", "-o", plan] + loss_flags +
            optimizer_flags(opts) + precision + extra + opts.dnnc_flag)
        exported = os.path.join(work, f"{name}-{tag}-params")
        cmd = [opts.dnnc_run, plan, "--train", f"--steps={opts.steps}",
               "--data", data_dir, "--checkpoint-dir", ckpt,
               "--export-dir", exported]
        if ranks > 1:
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                   str(ranks)] + cmd
        stdout = run(cmd)
        opts.dnnc_scales = scales_of(stdout)
        return losses_of(stdout), ckpt, exported

    ours, ckpt, exported = dnnc_train("1rank", [], 1)
    our_scales = opts.dnnc_scales

    # PyTorch in float32 (the reference) and in float64 (how far float32
    # rounding alone moves each parameter). With --precision bf16 or fp16,
    # the reference is PyTorch's mixed precision (autocast), and how far it
    # is from float32 is what reduced precision alone moves a value: dnnc
    # is held to three times that (at least 1e-3) instead of 1e-4.
    mixed = opts.precision != "fp32"
    reference = copy.deepcopy(model).double()
    full = copy.deepcopy(model) if mixed else None
    # (The same skipped steps in every reference.)
    if len(our_scales) != opts.steps:
        our_scales = []
    theirs = train_torch(model, loss_fn, data, opts, torch.float32,
                         opts.precision, our_scales)
    their_overflows = opts.torch_overflows
    train_torch(reference, loss_fn, data, opts, torch.float64)
    bound, loss_bound = 1e-4, 1e-4
    if mixed:
        full_losses = train_torch(full, loss_fn, data, opts, torch.float32,
                                  "fp32", our_scales)
        amp_noise = max(rel(a, b) for a, b in zip(theirs, full_losses))
        loss_bound = max(1e-3, 3 * amp_noise)
        if not math.isfinite(amp_noise):
            return [f"{name}: PyTorch's {opts.precision} reference does not "
                    "train (its gradients overflow where dnnc's did not: "
                    "choose another --loss-scale-init)"]

    failures = []
    if len(ours) != opts.steps:
        return [f"{name}: dnnc-run printed {len(ours)} losses"]
    worst = max(rel(a, b) for a, b in zip(ours, theirs))
    if worst > loss_bound:
        at = max(range(len(ours)), key=lambda k: rel(ours[k], theirs[k]))
        failures.append(f"{name}: loss differs by {worst:.2e} relative at "
                        f"step {at + 1} (dnnc {ours[:at + 1]}, torch "
                        f"{theirs[:at + 1]})")
    trained = read_shard(os.path.join(ckpt, f"step-{opts.steps}",
                                      "rank-0.ckpt"))
    worst_param, worst_name, floor = 0.0, "", []
    # The trained tensors: the parameters, and the running statistics of
    # batch norms in training mode.
    def trained_tensors(m):
        out = dict(m.named_parameters())
        if name in WHOLE_BATCH:
            out.update((n, b) for n, b in m.named_buffers()
                       if n.endswith(("running_mean", "running_var")))
        return out

    exact = trained_tensors(reference)
    full_params = trained_tensors(full) if mixed else {}
    # Each parameter's bound against PyTorch (and a parallel run's against
    # the one-rank run): 1e-4, or three times reduced precision's own effect
    # on it (at least 1e-3).
    param_bounds, slice_floor = {}, {}
    for n, p in trained_tensors(model).items():
        if n not in trained:
            # A fused projection split by the graph phase: one parameter per
            # slice, `NAME[a:b]`, joined along the dim they cover.
            parts = sorted((int(k[len(n) + 1:].split(":")[0]), v, k)
                           for k, v in trained.items()
                           if k.startswith(n + "[") and k.endswith("]"))
            for d in range(p.dim()):
                if parts and sum(v.shape[d] for _, v, _ in parts) == \
                        p.shape[d]:
                    joined = np.concatenate([v for _, v, _ in parts], axis=d)
                    if joined.shape == tuple(p.shape):
                        trained[n] = joined
                        # Each slice's own noise floor (three times
                        # PyTorch's float32-to-float64 distance on it): the
                        # key bias of a fused QKV bias has no gradient in
                        # exact arithmetic and moves by rounding noise,
                        # which no other run reproduces.
                        for a, v, k in parts:
                            cut = [slice(None)] * p.dim()
                            cut[d] = slice(a, a + v.shape[d])
                            ref = (full if mixed else model).get_parameter(n)
                            slice_floor[k] = 3 * rel(
                                ref.detach().numpy()[tuple(cut)],
                                exact[n].detach().numpy()[tuple(cut)])
                        break
        if n not in trained:
            failures.append(f"{name}: parameter {n} is not in the "
                            "checkpoint")
            continue
        r = rel(trained[n], p.detach().numpy())
        # A parameter whose gradient is zero in exact arithmetic (a key
        # bias: softmax ignores a shift of its scores) moves by rounding
        # noise, which AdamW scales up to full steps: no float32 run can
        # reproduce another's. Such a tensor is judged against the noise
        # floor, three times PyTorch's own float32-to-float64 distance.
        noise = rel(p.detach().numpy(), exact[n].detach().numpy())
        param_bounds[n] = bound
        if mixed:
            # Reduced precision's own effect on this parameter.
            noise = rel(p.detach().numpy(), full_params[n].detach().numpy())
            param_bounds[n] = max(1e-3, 3 * noise)
            r *= bound / param_bounds[n]
        elif r > 1e-4 and r <= 3 * noise:
            floor.append(f"{n} {r:.1e} (noise {noise:.1e})")
            continue
        if r > worst_param:
            worst_param, worst_name = r, n
    if worst_param > bound:
        failures.append(f"{name}: parameter {worst_name} differs by "
                        f"{worst_param:.2e} relative after {opts.steps} "
                        "steps")
    # The trained weights written back into the ONNX model: onnxruntime on
    # it gives PyTorch's trained model's output.
    trained_model = os.path.join(work, name + "-trained.onnx")
    run([sys.executable, UPDATE_WEIGHTS, path, exported, "-o",
         trained_model])
    if name in WHOLE_BATCH:
        # Inference with the trained running statistics: the batch norms
        # in eval mode on both sides.
        graph = onnx.load(trained_model)
        for node in graph.graph.node:
            if node.op_type == "BatchNormalization":
                for a in node.attribute:
                    if a.name == "training_mode":
                        a.i = 0
                del node.output[1:]
        onnx.save(graph, trained_model)
        model.eval()
    feeds = {n: example[n].numpy() for n in input_names}
    ort_out = ort.InferenceSession(trained_model).run(None, feeds)[0]
    with torch.no_grad():
        torch_out = model(*(example[n] for n in input_names)).numpy()
        written_bound = bound
        if mixed:
            full_out = full(*(example[n] for n in input_names)).numpy()
            written_bound = max(1e-3, 3 * rel(torch_out, full_out))
    written = rel(ort_out, torch_out)
    if written > written_bound:
        failures.append(f"{name}: the written-back model's output differs "
                        f"from the trained PyTorch model's by {written:.1e}")
    summary = (f"{name}: {opts.steps} steps, loss {ours[0]:.4f} -> "
               f"{ours[-1]:.4f}, vs torch: loss {worst:.1e}, parameters "
               f"{worst_param:.1e}, written-back model {written:.1e}")
    scaling = ""
    if opts.precision == "fp16":
        # Dynamic loss scaling: one scale per step, following GradScaler's
        # rule from the skips; the skips PyTorch would have made too.
        skipped = [k + 1 for k, (_, skip) in enumerate(our_scales) if skip]
        theirs_skip = [k + 1 for k, o in enumerate(their_overflows) if o]
        scaling = (f", loss scale {our_scales[0][0]:g} -> "
                   f"{our_scales[-1][0]:g}, steps skipped {skipped} (PyTorch "
                   f"overflows at {theirs_skip})" if our_scales else "")
        problem = ("no loss scale printed" if not our_scales
                   else check_scale_rule(our_scales, opts.growth_interval))
        if problem:
            failures.append(f"{name}: {problem}")
        if len(skipped) < opts.min_skipped:
            failures.append(f"{name}: {len(skipped)} steps skipped, "
                            f"expected at least {opts.min_skipped}")
    if mixed:
        summary = (f"{name} ({opts.precision}): {opts.steps} steps, loss "
                   f"{ours[0]:.4f} -> {ours[-1]:.4f}, vs torch autocast: "
                   f"loss {worst:.1e} (bound {loss_bound:.1e}: autocast vs "
                   f"fp32 {amp_noise:.1e}), parameters "
                   f"{worst_param / bound:.2f} of their bound, written-back model {written:.1e} (bound "
                   f"{written_bound:.1e})")
    summary += scaling
    if floor:
        summary += f" (at the noise floor: {', '.join(floor)})"
    if opts.ranks > 1:
        parallel, _, parallel_params = dnnc_train(
            f"{opts.ranks}rank",
            [f"--parallel={opts.parallel}"] + opts.parallel_flag, opts.ranks)
        # Dynamic loss scaling decides on the gradients of the plan: partial
        # sums over other batches overflow at other steps, after which the
        # runs are different trainings. Compared only when they agree.
        if opts.dnnc_scales != our_scales:
            failures.append(f"{name} --parallel={opts.parallel}: loss "
                            f"scales {[a for a, _ in opts.dnnc_scales]} "
                            f"differ from one rank's "
                            f"{[a for a, _ in our_scales]}")
        # The weights the parallel run assembles (tensor-parallel blocks
        # gathered) equal the one-rank run's.
        one, par = read_params(exported), read_params(parallel_params)
        noisy = {f.split()[0] for f in floor}
        # (As a fraction of each parameter's bound, or of its slice's noise
        # floor when above.)
        worst_export = max((rel(par[n], one[n]) * bound /
                            max(param_bounds.get(n.split("[")[0], bound),
                                slice_floor.get(n, 0.0))
                            for n in one if n in par and
                            n.split("[")[0] not in noisy), default=0.0)
        if set(one) != set(par) or worst_export > bound:
            failures.append(f"{name} --parallel={opts.parallel}: exported "
                            f"weights differ ({worst_export / bound:.2f} "
                            "of their bound)")
        if len(parallel) != opts.steps:
            failures.append(f"{name} --parallel={opts.parallel}: "
                            f"{len(parallel)} losses")
        else:
            worst_par = max(rel(a, b) for a, b in zip(parallel, ours))
            summary += f", {opts.parallel} vs 1 rank {worst_par:.1e}"
            # fp32: the same sums in another order; bf16/fp16: partial
            # sums rounded to the reduced type at other points, which moves
            # the loss as much as reduced precision itself does.
            if worst_par > (loss_bound if mixed else 1e-5):
                failures.append(f"{name} --parallel={opts.parallel}: loss "
                                f"differs from one rank's by {worst_par:.2e}")
    print(summary)
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dnnc", default="dnnc")
    parser.add_argument("--dnnc-run", default="dnnc-run")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--optimizer", default="adamw")
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--parallel", default="")
    parser.add_argument("--only", default="")
    parser.add_argument("--dnnc-flag", action="append", default=[],
                        help="a flag for every dnnc compile (e.g. "
                        "--target=cuda)")
    parser.add_argument("--parallel-flag", action="append", default=[],
                        help="a flag for the --parallel compile only (e.g. "
                        "--microbatches=4)")
    parser.add_argument("--precision", default="fp32",
                        choices=["fp32", "bf16", "fp16"],
                        help="mixed precision: every dnnc compile gets "
                        "--precision, PyTorch runs under autocast")
    parser.add_argument("--loss-scale-init", type=float, default=65536.0,
                        help="fp16: the initial loss scale of both")
    parser.add_argument("--growth-interval", type=int, default=2000,
                        help="fp16: dnnc's --loss-scale-growth-interval")
    parser.add_argument("--min-skipped", type=int, default=0,
                        help="fp16: fail unless dnnc skips at least this "
                        "many steps (an initial loss scale that overflows)")
    parser.add_argument("--keep", default="",
                        help="keep the work files in this folder")
    opts = parser.parse_args()
    only = set(filter(None, opts.only.split(",")))
    failures = []
    with tempfile.TemporaryDirectory() as temporary:
        work = opts.keep or temporary
        os.makedirs(work, exist_ok=True)
        for entry in models(opts.batch):
            if (only and entry[0] not in only) or \
                    (not only and entry[0] in WHOLE_BATCH):
                continue
            microbatched = "pp" in opts.parallel or any(
                f.startswith("--microbatches") for f in
                opts.parallel_flag + opts.dnnc_flag)
            if entry[0] in WHOLE_BATCH and microbatched:
                print(f"{entry[0]}: skipped (batch statistics: no "
                      "micro-batches)")
                continue
            try:
                failures += check(*entry, opts, work)
            except RuntimeError as e:
                failures.append(f"{entry[0]}: {e}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
