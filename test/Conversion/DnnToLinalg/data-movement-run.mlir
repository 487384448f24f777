// Runs the data movement lowering end to end on the CPU and checks the
// printed values (flattened row-major). Expected values are numpy's for the
// same reshapes, slices (negative steps included), gathers (negative indices
// included), broadcasts, transposes and concatenations.

// REQUIRES: mlir-runner
// DEFINE: %{to_llvm} = --one-shot-bufferize="bufferize-function-boundaries" \
// DEFINE:   --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// DEFINE:   --convert-scf-to-cf --convert-math-to-llvm --convert-math-to-libm \
// DEFINE:   --finalize-memref-to-llvm --convert-arith-to-llvm \
// DEFINE:   --convert-cf-to-llvm --convert-func-to-llvm \
// DEFINE:   --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void \
// DEFINE:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils

// With elementwise fusion and without it.
// RUN: dnnc-opt %s --convert-dnn-to-linalg \
// RUN: | mlir-opt --linalg-fuse-elementwise-ops %{to_llvm} | %{run} \
// RUN: | FileCheck %s
// RUN: dnnc-opt %s --convert-dnn-to-linalg | mlir-opt %{to_llvm} | %{run} \
// RUN: | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

// The computations take their inputs as arguments so that the dnn folders
// cannot evaluate them at compile time.

