//===- DnnCosts.cpp - FLOPs and bytes of the dnn ops ------------*- C++ -*-===//
//
// `DnnCostOpInterface::getCost` for every `dnn` op and the byte helpers of
// DnnCost.h. Costs are computed on the op's whole (global) tensors from its
// verified types and attributes; the counts are listed in
// docs/Dialects/Dnn.md ("Costs").
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include <cassert>

using namespace mlir;
using namespace dnnc::dnn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t dnnc::dnn::getElementBytes(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (!type.isIntOrIndexOrFloat())
    return 0;
  if (type.isIndex())
    return 8;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

double dnnc::dnn::getNumElements(Value value) {
  auto shaped = dyn_cast<ShapedType>(value.getType());
  if (!shaped)
    return 1;
  double count = 1;
  for (int64_t size : shaped.getShape())
    count *= static_cast<double>(size);
  return count;
}

double dnnc::dnn::getTensorBytes(Value value) {
  return getNumElements(value) *
         static_cast<double>(getElementBytes(value.getType()));
}

/// Returns the product of `sizes` as a double.
static double product(ArrayRef<int64_t> sizes) {
  double result = 1;
  for (int64_t size : sizes)
    result *= static_cast<double>(size);
  return result;
}

/// Returns the bytes of all operands of `op`.
static double getOperandBytes(Operation *op) {
  double bytes = 0;
  for (Value operand : op->getOperands())
    bytes += getTensorBytes(operand);
  return bytes;
}

/// Returns the bytes of all results of `op`.
static double getResultBytes(Operation *op) {
  double bytes = 0;
  for (Value result : op->getResults())
    bytes += getTensorBytes(result);
  return bytes;
}

/// Returns the cost of an op that spends `flopsPerElement` FLOPs on every
/// element of its first result, reads every operand whole and writes every
/// result, on vector units.
static OpCost getPerElementCost(Operation *op, double flopsPerElement) {
  OpCost cost;
  cost.flops = flopsPerElement * getNumElements(op->getResult(0));
  cost.bytesRead = getOperandBytes(op);
  cost.bytesWritten = getResultBytes(op);
  return cost;
}

/// Returns the cost of a copy that reads `bytesRead` and writes every
/// result of `op`, without arithmetic.
static OpCost getCopyCost(Operation *op, double bytesRead) {
  OpCost cost;
  cost.bytesRead = bytesRead;
  cost.bytesWritten = getResultBytes(op);
  return cost;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Defines `getCost` of elementwise ops as `FLOPS` per result element.
#define DNN_ELEMENTWISE_COST(OP, FLOPS)                                        \
  OpCost OP::getCost() { return getPerElementCost(*this, FLOPS); }

// One instruction per element.
DNN_ELEMENTWISE_COST(ReluOp, 1)
DNN_ELEMENTWISE_COST(FloorOp, 1)
DNN_ELEMENTWISE_COST(CeilOp, 1)
DNN_ELEMENTWISE_COST(RoundOp, 1)
DNN_ELEMENTWISE_COST(NegOp, 1)
DNN_ELEMENTWISE_COST(AbsOp, 1)
DNN_ELEMENTWISE_COST(NotOp, 1)
DNN_ELEMENTWISE_COST(AddOp, 1)
DNN_ELEMENTWISE_COST(SubOp, 1)
DNN_ELEMENTWISE_COST(MulOp, 1)
DNN_ELEMENTWISE_COST(MaxOp, 1)
DNN_ELEMENTWISE_COST(MinOp, 1)
DNN_ELEMENTWISE_COST(AndOp, 1)
DNN_ELEMENTWISE_COST(OrOp, 1)
DNN_ELEMENTWISE_COST(XorOp, 1)
DNN_ELEMENTWISE_COST(ShiftLeftOp, 1)
DNN_ELEMENTWISE_COST(ShiftRightOp, 1)
DNN_ELEMENTWISE_COST(EqualOp, 1)
DNN_ELEMENTWISE_COST(LessOp, 1)
DNN_ELEMENTWISE_COST(LessEqualOp, 1)
DNN_ELEMENTWISE_COST(GreaterOp, 1)
DNN_ELEMENTWISE_COST(GreaterEqualOp, 1)
DNN_ELEMENTWISE_COST(IsNaNOp, 1)
DNN_ELEMENTWISE_COST(SelectOp, 1)
// A compare and a multiply.
DNN_ELEMENTWISE_COST(LeakyReluOp, 2)
// Special-function unit plus refinement.
DNN_ELEMENTWISE_COST(DivOp, kDivisionFlops)
DNN_ELEMENTWISE_COST(ReciprocalOp, kDivisionFlops)
DNN_ELEMENTWISE_COST(SqrtOp, kDivisionFlops)
// A division, and for `mod` a compare and an add.
DNN_ELEMENTWISE_COST(RemOp, kDivisionFlops)
DNN_ELEMENTWISE_COST(ModOp, kDivisionFlops + 2)
// Transcendentals.
DNN_ELEMENTWISE_COST(ExpOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(LogOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(TanhOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(ErfOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(SinOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(CosOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(TanOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AsinOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AcosOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AtanOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(SinhOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(CoshOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AsinhOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AcoshOp, kTranscendentalFlops)
DNN_ELEMENTWISE_COST(AtanhOp, kTranscendentalFlops)
// 1 / (1 + exp(-x)): negate, exp, add, reciprocal.
DNN_ELEMENTWISE_COST(SigmoidOp, kTranscendentalFlops + kDivisionFlops + 2)
// exp(rhs * log(lhs)).
DNN_ELEMENTWISE_COST(PowOp, 2 * kTranscendentalFlops + 1)
// A conversion is free next to its memory traffic.
DNN_ELEMENTWISE_COST(CastOp, 0)

#undef DNN_ELEMENTWISE_COST

/// `x * 0.5 * (1 + erf(x / sqrt(2)))`: erf and 4 arithmetic FLOPs; the tanh
/// form `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`: tanh
/// and 8.
OpCost GeluOp::getCost() {
  double arithmetic = getApproximation() == GeluApproximation::Tanh ? 8 : 4;
  return getPerElementCost(*this, kTranscendentalFlops + arithmetic);
}

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

/// Materialised at compile time (or a weight already in memory): free.
OpCost ConstantOp::getCost() { return {}; }

/// A view of its operand's buffer: free.
OpCost ReshapeOp::getCost() { return {}; }

/// Reads the operand once, writes the (larger) result.
OpCost BroadcastInDimOp::getCost() {
  return getCopyCost(*this, getTensorBytes(getInput()));
}

OpCost TransposeOp::getCost() {
  return getCopyCost(*this, getTensorBytes(getInput()));
}

OpCost ConcatOp::getCost() {
  return getCopyCost(*this, getOperandBytes(*this));
}

/// Reads only the addressed elements: as many as the result holds.
OpCost SliceOp::getCost() {
  return getCopyCost(*this, getTensorBytes(getResult()));
}

/// Reads the indices and the gathered rows (as many elements as the result
/// holds).
OpCost GatherOp::getCost() {
  return getCopyCost(*this, getTensorBytes(getIndices()) +
                                getTensorBytes(getResult()));
}

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

/// `2 * B * M * N * K` on matrix units.
OpCost MatMulOp::getCost() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  // `lhs` is [B..., M, K], the last dimension of `rhs` is N.
  OpCost cost = getPerElementCost(*this, 0);
  cost.flops = 2 * product(lhs) * static_cast<double>(rhs.back());
  cost.isMatrix = true;
  return cost;
}

/// Over the iteration space (the product of the extents of all distinct
/// labels): one multiply per extra operand and, with a contraction (a label
/// missing from the output), one add: `2 * prod` for two operands. Matrix
/// units when two or more operands are contracted.
OpCost EinsumOp::getCost() {
  FailureOr<EinsumEquation> eq = parseEinsumEquation(getEquation(), nullptr);
  assert(succeeded(eq) && "verified einsum has a valid equation");
  llvm::SmallSet<char, 16> seen;
  double space = 1;
  bool contraction = false;
  for (auto [index, labels] : llvm::enumerate(eq->inputs)) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(getInputs()[index].getType()).getShape();
    for (auto [dim, c] : llvm::enumerate(labels)) {
      if (!seen.insert(c).second)
        continue;
      space *= static_cast<double>(shape[dim]);
      contraction |= eq->output.find(c) == std::string::npos;
    }
  }
  double numInputs = eq->inputs.size();
  OpCost cost = getPerElementCost(*this, 0);
  cost.flops = space * (numInputs - 1 + (contraction ? 1 : 0));
  cost.isMatrix = contraction && numInputs >= 2;
  return cost;
}

/// `2 * N * M * prod(output spatial) * (C / G) * prod(kernel)` on matrix
/// units, plus one add per output element for the bias.
OpCost ConvOp::getCost() {
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  double outputs = getNumElements(getResult());
  OpCost cost = getPerElementCost(*this, 0);
  cost.flops = 2 * outputs * product(weight.drop_front(1));
  if (getBias())
    cost.flops += outputs;
  cost.isMatrix = true;
  return cost;
}

/// One compare per window element and output.
OpCost MaxPoolOp::getCost() {
  return getPerElementCost(*this, product(getKernel()));
}

/// One add per window element and a division per output.
OpCost AvgPoolOp::getCost() {
  return getPerElementCost(*this, product(getKernel()) + 1);
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// Per element: the running max, subtract, exp, the sum, and the final
/// scale (a multiply by the row's reciprocal, or the subtraction of the
/// log-sum); a fused kernel reads the input once and writes the result once.
static OpCost getSoftmaxCost(Operation *op) {
  return getPerElementCost(op, kTranscendentalFlops + 4);
}

OpCost SoftmaxOp::getCost() { return getSoftmaxCost(*this); }

OpCost LogSoftmaxOp::getCost() { return getSoftmaxCost(*this); }

/// Per element: the sum for the mean, subtract the mean, square and
/// accumulate (2), scale by `inv_std_dev`, by `scale`, add `bias` (if any);
/// per row: the mean and variance divisions by the row length, the epsilon
/// and a reciprocal square root.
OpCost LayerNormOp::getCost() {
  double elements = getNumElements(getInput());
  double rows = getNumElements(getMean());
  OpCost cost = getPerElementCost(*this, 0);
  cost.flops = elements * (getBias() ? 7 : 6) + rows * (3 + kDivisionFlops);
  return cost;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// One FLOP per input element, plus `perOutput` per result element.
static OpCost getReduceCost(Operation *op, double perOutput) {
  OpCost cost = getPerElementCost(op, perOutput);
  cost.flops += getNumElements(op->getOperand(0));
  return cost;
}

OpCost ReduceSumOp::getCost() { return getReduceCost(*this, 0); }

/// The sum and one scaling per result element.
OpCost ReduceMeanOp::getCost() { return getReduceCost(*this, 1); }

OpCost ReduceMaxOp::getCost() { return getReduceCost(*this, 0); }

OpCost ReduceMinOp::getCost() { return getReduceCost(*this, 0); }

OpCost ReduceProdOp::getCost() { return getReduceCost(*this, 0); }

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

/// Per element: a random number, a compare against the ratio and the scale;
/// writes the result and the mask.
OpCost DropoutOp::getCost() {
  return getPerElementCost(*this, kRandomFlops + 2);
}

/// A log-softmax over the classes per score element (as
/// `dnn.log_softmax`), then per sample: pick the label's log-probability,
/// weight it, accumulate.
OpCost SoftmaxCrossEntropyOp::getCost() {
  OpCost cost = getPerElementCost(*this, 0);
  cost.flops = getNumElements(getScores()) * (kTranscendentalFlops + 4) +
               getNumElements(getLabels()) * 3;
  return cost;
}

SmallVector<Operation *> dnnc::dnn::findRecomputableCores(
    Block &body, llvm::function_ref<bool(Value)> isActivation,
    llvm::function_ref<bool(Operation *)> follows) {
  auto isActivationProduct = [&](Operation *op) {
    return isa<MatMulOp, EinsumOp>(op) && op->getNumOperands() == 2 &&
           llvm::all_of(op->getOperands(), isActivation);
  };
  SmallVector<Operation *> cores;
  for (Operation &op : body.without_terminator()) {
    if (!isActivationProduct(&op))
      continue;
    SmallVector<Operation *> core{&op}, worklist{&op};
    llvm::DenseSet<Operation *> inCore{&op};
    bool closed = true, reachesProduct = false;
    while (!worklist.empty() && closed) {
      Operation *current = worklist.pop_back_val();
      for (Operation *user : current->getUsers()) {
        if (inCore.contains(user) || !follows(user))
          continue;
        if (isActivationProduct(user)) {
          reachesProduct = true;
          continue;
        }
        auto costly = dyn_cast<DnnCostOpInterface>(user);
        if (!costly || costly.getCost().isMatrix) {
          closed = false;
          break;
        }
        inCore.insert(user);
        core.push_back(user);
        worklist.push_back(user);
      }
    }
    if (closed && reachesProduct)
      llvm::append_range(cores, core);
  }
  return cores;
}
