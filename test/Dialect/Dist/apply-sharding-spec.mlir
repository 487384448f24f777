// RUN: split-file %s %t
// RUN: dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/good.json | FileCheck %s
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/unknown.json 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/rank.json 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/axis.json 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/twice.json 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/divide.json 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/syntax.json 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/notlist.json 2>&1 | FileCheck %s --check-prefix=NOTLIST
// RUN: not dnnc-opt %t/module.mlir --dist-apply-sharding-spec=spec=%t/does-not-exist.json 2>&1 | FileCheck %s --check-prefix=MISSING

// Graph inputs and weights (arguments), graph outputs (results) and node
// outputs (the last op of the node; `NAME:K` for result K) take the
// shardings the spec gives them.
// CHECK-LABEL: func.func @main
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>, dnn.name = "x"}
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, [{}, {"tp"}]>, dnn.name = "w", dnn.weight
// CHECK-SAME: -> (tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"dp", "tp"}, {}]>, dnn.name = "y"})
// CHECK: %[[M:.*]] = dnn.matmul
// CHECK-NEXT: %[[A:.*]] = dist.annotate %[[M]] sharding <@m, [{}, {"tp"}]>
// CHECK: %[[R:.*]], %[[MEAN:.*]], %[[INV:.*]] = dnn.layer_norm %[[A]]
// CHECK-NEXT: dist.annotate %[[MEAN]] sharding <@m, [{"dp"}, {}]>

// Errors name the file and the entry.
// UNKNOWN: error: sharding spec '{{.*}}unknown.json', entry 'nope': no graph input, weight, graph output or node has this name
// RANK: entry 'x': sharding has rank 1 but the type 'tensor<8x4xf32>' has rank 2
// AXIS: entry 'mm': mesh @m has no axis named "pp"
// TWICE: entry 'x': mesh axis 'dp' is used more than once
// DIVIDE: entry 'ln:1': dim 1 of size 1 is not divisible by 2
// SYNTAX: sharding spec '{{.*}}syntax.json': invalid JSON
// NOTLIST: entry 'x': expected a list with one entry per dimension
// MISSING: error: sharding spec '{{.*}}does-not-exist.json': cannot read it

//--- module.mlir
dist.mesh @m ["dp" = 2 : inter, "tp" = 2 : intra]
func.func @main(%x: tensor<8x4xf32> {dnn.name = "x"},
                %w: tensor<4x4xf32> {dnn.name = "w", dnn.weight = dense<1.0> : tensor<4x4xf32>},
                %s: tensor<4xf32> {dnn.name = "s", dnn.weight = dense<1.0> : tensor<4xf32>})
    -> (tensor<8x4xf32> {dnn.name = "y"}) {
  %0 = dnn.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32> loc("mm")
  %1, %2, %3 = dnn.layer_norm %0, %s axis = 1 epsilon = 1.0e-05 : (tensor<8x4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8x1xf32>, tensor<8x1xf32>) loc("ln")
  return %1 : tensor<8x4xf32>
}

//--- good.json
{ "x": ["dp", null], "w": [[], "tp"], "y": [["dp", "tp"], null],
  "mm": [null, ["tp"]], "ln:1": ["dp", null] }

//--- unknown.json
{ "nope": [null, null] }

//--- rank.json
{ "x": ["dp"] }

//--- axis.json
{ "mm": ["pp", null] }

//--- twice.json
{ "x": ["dp", "dp"] }

//--- divide.json
{ "ln:1": [null, "tp"] }

//--- syntax.json
{ "x": [

//--- notlist.json
{ "x": "dp" }
