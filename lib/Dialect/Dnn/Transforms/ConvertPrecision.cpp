//===- ConvertPrecision.cpp - f32 tensors to bf16/f16 -------*- C++ -*-===//
//
// Implements dnn-convert-precision (`dnnc --precision`): f32 activations and
// weights are stored in bf16 or f16; accumulating ops compute in f32; graph
// inputs and outputs keep f32.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dnn-convert-precision"

namespace dnnc::dnn {
#define GEN_PASS_DEF_CONVERTPRECISIONPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

FloatType dnnc::dnn::getReducedFloatType(MLIRContext *context,
                                         Precision precision) {
  if (precision == Precision::BF16)
    return BFloat16Type::get(context);
  if (precision == Precision::FP16)
    return Float16Type::get(context);
  return nullptr;
}

DenseElementsAttr dnnc::dnn::convertWeightValue(DenseElementsAttr value,
                                                FloatType type) {
  auto shaped = value.getType().clone(type);
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  auto convert = [&](APFloat x) {
    bool losesInfo = false;
    (void)x.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    return x;
  };
  if (value.isSplat())
    return DenseElementsAttr::get(shaped,
                                  convert(value.getSplatValue<APFloat>()));
  SmallVector<APFloat> converted;
  converted.reserve(value.getNumElements());
  for (APFloat x : value.getValues<APFloat>())
    converted.push_back(convert(x));
  return DenseElementsAttr::get(shaped, converted);
}

/// Returns true if `type` is a tensor of f32.
static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// Returns true if `op` may compute on the reduced type: elementwise ops,
/// data movement, `max_pool` (exact in any type) and `matmul` (its lowering
/// accumulates in f32). Every other op computes in f32.
static bool computesInReducedType(Operation *op) {
  return isa<ReluOp, TanhOp, SigmoidOp, ErfOp, ExpOp, LogOp, SqrtOp,
             ReciprocalOp, FloorOp, CeilOp, NegOp, AbsOp, GeluOp, LeakyReluOp,
             AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, EqualOp, LessOp,
             LessEqualOp, GreaterOp, GreaterEqualOp, IsNaNOp, SelectOp,
             ReshapeOp, BroadcastInDimOp, TransposeOp, ConcatOp, SliceOp,
             GatherOp, MatMulOp, MaxPoolOp>(op);
}

/// Gives `cast` the pipeline stage of `op` (and its backward mark).
static void copyStage(Operation *op, Operation *cast) {
  for (StringRef name : {kStageAttrName, kBackwardAttrName})
    if (Attribute attr = op->getAttr(name))
      cast->setAttr(name, attr);
}

namespace {
/// Converts one function: the f32 and reduced versions of each value, with
/// the casts between them created once, next to the value's definition.
class FunctionConverter {
public:
  /// Prepares the conversion of `func` to `reduced`.
  FunctionConverter(func::FuncOp func, FloatType reduced)
      : func(func), reduced(reduced) {}

  /// Converts the function; fails on a weight whose value is not dense.
  LogicalResult run();

private:
  /// Returns `value` (an f32 or reduced tensor) in the reduced type, for
  /// `user`.
  Value getReduced(Value value, Operation *user);
  /// Returns `value` in f32 when this conversion made it reduced (values of
  /// the reduced type in the model itself stay as they are), for `user`.
  Value getF32(Value value, Operation *user);
  /// Creates a cast of `value` to `type` right after its definition, or
  /// right before `user` (its first user) for an argument; the cast joins
  /// the pipeline stage of the op it is next to.
  Value createCast(Value value, Type type, Operation *user);

  /// The function converted.
  func::FuncOp func;
  /// The reduced element type.
  FloatType reduced;
  /// Maps an f32 value to its reduced version and back.
  DenseMap<Value, Value> toReduced, toF32;
  /// The values this conversion made reduced: f32 values retyped, and the
  /// casts it created.
  DenseSet<Value> retyped;
};
} // namespace

Value FunctionConverter::createCast(Value value, Type type, Operation *user) {
  OpBuilder b(func.getContext());
  Operation *next = value.getDefiningOp();
  if (next)
    b.setInsertionPointAfter(next);
  else
    b.setInsertionPoint(next = user);
  auto tensor = cast<RankedTensorType>(value.getType());
  auto cast = CastOp::create(b, value.getLoc(), tensor.clone(type), value);
  copyStage(next, cast);
  return cast;
}

Value FunctionConverter::getReduced(Value value, Operation *user) {
  if (!isF32Tensor(value.getType()))
    return value;
  Value &slot = toReduced[value];
  if (!slot) {
    slot = createCast(value, reduced, user);
    toF32[slot] = value;
    retyped.insert(slot);
  }
  return slot;
}

Value FunctionConverter::getF32(Value value, Operation *user) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  if (!tensor || tensor.getElementType() != reduced ||
      !retyped.contains(value))
    return value;
  Value &slot = toF32[value];
  if (!slot) {
    slot = createCast(value, Float32Type::get(func.getContext()), user);
    toReduced[slot] = value;
  }
  return slot;
}