// a.reshape(4, 6).T: the reshape is neither a collapse nor an expand.
func.func @reshape_transpose(%a: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = dnn.reshape %a : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %1 = dnn.transpose %0, permutation = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// a.reshape(6, 4)[5::-2, 3::-1]: a collapse, then negative steps.
func.func @reshape_reverse(%a: tensor<2x3x4xf32>) -> tensor<3x4xf32> {
  %0 = dnn.reshape %a : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = dnn.slice %0 starts = [5, 3] steps = [-2, -1] : tensor<6x4xf32> -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// a.reshape(2, 3, 2, 2)[:, ::2, 1, :]: an expand, then a positive-step slice
// and a collapse of the unit dimension.
func.func @expand_slice(%a: tensor<2x3x4xf32>) -> tensor<2x2x2xf32> {
  %0 = dnn.reshape %a : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %1 = dnn.slice %0 starts = [0, 0, 1, 0] steps = [1, 2, 1, 1] : tensor<2x3x2x2xf32> -> tensor<2x2x1x2xf32>
  %2 = dnn.reshape %1 : tensor<2x2x1x2xf32> -> tensor<2x2x2xf32>
  return %2 : tensor<2x2x2xf32>
}

// a[1::-1, 2::-1, 0::3]: mixed negative and positive steps.
func.func @slice_mixed(%a: tensor<2x3x4xf32>) -> tensor<2x3x2xf32> {
  %0 = dnn.slice %a starts = [1, 2, 0] steps = [-1, -1, 3] : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// v[None, :, None] + w[:, None, :] broadcast to 2x3x4 (w's first extent is 1).
func.func @broadcast(%v: tensor<3xf32>, %w: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  %0 = dnn.broadcast_in_dim %v, dims = [1] : tensor<3xf32> -> tensor<2x3x4xf32>
  %1 = dnn.broadcast_in_dim %w, dims = [0, 2] : tensor<1x4xf32> -> tensor<2x3x4xf32>
  %2 = dnn.add %0, %1 : tensor<2x3x4xf32>
  return %2 : tensor<2x3x4xf32>
}

// a.transpose(2, 0, 1).
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = dnn.transpose %a, permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// concatenate([a[:, :1, :], b, a[:, 2:, :]], axis=1).
func.func @concat(%a: tensor<2x3x4xf32>, %b: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
  %0 = dnn.slice %a starts = [0, 0, 0] steps = [1, 1, 1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %1 = dnn.slice %a starts = [0, 2, 0] steps = [1, 1, 1] : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %2 = dnn.concat %0, %b, %1 axis = 1 : (tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  return %2 : tensor<2x3x4xf32>
}

// take(a, [-1, 0], axis=0), take(a, [[3, -4], [-1, 1]], axis=2) and
// take(a, -2, axis=1): negative indices count from the end.
func.func @gather(%a: tensor<2x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2x2xi32>, %k: tensor<i64>)
    -> (tensor<2x3x4xf32>, tensor<2x3x2x2xf32>, tensor<2x4xf32>) {
  %0 = dnn.gather %a[%i] axis = 0 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x3x4xf32>
  %1 = dnn.gather %a[%j] axis = 2 : (tensor<2x3x4xf32>, tensor<2x2xi32>) -> tensor<2x3x2x2xf32>
  %2 = dnn.gather %a[%k] axis = 1 : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3x2x2xf32>, tensor<2x4xf32>
}

// Integer (ui8) data: a.reshape(3, 8)[::-1, 1::3] as i64.
func.func @unsigned(%u: tensor<2x3x4xui8>) -> tensor<3x3xi64> {
  %0 = dnn.reshape %u : tensor<2x3x4xui8> -> tensor<3x8xui8>
  %1 = dnn.slice %0 starts = [2, 1] steps = [-1, 3] : tensor<3x8xui8> -> tensor<3x3xui8>
  %2 = dnn.cast %1 : tensor<3x3xui8> -> tensor<3x3xi64>
  return %2 : tensor<3x3xi64>
}

func.func @main() {
  %a = arith.constant dense<[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0],
                              [8.0, 9.0, 10.0, 11.0]],
                             [[12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0],
                              [20.0, 21.0, 22.0, 23.0]]]> : tensor<2x3x4xf32>

  %0 = call @reshape_transpose(%a) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %f0 = tensor.collapse_shape %0 [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  %u0 = tensor.cast %f0 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [0, 6, 12, 18, 1, 7, 13, 19, 2, 8, 14, 20, 3, 9, 15, 21, 4, 10, 16, 22, 5, 11, 17, 23]
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()

  %1 = call @reshape_reverse(%a) : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %f1 = tensor.collapse_shape %1 [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %u1 = tensor.cast %f1 : tensor<12xf32> to tensor<*xf32>
  // CHECK: [23, 22, 21, 20, 15, 14, 13, 12, 7, 6, 5, 4]
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()

  %2 = call @expand_slice(%a) : (tensor<2x3x4xf32>) -> tensor<2x2x2xf32>
  %f2 = tensor.collapse_shape %2 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %u2 = tensor.cast %f2 : tensor<8xf32> to tensor<*xf32>
  // CHECK: [2, 3, 10, 11, 14, 15, 22, 23]
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()

  %3 = call @slice_mixed(%a) : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  %f3 = tensor.collapse_shape %3 [[0, 1, 2]] : tensor<2x3x2xf32> into tensor<12xf32>
  %u3 = tensor.cast %f3 : tensor<12xf32> to tensor<*xf32>
  // CHECK: [20, 23, 16, 19, 12, 15, 8, 11, 4, 7, 0, 3]
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()

  %v = arith.constant dense<[100.0, 200.0, 300.0]> : tensor<3xf32>
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %4 = call @broadcast(%v, %w) : (tensor<3xf32>, tensor<1x4xf32>) -> tensor<2x3x4xf32>
  %f4 = tensor.collapse_shape %4 [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
  %u4 = tensor.cast %f4 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [101, 102, 103, 104, 201, 202, 203, 204, 301, 302, 303, 304, 101, 102, 103, 104, 201, 202, 203, 204, 301, 302, 303, 304]
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()

  %5 = call @transpose(%a) : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %f5 = tensor.collapse_shape %5 [[0, 1, 2]] : tensor<4x2x3xf32> into tensor<24xf32>
  %u5 = tensor.cast %f5 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23]
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()

  %b = arith.constant dense<-1.0> : tensor<2x1x4xf32>
  %6 = call @concat(%a, %b) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  %f6 = tensor.collapse_shape %6 [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
  %u6 = tensor.cast %f6 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, 20, 21, 22, 23]
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()

  %i = arith.constant dense<[-1, 0]> : tensor<2xi64>
  %j = arith.constant dense<[[3, -4], [-1, 1]]> : tensor<2x2xi32>
  %k = arith.constant dense<-2> : tensor<i64>
  %7:3 = call @gather(%a, %i, %j, %k)
      : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2x2xi32>, tensor<i64>)
      -> (tensor<2x3x4xf32>, tensor<2x3x2x2xf32>, tensor<2x4xf32>)
  %f7 = tensor.collapse_shape %7#0 [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
  %u7 = tensor.cast %f7 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  %f8 = tensor.collapse_shape %7#1 [[0, 1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<24xf32>
  %u8 = tensor.cast %f8 : tensor<24xf32> to tensor<*xf32>
  // CHECK: [3, 0, 3, 1, 7, 4, 7, 5, 11, 8, 11, 9, 15, 12, 15, 13, 19, 16, 19, 17, 23, 20, 23, 21]
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  %f9 = tensor.collapse_shape %7#2 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %u9 = tensor.cast %f9 : tensor<8xf32> to tensor<*xf32>
  // CHECK: [4, 5, 6, 7, 16, 17, 18, 19]
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()

  %u = arith.constant dense<[[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]],
                             [[12, 13, 14, 15], [16, 17, 18, 19],
                              [250, 251, 252, 255]]]> : tensor<2x3x4xui8>
  %10 = call @unsigned(%u) : (tensor<2x3x4xui8>) -> tensor<3x3xi64>
  %f10 = tensor.collapse_shape %10 [[0, 1]] : tensor<3x3xi64> into tensor<9xi64>
  %u10 = tensor.cast %f10 : tensor<9xi64> to tensor<*xi64>
  // CHECK: [17, 250, 255, 9, 12, 15, 1, 4, 7]
  call @printMemrefI64(%u10) : (tensor<*xi64>) -> ()
  return
}
