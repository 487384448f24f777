//===- Passes.td - Dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Passes on the `dist` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckShardingsPass : Pass<"dist-check-shardings", "::mlir::ModuleOp"> {
  let summary = "Check every sharding against its mesh and its value's type";
  let description = [{
    The op verifiers check `dist` ops against their mesh, but the discardable
    `dist.sharding` (function arguments and results) and `dist.shardings`
    (op results) attributes are only checked for their kind, since a
    dialect attribute verifier cannot look up symbols. This pass walks the
    module and, for every such attribute, resolves the mesh it names and
    checks the sharding against the mesh and the type of the value it
    describes: the mesh exists, the rank matches, every axis exists, and
    every split dim is divisible by the product of its axis sizes. It also
    re-checks the mesh uses of every `dist` op. It changes nothing; it fails
    on the first problem of each op, naming that op.

    Run it after anything that adds or changes shardings (the sharding
    search, user annotations) and before partitioning.

    Input that passes (and is printed unchanged):

    ```mlir
    dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]
    func.func @f(%x: tensor<8x16xf32>
                 {dist.sharding = #dist.sharding<@m, [{"dp"}, {"tp"} ]>})
        -> tensor<8x16xf32> {
      %y = arith.addf %x, %x
          {dist.shardings = [#dist.sharding<@m, [{"dp"}, {"tp"} ]>]}
          : tensor<8x16xf32>
      return %y : tensor<8x16xf32>
    }
    ```

    Input that fails (dim 1, of size 6, cannot be cut into 4 blocks):

    ```mlir
    %y = arith.addf %x, %x
        {dist.shardings = [#dist.sharding<@m, [{}, {"tp"} ]>]}
        : tensor<8x6xf32>
    // error: 'arith.addf' op result #0: dim 1 of size 6 is not divisible
    //        by 4, the number of shards of mesh axes {"tp"}
    ```
  }];
  let statistics = [
    Statistic<"numShardingsChecked", "num-shardings-checked",
              "Number of sharding attributes checked">
  ];
}

#endif // DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD
