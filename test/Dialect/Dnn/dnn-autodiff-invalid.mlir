// RUN: dnnc-opt %s -split-input-file --dnn-autodiff -verify-diagnostics
// RUN: not dnnc-opt %s -split-input-file --dnn-autodiff="loss-scale=-2" 2>&1 | FileCheck %s --check-prefix=SCALE

// SCALE: dnn-autodiff: loss-scale=-2.000000e+00: expected a finite number > 0

// expected-error @+1 {{dnn-autodiff: the loss must be a floating-point tensor of one element, not tensor<2xf32>}}
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{dnn-autodiff: @main has 2 results; name the loss among them}}
func.func @main(%x: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  return %x, %x : tensor<1xf32>, tensor<1xf32>
}

// -----

func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  // The op's location names the ONNX node only (dnnc prints it as
  // node 'rem0'): the diagnostic has no line.
  // expected-error @unknown {{dnn-autodiff: 'dnn.rem' has no gradient rule, and it is on a path from a differentiated value to the loss}}
  %0 = dnn.rem %x, %y : tensor<4xf32> loc("rem0")
  %1 = dnn.reduce_sum %0 axes = [0] keep_dims = false : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
