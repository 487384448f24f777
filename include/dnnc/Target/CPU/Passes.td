//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
//
// Passes of the device phase for --target=cpu.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_CPU_PASSES_TD
#define DNNC_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ApproximateMathPass
    : Pass<"dnn-cpu-approximate-math", "::mlir::ModuleOp"> {
  let summary = "f32 math functions as shared polynomial functions; powers "
                "as products";
  let description = [{
    Elementwise bodies call `libm` for every `math.tanh`, `math.exp`,
    `math.erf`, `math.log`, ... element, and `math.powf` with a constant
    exponent (GPT-2's `x^3`) is a `powf` call too. These scalar calls
    dominate the element-wise part of transformer models and keep LLVM from
    vectorizing the loops. This pass rewrites

    * `math.powf` / `math.fpowi` with a constant exponent of 2, 3, 4, 0.5,
      -0.5, -1, ... into multiplications, `sqrt`, `rsqrt` and divisions
      (upstream's math algebraic simplification), in place;
    * every scalar f32 `tanh`, `exp`, `expm1` and `erf` into a call of one
      function per op and module, `@__dnnc_<op>_f32`, whose body is MLIR's
      polynomial approximation (pure arith; relative errors around 1e-7,
      and the special values -- NaN, infinities, the overflow and underflow
      ranges -- handled as by libm). Each has vector variants of 4, 8 and
      16 lanes (`@__dnnc_<op>_v<N>_f32`, the same polynomial on vectors),
      named in its `vector-function-abi-variant` LLVM attribute, so LLVM's
      loop vectorizer calls the variant of the host's width. The functions
      are `noinline`, hidden and `llvm.readnone`: the polynomial is
      compiled once per module, not once per use (a graph of thousands of
      Tanh or Sigmoid nodes would otherwise give LLVM hundreds of thousands
      of instructions). The logarithms keep their libm calls (their
      approximations flush denormal inputs), and so does every other
      element type.

    ```mlir
    %y = math.powf %x, %c3 : f32
    %t = math.tanh %y : f32
    ```
    becomes
    ```mlir
    %x2 = arith.mulf %x, %x : f32
    %y = arith.mulf %x2, %x : f32
    %t = call @__dnnc_tanh_f32(%y) : (f32) -> f32
    ...
    func.func @__dnnc_tanh_f32(%arg0: f32) -> f32 attributes {
        passthrough = ["noinline", ["vector-function-abi-variant",
          "_ZGV_LLVM_N4v___dnnc_tanh_f32(__dnnc_tanh_v4_f32),..."]], ...} {
      // ... clamps, a rational polynomial, selects ...
    }
    func.func @__dnnc_tanh_v4_f32(%arg0: vector<4xf32>) -> vector<4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def StridedCopiesToLoopsPass
    : Pass<"dnn-cpu-strided-copies-to-loops", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy between non-contiguous views into loops";
  let description = [{
    `memref.copy` between contiguous identity-layout buffers lowers to a
    `memcpy`; any other copy (into a slice, out of a padded view) would
    lower to a call of MLIR's C runner library, which plan.bin code does not
    link. This pass rewrites those copies as `linalg.copy`, which becomes a
    loop nest with the other linalg ops.

    ```mlir
    memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32, strided<[6, 1]>>
    ```
    becomes
    ```mlir
    linalg.copy ins(%a : memref<2x3xf32>)
                outs(%b : memref<2x3xf32, strided<[6, 1]>>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def OutlineLoopNestsPass
    : Pass<"dnn-cpu-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop nest into a function of its own";
  let description = [{
    LLVM optimizes and allocates registers one function at a time, and its
    cost grows faster than linearly in a function's size: a rank program
    whose every loop nest sits in one entry function compiles in time
    quadratic in the graph. This pass moves each loop nest (`scf.for`,
    `scf.parallel`, `scf.while`) at the top level of a public function into
    a private function `@<function>_loop<K>` (internal linkage, LLVM
    `noinline`), called in its place, so that code generation time is linear in the number of
    nests.

    The values the nest reads from outside become arguments, except
    constants, which are cloned in, and memref views whose layout has a
    dynamic offset or stride (which the bare-pointer calling convention
    cannot pass): their chain of view ops is cloned in down to buffers it
    can pass. A nest that reads such a view of anything else stays where it
    is.

    ```mlir
    func.func @main(%a: memref<8xf32>, %b: memref<8xf32>) {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c8 step %c1 {
        %x = memref.load %a[%i] : memref<8xf32>
        memref.store %x, %b[%i] : memref<8xf32>
      }
      return
    }
    ```
    becomes
    ```mlir
    func.func @main(%a: memref<8xf32>, %b: memref<8xf32>) {
      call @main_loop0(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
      return
    }
    func.func private @main_loop0(%a: memref<8xf32>, %b: memref<8xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>,
                    passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c8 step %c1 { ... }
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def EmitEntryPass : Pass<"dnn-cpu-emit-entry", "::mlir::ModuleOp"> {
  let summary = "Add the runtime entry points `dnnc_entry*(void **buffers)`";
  let description = [{
    Runs on the LLVM dialect after `convert-func-to-llvm` with the bare
    pointer calling convention: adds `llvm.func @dnnc_entry(%buffers:
    !llvm.ptr)` that loads one pointer per argument of `@main` from the
    `buffers` array (inputs, weights, then outputs, in `@main`'s argument
    order) and calls `@main` with them. A pipelined plan has no `@main`
    but one function `@stage_K` per stage (`dist-outline-stages`): each
    gets its entry `dnnc_entry_stage_K` the same way. The wrapped
    functions become internal, their argument attributes of other
    dialects than `llvm` (`dnn.name`, `dnn.weight`, read by the packager)
    are dropped; the entries are the symbols the runtime looks up.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // DNNC_TARGET_CPU_PASSES_TD
