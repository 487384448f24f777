//===- Passes.td - dnn dialect passes ----------------------*- tablegen -*-===//
//
// Passes on the `dnn` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD
#define DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def OutlineWeightsPass : Pass<"dnn-outline-weights", "::mlir::ModuleOp"> {
  let summary = "Turn large constants of @main into weight arguments";
  let description = [{
    Moves every `dnn.constant` of `@main` with more than `min-elements`
    elements into a new trailing argument of `@main` carrying the attribute
    `dnn.weight` (the constant's value) and `dnn.name` (the constant's
    location name, e.g. the ONNX initializer). The packager stores those
    values in `plan.bin` (per rank once tensors are sharded) and the runtime
    passes them in as buffers, so the compiled code never embeds weights.
    Small constants stay in the code, where they fold.

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

#endif // DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD
