// RUN: dnnc-opt %s -split-input-file --dnnc-record-plan | FileCheck %s

// A tensor-parallel @main: one function over every buffer (arguments, then
// results), each with its local and global type and its sharding.

// CHECK: module attributes {dist.plan = #dist.plan<axes = [#dist.axis<"tp", 2, intra>],
// CHECK-SAME: buffers = [#dist.buffer<role = input, name = "x", type = tensor<2x4xf32>, global = tensor<2x4xf32>, sharding = <@mesh, [{}, {}]>>,
// CHECK-SAME: #dist.buffer<role = weight, name = "w", type = tensor<4x2xf32>, global = tensor<4x4xf32>, sharding = <@mesh, [{}, {"tp"}]>, weight = dense<{{.*}}> : tensor<4x4xf32>>,
// CHECK-SAME: #dist.buffer<role = output, name = "y", type = tensor<2x2xf32>, global = tensor<2x4xf32>, sharding = <@mesh, [{}, {"tp"}]>>],
// CHECK-SAME: functions = [#dist.function<symbol = "dnnc_entry", buffers = [0, 1, 2]>], transfers = []>
module {
  dist.mesh @mesh ["tp" = 2 : intra]
  func.func @main(%x: tensor<2x4xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "x"},
                  %w: tensor<4x2xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>, dnn.name = "w", dnn.weight = dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<4x4xf32>})
      -> (tensor<2x2xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>, dnn.name = "y"}) {
    %0 = dnn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
    return %0 : tensor<2x2xf32>
  }
}

// -----

// With --precision=bf16 an unpipelined plan records the f32 values of its
// bf16 weights rounded; an f32 weight (a training step's master copy, a
// constant outlined after the conversion) stays f32; names default to
// argN / outputN; a device order is kept.

// CHECK: dist.plan = #dist.plan<axes = [#dist.axis<"x", 2, inter>], devices = [1, 0],
// CHECK-SAME: #dist.buffer<role = input, name = "arg0", type = tensor<2xbf16>, global = tensor<2xbf16>>
// CHECK-SAME: #dist.buffer<role = weight, name = "arg1", type = tensor<2xbf16>, global = tensor<2xbf16>, weight = dense<[1.000000e+00, 3.140630e+00]> : tensor<2xbf16>>
// CHECK-SAME: #dist.buffer<role = weight, name = "arg2", type = tensor<2xf32>, global = tensor<2xf32>, weight = dense<[1.000000e+00, 3.141590e+00]> : tensor<2xf32>>
// CHECK-SAME: #dist.buffer<role = output, name = "output0", type = tensor<2xbf16>, global = tensor<2xbf16>>
module attributes {dnn.precision = #dnn.precision<bf16>} {
  dist.mesh @mesh ["x" = 2 : inter] devices = [1, 0]
  func.func @main(%a: tensor<2xbf16>, %b: tensor<2xbf16> {dnn.weight = dense<[1.0, 3.14159]> : tensor<2xf32>}, %c: tensor<2xf32> {dnn.weight = dense<[1.0, 3.14159]> : tensor<2xf32>}) -> tensor<2xbf16> {
    %0 = dnn.cast %c : tensor<2xf32> -> tensor<2xbf16>
    %1 = dnn.add %a, %b : tensor<2xbf16>
    %2 = dnn.add %1, %0 : tensor<2xbf16>
    return %2 : tensor<2xbf16>
  }
}

// -----

// A pipeline of two stages over two micro-batches: one function per stage
// over its inputs then results, an activation buffer per transfer, the
// micro-batch dims and the pipeline.

// CHECK: dist.plan = #dist.plan<axes = [#dist.axis<"pp", 2, intra>], pipeline = <axis = "pp", stages = 2, microbatches = 2>,
// CHECK-SAME: buffers = [#dist.buffer<role = input, name = "x", type = tensor<4x16xf32>, global = tensor<4x16xf32>, sharding = <@mesh, [{}, {}]>, microbatch_dim = 0>,
// CHECK-SAME: #dist.buffer<role = weight, name = "w", type = tensor<16x16xf32>, global = tensor<16x16xf32>, sharding = <@mesh, [{}, {}]>, weight = dense<1.000000e+00> : tensor<16x16xf32>>,
// CHECK-SAME: #dist.buffer<role = output, name = "y", type = tensor<4x16xf32>, global = tensor<4x16xf32>, sharding = <@mesh, [{}, {}]>, microbatch_dim = 0>,
// CHECK-SAME: #dist.buffer<role = activation, name = "stage 0 result 0", type = tensor<4x16xf32>, global = tensor<4x16xf32>>,
// CHECK-SAME: #dist.buffer<role = activation, name = "transfer 0", type = tensor<4x16xf32>, global = tensor<4x16xf32>>],
// CHECK-SAME: functions = [#dist.function<symbol = "dnnc_entry_stage_0", buffers = [0, 1, 3]>, #dist.function<symbol = "dnnc_entry_stage_1", stage = 1, buffers = [4, 2]>],
// CHECK-SAME: transfers = [#dist.transfer<from = 0, to = 1, source = 3, target = 4>]>
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, microbatches = 2>} {
  dist.mesh @mesh ["pp" = 2 : intra]
  func.func @main(%x: tensor<4x16xf32> {dist.microbatch_dim = 0 : i64, dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "x"},
                  %w: tensor<16x16xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "w", dnn.weight = dense<1.0> : tensor<16x16xf32>})
      -> (tensor<4x16xf32> {dist.microbatch_dim = 0 : i64, dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "y"}) {
    %0 = dist.stage 0 -> (tensor<4x16xf32>) {
      %3 = dnn.matmul %x, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
      dist.yield %3 : tensor<4x16xf32>
    }
    %1 = dist.transfer %0 from stage 0 to stage 1 : tensor<4x16xf32>
    %2 = dist.stage 1 -> (tensor<4x16xf32>) {
      %3 = dnn.relu %1 : tensor<4x16xf32>
      dist.yield %3 : tensor<4x16xf32>
    }
    return %2 : tensor<4x16xf32>
  }
}
