//===- Passes.h - dnn dialect passes -----------------------------*- C++
//-*-===//
//
// Declarations and registration of the `dnn` passes.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H
#define DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dnnc::dnn {

/// Name of the argument attribute holding an outlined weight's value.
constexpr llvm::StringLiteral kWeightAttrName = "dnn.weight";
/// Name of the unit argument attribute marking a weight whose value was not
/// read (`dnnc --plan-only`): the argument stands for the initializer named
/// by its `dnn.name`.
constexpr llvm::StringLiteral kWeightRefAttrName = "dnn.weight_ref";
/// Name of the unit argument attribute marking a weight as a trainable
/// parameter (`dnnc --mode=grad`): dnn-autodiff differentiates by it.
constexpr llvm::StringLiteral kTrainableAttrName = "dnn.trainable";
/// Name of the unit argument attribute marking a weight the forward itself
/// updates (a batch-norm running statistic in training mode): not trained,
/// its new value a result of the step (`dnn.updates`), kept in f32 under
/// reduced precision.
constexpr llvm::StringLiteral kBufferAttrName = "dnn.buffer";
/// Name of the i64 result attribute dnn-autodiff puts on a gradient: the
/// number of the argument it is the gradient of.
constexpr llvm::StringLiteral kGradientOfAttrName = "dnn.gradient_of";
/// Name of the unit argument attribute marking an optimizer state (a
/// training-step argument that starts at zero, `dnn.weight` a zero splat,
/// and carries over from step to step: dnn-apply-optimizer's moments and
/// counters, dnn-autodiff's loss-scale exponent).
constexpr llvm::StringLiteral kStateAttrName = "dnn.state";
/// Name of the unit argument attribute marking the training step's number
/// (a scalar f32, 1 at the first step, that the runtime sets).
constexpr llvm::StringLiteral kStepAttrName = "dnn.step";
/// Name of the f64 attribute dnn-autodiff{loss-scale} puts on the exponent
/// `e` of dynamic loss scaling (an argument: a `dnn.state` scalar f32) and
/// on the loss scale it seeded the gradients with (a result): the loss
/// scale is the attribute's value times `2^e`.
constexpr llvm::StringLiteral kLossScaleAttrName = "dnn.loss_scale";
/// Name of the i64 result attribute marking a result as the new value of an
/// argument (a parameter, optimizer state or buffer) after a training step.
constexpr llvm::StringLiteral kUpdatesAttrName = "dnn.updates";
/// Name of the op attribute holding an op's pipeline stage (`dist.stage`,
/// which the `dist` passes set and read; dnn-autodiff keeps it on the
/// gradient ops of a staged forward op).
constexpr llvm::StringLiteral kStageAttrName = "dist.stage";
/// Name of the unit op attribute dnn-autodiff puts, with `dist.stage`, on the
/// gradient ops of a staged forward op: they run in that stage's backward.
constexpr llvm::StringLiteral kBackwardAttrName = "dist.backward";
/// Name of the argument/result attribute holding the ONNX tensor name.
constexpr llvm::StringLiteral kNameAttrName = "dnn.name";

/// Returns the function @main of `module` with a body; otherwise emits
/// "PASS: the module has no function @main" and returns null.
inline mlir::func::FuncOp lookupMain(mlir::ModuleOp module,
                                     llvm::StringRef pass) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (main && !main.isExternal())
    return main;
  module.emitError() << pass << ": the module has no function @main";
  return nullptr;
}

/// Returns true if `func` is a training step: a result updates one of its
/// arguments (`dnn.updates`).
inline bool isTrainingStep(mlir::FunctionOpInterface func) {
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, kUpdatesAttrName))
      return true;
  return false;
}

/// Appends the results of `func` that update an argument (`dnn.updates`: the
/// buffers' new values a pass rewriting the results keeps) to `results`, and
/// their attributes to `attrs`.
inline void
appendUpdateResults(mlir::func::FuncOp func,
                    llvm::SmallVectorImpl<mlir::Value> &results,
                    llvm::SmallVectorImpl<mlir::DictionaryAttr> &attrs) {
  mlir::Operation *terminator = func.getBody().front().getTerminator();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (func.getResultAttr(i, kUpdatesAttrName)) {
      results.push_back(terminator->getOperand(i));
      attrs.push_back(func.getResultAttrDict(i));
    }
}

/// Returns true if argument `index` of `func` holds a weight: an outlined
/// value (`dnn.weight`) or one `--plan-only` did not read (`dnn.weight_ref`).
inline bool isWeightArgument(mlir::FunctionOpInterface func, unsigned index) {
  return func.getArgAttr(index, kWeightAttrName) ||
         func.getArgAttr(index, kWeightRefAttrName);
}

/// Returns true if argument `index` of `func` is a weight that
/// dnn-convert-precision keeps in f32: a trainable parameter, an optimizer
/// state or a buffer of a training step (the master copies).
inline bool isMasterWeight(mlir::FunctionOpInterface func, unsigned index) {
  return func.getArgAttr(index, kTrainableAttrName) ||
         func.getArgAttr(index, kStateAttrName) ||
         func.getArgAttr(index, kBufferAttrName);
}

/// Name of the module attribute recording `dnnc --precision`.
constexpr llvm::StringLiteral kPrecisionAttrName =
    DnnDialect::kPrecisionAttrName;

/// Returns the element type f32 tensors are stored in under `precision`:
/// bf16 or f16 for `bf16` and `fp16`, null for `fp32` and `tf32`.
mlir::FloatType getReducedFloatType(mlir::MLIRContext *context,
                                    Precision precision);

/// Makes each op of `ops` that dnn-convert-precision computes in f32 (a
/// reduction, a normalization, ...) but that has results of `reduced`
/// (bf16 or f16) compute in f32: its `reduced` operands are cast to f32,
/// its results become f32 and are cast back to `reduced` for their users.
/// dnn-autodiff applies it to the gradient ops of a converted program.
void computeInF32(llvm::ArrayRef<mlir::Operation *> ops,
                  mlir::FloatType reduced);

/// Returns `value` (f32) rounded to `type` (bf16 or f16): round to nearest
/// even, overflow to infinity (IEEE conversion).
mlir::DenseElementsAttr convertWeightValue(mlir::DenseElementsAttr value,
                                           mlir::FloatType type);

/// Erases `op` (its results unused) and then, recursively, the pure ops
/// that fed it and are left without uses: what a fusion leaves behind once
/// it has replaced the uses of the pattern's root.
void eraseWithDeadProducers(mlir::Operation *op);

/// Returns the ONNX node name an op's location carries (the importer gives
/// every op the NameLoc of its node; CSE may fuse locations): the name of a
/// NameLoc, or of the first NameLoc inside a FusedLoc; empty when none.
inline llvm::StringRef getNodeName(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (llvm::StringRef name = getNodeName(inner); !name.empty())
        return name;
  return {};
}

#define GEN_PASS_DECL
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"

/// Checks the options of dnn-apply-optimizer (which `dnnc --mode=train`'s
/// flags of the same names fill): returns "" when they are valid, else one
/// line naming the first invalid option, `NAME=VALUE: expected ...`.
std::string checkOptimizerOptions(const ApplyOptimizerPassOptions &options);

#define GEN_PASS_REGISTRATION
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H
