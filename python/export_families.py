#!/usr/bin/env python3
"""Exports the model families users bring to dnnc, at a small size (CI) or
full size (bench), through both PyTorch ONNX exporters, with random weights
and no network.

    python3 python/export_families.py [--size small|full] [--exporter
        torchscript|dynamo|both] [--only FAMILY ...] [--cache DIR] [--force]

Each export lands in DIR/<family>-<size>-<exporter>/ in the ONNX backend
test layout (model.onnx, weights past 1 GiB as external data in
model.onnx.data, and test_data_set_0/input_K.pb and onnxruntime's
output_K.pb), which test/onnx/conformance.py and bench/families.py read. DIR
is $DNNC_MODEL_CACHE, else ~/.cache/dnnc/models; an export already there is
kept unless --force (weights stay out of git: they are generated on demand).

The families (transformers / torchvision definitions; `small` in brackets):

    gpt2     GPT2LMHeadModel, 124M: 12 layers, 768 wide, 12 heads, vocab
             50257, batch 2 x 128 tokens  [2 layers, 64 wide, vocab 1000,
             4 x 16]; inputs input_ids, attention_mask (one sequence
             left-padded)
    llama    LlamaForCausalLM with RoPE, RMSNorm, SwiGLU and grouped-query
             attention: 1.1B (TinyLlama's shape: 22 layers, 2048 wide, 32
             query and 4 key/value heads, 5632 MLP, vocab 32000), 2 x 128
             [2 layers, 64 wide, 4/2 heads, 4 x 16]
    bert     BertModel, BERT-base (12 layers, 768, 12 heads), 2 x 128
             [3 layers, 64 wide, 4 x 16]; inputs input_ids, attention_mask,
             token_type_ids
    vit      ViTForImageClassification, ViT-B/16 at 224 x 224, batch 2
             [2 layers, 64 wide, 32 x 32 images, patch 8]
    resnet50 torchvision's ResNet-50 at 224 x 224, batch 2 [Bottleneck
             blocks [1, 1, 1, 1] at a quarter of every width, 100 classes,
             64 x 64]
    moe      a Mixtral-style decoder in plain torch ops (transformers'
             Mixtral uses aten::histc, which neither exporter takes): RoPE,
             RMSNorm, grouped-query attention, top-2 routing over 8 SwiGLU
             experts; 8 layers, 512 wide, 1024 per expert, vocab 32000,
             2 x 128 [2 layers, 64 wide, 4 experts, 4 x 16]
    t5       T5ForConditionalGeneration, t5-small's shape (6 + 6 layers, 512
             wide, vocab 32128), encoder 2 x 64 tokens, decoder 2 x 16
             [2 + 2 layers, 64 wide, vocab 1000]

Exporters: `torchscript` is torch.onnx.export(dynamo=False, opset 17);
`dynamo` is torch.onnx.export(dynamo=True, opset 18; onnxscript installed).

Dependencies (PyPI): torch torchvision transformers onnxscript onnx
onnxruntime numpy.
"""

import argparse
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import write_test_data  # noqa: E402

SEED = 0
EXPORTERS = ("torchscript", "dynamo")
OPSETS = {"torchscript": 17, "dynamo": 18}
EXTERNAL_DATA_BYTES = 1 << 30


def cache_dir():
    return os.environ.get("DNNC_MODEL_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "dnnc", "models")


def tokens(batch, seq, vocab, seed, pad_left=None, pad_right=None):
    """Random token ids and an attention mask, one sequence padded."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (batch, seq), dtype=np.int64)
    mask = np.ones((batch, seq), dtype=np.int64)
    if batch > 1 and pad_left:
        mask[1, :pad_left] = 0
    if batch > 1 and pad_right:
        mask[1, seq - pad_right:] = 0
    return ids, mask


class Logits:
    """Wraps a transformers model so that forward(*inputs) returns plain
    tensors (the first `count` outputs of return_dict=False)."""

    def __new__(cls, model, names, count=1):
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, *args):
                out = self.m(**dict(zip(names, args)), return_dict=False)
                return out[0] if count == 1 else tuple(out[:count])

        return Wrapper()


def make_gpt2(size):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(SEED)
    if size == "full":
        config, batch, seq = GPT2Config(use_cache=False), 2, 128
    else:
        config = GPT2Config(vocab_size=1000, n_positions=64, n_embd=64,
                            n_layer=2, n_head=4, use_cache=False)
        batch, seq = 4, 16
    model = GPT2LMHeadModel(config).eval()
    ids, mask = tokens(batch, seq, config.vocab_size, SEED, pad_left=3)
    names = ["input_ids", "attention_mask"]
    return Logits(model, names), dict(zip(names, (ids, mask))), ["logits"]


def make_llama(size):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED + 1)
    if size == "full":
        config = LlamaConfig(vocab_size=32000, hidden_size=2048,
                             intermediate_size=5632, num_hidden_layers=22,
                             num_attention_heads=32, num_key_value_heads=4,
                             max_position_embeddings=2048, use_cache=False)
        batch, seq = 2, 128
    else:
        config = LlamaConfig(vocab_size=1000, hidden_size=64,
                             intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=64, use_cache=False)
        batch, seq = 4, 16
    model = LlamaForCausalLM(config).eval()
    ids, mask = tokens(batch, seq, config.vocab_size, SEED + 1, pad_left=3)
    names = ["input_ids", "attention_mask"]
    return Logits(model, names), dict(zip(names, (ids, mask))), ["logits"]


def make_bert(size):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED + 2)
    if size == "full":
        config, batch, seq = BertConfig(), 2, 128
    else:
        config = BertConfig(vocab_size=1000, hidden_size=64,
                            num_hidden_layers=3, num_attention_heads=4,
                            intermediate_size=128, max_position_embeddings=64)
        batch, seq = 4, 16
    model = BertModel(config).eval()
    ids, mask = tokens(batch, seq, config.vocab_size, SEED + 2, pad_right=5)
    types = np.zeros_like(ids)
    types[:, seq // 2:] = 1
    names = ["input_ids", "attention_mask", "token_type_ids"]
    return (Logits(model, names, count=2), dict(zip(names, (ids, mask, types))),
            ["last_hidden_state", "pooler_output"])


def make_vit(size):
    import torch
    from transformers import ViTConfig, ViTForImageClassification

    torch.manual_seed(SEED + 3)
    if size == "full":
        config, batch = ViTConfig(), 2
    else:
        config = ViTConfig(hidden_size=64, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=128,
                           image_size=32, patch_size=8)
        batch = 4
    model = ViTForImageClassification(config).eval()
    rng = np.random.default_rng(SEED + 3)
    pixels = rng.standard_normal(
        (batch, 3, config.image_size, config.image_size)).astype(np.float32)
    return (Logits(model, ["pixel_values"]), {"pixel_values": pixels},
            ["logits"])


def make_resnet50(size):
    import torch
    import torchvision
    from torchvision.models.resnet import Bottleneck, ResNet

    torch.manual_seed(SEED + 4)
    if size == "full":
        model, shape = torchvision.models.resnet50(weights=None), (2, 3, 224,
                                                                   224)
    else:
        model = ResNet(Bottleneck, [1, 1, 1, 1])
        # A quarter of every width, rebuilt with torchvision's own
        # _make_layer (its width_per_group narrows the bottlenecks only).
        w = 16
        model.inplanes = w
        model.conv1 = torch.nn.Conv2d(3, w, 7, stride=2, padding=3,
                                      bias=False)
        model.bn1 = torch.nn.BatchNorm2d(w)
        model.layer1 = model._make_layer(Bottleneck, w, 1)
        model.layer2 = model._make_layer(Bottleneck, 2 * w, 1, stride=2)
        model.layer3 = model._make_layer(Bottleneck, 4 * w, 1, stride=2)
        model.layer4 = model._make_layer(Bottleneck, 8 * w, 1, stride=2)
        model.fc = torch.nn.Linear(8 * w * Bottleneck.expansion, 100)
        shape = (2, 3, 64, 64)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model.eval()
    x = np.random.default_rng(SEED + 4).standard_normal(shape).astype(
        np.float32)
    return model, {"input": x}, ["logits"]


def make_moe(size):
    """A Mixtral-style decoder in plain torch ops (transformers' Mixtral
    counts tokens per expert with aten::histc, which neither exporter
    takes): pre-RMSNorm attention with RoPE and grouped-query heads, and a
    mixture of SwiGLU experts where each token's top-2 gates (renormalized)
    weight the experts; every expert runs on every token (a dense MoE, as
    exported graphs with static shapes do)."""
    import torch
    from torch import nn

    torch.manual_seed(SEED + 5)
    if size == "full":
        vocab, hidden, inter, layers, heads, kv, experts = (32000, 512, 1024,
                                                            8, 8, 2, 8)
        batch, seq = 2, 128
    else:
        vocab, hidden, inter, layers, heads, kv, experts = (1000, 64, 128, 2,
                                                            4, 2, 4)
        batch, seq = 4, 16
    head_dim = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

        def forward(self, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return self.weight * x * torch.rsqrt(var + 1e-6)

    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(), RMSNorm()
            self.q = nn.Linear(hidden, heads * head_dim, bias=False)
            self.k = nn.Linear(hidden, kv * head_dim, bias=False)
            self.v = nn.Linear(hidden, kv * head_dim, bias=False)
            self.o = nn.Linear(heads * head_dim, hidden, bias=False)
            self.gate = nn.Linear(hidden, experts, bias=False)
            self.w1 = nn.Parameter(torch.randn(experts, hidden, inter) * 0.05)
            self.w3 = nn.Parameter(torch.randn(experts, hidden, inter) * 0.05)
            self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * 0.05)

        def forward(self, x, cos, sin, bias):
            b, t, _ = x.shape
            h = self.norm1(x)
            q = self.q(h).view(b, t, heads, head_dim).transpose(1, 2)
            k = self.k(h).view(b, t, kv, head_dim).transpose(1, 2)
            v = self.v(h).view(b, t, kv, head_dim).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            k = k.repeat_interleave(heads // kv, dim=1)
            v = v.repeat_interleave(heads // kv, dim=1)
            scores = q @ k.transpose(-1, -2) / head_dim ** 0.5 + bias
            att = torch.softmax(scores, dim=-1) @ v
            x = x + self.o(att.transpose(1, 2).reshape(b, t, hidden))
            h = self.norm2(x)
            gates = torch.softmax(self.gate(h), dim=-1)
            top = torch.topk(gates, 2, dim=-1).values
            weights = torch.where(gates >= top[..., -1:], gates,
                                  torch.zeros_like(gates))
            weights = weights / weights.sum(-1, keepdim=True)
            # [b, t, e, inter] for every expert, then weighted.
            up = torch.einsum("btd,edf->btef", h, self.w1)
            gate = torch.einsum("btd,edf->btef", h, self.w3)
            out = torch.einsum("btef,efd->bted",
                               nn.functional.silu(up) * gate, self.w2)
            return x + (out * weights.unsqueeze(-1)).sum(2)

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = RMSNorm()
            self.head = nn.Linear(hidden, vocab, bias=False)
            inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() /
                                   head_dim))
            angles = torch.outer(torch.arange(seq).float(), inv)
            angles = torch.cat((angles, angles), dim=-1)
            self.register_buffer("cos", angles.cos())
            self.register_buffer("sin", angles.sin())

        def forward(self, input_ids, attention_mask):
            t = input_ids.shape[1]
            causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
            allowed = causal[None, None] & attention_mask[:, None, None, :].bool()
            bias = torch.where(allowed, 0.0, -1e9)
            x = self.embed(input_ids)
            for block in self.blocks:
                x = block(x, self.cos, self.sin, bias)
            return self.head(self.norm(x))

    model = MoE().eval()
    ids, mask = tokens(batch, seq, vocab, SEED + 5, pad_left=3)
    return model, {"input_ids": ids, "attention_mask": mask}, ["logits"]


def make_t5(size):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(SEED + 6)
    if size == "full":
        config = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048,
                          num_layers=6, num_heads=8, use_cache=False)
        batch, seq, dec = 2, 64, 16
    else:
        config = T5Config(vocab_size=1000, d_model=64, d_kv=16, d_ff=128,
                          num_layers=2, num_heads=4, use_cache=False)
        batch, seq, dec = 4, 16, 8
    model = T5ForConditionalGeneration(config).eval()
    ids, mask = tokens(batch, seq, config.vocab_size, SEED + 6, pad_right=4)
    dec_ids, _ = tokens(batch, dec, config.vocab_size, SEED + 7)
    names = ["input_ids", "attention_mask", "decoder_input_ids"]
    return (Logits(model, names), dict(zip(names, (ids, mask, dec_ids))),
            ["logits"])


FAMILIES = {"gpt2": make_gpt2, "llama": make_llama, "bert": make_bert,
            "vit": make_vit, "resnet50": make_resnet50, "moe": make_moe,
            "t5": make_t5}


def export(family, size, exporter, root, force=False):
    """Exports one (family, size, exporter) into root; returns its folder,
    or None (with the reason printed) when the export fails."""
    import onnx
    import torch

    name = f"{family}-{size}-{exporter}"
    folder = os.path.join(root, name)
    model_path = os.path.join(folder, "model.onnx")
    data_dir = os.path.join(folder, "test_data_set_0")
    if not force and os.path.isfile(os.path.join(data_dir, "output_0.pb")):
        print(f"{name}: cached in {folder}", flush=True)
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(data_dir)
    start = time.monotonic()
    model, inputs, output_names = FAMILIES[family](size)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    tmp = os.path.join(folder, "export.onnx")
    try:
        with torch.no_grad():
            if exporter == "torchscript":
                torch.onnx.export(model, args, tmp, dynamo=False,
                                  opset_version=OPSETS[exporter],
                                  input_names=list(inputs),
                                  output_names=output_names,
                                  do_constant_folding=True)
            else:
                program = torch.onnx.export(
                    model, args, dynamo=True, opset_version=OPSETS[exporter],
                    input_names=list(inputs), output_names=output_names,
                    optimize=True)
                program.save(tmp)
    except Exception as e:  # an exporter that cannot take the model
        print(f"{name}: export failed: {type(e).__name__}: "
              f"{str(e).splitlines()[0] if str(e) else ''}", flush=True)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    proto = onnx.load(tmp)
    big = sum(t.ByteSize() for t in proto.graph.initializer) > \
        EXTERNAL_DATA_BYTES
    onnx.save(proto, model_path, save_as_external_data=big,
              all_tensors_to_one_file=True, location="model.onnx.data")
    for f in os.listdir(folder):
        if f.startswith("export.onnx"):
            os.remove(os.path.join(folder, f))

    write_test_data(model_path, inputs, data_dir)
    params = sum(int(np.prod(t.dims)) for t in proto.graph.initializer)
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{name}: {params / 1e6:.1f}M parameters, {len(proto.graph.node)} "
          f"nodes, {time.monotonic() - start:.0f} s; ops: {' '.join(ops)}",
          flush=True)
    return folder


def add_selection_arguments(parser):
    """Adds the options that pick the exports (--size, --exporter, --only,
    --cache): this script's and bench/families.py's."""
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--exporter", choices=EXPORTERS + ("both",),
                        default="both")
    parser.add_argument("--only", nargs="+", choices=sorted(FAMILIES),
                        help="only these families")
    parser.add_argument("--cache", default=cache_dir(),
                        help="the exports' folder (default: $DNNC_MODEL_CACHE "
                             "or ~/.cache/dnnc/models)")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_arguments(parser)
    parser.add_argument("--force", action="store_true",
                        help="export again even when cached")
    args = parser.parse_args(argv)
    exporters = EXPORTERS if args.exporter == "both" else (args.exporter,)
    failed = 0
    for family in args.only or FAMILIES:
        for exporter in exporters:
            if export(family, args.size, exporter, args.cache,
                      args.force) is None:
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