LogicalResult FunctionConverter::run() {
  Block &entry = func.getBody().front();
  // Weights change their type; the packager rounds their data the same way.
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    // A training step's parameters and optimizer states stay f32: the
    // master copies (their users read a cast to R, like a graph input's).
    if (!isWeightArgument(func, i) || !isF32Tensor(argTypes[i]) ||
        isMasterWeight(func, i))
      continue;
    argTypes[i] = cast<RankedTensorType>(argTypes[i]).clone(reduced);
    entry.getArgument(i).setType(argTypes[i]);
    retyped.insert(entry.getArgument(i));
    if (auto value =
            func.getArgAttrOfType<DenseElementsAttr>(i, kWeightAttrName))
      func.setArgAttr(i, kWeightAttrName, convertWeightValue(value, reduced));
    else if (func.getArgAttr(i, kWeightAttrName))
      return func.emitOpError("weight argument #")
             << i << " does not hold dense elements";
  }
  func.setType(
      FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));

  // The ops of the body as they are now (the casts created below are not
  // visited). Definitions come before uses, so every operand is final when
  // its user is visited.
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().getOps())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (op->hasTrait<OpTrait::IsTerminator>()) {
      // Results keep their declared (model) types.
      for (OpOperand &operand : op->getOpOperands())
        if (isa<func::ReturnOp>(op) &&
            isF32Tensor(func.getResultTypes()[operand.getOperandNumber()]))
          operand.set(getF32(operand.get(), op));
      continue;
    }
    if (computesInReducedType(op)) {
      for (OpOperand &operand : op->getOpOperands())
        operand.set(getReduced(operand.get(), op));
      for (OpResult result : op->getResults())
        if (isF32Tensor(result.getType())) {
          result.setType(
              cast<RankedTensorType>(result.getType()).clone(reduced));
          retyped.insert(result);
        }
      continue;
    }
    // Computes in f32: its results are left as they are (users ask for
    // their reduced version).
    for (OpOperand &operand : op->getOpOperands())
      operand.set(getF32(operand.get(), op));
  }
  return success();
}

void dnnc::dnn::computeInF32(ArrayRef<Operation *> ops, FloatType reduced) {
  MLIRContext *context = reduced.getContext();
  auto isReduced = [&](Value value) {
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    return tensor && tensor.getElementType() == reduced;
  };
  for (Operation *op : ops) {
    if (computesInReducedType(op) || isa<CastOp, ConstantOp>(op) ||
        op->hasTrait<OpTrait::IsTerminator>() ||
        !llvm::any_of(op->getResults(), isReduced))
      continue;
    OpBuilder b(op);
    for (OpOperand &operand : op->getOpOperands())
      if (isReduced(operand.get())) {
        auto tensor = cast<RankedTensorType>(operand.get().getType());
        auto up = CastOp::create(b, operand.get().getLoc(),
                                 tensor.clone(Float32Type::get(context)),
                                 operand.get());
        copyStage(op, up);
        operand.set(up);
      }
    b.setInsertionPointAfter(op);
    for (OpResult result : op->getResults()) {
      if (!isReduced(result))
        continue;
      auto tensor = cast<RankedTensorType>(result.getType());
      result.setType(tensor.clone(Float32Type::get(context)));
      auto down = CastOp::create(b, result.getLoc(), tensor, result);
      copyStage(op, down);
      result.replaceAllUsesExcept(down, down);
    }
  }
}

namespace {
/// dnn-convert-precision (see Passes.td).
struct ConvertPrecisionPass
    : public dnnc::dnn::impl::ConvertPrecisionPassBase<ConvertPrecisionPass> {
  using ConvertPrecisionPassBase::ConvertPrecisionPassBase;

  /// Converts every function of the module.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (auto done = module->getAttrOfType<PrecisionAttr>(kPrecisionAttrName)) {
      if (done.getValue() == precision)
        return;
      module.emitError() << "the module was converted to precision '"
                         << stringifyPrecision(done.getValue())
                         << "' already, not '" << stringifyPrecision(precision)
                         << "'";
      return signalPassFailure();
    }
    if (precision == Precision::FP32)
      return;
    module->setAttr(kPrecisionAttrName,
                    PrecisionAttr::get(&getContext(), precision));
    FloatType reduced = getReducedFloatType(&getContext(), precision);
    if (!reduced)
      return;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("has several blocks; dnn-convert-precision converts "
                         "single-block functions");
        return signalPassFailure();
      }
      LLVM_DEBUG(llvm::dbgs() << "converting @" << func.getSymName() << "\n");
      if (failed(FunctionConverter(func, reduced).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
