// RUN: dnnc-opt %s --dist-propagate-shardings=dp-axis=dp --dnnc-search-shardings="cluster=h100x8 axes=tp memory-weight=1e-12" | FileCheck %s --check-prefix=SEARCH
// RUN: dnnc-opt %s --dist-propagate-shardings=dp-axis=dp --dnnc-search-shardings="cluster=h100x8 axes=tp memory-weight=1e-12" --dist-check-shardings --dist-partition | FileCheck %s --check-prefix=PART
// RUN: dnnc-opt %s --dist-propagate-shardings="dp-axis=dp tp-axis=tp" --dnnc-search-shardings="cluster=h100x8 axes=tp memory-weight=1e-12" --dist-check-shardings --dist-partition | FileCheck %s --check-prefix=PART
// RUN: dnnc-opt %s --dist-propagate-shardings=dp-axis=dp --dnnc-search-shardings="cluster=h100x8 axes=tp" | FileCheck %s --check-prefix=TIME

// A pre-LN transformer block (2 sequences of 128 tokens, hidden 1024, 16
// heads, MLP 4096) on 2 x 2 H100s. Data parallelism comes from propagation
// (dim 0 of the input over "dp"); the per-op search chooses everything over
// "tp". Charging memory (1e-12 s per byte of weights and activations per
// device), the exact optimum is Megatron's pattern: Q, K, V and the first
// MLP matmul column parallel, the attention output projection and the
// second MLP matmul row parallel, the heads split through attention, and
// exactly one all-reduce of the row-parallel partial sums per attention and
// per MLP. (Sequence parallelism, a reduce-scatter and an all-gather in
// place of each all-reduce, moves the same bytes but pays a second
// collective launch, more than it saves on the layer norm and residual adds
// of 256 tokens.)

// SEARCH: module attributes {dnnc.sharding_search = {{{.*}}optimal = true
// SEARCH-LABEL: func.func @main
// SEARCH-SAME: tensor<2x128x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}, {}]>}
// SEARCH-SAME: %[[WQ:[a-z0-9_]+]]: tensor<1024x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// SEARCH-SAME: %[[WK:[a-z0-9_]+]]: tensor<1024x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// SEARCH-SAME: %[[WV:[a-z0-9_]+]]: tensor<1024x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// SEARCH-SAME: %[[WO:[a-z0-9_]+]]: tensor<1024x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// SEARCH-SAME: tensor<1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}]>
// SEARCH-SAME: %[[W1:[a-z0-9_]+]]: tensor<1024x4096xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// SEARCH-SAME: tensor<4096xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}]>
// SEARCH-SAME: %[[W2:[a-z0-9_]+]]: tensor<4096x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// SEARCH-SAME: -> (tensor<2x128x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}, {}]>})
// SEARCH: dnn.softmax %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}, {}, {}]>]}
// SEARCH: %[[ATT:[a-z0-9_]+]] = dnn.matmul %{{.*}}, %[[WO]] {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {}, {}], partial = {"tp"}>]}
// SEARCH-NEXT: dist.reshard %[[ATT]] from <@mesh, [{"dp"}, {}, {}], partial = {"tp"}> to <@mesh, [{"dp"}, {}, {}]>
// SEARCH: %[[MLP:[a-z0-9_]+]] = dnn.matmul %{{.*}}, %[[W2]] {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {}, {}], partial = {"tp"}>]}
// SEARCH-NEXT: dist.reshard %[[MLP]] from <@mesh, [{"dp"}, {}, {}], partial = {"tp"}> to <@mesh, [{"dp"}, {}, {}]>

// Partitioned (also after Megatron propagation: the search drops its
// reshards): the weights' local blocks, then exactly one all-reduce per
// attention and per MLP.
// PART-LABEL: func.func @main
// PART-SAME: tensor<1024x512xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// PART-SAME: tensor<512x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// PART-SAME: tensor<1024x2048xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// PART-SAME: tensor<2048x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// PART-NOT: dist.{{all_|reduce_}}
// PART: dnn.softmax %{{.*}} : tensor<1x8x128x128xf32>
// PART-NOT: dist.{{all_|reduce_}}
// PART: dist.all_reduce sum %{{.*}} on @mesh axes ["tp"] : tensor<1x128x1024xf32>
// PART-NOT: dist.{{all_|reduce_}}
// PART: dnn.gelu %{{.*}} : tensor<1x128x2048xf32>
// PART-NOT: dist.{{all_|reduce_}}
// PART: dist.all_reduce sum %{{.*}} on @mesh axes ["tp"] : tensor<1x128x1024xf32>
// PART-NOT: dist.{{all_|reduce_}}
// PART: return

// Pricing time alone in inference, replicated weights cost nothing: the
// rest of the block runs on half the tokens per device with whole MLP
// weights.
// TIME-LABEL: func.func @main
// TIME-SAME: tensor<1024x4096xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>
// TIME-SAME: tensor<4096x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>
// TIME: dnn.gelu %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}, {}]>]}

dist.mesh @mesh ["dp" = 2 : intra, "tp" = 2 : intra]

