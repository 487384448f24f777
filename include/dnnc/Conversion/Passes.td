//===- Passes.td - dnnc conversion passes ------------------*- tablegen -*-===//
//
// Conversions between dnnc's dialects and upstream ones.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_CONVERSION_PASSES_TD
#define DNNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDnnToLinalg : Pass<"convert-dnn-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower dnn ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every `dnn` op into destination-passing linalg ops on tensors
    (`linalg.generic` for elementwise, broadcast, reduction, window and
    gather computations; `linalg.matmul` / `linalg.batch_matmul` for matrix
    products, which the CPU backend turns into BLAS calls), plus `tensor`
    reshapes, slices and pads, and `arith`/`math` scalar bodies. The result
    stays on tensors: bufferization and code generation are the device
    phase's job. Elementwise chains lowered here fuse with
    `linalg-fuse-elementwise-ops`.

    Before:
    ```mlir
    %1 = dnn.relu %0 : tensor<4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %1 = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel"]}
        ins(%0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %x, %z : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // DNNC_CONVERSION_PASSES_TD
