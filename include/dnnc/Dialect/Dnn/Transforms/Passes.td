//===- Passes.td - dnn dialect passes ----------------------*- tablegen -*-===//
//
// Passes on the `dnn` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD
#define DNNC_DIALECT_DNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"dnn-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode gradient of @main's loss";
  let description = [{
    Rewrites `@main` to return its loss and the gradient of the loss with
    respect to each of its floating-point arguments (graph inputs, and the
    parameters `dnnc --mode=grad` imports as arguments with
    `dnn.trainable`; with `parameters-only`, the latter alone): the results
    become `(loss, d loss / d arg0, d loss / d arg1, ...)`, named `NAME`
    and `NAME_grad` after the arguments' `dnn.name`, each gradient with
    `dnn.gradient_of` set to its argument's number. The loss is the result
    named by `loss` (its `dnn.name`; empty: the only result); it must be a
    floating-point tensor of one element. The new values of buffers (results
    marked `dnn.updates`) are kept after the loss, before the gradients.

    The gradient is reverse mode over the ops' rules
    (`DnnGradientOpInterface`, one per op): cotangents flow from the loss
    (seeded with 1) through the ops in reverse order, summed where a value
    has several uses. Only the ops on a path from a differentiated argument
    to the loss get cotangents (activity analysis); the others, and the
    forward results nothing needs, are left to dead-code elimination. An
    argument no path reaches gets a zero gradient.

    An op with a pipeline stage (`dist.stage`) passes it on to the ops its
    rule builds and to the sums of its operands' cotangents, marked
    `dist.backward`: the backward pass of a stage runs on that stage's rank.

    First, a `dnn.softmax_cross_entropy` averaging over the applied weights
    (`mean` with `ignore_index` or class weights) becomes its sum over the
    weight total, computed from the labels: sums split over data-parallel
    ranks and micro-batches, where the weighted mean needs the whole batch.

    In a program stored in bf16 or f16 (`dnn.precision`, from
    `dnn-convert-precision` run before), the gradient ops follow the same
    rule as the forward ones: a rule's reduction (the bias gradient's sum
    over the batch, a broadcast's gradient) built on reduced values computes
    in f32 (`dnn::computeInF32`); elementwise ops and `matmul` stay in the
    type of their operands. A master weight (an f32 parameter read through a
    `dnn.cast`) gets an f32 gradient from the cast's rule.

    `loss-scale` > 0 scales the loss for fp16 training (dynamic loss
    scaling): a new trailing argument `loss_scale_exponent` (a scalar f32
    `dnn.state`, starting at 0, marked `dnn.loss_scale` with the value of
    `loss-scale`) gives the seed `loss-scale * 2^exponent` instead of 1, so
    every gradient is scaled by it; the seed is returned right after the
    loss (named `loss_scale`, marked `dnn.loss_scale`).
    `dnn-apply-optimizer` unscales the gradients, skips the step when one
    is not finite and updates the exponent. The loss itself is not scaled.

    Fails, naming the ONNX node, when an op on such a path has no gradient
    rule or its rule does not handle the case.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "the dnn.name of the result to differentiate (empty: the only "
           "result)">,
    Option<"parametersOnly", "parameters-only", "bool", /*default=*/"false",
           "differentiate by the dnn.trainable arguments only">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0.0",
           "dynamic loss scaling: the initial loss scale (0: the loss is "
           "not scaled)">,
  ];
}

