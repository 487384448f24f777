// RUN: dnnc-opt %s --dnn-collectives-to-runtime -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-NOT: dist.mesh
dist.mesh @m ["x" = 2 : intra, "y" = 4 : intra]

// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[A]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-DAG: %[[PIN:.*]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK-DAG: %[[POUT:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK-DAG: %[[MASK:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[F32:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[MEAN:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[N:.*]] = arith.constant 32 : i64
// CHECK: call @dnnc_rt_all_reduce(%[[MASK]], %[[F32]], %[[MEAN]], %[[PIN]], %[[POUT]], %[[N]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<4x8xf32> to tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @all_reduce(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = dist.all_reduce mean %a on @m axes ["y"] : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Gathering dim 1 of [4, 2, 3]: outer = 4, chunk = 2 * 3; both axes: mask 3.
// CHECK-LABEL: func.func @all_gather(
// CHECK-DAG: %[[MASK:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[I64:.*]] = arith.constant 7 : i32
// CHECK-DAG: %[[OUTER:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 6 : i64
// CHECK: call @dnnc_rt_all_gather(%[[MASK]], %[[I64]], %{{.*}}, %{{.*}}, %[[OUTER]], %[[CHUNK]])
func.func @all_gather(%a: tensor<4x2x3xi64>) -> tensor<4x16x3xi64> {
  %g = dist.all_gather %a on @m axes ["x", "y"] gather_dim = 1 : tensor<4x2x3xi64> -> tensor<4x16x3xi64>
  return %g : tensor<4x16x3xi64>
}

// Scattering dim 0 of [8, 5] over x: the result [4, 5] is outer 1, chunk 20.
// CHECK-LABEL: func.func @reduce_scatter(
// CHECK-DAG: %[[MASK:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[MAX:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 20 : i64
// CHECK: call @dnnc_rt_reduce_scatter(%[[MASK]], %{{.*}}, %[[MAX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[CHUNK]])
func.func @reduce_scatter(%a: tensor<8x5xf64>) -> tensor<4x5xf64> {
  %s = dist.reduce_scatter max %a on @m axes ["x"] scatter_dim = 0 : tensor<8x5xf64> -> tensor<4x5xf64>
  return %s : tensor<4x5xf64>
}

// Moving the split of [8, 6] over y (4) from dim 1 to dim 0: blocks are
// [2, 6], so outer = 1, splitChunk = 12, inner = 6.
// CHECK-LABEL: func.func @all_to_all(
// CHECK-DAG: %[[MASK:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[OUTER:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[SPLIT:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[INNER:.*]] = arith.constant 6 : i64
// CHECK: call @dnnc_rt_all_to_all(%[[MASK]], %{{.*}}, %{{.*}}, %{{.*}}, %[[OUTER]], %[[SPLIT]], %[[INNER]])
func.func @all_to_all(%a: tensor<8x6xf32>) -> tensor<2x24xf32> {
  %t = dist.all_to_all %a on @m axes ["y"] split_dim = 0 concat_dim = 1 : tensor<8x6xf32> -> tensor<2x24xf32>
  return %t : tensor<2x24xf32>
}

// Broadcast works in place on a copy of the input.
// CHECK-LABEL: func.func @broadcast(
// CHECK: %[[IN:.*]] = bufferization.to_buffer
// CHECK: %[[OUT:.*]] = memref.alloc()
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK: call @dnnc_rt_broadcast(
func.func @broadcast(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = dist.broadcast %a on @m axes ["y"] root = 3 : tensor<4xf32>
  return %b : tensor<4xf32>
}

// Shard slices ask the runtime for the rank's coordinate on each axis
// (its group index on that axis alone) and slice the whole tensor.
// Dim 0 over x (mesh axis 0, mask 1): block x of 4 rows.
// CHECK-LABEL: func.func @shard_slice(
// CHECK-SAME: %[[A:.*]]: tensor<8x16xf32>
// CHECK: %[[MX:.*]] = arith.constant 1 : i64
// CHECK: %[[X:.*]] = call @dnnc_rt_group_index(%[[MX]]) : (i64) -> i64
// CHECK: %[[XI:.*]] = arith.index_cast %[[X]] : i64 to index
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[XI]], %[[C4]] : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[A]][%[[OFF]], 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
// CHECK: return %[[S]]
func.func @shard_slice(%a: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %s = dist.shard_slice %a to <@m, [{"x"}, {}]> : tensor<8x16xf32> -> tensor<4x16xf32>
  return %s : tensor<4x16xf32>
}

// Dim 0 over y then x: block y * 2 + x of one row; dim 1 over nothing.
// CHECK-LABEL: func.func @shard_slice_two_axes(
// CHECK-SAME: %[[A:.*]]: tensor<8x16xi32>
// CHECK: %[[MY:.*]] = arith.constant 2 : i64
// CHECK: %[[Y:.*]] = call @dnnc_rt_group_index(%[[MY]]) : (i64) -> i64
// CHECK: %[[YI:.*]] = arith.index_cast %[[Y]] : i64 to index
// CHECK: %[[MX:.*]] = arith.constant 1 : i64
// CHECK: %[[X:.*]] = call @dnnc_rt_group_index(%[[MX]]) : (i64) -> i64
// CHECK: %[[XI:.*]] = arith.index_cast %[[X]] : i64 to index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[YX:.*]] = arith.muli %[[YI]], %[[C2]] : index
// CHECK: %[[B:.*]] = arith.addi %[[YX]], %[[XI]] : index
// CHECK-NOT: call
// CHECK: tensor.extract_slice %[[A]][%[[B]], 0] [1, 16] [1, 1] : tensor<8x16xi32> to tensor<1x16xi32>
func.func @shard_slice_two_axes(%a: tensor<8x16xi32>) -> tensor<1x16xi32> {
  %s = dist.shard_slice %a to <@m, [{"y", "x"}, {}]> : tensor<8x16xi32> -> tensor<1x16xi32>
  return %s : tensor<1x16xi32>
}

// A slice with no elements reads nothing: an empty tensor, no query and no
// tensor.extract_slice (which has no valid static offset into a zero extent).
// CHECK-LABEL: func.func @shard_slice_empty(
// CHECK-NOT: call
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x2xf32>
// CHECK: return %[[E]]
func.func @shard_slice_empty(%a: tensor<0x16xf32>) -> tensor<0x2xf32> {
  %s = dist.shard_slice %a to <@m, [{}, {"y", "x"}]> : tensor<0x16xf32> -> tensor<0x2xf32>
  return %s : tensor<0x2xf32>
}

// So does a collective: every rank has the same empty local type and skips it.
// CHECK-LABEL: func.func @all_to_all_empty(
// CHECK-NOT: call
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x4xf32>
// CHECK: return %[[E]]
func.func @all_to_all_empty(%a: tensor<0x8xf32>) -> tensor<0x4xf32> {
  %s = dist.all_to_all %a on @m axes ["x"] split_dim = 1 concat_dim = 0 : tensor<0x8xf32> -> tensor<0x4xf32>
  return %s : tensor<0x4xf32>
}

// Both dims split: one query per axis, one offset per dim.
// CHECK-LABEL: func.func @shard_slice_two_dims(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf64>
// CHECK: %[[X:.*]] = call @dnnc_rt_group_index(
// CHECK: %[[XI:.*]] = arith.index_cast %[[X]]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OFF0:.*]] = arith.muli %[[XI]], %[[C2]] : index
// CHECK: %[[Y:.*]] = call @dnnc_rt_group_index(
// CHECK: %[[YI:.*]] = arith.index_cast %[[Y]]
// CHECK: %[[C2B:.*]] = arith.constant 2 : index
// CHECK: %[[OFF1:.*]] = arith.muli %[[YI]], %[[C2B]] : index
// CHECK-NOT: call
// CHECK: tensor.extract_slice %[[A]][%[[OFF0]], %[[OFF1]]] [2, 2] [1, 1] : tensor<4x8xf64> to tensor<2x2xf64>
func.func @shard_slice_two_dims(%a: tensor<4x8xf64>) -> tensor<2x2xf64> {
  %s = dist.shard_slice %a to <@m, [{"x"}, {"y"}]> : tensor<4x8xf64> -> tensor<2x2xf64>
  return %s : tensor<2x2xf64>
}

// -----

// An axis of size 1 needs no query: the coordinate is 0.
dist.mesh @m ["x" = 2 : intra, "one" = 1 : intra]

// CHECK-LABEL: func.func @shard_slice_unit_axis(
// CHECK-SAME: %[[A:.*]]: tensor<4x6xf32>
// CHECK-NOT: call
// CHECK: tensor.extract_slice %[[A]][0, 0] [4, 6] [1, 1] : tensor<4x6xf32> to tensor<4x6xf32>
func.func @shard_slice_unit_axis(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = dist.shard_slice %a to <@m, [{"one"}, {}]> : tensor<4x6xf32> -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

// -----

dist.mesh @m ["x" = 2 : intra]

func.func @shard_slice_dynamic(%a: tensor<?x6xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{'dist.shard_slice' op needs statically shaped tensors}}
  %s = dist.shard_slice %a to <@m, [{"x"}, {}]> : tensor<?x6xf32> -> tensor<?x6xf32>
  return %s : tensor<?x6xf32>
}

// -----

dist.mesh @m ["x" = 2 : intra, "y" = 2 : intra]

func.func @unordered(%a: tensor<2x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{gathers and scatters over several axes must list them in mesh order}}
  %g = dist.all_gather %a on @m axes ["y", "x"] gather_dim = 1 : tensor<2x4xf32> -> tensor<2x16xf32>
  return %g : tensor<2x16xf32>
}
