//===- DnnShardingRules.cpp - sharding rules of the dnn ops -----*- C++ -*-===//
//
// `DnnShardingRuleOpInterface::getShardingRule` for every `dnn` op, the rule
// builder, and the checks of rules pinned with `dnn.sharding_rule`. The rule
// model and the per-op rules are described in docs/Dialects/Dnn.md.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/ShardingRuleBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include <numeric>

using namespace mlir;
using namespace dnnc::dnn;

static constexpr int64_t kNoDim = ShardingRuleBuilder::kNoDim;

//===----------------------------------------------------------------------===//
// ShardingRuleBuilder
//===----------------------------------------------------------------------===//

/// Returns the rank of `value`'s ranked tensor type (0 for anything else).
static int64_t rankOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getRank() : 0;
}

/// Returns the shape of `value`, a ranked tensor.
static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

ShardingRuleBuilder::ShardingRuleBuilder(Operation *op)
    : context(op->getContext()) {
  for (Value operand : op->getOperands())
    operands.emplace_back(rankOf(operand));
  for (Value result : op->getResults())
    results.emplace_back(rankOf(result));
}

ShardingRuleBuilder::ShardingRuleBuilder(MLIRContext *context,
                                         ArrayRef<int64_t> operandRanks,
                                         ArrayRef<int64_t> resultRanks)
    : context(context) {
  for (int64_t rank : operandRanks)
    operands.emplace_back(rank);
  for (int64_t rank : resultRanks)
    results.emplace_back(rank);
}

int64_t ShardingRuleBuilder::addFactor(int64_t size, FactorKind kind) {
  if (size == 0)
    return kNoDim;
  sizes.push_back(size);
  kinds.push_back(kind);
  return sizes.size() - 1;
}

int64_t ShardingRuleBuilder::addFactor(ArrayRef<int64_t> operandDims,
                                       ArrayRef<int64_t> resultDims,
                                       int64_t size, FactorKind kind) {
  int64_t factor = addFactor(size, kind);
  for (auto [index, dim] : llvm::enumerate(operandDims))
    mapOperand(index, dim, factor);
  for (auto [index, dim] : llvm::enumerate(resultDims))
    mapResult(index, dim, factor);
  return factor;
}

ShardingRuleBuilder &ShardingRuleBuilder::mapOperand(int64_t index, int64_t dim,
                                                     int64_t factor) {
  if (dim != kNoDim && factor != kNoDim)
    operands[index][dim].push_back(factor);
  return *this;
}

ShardingRuleBuilder &ShardingRuleBuilder::mapResult(int64_t index, int64_t dim,
                                                    int64_t factor) {
  if (dim != kNoDim && factor != kNoDim)
    results[index][dim].push_back(factor);
  return *this;
}

ShardingRuleBuilder &
ShardingRuleBuilder::addPointwise(ArrayRef<int64_t> shape,
                                  function_ref<FactorKind(int64_t)> kindOf) {
  int64_t rank = shape.size();
  for (auto [dim, size] : llvm::enumerate(shape)) {
    int64_t factor =
        addFactor(size, kindOf ? kindOf(dim) : FactorKind::Parallel);
    for (auto [index, tensor] : llvm::enumerate(operands))
      if (static_cast<int64_t>(tensor.size()) == rank)
        mapOperand(index, dim, factor);
    for (auto [index, tensor] : llvm::enumerate(results))
      if (static_cast<int64_t>(tensor.size()) == rank)
        mapResult(index, dim, factor);
  }
  return *this;
}

ShardingRuleAttr ShardingRuleBuilder::build() const {
  auto toMappings = [&](ArrayRef<SmallVector<SmallVector<int64_t>>> tensors) {
    return llvm::to_vector(
        llvm::map_range(tensors, [&](ArrayRef<SmallVector<int64_t>> dims) {
          return TensorMappingAttr::get(context, dims);
        }));
  };
  return ShardingRuleAttr::get(context, sizes, kinds, toMappings(operands),
                               toMappings(results));
}

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

ShardingRuleAttr dnnc::dnn::getElementwiseShardingRule(Operation *op) {
  return ShardingRuleBuilder(op)
      .addPointwise(shapeOf(op->getResult(0)))
      .build();
}

