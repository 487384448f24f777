// RUN: not dnnc-opt %s --dnn-add-loss="output=nope" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: dnn-add-loss: 'nope' is not an output of the graph
// RUN: not dnnc-opt %s --dnn-add-loss="output=v" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: dnn-add-loss: the cross-entropy loss needs scores [..., classes] of rank 2 or more; 'v' is tensor<4xf32>
// RUN: not dnnc-opt %s --dnn-add-loss="output=v target=x" 2>&1 | FileCheck %s --check-prefix=CLASH
// CLASH: error: dnn-add-loss: the target 'x' is already a graph input or initializer
// RUN: not dnnc-opt %s --dnn-add-loss="kind=hinge output=v" 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: error: dnn-add-loss: unknown loss 'hinge' (expected cross-entropy or mse)
// RUN: not dnnc-opt %s --dnn-add-loss="kind=mse output=i" 2>&1 | FileCheck %s --check-prefix=INT
// INT: error: dnn-add-loss: the mse loss needs a floating-point output; 'i' is tensor<4xi64>

func.func @main(%x: tensor<4xf32> {dnn.name = "x"}, %i: tensor<4xi64> {dnn.name = "ii"}) -> (tensor<4xf32> {dnn.name = "v"}, tensor<4xi64> {dnn.name = "i"}) {
  return %x, %i : tensor<4xf32>, tensor<4xi64>
}
