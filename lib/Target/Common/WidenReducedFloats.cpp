//===- WidenReducedFloats.cpp - bf16/f16 bodies in f32 ------*- C++ -*-===//
//
// Implements dnn-widen-reduced-floats: the arith and math ops of
// linalg.generic bodies that compute on bf16 or f16 compute on f32, rounding
// only the values that leave the body.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace dnnc {
#define GEN_PASS_DEF_WIDENREDUCEDFLOATSPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Returns true if `type` is bf16 or f16.
static bool isReduced(Type type) { return type.isBF16() || type.isF16(); }

/// Returns `type` with bf16/f16 replaced by f32.
static Type widen(Type type) {
  return isReduced(type) ? Float32Type::get(type.getContext()) : type;
}

/// Rewrites the body of `op` (see the pass description).
static void widenBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  // The f32 version of each bf16/f16 value of the body.
  DenseMap<Value, Value> wide;
  auto getWide = [&](Value value) -> Value {
    if (!isReduced(value.getType()))
      return value;
    Value &slot = wide[value];
    if (!slot) {
      OpBuilder b(op.getContext());
      if (auto arg = dyn_cast<BlockArgument>(value))
        b.setInsertionPointToStart(&body);
      else
        b.setInsertionPointAfter(value.getDefiningOp());
      slot = arith::ExtFOp::create(b, value.getLoc(),
                                   Float32Type::get(op.getContext()), value);
    }
    return slot;
  };
  for (Operation &inner :
       llvm::make_early_inc_range(body.without_terminator())) {
    if (auto ext = dyn_cast<arith::ExtFOp>(inner)) {
      // A round trip from f32: use the f32 value.
      if (ext.getType().isF32() && wide.count(ext.getIn())) {
        ext.replaceAllUsesWith(wide.lookup(ext.getIn()));
        ext.erase();
      }
      continue;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(inner)) {
      if (trunc.getIn().getType().isF32() && isReduced(trunc.getType()))
        wide[trunc.getResult()] = trunc.getIn();
      continue;
    }
    bool touchesReduced = llvm::any_of(inner.getOperandTypes(), isReduced) ||
                          llvm::any_of(inner.getResultTypes(), isReduced);
    if (!touchesReduced || inner.getNumRegions() != 0 ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      continue;
    OpBuilder b(&inner);
    Operation *replacement = nullptr;
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      if (!value)
        continue;
      bool losesInfo = false;
      APFloat x = value.getValue();
      (void)x.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                      &losesInfo);
      replacement = arith::ConstantOp::create(
          b, constant.getLoc(), b.getF32FloatAttr(x.convertToFloat()));
    } else {
      OperationState state(inner.getLoc(), inner.getName());
      for (Value operand : inner.getOperands())
        state.operands.push_back(getWide(operand));
      for (Type type : inner.getResultTypes())
        state.types.push_back(widen(type));
      state.addAttributes(inner.getAttrs());
      replacement = b.create(state);
    }
    // Users still on bf16/f16 (the yield, ops left alone) get a rounding.
    b.setInsertionPointAfter(replacement);
    for (auto [old, result] :
         llvm::zip_equal(inner.getResults(), replacement->getResults())) {
      if (!isReduced(old.getType())) {
        old.replaceAllUsesWith(result);
        continue;
      }
      Value narrow =
          arith::TruncFOp::create(b, inner.getLoc(), old.getType(), result);
      old.replaceAllUsesWith(narrow);
      wide[narrow] = result;
    }
    inner.erase();
  }
}

namespace {
/// dnn-widen-reduced-floats (see Passes.td).
struct WidenReducedFloatsPass
    : public dnnc::impl::WidenReducedFloatsPassBase<WidenReducedFloatsPass> {
  /// Rewrites every linalg.generic body.
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp op) { widenBody(op); });
  }
};
} // namespace