ShardingRuleAttr dnnc::dnn::getReshapeShardingRule(MLIRContext *context,
                                                   ArrayRef<int64_t> inShape,
                                                   ArrayRef<int64_t> outShape) {
  int64_t inRank = inShape.size(), outRank = outShape.size();
  ShardingRuleBuilder b(context, {inRank}, {outRank});
  // Empty tensors are never split: every non-empty dimension gets a
  // `replication` factor of its own (and dimensions of extent 0 none).
  if (llvm::is_contained(inShape, 0)) {
    for (int64_t dim = 0; dim < inRank; ++dim)
      b.addFactor({dim}, {}, inShape[dim], FactorKind::NeedReplication);
    for (int64_t dim = 0; dim < outRank; ++dim)
      b.addFactor({}, {dim}, outShape[dim], FactorKind::NeedReplication);
    return b.build();
  }

  // `in`/`out` is the current dimension of each side and `inLeft`/`outLeft`
  // the part of its extent not yet assigned to factors (its minor part).
  int64_t in = -1, out = -1, inLeft = 1, outLeft = 1;
  auto nextIn = [&] {
    while (inLeft == 1 && in + 1 < inRank)
      inLeft = inShape[++in];
  };
  auto nextOut = [&] {
    while (outLeft == 1 && out + 1 < outRank)
      outLeft = outShape[++out];
  };
  while (true) {
    nextIn();
    nextOut();
    // Both sides hold the same number of elements, so they run out together.
    if (inLeft == 1 || outLeft == 1)
      break;
    // A common divisor of the two remaining extents is a factor of both
    // dimensions at the same (major) position of the linear index.
    int64_t common = std::gcd(inLeft, outLeft);
    if (common > 1) {
      b.addFactor({in}, {out}, common);
      inLeft /= common;
      outLeft /= common;
      continue;
    }
    // The shapes do not factor into each other here (e.g. 2x3 -> 3x2): the
    // block of elements up to the next point where the products of the two
    // sides agree cannot be split consistently on both sides. Each side's
    // pieces become factors of their own that must stay whole.
    SmallVector<std::pair<int64_t, int64_t>> inPieces = {{in, inLeft}};
    SmallVector<std::pair<int64_t, int64_t>> outPieces = {{out, outLeft}};
    int64_t inProduct = inLeft, outProduct = outLeft;
    inLeft = outLeft = 1;
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        nextIn();
        inPieces.push_back({in, inLeft});
        inProduct *= inLeft;
        inLeft = 1;
      } else {
        nextOut();
        outPieces.push_back({out, outLeft});
        outProduct *= outLeft;
        outLeft = 1;
      }
    }
    for (auto [dim, size] : inPieces)
      b.addFactor({dim}, {}, size, FactorKind::NeedReplication);
    for (auto [dim, size] : outPieces)
      b.addFactor({}, {dim}, size, FactorKind::NeedReplication);
  }
  return b.build();
}

/// Defines `getShardingRule` of elementwise ops through the shared rule.
#define DNN_ELEMENTWISE_SHARDING_RULE(OP)                                      \
  ShardingRuleAttr OP::getShardingRule() {                                     \
    return getElementwiseShardingRule(*this);                                  \
  }

