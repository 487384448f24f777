// RUN: dnnc-opt %s --dnnc-search-parallelism="devices=2 cluster=h100x8 mode=train" | FileCheck %s --check-prefix=TP2
// RUN: dnnc-opt %s --dnnc-search-parallelism="devices=2 cluster=h100x8" | FileCheck %s --check-prefix=INFER
// RUN: dnnc-opt %s --dnnc-search-parallelism="devices=16 cluster=a100-80g-x2nodes" | FileCheck %s --check-prefix=NODES
// RUN: not dnnc-opt %s --dnnc-search-parallelism="devices=8 cluster=h100x8 tp=1" 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not dnnc-opt %s --dnnc-search-parallelism="devices=64 cluster=h100x8" 2>&1 | FileCheck %s --check-prefix=TOOMANY
// RUN: not dnnc-opt %s --dnnc-search-parallelism="devices=4 cluster=h100x8 tp=3" 2>&1 | FileCheck %s --check-prefix=NODEGREES
// RUN: not dnnc-opt %s --dnnc-search-parallelism="devices=2 cluster=nope" 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not dnnc-opt %s --dnnc-search-parallelism="devices=2 mode=fly" 2>&1 | FileCheck %s --check-prefix=MODE

// A transformer block with one sequence of 128 tokens (batch 1, hidden
// 1024, 16 heads, MLP 4096): data parallelism cannot split it, so the
// search recovers Megatron's pattern, with one all-reduce per attention and
// per MLP, once tensor parallelism pays.

// Training on two H100s of one node: tensor parallelism over both, the
// propagated Megatron layout beating the per-op search's alternatives
// (replicated weights pay gradient all-reduces).
// TP2: module attributes {dnnc.plan = {{{.*}}dp = 1 : i64{{.*}}pp = 1 : i64{{.*}}tp = 2 : i64
// TP2: dist.mesh @mesh ["tp" = 2 : intra]
// TP2-COUNT-2: dist.reshard %{{.*}} from <@mesh, [{}, {}, {}], partial = {"tp"}> to <@mesh, [{}, {}, {}]>
// TP2-NOT: dist.reshard

// Inference prices time alone: the per-op search finds a faster layout
// than Megatron's (the MLP on half the tokens each with whole weights).
// INFER: dnnc.plan = {{{.*}}sharding = "search"{{.*}}tp = 2 : i64

// Sixteen A100s on two nodes: one sequence gives data parallelism nothing
// to split (replicas would repeat the same work), and this search adds no
// pipeline, so tensor parallelism spans both nodes.
// NODES: dnnc.plan = {{{.*}}dp = 1 : i64{{.*}}tp = 16 : i64
// NODES: dist.mesh @mesh ["tp" = 16 : inter]

// Forced degrees are kept, the rest follows from the device count: tp=1
// leaves dp=8, which does not divide the batch of 1.
// FORCED: error: no plan over 8 devices with the forced choices (dp=0, tp=1, pp=0, microbatches=0) and global batch 1: the degrees must multiply to the device count, dp and the micro-batches must divide the batch, and tp must split some tensor

// TOOMANY: error: cannot plan for 64 devices on cluster 'h100x8' of 8
// NODEGREES: error: no plan over 4 devices with the forced choices (dp=0, tp=3, pp=0, microbatches=0) and global batch 1
// CLUSTER: error: cluster 'nope': neither a preset
// MODE: for the --mode option: Cannot find option named 'fly'!

func.func @main(
    %x: tensor<1x128x1024xf32>,
    %ln_s: tensor<1024xf32> {dnn.weight = dense<1.0> : tensor<1024xf32>},
    %wq: tensor<1024x1024xf32> {dnn.weight = dense<0.01> : tensor<1024x1024xf32>},
    %wk: tensor<1024x1024xf32> {dnn.weight = dense<0.02> : tensor<1024x1024xf32>},
    %wv: tensor<1024x1024xf32> {dnn.weight = dense<0.03> : tensor<1024x1024xf32>},
    %wo: tensor<1024x1024xf32> {dnn.weight = dense<0.04> : tensor<1024x1024xf32>},
    %bo: tensor<1024xf32> {dnn.weight = dense<0.5> : tensor<1024xf32>},
    %w1: tensor<1024x4096xf32> {dnn.weight = dense<0.01> : tensor<1024x4096xf32>},
    %b1: tensor<4096xf32> {dnn.weight = dense<0.7> : tensor<4096xf32>},
    %w2: tensor<4096x1024xf32> {dnn.weight = dense<0.01> : tensor<4096x1024xf32>},
    %b2: tensor<1024xf32> {dnn.weight = dense<0.9> : tensor<1024xf32>}) -> tensor<1x128x1024xf32> {
  %h, %m0, %r0 = dnn.layer_norm %x, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<1x128x1024xf32>, tensor<1024xf32>) -> (tensor<1x128x1024xf32>, tensor<1x128x1xf32>, tensor<1x128x1xf32>)
  %q = dnn.matmul %h, %wq : (tensor<1x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<1x128x1024xf32>
  %k = dnn.matmul %h, %wk : (tensor<1x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<1x128x1024xf32>
  %v = dnn.matmul %h, %wv : (tensor<1x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<1x128x1024xf32>
  %q4 = dnn.reshape %q : tensor<1x128x1024xf32> -> tensor<1x128x16x64xf32>
  %k4 = dnn.reshape %k : tensor<1x128x1024xf32> -> tensor<1x128x16x64xf32>
  %v4 = dnn.reshape %v : tensor<1x128x1024xf32> -> tensor<1x128x16x64xf32>
  %qt = dnn.transpose %q4, permutation = [0, 2, 1, 3] : tensor<1x128x16x64xf32> -> tensor<1x16x128x64xf32>
  %kt = dnn.transpose %k4, permutation = [0, 2, 3, 1] : tensor<1x128x16x64xf32> -> tensor<1x16x64x128xf32>
  %vt = dnn.transpose %v4, permutation = [0, 2, 1, 3] : tensor<1x128x16x64xf32> -> tensor<1x16x128x64xf32>
  %s = dnn.matmul %qt, %kt : (tensor<1x16x128x64xf32>, tensor<1x16x64x128xf32>) -> tensor<1x16x128x128xf32>
  %c = dnn.constant dense<0.125> : tensor<1x16x128x128xf32>
  %ss = dnn.mul %s, %c : tensor<1x16x128x128xf32>
  %p = dnn.softmax %ss axis = 3 : tensor<1x16x128x128xf32>
  %o = dnn.matmul %p, %vt : (tensor<1x16x128x128xf32>, tensor<1x16x128x64xf32>) -> tensor<1x16x128x64xf32>
  %ot = dnn.transpose %o, permutation = [0, 2, 1, 3] : tensor<1x16x128x64xf32> -> tensor<1x128x16x64xf32>
  %o3 = dnn.reshape %ot : tensor<1x128x16x64xf32> -> tensor<1x128x1024xf32>
  %a = dnn.matmul %o3, %wo : (tensor<1x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<1x128x1024xf32>
  %bob = dnn.broadcast_in_dim %bo, dims = [2] : tensor<1024xf32> -> tensor<1x128x1024xf32>
  %ab = dnn.add %a, %bob : tensor<1x128x1024xf32>
  %x2 = dnn.add %x, %ab : tensor<1x128x1024xf32>
  %h2, %m1, %r1 = dnn.layer_norm %x2, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<1x128x1024xf32>, tensor<1024xf32>) -> (tensor<1x128x1024xf32>, tensor<1x128x1xf32>, tensor<1x128x1xf32>)
  %f1 = dnn.matmul %h2, %w1 : (tensor<1x128x1024xf32>, tensor<1024x4096xf32>) -> tensor<1x128x4096xf32>
  %b1b = dnn.broadcast_in_dim %b1, dims = [2] : tensor<4096xf32> -> tensor<1x128x4096xf32>
  %f1b = dnn.add %f1, %b1b : tensor<1x128x4096xf32>
  %g = dnn.gelu %f1b approximation = <none> : tensor<1x128x4096xf32>
  %f2 = dnn.matmul %g, %w2 : (tensor<1x128x4096xf32>, tensor<4096x1024xf32>) -> tensor<1x128x1024xf32>
  %b2b = dnn.broadcast_in_dim %b2, dims = [2] : tensor<1024xf32> -> tensor<1x128x1024xf32>
  %f2b = dnn.add %f2, %b2b : tensor<1x128x1024xf32>
  %y = dnn.add %x2, %f2b : tensor<1x128x1024xf32>
  return %y : tensor<1x128x1024xf32>
}