func.func @main(
    %x: tensor<2x128x1024xf32>,
    %ln_s: tensor<1024xf32> {dnn.weight = dense<1.0> : tensor<1024xf32>},
    %wq: tensor<1024x1024xf32> {dnn.weight = dense<0.01> : tensor<1024x1024xf32>},
    %wk: tensor<1024x1024xf32> {dnn.weight = dense<0.02> : tensor<1024x1024xf32>},
    %wv: tensor<1024x1024xf32> {dnn.weight = dense<0.03> : tensor<1024x1024xf32>},
    %wo: tensor<1024x1024xf32> {dnn.weight = dense<0.04> : tensor<1024x1024xf32>},
    %bo: tensor<1024xf32> {dnn.weight = dense<0.5> : tensor<1024xf32>},
    %w1: tensor<1024x4096xf32> {dnn.weight = dense<0.01> : tensor<1024x4096xf32>},
    %b1: tensor<4096xf32> {dnn.weight = dense<0.7> : tensor<4096xf32>},
    %w2: tensor<4096x1024xf32> {dnn.weight = dense<0.01> : tensor<4096x1024xf32>},
    %b2: tensor<1024xf32> {dnn.weight = dense<0.9> : tensor<1024xf32>}) -> tensor<2x128x1024xf32> {
  %h, %m0, %r0 = dnn.layer_norm %x, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<2x128x1024xf32>, tensor<1024xf32>) -> (tensor<2x128x1024xf32>, tensor<2x128x1xf32>, tensor<2x128x1xf32>)
  %q = dnn.matmul %h, %wq : (tensor<2x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x128x1024xf32>
  %k = dnn.matmul %h, %wk : (tensor<2x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x128x1024xf32>
  %v = dnn.matmul %h, %wv : (tensor<2x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x128x1024xf32>
  %q4 = dnn.reshape %q : tensor<2x128x1024xf32> -> tensor<2x128x16x64xf32>
  %k4 = dnn.reshape %k : tensor<2x128x1024xf32> -> tensor<2x128x16x64xf32>
  %v4 = dnn.reshape %v : tensor<2x128x1024xf32> -> tensor<2x128x16x64xf32>
  %qt = dnn.transpose %q4, permutation = [0, 2, 1, 3] : tensor<2x128x16x64xf32> -> tensor<2x16x128x64xf32>
  %kt = dnn.transpose %k4, permutation = [0, 2, 3, 1] : tensor<2x128x16x64xf32> -> tensor<2x16x64x128xf32>
  %vt = dnn.transpose %v4, permutation = [0, 2, 1, 3] : tensor<2x128x16x64xf32> -> tensor<2x16x128x64xf32>
  %s = dnn.matmul %qt, %kt : (tensor<2x16x128x64xf32>, tensor<2x16x64x128xf32>) -> tensor<2x16x128x128xf32>
  %c = dnn.constant dense<0.125> : tensor<2x16x128x128xf32>
  %ss = dnn.mul %s, %c : tensor<2x16x128x128xf32>
  %p = dnn.softmax %ss axis = 3 : tensor<2x16x128x128xf32>
  %o = dnn.matmul %p, %vt : (tensor<2x16x128x128xf32>, tensor<2x16x128x64xf32>) -> tensor<2x16x128x64xf32>
  %ot = dnn.transpose %o, permutation = [0, 2, 1, 3] : tensor<2x16x128x64xf32> -> tensor<2x128x16x64xf32>
  %o3 = dnn.reshape %ot : tensor<2x128x16x64xf32> -> tensor<2x128x1024xf32>
  %a = dnn.matmul %o3, %wo : (tensor<2x128x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x128x1024xf32>
  %bob = dnn.broadcast_in_dim %bo, dims = [2] : tensor<1024xf32> -> tensor<2x128x1024xf32>
  %ab = dnn.add %a, %bob : tensor<2x128x1024xf32>
  %x2 = dnn.add %x, %ab : tensor<2x128x1024xf32>
  %h2, %m1, %r1 = dnn.layer_norm %x2, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<2x128x1024xf32>, tensor<1024xf32>) -> (tensor<2x128x1024xf32>, tensor<2x128x1xf32>, tensor<2x128x1xf32>)
  %f1 = dnn.matmul %h2, %w1 : (tensor<2x128x1024xf32>, tensor<1024x4096xf32>) -> tensor<2x128x4096xf32>
  %b1b = dnn.broadcast_in_dim %b1, dims = [2] : tensor<4096xf32> -> tensor<2x128x4096xf32>
  %f1b = dnn.add %f1, %b1b : tensor<2x128x4096xf32>
  %g = dnn.gelu %f1b approximation = <none> : tensor<2x128x4096xf32>
  %f2 = dnn.matmul %g, %w2 : (tensor<2x128x4096xf32>, tensor<4096x1024xf32>) -> tensor<2x128x1024xf32>
  %b2b = dnn.broadcast_in_dim %b2, dims = [2] : tensor<1024xf32> -> tensor<2x128x1024xf32>
  %f2b = dnn.add %f2, %b2b : tensor<2x128x1024xf32>
  %y = dnn.add %x2, %f2b : tensor<2x128x1024xf32>
  return %y : tensor<2x128x1024xf32>
}