DNN_ELEMENTWISE_SHARDING_RULE(ReluOp)
DNN_ELEMENTWISE_SHARDING_RULE(TanhOp)
DNN_ELEMENTWISE_SHARDING_RULE(SigmoidOp)
DNN_ELEMENTWISE_SHARDING_RULE(ErfOp)
DNN_ELEMENTWISE_SHARDING_RULE(ExpOp)
DNN_ELEMENTWISE_SHARDING_RULE(LogOp)
DNN_ELEMENTWISE_SHARDING_RULE(SqrtOp)
DNN_ELEMENTWISE_SHARDING_RULE(ReciprocalOp)
DNN_ELEMENTWISE_SHARDING_RULE(FloorOp)
DNN_ELEMENTWISE_SHARDING_RULE(CeilOp)
DNN_ELEMENTWISE_SHARDING_RULE(RoundOp)
DNN_ELEMENTWISE_SHARDING_RULE(SinOp)
DNN_ELEMENTWISE_SHARDING_RULE(CosOp)
DNN_ELEMENTWISE_SHARDING_RULE(TanOp)
DNN_ELEMENTWISE_SHARDING_RULE(AsinOp)
DNN_ELEMENTWISE_SHARDING_RULE(AcosOp)
DNN_ELEMENTWISE_SHARDING_RULE(AtanOp)
DNN_ELEMENTWISE_SHARDING_RULE(SinhOp)
DNN_ELEMENTWISE_SHARDING_RULE(CoshOp)
DNN_ELEMENTWISE_SHARDING_RULE(AsinhOp)
DNN_ELEMENTWISE_SHARDING_RULE(AcoshOp)
DNN_ELEMENTWISE_SHARDING_RULE(AtanhOp)
DNN_ELEMENTWISE_SHARDING_RULE(NegOp)
DNN_ELEMENTWISE_SHARDING_RULE(AbsOp)
DNN_ELEMENTWISE_SHARDING_RULE(NotOp)
DNN_ELEMENTWISE_SHARDING_RULE(GeluOp)
DNN_ELEMENTWISE_SHARDING_RULE(LeakyReluOp)
DNN_ELEMENTWISE_SHARDING_RULE(AddOp)
DNN_ELEMENTWISE_SHARDING_RULE(SubOp)
DNN_ELEMENTWISE_SHARDING_RULE(MulOp)
DNN_ELEMENTWISE_SHARDING_RULE(DivOp)
DNN_ELEMENTWISE_SHARDING_RULE(PowOp)
DNN_ELEMENTWISE_SHARDING_RULE(RemOp)
DNN_ELEMENTWISE_SHARDING_RULE(ModOp)
DNN_ELEMENTWISE_SHARDING_RULE(ShiftLeftOp)
DNN_ELEMENTWISE_SHARDING_RULE(ShiftRightOp)
DNN_ELEMENTWISE_SHARDING_RULE(MaxOp)
DNN_ELEMENTWISE_SHARDING_RULE(MinOp)
DNN_ELEMENTWISE_SHARDING_RULE(AndOp)
DNN_ELEMENTWISE_SHARDING_RULE(OrOp)
DNN_ELEMENTWISE_SHARDING_RULE(XorOp)
DNN_ELEMENTWISE_SHARDING_RULE(EqualOp)
DNN_ELEMENTWISE_SHARDING_RULE(LessOp)
DNN_ELEMENTWISE_SHARDING_RULE(LessEqualOp)
DNN_ELEMENTWISE_SHARDING_RULE(GreaterOp)
DNN_ELEMENTWISE_SHARDING_RULE(GreaterEqualOp)
DNN_ELEMENTWISE_SHARDING_RULE(IsNaNOp)
DNN_ELEMENTWISE_SHARDING_RULE(SelectOp)
DNN_ELEMENTWISE_SHARDING_RULE(CastOp)

#undef DNN_ELEMENTWISE_SHARDING_RULE

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

/// Every dimension is parallel: each device materialises its block.
ShardingRuleAttr ConstantOp::getShardingRule() {
  ShardingRuleBuilder b(*this);
  for (auto [dim, size] : llvm::enumerate(getType().getShape()))
    b.addFactor({}, {static_cast<int64_t>(dim)}, size);
  return b.build();
}

ShardingRuleAttr ReshapeOp::getShardingRule() {
  return getReshapeShardingRule(getContext(), getInput().getType().getShape(),
                                getType().getShape());
}

/// Mapped dimensions of equal extent share a parallel factor. A mapped
/// operand dimension of extent 1 that is expanded gets a `replication`
/// factor of size 1 of its own, and the expanded result dimension, like
/// every new one, a parallel factor the operand does not have: splitting it
/// only shrinks what each device broadcasts to.
ShardingRuleAttr BroadcastInDimOp::getShardingRule() {
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> outShape = getType().getShape();
  SmallVector<int64_t> inDimOf(outShape.size(), kNoDim);
  for (auto [inDim, outDim] : llvm::enumerate(getDims()))
    inDimOf[outDim] = inDim;
  ShardingRuleBuilder b(*this);
  for (auto [outDim, size] : llvm::enumerate(outShape)) {
    int64_t inDim = inDimOf[outDim];
    int64_t resultDim = outDim;
    if (inDim != kNoDim && inShape[inDim] != size) {
      b.addFactor({inDim}, {}, inShape[inDim], FactorKind::NeedReplication);
      inDim = kNoDim;
    }
    b.addFactor({inDim}, {resultDim}, size);
  }
  return b.build();
}

