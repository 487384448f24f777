//===- Passes.td - dnn dialect passes ----------------------*- tablegen -*-===//
//
// Passes on the `dnn` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD
#define DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldWeightTransposesPass : Pass<"dnn-fold-weight-transposes"> {
  let summary = "Transpose constant weights at compile time";
  let description = [{
    Replaces a `dnn.transpose` of a `dnn.constant` that has no other use by
    a constant holding the transposed data, whatever its size (the folders
    stop at `kMaxFoldElements`; this pass permutes the raw buffer once and
    replaces the constant, so nothing grows). Exporters emit
    `Gemm(transB = 1)` for fully connected layers (PyTorch's `nn.Linear`);
    without this pass every run of the compiled program would transpose
    every such weight. The new constant keeps the old one's location, so an
    outlined weight keeps its ONNX initializer name (holding the transposed
    layout).

    Before:
    ```mlir
    %w = dnn.constant dense<...> : tensor<1000x512xf32> loc("fc.weight")
    %t = dnn.transpose %w, permutation = [1, 0] : tensor<1000x512xf32> -> tensor<512x1000xf32>
    ```
    After:
    ```mlir
    %t = dnn.constant dense<...> : tensor<512x1000xf32> loc("fc.weight")
    ```
  }];
}

def OutlineWeightsPass : Pass<"dnn-outline-weights", "::mlir::ModuleOp"> {
  let summary = "Turn large constants of @main into weight arguments";
  let description = [{
    Moves every `dnn.constant` of `@main` with more than `min-elements`
    elements into a new trailing argument of `@main` carrying the attribute
    `dnn.weight` (the constant's value) and `dnn.name` (the constant's
    location name, e.g. the ONNX initializer). The packager stores those
    values in `plan.bin` (per rank once tensors are sharded) and the runtime
    passes them in as buffers, so the compiled code never embeds weights.
    Small constants and splats (one value, whatever the shape) stay in the
    code, where they fold. Arguments marked `dnn.weight_ref` (weights whose
    value a `dnnc --plan-only` import did not read) are weights already and
    are left as they are.

    Before:
    ```mlir
    func.func @main(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
      %w = dnn.constant dense<...> : tensor<64x64xf32> loc("fc.weight")
      %y = dnn.matmul %x, %w : ...
    ```
    After:
    ```mlir
    func.func @main(%x: tensor<8x64xf32>,
                    %w: tensor<64x64xf32> {dnn.name = "fc.weight",
                                           dnn.weight = dense<...>})
        -> tensor<8x64xf32> {
      %y = dnn.matmul %x, %w : ...
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"64",
           "Constants with more elements than this become weights">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PrintShardingRulesPass : Pass<"dnn-print-sharding-rules"> {
  let summary = "Emit a remark with the sharding rule of every dnn op";
  let description = [{
    A debugging pass: for every op with a sharding rule
    (`DnnShardingRuleOpInterface`, or a rule pinned with
    `dnn.sharding_rule`) it emits a remark holding the printed
    `#dnn.sharding_rule`, after checking the rule against the op's operand
    and result types (a mismatch is an error: a bug in the op's rule). The IR
    is not changed.

    ```mlir
    %y = dnn.softmax %x axis = 1 : tensor<4x10xf32>
    // remark: #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={j}>
    ```
  }];
}

def PrintCostsPass : Pass<"dnn-print-costs"> {
  let summary = "Emit a remark with the cost of every dnn op";
  let description = [{
    A debugging pass: for every op with a cost (`DnnCostOpInterface`) it
    emits a remark with the op's FLOPs, the bytes it reads and writes, and
    the units its FLOPs run on (`matrix` for matmul, conv and contracting
    einsums, else `vector`), on whole tensors. The counts are listed in
    docs/Dialects/Dnn.md ("Costs"). The IR is not changed.

    ```mlir
    %y = dnn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    // remark: flops = 128, bytes read = 192, bytes written = 32, units = matrix
    ```
  }];
}

#endif // DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD
