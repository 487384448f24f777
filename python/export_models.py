#!/usr/bin/env python3
"""Exports small real-world models to test/models/ (run by developers, not CI).

Builds three models from their library definitions with random weights
(fixed seeds), exports each with PyTorch's TorchScript ONNX exporter
(`torch.onnx.export(..., dynamo=False)`), runs onnxruntime on random inputs
(fixed seed) and stores, in the ONNX backend-test layout,

    test/models/<name>/model.onnx                  (weights inside)
    test/models/<name>/test_data_set_0/input_K.pb  (graph input order)
    test/models/<name>/test_data_set_0/output_K.pb (onnxruntime's outputs)

The models:

* `gpt2`: `transformers.GPT2LMHeadModel`, 2 layers, n_embd 64, 4 heads,
  vocab 1000, n_positions 64; inputs `input_ids` and `attention_mask`
  (the second sequence left-padded), int64 [4, 16]; output the logits
  [4, 16, 1000]. Batch 4, so that it splits into 1, 2 or 4 micro-batches.
* `bert`: `transformers.BertModel`, 3 layers, hidden 64, 4 heads,
  intermediate 128, vocab 1000; inputs `input_ids`, `attention_mask`
  (the second sequence padded) and `token_type_ids`, int64 [4, 16];
  outputs the last hidden state [4, 16, 64] and the pooled output [4, 64].
* `resnet18`: torchvision's ResNet-18 (`torchvision.models.resnet.ResNet`
  with `BasicBlock`, layers [2, 2, 2, 2], 1000 classes) in eval mode with
  random batch-norm statistics, at input [1, 3, 64, 64] and with every width
  divided by 4 (stem 16 channels instead of 64; see RESNET_WIDTH); output the
  logits [1, 1000].

Attention runs through transformers' default implementation (`sdpa`), whose
TorchScript export guards the softmax with IsNaN -> Where.

The test list is test/models/models.txt; CTest `onnx-models-run-1rank` compiles
and runs every model with dnnc (no input bound: `--bind-inputs none`) and
compares against the stored outputs.

Dependencies (CPU wheels from PyPI are enough; no custom index):

    pip install torch torchvision transformers onnx onnxruntime numpy

Usage:

    python3 python/export_models.py [--out test/models] [--only NAME ...]

Prints each model's size and op types. The whole directory stays around
5 MB: at full width ResNet-18's 11.7 M float32 parameters alone would take
45 MB, hence the reduced width (set RESNET_WIDTH = 64 for the real one).
"""

import argparse
import os
import shutil
import sys

import numpy as np

OPSET = 17
SEED = 0

# GPT-2 and BERT sizes.
BATCH, SEQ = 4, 16
VOCAB = 1000
HIDDEN = 64
HEADS = 4
LAYERS = 2
# BERT has one layer more, so that splitting it into two pipeline stages is
# uneven (3 layers over 2 stages).
BERT_LAYERS = 3

# ResNet-18: torchvision's BasicBlock network at a reduced width (its
# width_per_group only applies to Bottleneck blocks, so make_resnet18 rebuilds
# the layers with torchvision's own _make_layer at RESNET_WIDTH).
RESNET_INPUT = (1, 3, 64, 64)
RESNET_WIDTH = 16  # torchvision's resnet18 uses 64


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_gpt2():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(SEED)
    config = GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=HIDDEN,
                        n_layer=LAYERS, n_head=HEADS, use_cache=False,
                        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
    model = GPT2LMHeadModel(config).eval()
    rng = np.random.default_rng(SEED)
    input_ids = rng.integers(0, VOCAB, (BATCH, SEQ), dtype=np.int64)
    attention_mask = np.ones((BATCH, SEQ), dtype=np.int64)
    # The second sequence is left-padded (as for batched generation): its
    # first query rows attend to no key, which exercises the NaN guard
    # (IsNaN -> Where) that PyTorch emits after the attention softmax.
    attention_mask[1, :3] = 0

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False, return_dict=False)[0]

    inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
    return Wrapper(model), inputs, ["logits"]