/// One parallel factor per dimension, permuted.
ShardingRuleAttr TransposeOp::getShardingRule() {
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> perm = getPermutation();
  ShardingRuleBuilder b(*this);
  for (auto [inDim, size] : llvm::enumerate(inShape)) {
    int64_t outDim = llvm::find(perm, inDim) - perm.begin();
    b.addFactor({static_cast<int64_t>(inDim)}, {outDim}, size);
  }
  return b.build();
}

/// Dimensions other than the axis are shared parallel factors. Along the
/// axis, every operand and the result have a `replication` factor of their
/// own: a block of the result mixes blocks of different operands.
ShardingRuleAttr ConcatOp::getShardingRule() {
  int64_t axis = getAxis();
  ShardingRuleBuilder b(*this);
  int64_t numInputs = getInputs().size();
  for (auto [dim, size] : llvm::enumerate(getType().getShape())) {
    int64_t d = dim;
    if (d != axis || numInputs == 1) {
      b.addFactor(SmallVector<int64_t>(numInputs, d), {d}, size);
      continue;
    }
    for (auto [index, input] : llvm::enumerate(getInputs()))
      b.mapOperand(
          index, axis,
          b.addFactor(shapeOf(input)[axis], FactorKind::NeedReplication));
    b.addFactor({}, {axis}, size, FactorKind::NeedReplication);
  }
  return b.build();
}

/// Dimensions taken whole (start 0, step 1, full extent) are shared parallel
/// factors; every other dimension has a `replication` factor on each side: a
/// device's block of the result comes from elsewhere in the input.
ShardingRuleAttr SliceOp::getShardingRule() {
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> outShape = getType().getShape();
  ShardingRuleBuilder b(*this);
  for (int64_t dim = 0, e = inShape.size(); dim < e; ++dim) {
    if (getStarts()[dim] == 0 && getSteps()[dim] == 1 &&
        inShape[dim] == outShape[dim]) {
      b.addFactor({dim}, {dim}, inShape[dim]);
      continue;
    }
    b.addFactor({dim}, {}, inShape[dim], FactorKind::NeedReplication);
    b.addFactor({}, {dim}, outShape[dim], FactorKind::NeedReplication);
  }
  return b.build();
}

/// `data` dimensions other than the axis and every `indices` dimension are
/// parallel factors shared with the result; the gathered axis of `data` is
/// `replication`: any index may address any row.
ShardingRuleAttr GatherOp::getShardingRule() {
  ArrayRef<int64_t> dataShape = getData().getType().getShape();
  ArrayRef<int64_t> indicesShape = getIndices().getType().getShape();
  int64_t axis = getAxis();
  int64_t indicesRank = indicesShape.size();
  ShardingRuleBuilder b(*this);
  for (int64_t dim = 0; dim < axis; ++dim)
    b.addFactor({dim, kNoDim}, {dim}, dataShape[dim]);
  b.addFactor({axis, kNoDim}, {}, dataShape[axis], FactorKind::NeedReplication);
  for (int64_t dim = 0; dim < indicesRank; ++dim)
    b.addFactor({kNoDim, dim}, {axis + dim}, indicesShape[dim]);
  for (int64_t dim = axis + 1, e = dataShape.size(); dim < e; ++dim)
    b.addFactor({dim, kNoDim}, {dim - 1 + indicesRank}, dataShape[dim]);
  return b.build();
}

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

/// `[B..., M, K] x [K, N]` or `[B..., K, N]`: batch, M and N parallel, K a
/// sum reduction.
ShardingRuleAttr MatMulOp::getShardingRule() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  int64_t lhsRank = lhs.size(), rhsRank = rhs.size();
  int64_t numBatch = lhsRank - 2;
  bool batchedRhs = rhsRank == lhsRank;
  ShardingRuleBuilder b(*this);
  for (int64_t dim = 0; dim < numBatch; ++dim)
    b.addFactor({dim, batchedRhs ? dim : kNoDim}, {dim}, lhs[dim]);
  b.addFactor({lhsRank - 2, kNoDim}, {lhsRank - 2}, lhs[lhsRank - 2]);
  b.addFactor({kNoDim, rhsRank - 1}, {lhsRank - 1}, rhs[rhsRank - 1]);
  b.addFactor({lhsRank - 1, rhsRank - 2}, {kNoDim}, lhs[lhsRank - 1],
              FactorKind::Sum);
  return b.build();
}

/// One factor per label, in order of first appearance: output labels are
/// parallel, the others sum reductions. A label repeated inside one operand
/// (a diagonal) is `replication`, and its extra occurrences get
/// `replication` factors of their own.
ShardingRuleAttr EinsumOp::getShardingRule() {
  FailureOr<EinsumEquation> eq = parseEinsumEquation(getEquation(), nullptr);
  assert(succeeded(eq) && "verified einsum has a valid equation");
  // Labels repeated inside an operand.
  llvm::SmallSet<char, 8> diagonal;
  for (const std::string &labels : eq->inputs)
    for (auto [pos, c] : llvm::enumerate(labels))
      if (labels.find(c) != pos)
        diagonal.insert(c);

  ShardingRuleBuilder b(*this);
  llvm::SmallDenseMap<char, int64_t> factorOf;
  for (auto [index, labels] : llvm::enumerate(eq->inputs)) {
    ArrayRef<int64_t> shape = shapeOf(getInputs()[index]);
    for (auto [dim, c] : llvm::enumerate(labels)) {
      auto it = factorOf.find(c);
      bool repeated = labels.find(c) != dim;
      if (it == factorOf.end()) {
        FactorKind kind = diagonal.contains(c) ? FactorKind::NeedReplication
                          : eq->output.find(c) != std::string::npos
                              ? FactorKind::Parallel
                              : FactorKind::Sum;
        it = factorOf.try_emplace(c, b.addFactor(shape[dim], kind)).first;
      }
      int64_t factor = it->second;
      if (repeated)
        factor = b.addFactor(shape[dim], FactorKind::NeedReplication);
      b.mapOperand(index, dim, factor);
    }
  }
  for (auto [dim, c] : llvm::enumerate(eq->output))
    b.mapResult(0, dim, factorOf.lookup(c));
  return b.build();
}

/// `[N, C, D...] x [M, C/G, K...] (+ [M]) -> [N, M, O...]`: N and M
/// parallel, C a sum reduction; with `group` G > 1 channels are `[G, C/G]`
/// and `[G, M/G]`, G parallel. Input and output spatial dimensions are
/// `halo` factors (a split needs neighbouring rows), kernel spatial
/// dimensions `replication`.
ShardingRuleAttr ConvOp::getShardingRule() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  int64_t group = getGroup();
  bool hasBias = static_cast<bool>(getBias());
  int64_t bias = hasBias ? 0 : kNoDim;
  ShardingRuleBuilder b(*this);
  b.addFactor({0, kNoDim, kNoDim}, {0}, in[0]);
  if (group > 1)
    b.addFactor({1, 0, bias}, {1}, group);
  int64_t perGroupOut = out[1] / group, perGroupIn = weight[1];
  if (group == 1 || perGroupOut > 1)
    b.addFactor({kNoDim, 0, bias}, {1}, perGroupOut);
  if (group == 1 || perGroupIn > 1)
    b.addFactor({1, 1, kNoDim}, {kNoDim}, perGroupIn, FactorKind::Sum);
  for (int64_t dim = 2, e = in.size(); dim < e; ++dim) {
    b.addFactor({dim}, {}, in[dim], FactorKind::Halo);
    b.addFactor({kNoDim, dim}, {}, weight[dim], FactorKind::NeedReplication);
    b.addFactor({}, {dim}, out[dim], FactorKind::Halo);
  }
  return b.build();
}