def AddLossPass : Pass<"dnn-add-loss", "::mlir::ModuleOp"> {
  let summary = "Make @main return a loss over one of its outputs";
  let description = [{
    `dnnc --mode=train --loss=KIND:OUTPUT,TARGET`: `@main` gets a new
    trailing argument, the target, named `target`, and returns one result,
    the loss, named `loss` (a scalar of the output's element type):

    * `cross-entropy`: `output` holds scores `[..., C]` (classes last, as
      language models and classifiers write them); the target holds the
      class indices `[...]` (i64). The loss is the mean over every position
      of `-log_softmax(scores)[label]` (PyTorch's
      `F.cross_entropy(scores.reshape(-1, C), labels.reshape(-1))`).
    * `mse`: the target has the output's type; the loss is
      `mean((output - target)^2)` (PyTorch's `F.mse_loss`).

    The other outputs are dropped (a training step returns the loss), but
    for the new values of buffers (results marked `dnn.updates`, e.g. the
    running statistics of a batch norm in training mode), kept after it. Fails
    when `output` is not an output of `@main`, is not a floating-point
    tensor (of rank 2 or more for `cross-entropy`), or `target` already
    names an argument.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "the loss: cross-entropy or mse">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the dnn.name of the output the loss is computed on">,
    Option<"target", "target", "std::string", /*default=*/"\"labels\"",
           "the name of the new argument holding the targets">,
  ];
}

def ApplyOptimizerPass : Pass<"dnn-apply-optimizer", "::mlir::ModuleOp"> {
  let summary = "Turn a gradient program into one training step";
  let description = [{
    Takes `@main` as `dnn-autodiff{parameters-only}` leaves it (the loss,
    then one gradient per parameter, each with `dnn.gradient_of`) and makes
    it one optimizer step: every parameter's new value is computed from its
    gradient by the update rule of `optimizer`, exactly as PyTorch's
    `torch.optim.SGD` or `torch.optim.AdamW` (single-tensor path) computes
    it in float32, with the step's scalars (learning rate, bias
    corrections) computed in float64 as PyTorch does in Python.

    New trailing arguments: per parameter its optimizer state (`sgd` with
    momentum: `NAME.momentum_buffer`; `adamw`: `NAME.exp_avg`,
    `NAME.exp_avg_sq`), marked `dnn.state` with a zero `dnn.weight` (the
    state starts at zero), sharded like the parameter by propagation; then
    the step number (`dnn.step`, a scalar f32, 1 at the first step, set by
    the runtime). Results: the loss, then the new value of every parameter,
    of every buffer (the new values `@main` returned, `dnn.updates`, passed
    on as they are, on skipped steps too) and of every state, each marked
    `dnn.updates` with the number of the argument it replaces for the next
    step.

    `clip-grad-norm` > 0 first scales every gradient by
    `min(1, clip / (norm + 1e-6))`, `norm` the 2-norm of all gradients
    together (`torch.nn.utils.clip_grad_norm_`). The learning rate of step
    `s` (0-based) is `lr * f(s)`: `f(s) = (s + 1) / warmup` while
    `s < warmup-steps`, then 1 (`constant`) or
    `0.5 * (1 + cos(pi * min(1, (s - warmup) / max(1, total - warmup))))`
    (`cosine`, `total` = `total-steps`): a `torch.optim.lr_scheduler.LambdaLR`
    with that `f` stepped after each optimizer step.

    Dynamic loss scaling, when `@main` has the `dnn.loss_scale` argument
    (`dnn-autodiff{loss-scale}`), follows `torch.amp.GradScaler`: every
    gradient is divided by the scale `S = init * 2^e` before clipping; when
    one is not finite (an infinity or NaN: the sum of `g * 0` over every
    gradient is NaN), the step keeps every parameter and state, `e`
    decreases by 1 (the scale halves) and the growth counter restarts;
    otherwise the counter `loss_scale_growth_tracker` (a new scalar state)
    counts up and at `loss-scale-growth-interval` `e` increases by 1 and
    the counter restarts. AdamW's bias corrections count the updates made
    (a new scalar state `optimizer_steps`), not the steps; the learning-rate
    schedule follows the step number (PyTorch steps its scheduler on
    skipped steps too). Two results follow the loss: `loss_scale` (`S` of
    the step) and `skipped_step` (1 when the step was skipped, else 0).
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "the update rule: sgd or adamw">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "the learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "sgd: the momentum factor">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "sgd: Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "sgd: L2 penalty added to the gradient; adamw: decoupled decay">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "adamw: decay of the first moment">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "adamw: decay of the second moment">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "adamw: added to the denominator">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "global gradient 2-norm limit (0: no clipping)">,
    Option<"schedule", "lr-schedule", "std::string",
           /*default=*/"\"constant\"",
           "learning-rate schedule after warm-up: constant or cosine">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "steps of linear learning-rate warm-up">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "cosine: the step at which the learning rate reaches 0">,
    Option<"lossScaleGrowthInterval", "loss-scale-growth-interval",
           "int64_t", /*default=*/"2000",
           "dynamic loss scaling: double the scale after this many steps in "
           "a row with finite gradients">,
  ];
}

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

def SplitFusedProjectionsPass
    : Pass<"dnn-split-fused-projections", "::mlir::ModuleOp"> {
  let summary = "One matmul per slice of a fused projection (QKV, gate/up)";
  let description = [{
    Exporters write the query, key and value projections of attention (and
    the gate and up projections of gated MLPs) as one matmul by a weight
    whose columns are the three (two) weights side by side, followed by
    ONNX Split or Slice nodes (`dnn.slice` ops on the last dimension). Split
    over tensor-parallel ranks by columns, such a result gives rank `r` a
    block of columns that mixes the parts, so every slice would need the
    whole matrix gathered first. This pass gives each slice its own matmul
    by the weight's columns of that slice (and, through the bias add and
    any other elementwise op or reshape that keeps the last dimension
    between the matmul and the slices, the bias's columns): the projections
    are then separate, as Megatron-LM lays them out, and each is split
    over heads with no collective. The result is numerically the same
    (each output element is the same dot product).

    The weight is a `dnn.constant` (sliced at compile time), a weight
    argument (`dnn.weight`, sliced; or `dnn.weight_ref`, replaced by new
    `dnn.weight_ref` arguments of the sliced shapes), or a transpose or
    broadcast of one. A slice of a tensor named `w` is named `w[a:b]`
    (columns `a` to `b`). Matched only when every use of the (possibly
    reshaped) result is a slice of the last dimension, step 1, whole in
    the other dimensions, and the slices do not overlap; constants and
    weight arguments left unused are removed.

    Before:
    ```mlir
    %y = dnn.matmul %x, %w : (tensor<8x64xf32>, tensor<64x192xf32>) -> tensor<8x192xf32>
    %q = dnn.slice %y starts = [0, 0] steps = [1, 1] : tensor<8x192xf32> -> tensor<8x64xf32>
    %k = dnn.slice %y starts = [0, 64] steps = [1, 1] : tensor<8x192xf32> -> tensor<8x64xf32>
    %v = dnn.slice %y starts = [0, 128] steps = [1, 1] : tensor<8x192xf32> -> tensor<8x64xf32>
    ```
    After (`%w` a weight argument named `qkv`):
    ```mlir
    %q = dnn.matmul %x, %wq : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %k = dnn.matmul %x, %wk : ...
    %v = dnn.matmul %x, %wv : ...
    // %wq, %wk, %wv: arguments named qkv[0:64], qkv[64:128], qkv[128:192]
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

def FuseGeluPass : Pass<"dnn-fuse-gelu"> {
  let summary = "Recognise GELUs written out with tanh or erf as dnn.gelu";
  let description = [{
    Exporters write GELU out as elementwise ops (PyTorch's `gelu_new` in
    GPT-2, `nn.GELU` before ONNX opset 20). This pass finds

    * `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` (the cube as
      `pow(x, 3)` or `x * x * x`; also `x * (1 + 0.044715 * x * x)` inside
      the tanh) and replaces it by `dnn.gelu %x approximation = <tanh>`;
    * `0.5 * x * (1 + erf(x / sqrt(2)))` (or `x * (1 / sqrt(2))`) and
      replaces it by `dnn.gelu %x` (exact).

    The constant factors may sit anywhere in the products and be rounded to
    a 16-bit float (they are accepted within 1% of their value: the result is
    the GELU computed with exact constants). Ops of the pattern left unused
    are erased. `dnn.gelu` is what the cuda target's GEMM epilogues take
    (`dnn-cuda-fuse-gemm-epilogue`) and one op for the cost model.

    ```mlir
    %h = dnn.mul %x, %half : tensor<4x8xf32>
    %c = dnn.pow %x, %three : tensor<4x8xf32>
    %k = dnn.mul %c, %k0 : tensor<4x8xf32>
    %i = dnn.add %x, %k : tensor<4x8xf32>
    %s = dnn.mul %i, %sqrt2pi : tensor<4x8xf32>
    %t = dnn.tanh %s : tensor<4x8xf32>
    %o = dnn.add %t, %one : tensor<4x8xf32>
    %y = dnn.mul %h, %o : tensor<4x8xf32>
    ```
    becomes
    ```mlir
    %y = dnn.gelu %x approximation = <tanh> : tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["::dnnc::dnn::DnnDialect"];
}

def ConvertPrecisionPass : Pass<"dnn-convert-precision", "::mlir::ModuleOp"> {
  let summary = "Store f32 activations and weights in bf16 or f16";
  let description = [{
    Implements `dnnc --precision` on the per-rank program (weights outlined,
    run at the start of the device phase). With `precision=bf16` or `fp16`
    every f32 tensor of the program becomes the reduced type R except:

    * graph inputs and outputs (function arguments and results that are not
      weights) keep f32: a `dnn.cast` to R precedes the first user of each
      input, a cast to f32 precedes each output (a cast joins the pipeline
      stage, `dist.stage`, of the op next to it);
    * a training step's parameters and optimizer states (`dnn.trainable`,
      `dnn.state`) stay f32, their master copies, read like inputs;
    * weight arguments (`dnn.weight`, `dnn.weight_ref`) change their type to
      R and their `dnn.weight` value is rounded to R (round to nearest even;
      values beyond R's range become infinities, as IEEE conversion does);
      the packager writes them in R;
    * ops that accumulate or are not known to be safe in R compute in f32:
      reductions, `softmax`, `log_softmax`, `layer_norm`, `avg_pool`,
      `conv`, `einsum`, `cast`, constants and every op of another dialect
      (collectives). Their R operands are cast to f32 (the f32 value a cast
      came from is reused, so no cast of a cast appears) and their f32
      results are cast to R for the ops that follow.

    Elementwise ops, data movement, `max_pool` and `matmul` compute on R
    (`matmul` lowers with an f32 accumulator; the cpu target's elementwise
    loops compute in f32 registers). Integer, `i1` and f64 tensors are
    untouched. `precision=tf32` changes no type (GEMMs may use TF32 tensor
    cores: the GEMM kernels get the `_tf32` suffix); `fp32` does nothing.
    The chosen precision is recorded as the module attribute `dnn.precision`
    (a module that has it already is left alone).

    Before (`precision=bf16`):
    ```mlir
    func.func @main(%x: tensor<4x8xf32>,
                    %w: tensor<8x8xf32> {dnn.weight = dense<...>})
        -> tensor<4x8xf32> {
      %0 = dnn.matmul %x, %w : ...
      %1 = dnn.relu %0 : tensor<4x8xf32>
      %2 = dnn.softmax %1 {axis = 1} : tensor<4x8xf32>
      return %2 : tensor<4x8xf32>
    }
    ```
    After:
    ```mlir
    module attributes {dnn.precision = #dnn.precision<bf16>} {
    func.func @main(%x: tensor<4x8xf32>,
                    %w: tensor<8x8xbf16> {dnn.weight = dense<...>})
        -> tensor<4x8xf32> {
      %c = dnn.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
      %0 = dnn.matmul %c, %w : ... -> tensor<4x8xbf16>
      %1 = dnn.relu %0 : tensor<4x8xbf16>
      %e = dnn.cast %1 : tensor<4x8xbf16> -> tensor<4x8xf32>
      %2 = dnn.softmax %e {axis = 1} : tensor<4x8xf32>
      return %2 : tensor<4x8xf32>
    }
    }
    ```
  }];
  let options = [
    Option<"precision", "precision", "::dnnc::dnn::Precision",
           /*default=*/"::dnnc::dnn::Precision::FP32",
           "fp32, tf32, bf16 or fp16", [{::llvm::cl::values(
             clEnumValN(::dnnc::dnn::Precision::FP32, "fp32", "fp32"),
             clEnumValN(::dnnc::dnn::Precision::TF32, "tf32", "tf32 GEMMs"),
             clEnumValN(::dnnc::dnn::Precision::BF16, "bf16", "bf16 storage"),
             clEnumValN(::dnnc::dnn::Precision::FP16, "fp16", "fp16 storage"))}]>,
  ];
  let dependentDialects = ["::dnnc::dnn::DnnDialect"];
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
