// RUN: dnnc-opt %s --split-input-file --dnn-convert-precision=precision=bf16 | FileCheck %s
// RUN: dnnc-opt %s --split-input-file --dnn-convert-precision=precision=fp16 | FileCheck %s --check-prefix=F16
// RUN: dnnc-opt %s --split-input-file --dnn-convert-precision=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: dnnc-opt %s --split-input-file --dnn-convert-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: not dnnc-opt %s --split-input-file --dnn-convert-precision=precision=int8 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --precision option: Cannot find option named 'int8'

// A layer: the input is cast once before its first user, weights change type, the
// matmul and the elementwise ops compute on bf16, softmax in f32 (its result,
// f32 already, is returned without a cast), integers are untouched.
// CHECK: module attributes {dnn.precision = #dnn.precision<bf16>}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<4xi64>
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x8xbf16> {dnn.name = "w", dnn.weight = dense<{{.*}}> : tensor<8x8xbf16>}
// CHECK-SAME: %[[E:[^:]*]]: tensor<16x8xbf16> {dnn.name = "emb", dnn.weight = dense<{{.*}}> : tensor<16x8xbf16>}
// CHECK-SAME: -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi64>)
// CHECK: %[[XC:.*]] = dnn.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[MM:.*]] = dnn.matmul %[[XC]], %[[W]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK: %[[G:.*]] = dnn.gather %[[E]][%[[IDS]]] axis = 0 : (tensor<16x8xbf16>, tensor<4xi64>) -> tensor<4x8xbf16>
// CHECK: %[[A:.*]] = dnn.add %[[MM]], %[[G]] : tensor<4x8xbf16>
// CHECK: %[[R:.*]] = dnn.relu %[[A]] : tensor<4x8xbf16>
// CHECK: %[[RF:.*]] = dnn.cast %[[R]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[S:.*]] = dnn.softmax %[[RF]] axis = 1 : tensor<4x8xf32>
// CHECK: %[[T:.*]] = dnn.add %[[IDS]], %[[IDS]] : tensor<4xi64>
// CHECK: return %[[S]], %[[RF]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi64>
// F16: module attributes {dnn.precision = #dnn.precision<fp16>}
// F16-LABEL: func.func @main(
// F16-SAME: tensor<8x8xf16> {dnn.name = "w", dnn.weight = dense<{{.*}}> : tensor<8x8xf16>}
// F16: dnn.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// TF32: module attributes {dnn.precision = #dnn.precision<tf32>}
// TF32-NOT: bf16
// TF32-NOT: dnn.cast
// TF32: dnn.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// FP32-NOT: dnn.precision
// FP32-NOT: dnn.cast
func.func @main(%x: tensor<4x8xf32>, %ids: tensor<4xi64>,
                %w: tensor<8x8xf32> {dnn.name = "w", dnn.weight = dense<0.5> : tensor<8x8xf32>},
                %e: tensor<16x8xf32> {dnn.name = "emb", dnn.weight = dense<0.25> : tensor<16x8xf32>})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi64>) {
  %0 = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = dnn.gather %e[%ids] axis = 0 : (tensor<16x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %2 = dnn.add %0, %1 : tensor<4x8xf32>
  %3 = dnn.relu %2 : tensor<4x8xf32>
  %4 = dnn.softmax %3 axis = 1 : tensor<4x8xf32>
  %5 = dnn.add %ids, %ids : tensor<4xi64>
  return %4, %3, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi64>
}

// -----

// Ops that accumulate compute in f32: a graph input feeding them directly is
// not cast at all (no f32 -> bf16 -> f32 round trip), results feeding each
// other stay f32, and one cast serves every reduced user. Layer-norm weights
// are converted and cast back to f32 at entry. f64 is untouched.
// F16-LABEL: func.func @main(
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x8xf32>
// CHECK-SAME: %[[G:[^:]*]]: tensor<8xbf16> {dnn.name = "gamma"
// CHECK-SAME: %[[D:[^:]*]]: tensor<2xf64>
// CHECK-DAG: %[[GF:.*]] = dnn.cast %[[G]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = dnn.layer_norm %[[X]], %[[GF]] axis = 1
// CHECK-NOT: dnn.cast %[[X]]
// CHECK: %[[S:.*]] = dnn.reduce_sum %[[Y]] axes = [1] keep_dims = true : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK: %[[SC:.*]] = dnn.cast %[[S]] : tensor<2x1xf32> -> tensor<2x1xbf16>
// CHECK: %[[M:.*]] = dnn.mul %[[SC]], %[[SC]] : tensor<2x1xbf16>
// CHECK: %[[MF:.*]] = dnn.cast %[[M]] : tensor<2x1xbf16> -> tensor<2x1xf32>
// CHECK: %[[N:.*]] = dnn.neg %[[SC]] : tensor<2x1xbf16>
// CHECK: %[[NF:.*]] = dnn.cast %[[N]] : tensor<2x1xbf16> -> tensor<2x1xf32>
// CHECK: %[[DD:.*]] = dnn.add %[[D]], %[[D]] : tensor<2xf64>
// CHECK: return %[[MF]], %[[NF]], %[[DD]]
// CHECK-NOT: dnn.cast
func.func @main(%x: tensor<2x8xf32>,
                %g: tensor<8xf32> {dnn.name = "gamma", dnn.weight = dense<1.0> : tensor<8xf32>},
                %d: tensor<2xf64>)
    -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2xf64>) {
  %y, %m, %r = dnn.layer_norm %x, %g axis = 1 epsilon = 1.0e-05
      : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %s = dnn.reduce_sum %y axes = [1] keep_dims = true : tensor<2x8xf32> -> tensor<2x1xf32>
  %0 = dnn.mul %s, %s : tensor<2x1xf32>
  %1 = dnn.neg %s : tensor<2x1xf32>
  %2 = dnn.add %d, %d : tensor<2xf64>
  return %0, %1, %2 : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2xf64>
}

