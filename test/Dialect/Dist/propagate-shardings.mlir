// RUN: dnnc-opt %s --split-input-file --dist-propagate-shardings=tp-axis=tp 2>/dev/null | FileCheck %s --check-prefix=TP
// RUN: dnnc-opt %s --split-input-file --dist-propagate-shardings="dp-axis=dp tp-axis=tp" 2>/dev/null | FileCheck %s --check-prefix=DPTP
// RUN: dnnc-opt %s --split-input-file --dist-propagate-shardings=tp-axis=tp --dist-partition 2>/dev/null | FileCheck %s --check-prefix=PART

// A pre-LN transformer block (separate Q, K, V projections). Megatron's
// pattern falls out of the tensor-parallel seeds: Q, K, V and the first MLP
// matmul are column parallel, the attention output projection and the second
// MLP matmul row parallel, heads are split through reshape and transpose,
// and the forward pass needs exactly one reshard (an all-reduce of partial
// sums) per attention and one per MLP.

dist.mesh @mesh ["dp" = 2 : inter, "tp" = 2 : intra]

func.func @main(%x: tensor<2x4x8xf32>,
    %ln_s: tensor<8xf32> {dnn.weight = dense<1.0> : tensor<8xf32>},
    %wq: tensor<8x8xf32> {dnn.weight = dense<0.1> : tensor<8x8xf32>},
    %wk: tensor<8x8xf32> {dnn.weight = dense<0.2> : tensor<8x8xf32>},
    %wv: tensor<8x8xf32> {dnn.weight = dense<0.3> : tensor<8x8xf32>},
    %wo: tensor<8x8xf32> {dnn.weight = dense<0.4> : tensor<8x8xf32>},
    %bo: tensor<8xf32> {dnn.weight = dense<0.5> : tensor<8xf32>},
    %w1: tensor<8x32xf32> {dnn.weight = dense<0.6> : tensor<8x32xf32>},
    %b1: tensor<32xf32> {dnn.weight = dense<0.7> : tensor<32xf32>},
    %w2: tensor<32x8xf32> {dnn.weight = dense<0.8> : tensor<32x8xf32>},
    %b2: tensor<8xf32> {dnn.weight = dense<0.9> : tensor<8xf32>}) -> tensor<2x4x8xf32> {
  %h, %m0, %r0 = dnn.layer_norm %x, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %q = dnn.matmul %h, %wq : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %k = dnn.matmul %h, %wk : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %v = dnn.matmul %h, %wv : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %q4 = dnn.reshape %q : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %k4 = dnn.reshape %k : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %v4 = dnn.reshape %v : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %qt = dnn.transpose %q4, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %kt = dnn.transpose %k4, permutation = [0, 2, 3, 1] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %vt = dnn.transpose %v4, permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %s = dnn.matmul %qt, %kt : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %c = dnn.constant dense<0.5> : tensor<2x2x4x4xf32>
  %ss = dnn.mul %s, %c : tensor<2x2x4x4xf32>
  %p = dnn.softmax %ss axis = 3 : tensor<2x2x4x4xf32>
  %o = dnn.matmul %p, %vt : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %ot = dnn.transpose %o, permutation = [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
  %o3 = dnn.reshape %ot : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
  %a = dnn.matmul %o3, %wo : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %bob = dnn.broadcast_in_dim %bo, dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
  %ab = dnn.add %a, %bob : tensor<2x4x8xf32>
  %x2 = dnn.add %x, %ab : tensor<2x4x8xf32>
  %h2, %m1, %r1 = dnn.layer_norm %x2, %ln_s axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %f1 = dnn.matmul %h2, %w1 : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %b1b = dnn.broadcast_in_dim %b1, dims = [2] : tensor<32xf32> -> tensor<2x4x32xf32>
  %f1b = dnn.add %f1, %b1b : tensor<2x4x32xf32>
  %g = dnn.gelu %f1b approximation = <none> : tensor<2x4x32xf32>
  %f2 = dnn.matmul %g, %w2 : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  %b2b = dnn.broadcast_in_dim %b2, dims = [2] : tensor<8xf32> -> tensor<2x4x8xf32>
  %f2b = dnn.add %f2, %b2b : tensor<2x4x8xf32>
  %y = dnn.add %x2, %f2b : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// TP-LABEL: func.func @main
// TP-SAME: %[[X:[a-z0-9_]+]]: tensor<2x4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}, {}]>}
// TP-SAME: %[[WQ:[a-z0-9_]+]]: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// TP-SAME: %[[WK:[a-z0-9_]+]]: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// TP-SAME: %[[WV:[a-z0-9_]+]]: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// TP-SAME: %[[WO:[a-z0-9_]+]]: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// TP-SAME: %[[BO:[a-z0-9_]+]]: tensor<8xf32> {dist.sharding = #dist.sharding<@mesh, [{}]>
// TP-SAME: %[[W1:[a-z0-9_]+]]: tensor<8x32xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// TP-SAME: %[[B1:[a-z0-9_]+]]: tensor<32xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}]>
// TP-SAME: %[[W2:[a-z0-9_]+]]: tensor<32x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// TP-SAME: -> (tensor<2x4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}, {}]>})
// TP: dnn.reshape %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {"tp"}, {}]>]}
// TP: dnn.softmax %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}, {}, {}]>]}
// TP: %[[ATT:[a-z0-9_]+]] = dnn.matmul %{{.*}}, %[[WO]] {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {}], partial = {"tp"}>]}
// TP-NEXT: dist.reshard %[[ATT]] from <@mesh, [{}, {}, {}], partial = {"tp"}> to <@mesh, [{}, {}, {}]>
// TP-NOT: dist.reshard
// TP: dnn.gelu %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {"tp"}]>]}
// TP: %[[MLP:[a-z0-9_]+]] = dnn.matmul %{{.*}}, %[[W2]] {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {}], partial = {"tp"}>]}
// TP-NEXT: dist.reshard %[[MLP]] from <@mesh, [{}, {}, {}], partial = {"tp"}> to <@mesh, [{}, {}, {}]>
// TP-NOT: dist.reshard

// With data parallelism too, the batch dim is split over "dp" everywhere
// and the reshards stay the two all-reduces over "tp".
// DPTP-LABEL: func.func @main
// DPTP-SAME: tensor<2x4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}, {}]>}
// DPTP: dnn.softmax %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}, {}, {}]>]}
// DPTP: dist.reshard %{{.*}} from <@mesh, [{"dp"}, {}, {}], partial = {"tp"}> to <@mesh, [{"dp"}, {}, {}]>
// DPTP-NOT: dist.reshard
// DPTP: dist.reshard %{{.*}} from <@mesh, [{"dp"}, {}, {}], partial = {"tp"}> to <@mesh, [{"dp"}, {}, {}]>
// DPTP-NOT: dist.reshard
// DPTP: return %{{.*}} : tensor<2x4x8xf32>

// Partitioned, the block holds its weight shards and exactly one collective
// per attention and per MLP: an all-reduce of the row-parallel partial sums.
// PART-LABEL: func.func @main
// PART-SAME: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// PART-SAME: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// PART-SAME: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>
// PART-SAME: tensor<16x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {}]>
// PART-NOT: dist.{{all_|reduce_|shard_slice}}
// PART: dnn.softmax %{{.*}} : tensor<2x1x4x4xf32>
// PART-NOT: dist.{{all_|reduce_|shard_slice}}
// PART: dist.all_reduce sum %{{.*}} on @mesh axes ["tp"] : tensor<2x4x8xf32>
// PART-NOT: dist.{{all_|reduce_|shard_slice}}
// PART: dnn.gelu %{{.*}} : tensor<2x4x16xf32>
// PART-NOT: dist.{{all_|reduce_|shard_slice}}
// PART: dist.all_reduce sum %{{.*}} on @mesh axes ["tp"] : tensor<2x4x8xf32>
// PART-NOT: dist.{{all_|reduce_|shard_slice}}
// PART: return