def make_bert():
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED + 1)
    config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                        num_hidden_layers=BERT_LAYERS, num_attention_heads=HEADS,
                        intermediate_size=2 * HIDDEN, max_position_embeddings=64)
    model = BertModel(config).eval()
    rng = np.random.default_rng(SEED + 1)
    input_ids = rng.integers(0, VOCAB, (BATCH, SEQ), dtype=np.int64)
    attention_mask = np.ones((BATCH, SEQ), dtype=np.int64)
    attention_mask[1, SEQ - 5:] = 0  # the second sequence is padded
    token_type_ids = np.zeros((BATCH, SEQ), dtype=np.int64)
    token_type_ids[:, SEQ // 2:] = 1

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.m(input_ids=input_ids, attention_mask=attention_mask,
                         token_type_ids=token_type_ids, return_dict=False)
            return out[0], out[1]

    inputs = {"input_ids": input_ids, "attention_mask": attention_mask,
              "token_type_ids": token_type_ids}
    return Wrapper(model), inputs, ["last_hidden_state", "pooler_output"]


def make_resnet18():
    import torch
    import torchvision
    from torchvision.models.resnet import BasicBlock, ResNet

    torch.manual_seed(SEED + 2)

    class NarrowResNet(ResNet):
        """torchvision's ResNet-18 (BasicBlock, [2, 2, 2, 2]) with every
        width divided by 64 / RESNET_WIDTH."""

        def __init__(self):
            super().__init__(BasicBlock, [2, 2, 2, 2])
            # Rebuild the layers at the reduced width with torchvision's own
            # constructor code paths.
            w = RESNET_WIDTH
            self.inplanes = w
            self.conv1 = torch.nn.Conv2d(3, w, kernel_size=7, stride=2,
                                         padding=3, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(w)
            self.layer1 = self._make_layer(BasicBlock, w, 2)
            self.layer2 = self._make_layer(BasicBlock, 2 * w, 2, stride=2)
            self.layer3 = self._make_layer(BasicBlock, 4 * w, 2, stride=2)
            self.layer4 = self._make_layer(BasicBlock, 8 * w, 2, stride=2)
            self.fc = torch.nn.Linear(8 * w, 1000)

    model = (torchvision.models.resnet18(weights=None) if RESNET_WIDTH == 64
             else NarrowResNet())
    # Non-trivial batch-norm statistics, so that eval-mode BN is exercised.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    model.eval()
    rng = np.random.default_rng(SEED + 2)
    x = rng.standard_normal(RESNET_INPUT).astype(np.float32)
    return model, {"input": x}, ["logits"]


MODELS = {"gpt2": make_gpt2, "bert": make_bert, "resnet18": make_resnet18}


def write_test_data(model_path, inputs, data_dir, threads=0):
    """Runs onnxruntime on `inputs` (name -> array) and writes, in the
    backend-test layout, input_K.pb (graph input order) and output_K.pb to
    `data_dir`. `threads` 0 lets onnxruntime choose."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    session = ort.InferenceSession(model_path, opts,
                                   providers=["CPUExecutionProvider"])
    graph_inputs = [i.name for i in session.get_inputs()]
    outputs = session.run(None, {k: inputs[k] for k in graph_inputs})
    for k, in_name in enumerate(graph_inputs):
        onnx.save_tensor(numpy_helper.from_array(inputs[in_name], in_name),
                         os.path.join(data_dir, f"input_{k}.pb"))
    for k, (meta, value) in enumerate(zip(session.get_outputs(), outputs)):
        onnx.save_tensor(numpy_helper.from_array(value, meta.name),
                         os.path.join(data_dir, f"output_{k}.pb"))


def export(name, out_dir):
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper

    model, inputs, output_names = MODELS[name]()
    model_dir = os.path.join(out_dir, name)
    data_dir = os.path.join(model_dir, "test_data_set_0")
    shutil.rmtree(model_dir, ignore_errors=True)
    os.makedirs(data_dir)
    model_path = os.path.join(model_dir, "model.onnx")
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    with torch.no_grad():
        torch.onnx.export(model, args, model_path, dynamo=False,
                          opset_version=OPSET, input_names=list(inputs),
                          output_names=output_names,
                          do_constant_folding=True)
    proto = onnx.load(model_path)
    onnx.checker.check_model(proto)

    write_test_data(model_path, inputs, data_dir, threads=1)

    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(model_dir) for f in fs)
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{name}: {size / 1e6:.2f} MB, {len(proto.graph.node)} nodes, "
          f"ops: {' '.join(ops)}")
    return size


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(repo_root(), "test",
                                                      "models"),
                        help="output directory (default: test/models)")
    parser.add_argument("--only", nargs="+", choices=sorted(MODELS),
                        help="export only these models")
    args = parser.parse_args(argv)
    total = sum(export(name, args.out) for name in (args.only or MODELS))
    print(f"total: {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