/// Returns the rule of a pooling op: N and C parallel, input and output
/// spatial dimensions `halo` factors.
static ShardingRuleAttr getPoolShardingRule(Operation *op) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  ShardingRuleBuilder b(op);
  b.addFactor({0}, {0}, in[0]);
  b.addFactor({1}, {1}, in[1]);
  for (int64_t dim = 2, e = in.size(); dim < e; ++dim) {
    b.addFactor({dim}, {}, in[dim], FactorKind::Halo);
    b.addFactor({}, {dim}, out[dim], FactorKind::Halo);
  }
  return b.build();
}

ShardingRuleAttr MaxPoolOp::getShardingRule() {
  return getPoolShardingRule(*this);
}

ShardingRuleAttr AvgPoolOp::getShardingRule() {
  return getPoolShardingRule(*this);
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// Returns the elementwise rule of `op` with dimension `axis` `replication`:
/// every output element depends on the whole row along the axis.
static ShardingRuleAttr getAxisReplicatedRule(Operation *op, int64_t axis) {
  return ShardingRuleBuilder(op)
      .addPointwise(shapeOf(op->getResult(0)),
                    [&](int64_t dim) {
                      return dim == axis ? FactorKind::NeedReplication
                                         : FactorKind::Parallel;
                    })
      .build();
}

ShardingRuleAttr SoftmaxOp::getShardingRule() {
  return getAxisReplicatedRule(*this, getAxis());
}

ShardingRuleAttr LogSoftmaxOp::getShardingRule() {
  return getAxisReplicatedRule(*this, getAxis());
}

/// Leading dimensions `[0, axis)` are parallel (also in `mean` and
/// `inv_std_dev`); the normalised dimensions are `replication` (in `input`,
/// `scale`, `bias` and `result`): the statistics need whole rows.
ShardingRuleAttr LayerNormOp::getShardingRule() {
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  int64_t axis = getAxis();
  bool hasBias = static_cast<bool>(getBias());
  ShardingRuleBuilder b(*this);
  for (int64_t dim = 0, e = shape.size(); dim < e; ++dim) {
    if (dim < axis) {
      b.addFactor({dim}, {dim, dim, dim}, shape[dim]);
      continue;
    }
    int64_t normDim = dim - axis;
    b.addFactor({dim, normDim, hasBias ? normDim : kNoDim}, {dim}, shape[dim],
                FactorKind::NeedReplication);
  }
  return b.build();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Returns the rule of a reduction of kind `kind`: kept dimensions are
/// parallel, reduced dimensions reduction factors of `kind` (a kept reduced
/// dimension of extent 1 has no factor).
static ShardingRuleAttr getReduceShardingRule(Operation *op, FactorKind kind,
                                              ArrayRef<int64_t> axes,
                                              bool keepDims) {
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  ShardingRuleBuilder b(op);
  int64_t outDim = 0;
  for (int64_t dim = 0, e = shape.size(); dim < e; ++dim) {
    if (llvm::is_contained(axes, dim)) {
      b.addFactor({dim}, {kNoDim}, shape[dim], kind);
      if (keepDims)
        ++outDim;
      continue;
    }
    b.addFactor({dim}, {outDim++}, shape[dim]);
  }
  return b.build();
}

ShardingRuleAttr ReduceSumOp::getShardingRule() {
  return getReduceShardingRule(*this, FactorKind::Sum, getAxes(),
                               getKeepDims());
}

/// A mean of integers truncates, so the mean of the shards' means is not the
/// mean: the reduced dimensions of an integer mean need replication.
ShardingRuleAttr ReduceMeanOp::getShardingRule() {
  bool exact = isa<FloatType>(getInput().getType().getElementType());
  return getReduceShardingRule(
      *this, exact ? FactorKind::Mean : FactorKind::NeedReplication, getAxes(),
      getKeepDims());
}

ShardingRuleAttr ReduceMaxOp::getShardingRule() {
  return getReduceShardingRule(*this, FactorKind::Max, getAxes(),
                               getKeepDims());
}

ShardingRuleAttr ReduceMinOp::getShardingRule() {
  return getReduceShardingRule(*this, FactorKind::Min, getAxes(),
                               getKeepDims());
}

ShardingRuleAttr ReduceProdOp::getShardingRule() {
  return getReduceShardingRule(*this, FactorKind::Prod, getAxes(),
                               getKeepDims());
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

/// Elementwise over `input`, `result` and `mask`; the scalar `ratio` has no
/// factor. Splitting is valid only if the random stream is indexed by the
/// global element position (a counter-based generator offset by the block
/// start), so that the mask does not depend on the sharding.
ShardingRuleAttr DropoutOp::getShardingRule() {
  ShardingRuleBuilder b(*this);
  for (auto [dim, size] : llvm::enumerate(getInput().getType().getShape())) {
    int64_t d = dim;
    b.addFactor({d, kNoDim}, {d, d}, size);
  }
  return b.build();
}

/// `scores [N, C, D...]`, `labels [N, D...]`, `weights [C]`: the class
/// dimension C is `replication` (log-softmax over it, labels pick any
/// class). N and D are parallel with `reduction = none`. With `sum` they are
/// sum reductions (split in `log_prob`, partial in `loss`); with `mean` they
/// are mean reductions when every element counts once (no weights, no
/// ignore_index), and `replication` otherwise: a weighted mean needs the
/// numerator and the denominator reduced separately.
ShardingRuleAttr SoftmaxCrossEntropyOp::getShardingRule() {
  ArrayRef<int64_t> scores = getScores().getType().getShape();
  bool hasWeights = static_cast<bool>(getWeights());
  LossReduction reduction = getReduction();
  bool reduced = reduction != LossReduction::None;
  FactorKind sampleKind = FactorKind::Parallel;
  if (reduction == LossReduction::Sum)
    sampleKind = FactorKind::Sum;
  if (reduction == LossReduction::Mean)
    sampleKind = hasWeights || getIgnoreIndex() ? FactorKind::NeedReplication
                                                : FactorKind::Mean;
  ShardingRuleBuilder b(*this);
  for (int64_t dim = 0, e = scores.size(); dim < e; ++dim) {
    if (dim == 1) {
      b.addFactor({1, kNoDim, hasWeights ? 0 : kNoDim}, {kNoDim, 1}, scores[1],
                  FactorKind::NeedReplication);
      continue;
    }
    // Dimension `dim` of scores is dimension `labelDim` of labels and of an
    // unreduced loss.
    int64_t labelDim = dim == 0 ? 0 : dim - 1;
    b.addFactor({dim, labelDim}, {reduced ? kNoDim : labelDim, dim},
                scores[dim], sampleKind);
  }
  return b.build();
}

//===----------------------------------------------------------------------===//
// Pinned rules
//===----------------------------------------------------------------------===//

ShardingRuleAttr dnnc::dnn::getShardingRule(Operation *op) {
  if (auto pinned = op->getAttrOfType<ShardingRuleAttr>(
          DnnDialect::kShardingRuleAttrName))
    return pinned;
  if (auto iface = dyn_cast<DnnShardingRuleOpInterface>(op))
    return iface.getShardingRule();
  return {};
}

LogicalResult dnnc::dnn::verifyPinnedShardingRule(Operation *op) {
  auto pinned =
      op->getAttrOfType<ShardingRuleAttr>(DnnDialect::kShardingRuleAttrName);
  if (!pinned)
    return success();
  auto emitError = [&] {
    return op->emitOpError()
           << "'" << DnnDialect::kShardingRuleAttrName << "' ";
  };
  if (failed(pinned.verifyForTypes(op->getOperandTypes(), op->getResultTypes(),
                                   emitError)))
    return failure();
  ShardingRuleAttr own = cast<DnnShardingRuleOpInterface>(op).getShardingRule();
  if (pinned.getFactorSizes() != own.getFactorSizes() ||
      pinned.getOperands() != own.getOperands() ||
      pinned.getResults() != own.getResults())
    return emitError() << "must have the factors of the op's own rule " << own;
  for (int64_t factor = 0, e = own.getNumFactors(); factor < e; ++factor) {
    FactorKind kind = pinned.getFactorKind(factor);
    FactorKind ownKind = own.getFactorKind(factor);
    if (kind != ownKind && kind != FactorKind::NeedReplication)
      return emitError() << "may only turn factors into 'replication', but "
                            "factor '"
                         << ShardingRuleAttr::getFactorName(factor) << "' is '"
                         << stringifyFactorKind(kind)
                         << "' where the op's rule "
                         << "has '" << stringifyFactorKind(ownKind) << "'";
  }
  return success();
}