// -----

// Weight values are rounded to nearest even; beyond f16's range they become
// infinities. 1 + 2^-8 lies halfway between two bf16 values (1 and 1 + 2^-7)
// and rounds to the even one, 1 + 3 * 2^-8 to 1 + 2^-6.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: dense<[1.000000e+00, 1.015630e+00, 9.984000e+04, 1.000000e+00]> : tensor<4xbf16>
// F16-LABEL: func.func @main(
// F16-SAME: dense<[1.003910e+00, 1.011720e+00, 0x7C00, 1.000000e+00]> : tensor<4xf16>
func.func @main(%x: tensor<4xf32>,
                %w: tensor<4xf32> {dnn.name = "w", dnn.weight = dense<[1.00390625, 1.01171875, 1.0e+05, 1.0]> : tensor<4xf32>})
    -> tensor<4xf32> {
  %0 = dnn.mul %x, %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A model already in the reduced type keeps its own ops as they are: the ops
// that compute in f32 (layer_norm, reduce_sum) read its f16 values without
// casts, and f16 weights are left alone.
// F16-LABEL: func.func @main(
// F16-SAME: %[[X:[^:]*]]: tensor<2x8xf16>
// F16-SAME: %[[G:[^:]*]]: tensor<8xf16> {dnn.name = "gamma"
// F16-NOT: dnn.cast
// F16: dnn.layer_norm %[[X]], %[[G]] axis = 1
// F16-NOT: dnn.cast
// F16: return
// CHECK-LABEL: func.func @main(
func.func @main(%x: tensor<2x8xf16>,
                %g: tensor<8xf16> {dnn.name = "gamma", dnn.weight = dense<1.0> : tensor<8xf16>})
    -> tensor<2x1xf16> {
  %y, %m, %r = dnn.layer_norm %x, %g axis = 1 epsilon = 1.0e-05
      : (tensor<2x8xf16>, tensor<8xf16>) -> (tensor<2x8xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
  %s = dnn.reduce_sum %y axes = [1] keep_dims = true : tensor<2x8xf16> -> tensor<2x1xf16>
  return %s : tensor<2x1xf16>
}

// -----

// A training step's forward: the trainable parameter and the optimizer state
// stay f32 (master copies) and are cast right before their first user, in
// that user's pipeline stage; a frozen weight becomes bf16.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>
// CHECK-SAME: %[[P:[^:]*]]: tensor<4x4xf32> {dnn.name = "p", dnn.trainable, dnn.weight = dense<5.000000e-01> : tensor<4x4xf32>}
// CHECK-SAME: %[[S:[^:]*]]: tensor<4xf32> {dnn.name = "s", dnn.state, dnn.weight = dense<0.000000e+00> : tensor<4xf32>}
// CHECK-SAME: %[[F:[^:]*]]: tensor<4xbf16> {dnn.name = "frozen", dnn.weight = dense<1.000000e+00> : tensor<4xbf16>}
// CHECK: dnn.relu
// CHECK-NEXT: %[[PC:.*]] = dnn.cast %[[P]] {dist.stage = 1 : i64} : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT: dnn.matmul %{{.*}}, %[[PC]] {dist.stage = 1 : i64}
// CHECK: %[[SC:.*]] = dnn.cast %[[S]] {dist.stage = 1 : i64} : tensor<4xf32> -> tensor<4xbf16>
// CHECK: dnn.broadcast_in_dim %[[F]], dims = [1] {dist.stage = 1 : i64} : tensor<4xbf16>
func.func @main(%x: tensor<2x4xf32>,
                %p: tensor<4x4xf32> {dnn.name = "p", dnn.trainable, dnn.weight = dense<0.5> : tensor<4x4xf32>},
                %s: tensor<4xf32> {dnn.name = "s", dnn.state, dnn.weight = dense<0.0> : tensor<4xf32>},
                %f: tensor<4xf32> {dnn.name = "frozen", dnn.weight = dense<1.0> : tensor<4xf32>})
    -> tensor<2x4xf32> {
  %0 = dnn.relu %x {dist.stage = 0 : i64} : tensor<2x4xf32>
  %1 = dnn.matmul %0, %p {dist.stage = 1 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %2 = dnn.broadcast_in_dim %s, dims = [1] {dist.stage = 1 : i64} : tensor<4xf32> -> tensor<2x4xf32>
  %3 = dnn.add %1, %2 {dist.stage = 1 : i64} : tensor<2x4xf32>
  %4 = dnn.broadcast_in_dim %f, dims = [1] {dist.stage = 1 : i64} : tensor<4xf32> -> tensor<2x4xf32>
  %5 = dnn.add %3, %4 {dist.stage = 1 : i64} : tensor<2x4xf32>
  return %5 : tensor<2x4xf32>
}
