// RUN: dnnc-opt %s -split-input-file --dnn-autodiff -verify-diagnostics

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

func.func @main(%x: tensor<1x1x4x4xf32>, %k: tensor<1x1x3x3xf32>) -> tensor<f32> {
  // The op's location names the ONNX node only: the diagnostic has no line.
  // expected-error @unknown {{dnn-autodiff: node 'conv0' ('dnn.conv') has no gradient rule, and it is on a path from a differentiated value to the loss}}
  %0 = dnn.conv %x, %k strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> loc("conv0")
  %1 = dnn.reduce_sum %0 axes = [0, 1, 2, 3] keep_dims = false : tensor<1x1x2x2xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
