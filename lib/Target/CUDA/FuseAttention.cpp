//===- FuseAttention.cpp - softmax attention to a fused kernel -*- C++ -*-===//
//
// Implements dnn-cuda-fuse-attention: scaled dot-product attention on dnn ops
// becomes one call of the runtime's flash-attention kernel.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/Common/RuntimeABI.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "FusionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dnnc {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "dnnc/Target/CUDA/Passes.h.inc"
} // namespace dnnc

using namespace mlir;
using namespace dnnc;

namespace {

/// A value and the product of the constant factors peeled off it.
struct Scaled {
  Value value;
  double factor = 1.0;
};

/// Peels multiplications and divisions by splat constants off `v`.
Scaled peelScale(Value v) {
  Scaled s{v, 1.0};
  while (Operation *def = s.value.getDefiningOp()) {
    if (auto mul = dyn_cast<dnn::MulOp>(def)) {
      if (auto c = dnn::getSplatFloatValue(mul.getRhs())) {
        s = {mul.getLhs(), s.factor * *c};
        continue;
      }
      if (auto c = dnn::getSplatFloatValue(mul.getLhs())) {
        s = {mul.getRhs(), s.factor * *c};
        continue;
      }
    } else if (auto div = dyn_cast<dnn::DivOp>(def)) {
      if (auto c = dnn::getSplatFloatValue(div.getRhs()); c && *c != 0.0) {
        s = {div.getLhs(), s.factor / *c};
        continue;
      }
    }
    break;
  }
  return s;
}

/// A matched attention: O = softmax(scale * Q K + bias) V.
struct Attention {
  Value q, kt, v;
  double scale = 1.0;
  /// The additive bias (S's shape) and the factor it is multiplied by.
  Value bias;
  double biasFactor = 1.0;
  /// The matmul whose result is O.
  dnn::MatMulOp output;
};

/// True when `t` is a rank-3 or rank-4 statically shaped tensor of a float
/// type the kernel takes.
bool isAttentionOperand(Value t) {
  auto type = dyn_cast<RankedTensorType>(t.getType());
  if (!type || !type.hasStaticShape() ||
      (type.getRank() != 3 && type.getRank() != 4))
    return false;
  Type e = type.getElementType();
  return e.isF32() || e.isBF16() || e.isF16();
}

/// Matches the attention that ends in softmax `softmax`.
std::optional<Attention> match(dnn::SoftmaxOp softmax, int64_t maxHeadDim) {
  auto type = cast<RankedTensorType>(softmax.getType());
  int64_t rank = type.getRank();
  if ((rank != 3 && rank != 4) || softmax.getAxis() != uint64_t(rank - 1))
    return std::nullopt;
  Attention a;
  // `dnnc --precision`: a softmax in f32 between casts of 16-bit scores.
  Value input = softmax.getInput();
  if (auto widen = input.getDefiningOp<dnn::CastOp>())
    if (isa<FloatType>(getElementTypeOrSelf(widen.getInput().getType())))
      input = widen.getInput();
  Scaled outer = peelScale(input);
  Value scores = outer.value;
  if (auto add = scores.getDefiningOp<dnn::AddOp>()) {
    for (auto [side, other] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
      Scaled inner = peelScale(side);
      if (inner.value.getDefiningOp<dnn::MatMulOp>()) {
        scores = inner.value;
        a.bias = other;
        a.biasFactor = outer.factor;
        outer.factor *= inner.factor;
        break;
      }
    }
  }
  auto qk = scores.getDefiningOp<dnn::MatMulOp>();
  if (!qk)
    return std::nullopt;
  Scaled q = peelScale(qk.getLhs()), kt = peelScale(qk.getRhs());
  a.q = q.value;
  a.kt = kt.value;
  a.scale = outer.factor * q.factor * kt.factor;
  // P V, possibly through `select(is_nan(P), 0, P)` and a cast back to the
  // scores' type.
  SmallVector<Value> probabilities = {softmax.getResult()};
  for (Operation *user : softmax->getUsers())
    if (auto narrow = dyn_cast<dnn::CastOp>(user))
      if (getElementTypeOrSelf(narrow.getType()) ==
          getElementTypeOrSelf(qk.getType()))
        probabilities.push_back(narrow.getResult());
  for (Value probs : probabilities) {
    for (Operation *user : probs.getUsers()) {
      Value lhs = probs;
      if (auto select = dyn_cast<dnn::SelectOp>(user)) {
        auto isNaN = select.getCondition().getDefiningOp<dnn::IsNaNOp>();
        std::optional<double> zero =
            dnn::getSplatFloatValue(select.getOnTrue());
        if (!isNaN || isNaN.getInput() != probs || !zero || *zero != 0.0 ||
            select.getOnFalse() != probs || !select->hasOneUse())
          continue;
        lhs = select.getResult();
        user = *select->getUsers().begin();
      }
      auto pv = dyn_cast<dnn::MatMulOp>(user);
      if (pv && pv.getLhs() == lhs && pv.getRhs() != lhs) {
        a.v = pv.getRhs();
        a.output = pv;
        break;
      }
    }
    if (a.output)
      break;
  }
  if (!a.output || !isAttentionOperand(a.q) || !isAttentionOperand(a.kt) ||
      !isAttentionOperand(a.v))
    return std::nullopt;
  auto qt = cast<RankedTensorType>(a.q.getType());
  auto ktt = cast<RankedTensorType>(a.kt.getType());
  auto vt = cast<RankedTensorType>(a.v.getType());
  if (qt.getRank() != rank || ktt.getRank() != rank || vt.getRank() != rank ||
      qt.getElementType() != ktt.getElementType() ||
      qt.getElementType() != vt.getElementType() ||
      qt.getElementType() != getElementTypeOrSelf(qk.getType()))
    return std::nullopt;
  ArrayRef<int64_t> qs = qt.getShape(), ks = ktt.getShape(), vs = vt.getShape();
  int64_t d = qs[rank - 1], sk = ks[rank - 1];
  if (ks[rank - 2] != d || vs[rank - 2] != sk || vs[rank - 1] != d ||
      d > maxHeadDim || qs.drop_back(2) != ks.drop_back(2) ||
      qs.drop_back(2) != vs.drop_back(2))
    return std::nullopt;
  return a;
}

/// The compact source of a bias broadcast to S's shape, and its strides over
/// (batch, head, query row) for the kernel (0 for broadcast dims).
struct Bias {
  Value value;
  int64_t strideB = 0, strideH = 0, strideQ = 0;
};

Bias getBias(Value bias) {
  auto full = cast<RankedTensorType>(bias.getType());
  int64_t rank = full.getRank();
  ArrayRef<int64_t> fullShape = full.getShape();
  // Row-major strides of the full bias, unless a broadcast supplies a
  // smaller source whose last dim is the key dim.
  Bias b{bias};
  SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = fullShape[d] == 1 ? 0 : stride;
    stride *= fullShape[d];
  }
  if (auto broadcast = bias.getDefiningOp<dnn::BroadcastInDimOp>()) {
    auto in = cast<RankedTensorType>(broadcast.getInput().getType());
    ArrayRef<int64_t> dims = broadcast.getDims();
    ArrayRef<int64_t> inShape = in.getShape();
    if (!dims.empty() && dims.back() == rank - 1 &&
        inShape.back() == fullShape.back()) {
      b.value = broadcast.getInput();
      std::fill(strides.begin(), strides.end(), 0);
      int64_t inStride = 1;
      for (int64_t s = in.getRank() - 1; s >= 0; --s) {
        if (inShape[s] == fullShape[dims[s]])
          strides[dims[s]] = inShape[s] == 1 ? 0 : inStride;
        inStride *= inShape[s];
      }
    }
  }
  b.strideQ = strides[rank - 2];
  if (rank == 4) {
    b.strideH = strides[1];
    b.strideB = strides[0];
  } else {
    b.strideB = strides[0];
  }
  return b;
}

/// Whether the bias `b` (times `factor`) is a causal mask over `seqQ` x
/// `seqK` scores that the kernel's `causal` flag can replace: known at compile
/// time, shared by every batch and head, 0 where key j <= query i, and at
/// most -1000 (or -inf) where j > i. exp(-1000 + s - max) is 0 in float for
/// any score s within 900 of the row's maximum (the diagonal is never
/// masked), so the masked keys weigh exactly nothing either way, and the
/// kernel skips the key tiles past the diagonal.
bool isCausalMask(const Bias &b, double factor, int64_t seqQ, int64_t seqK) {
  if (b.strideB != 0 || b.strideH != 0 || b.strideQ != seqK || factor <= 0)
    return false;
  DenseFPElementsAttr dense = getKnownFloatValue(b.value);
  if (!dense || dense.getNumElements() != seqQ * seqK)
    return false;
  int64_t e = 0;
  for (APFloat value : dense.getValues<APFloat>()) {
    int64_t i = e / seqK, j = e % seqK;
    ++e;
    double v = value.convertToDouble() * factor;
    if (j <= i ? v != 0.0 : !(v <= -1000.0))
      return false;
  }
  return true;
}

struct FuseAttentionPass
    : public dnnc::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using FuseAttentionPassBase::FuseAttentionPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<dnn::SoftmaxOp> softmaxes;
    module.walk([&](dnn::SoftmaxOp op) { softmaxes.push_back(op); });
    for (dnn::SoftmaxOp softmax : softmaxes)
      if (std::optional<Attention> a = match(softmax, maxHeadDim))
        rewrite(*a);
  }

  /// Declares (once) the kernel for element type `type`.
  func::FuncOp getKernel(Type elementType) {
    ModuleOp module = getOperation();
    std::string name = kernelPrefix + (elementType.isF32()    ? "_f32"
                                       : elementType.isBF16() ? "_bf16"
                                                              : "_f16");
    Builder b(module.getContext());
    Type i64 = b.getI64Type(), i32 = b.getI32Type(), index = b.getIndexType();
    return getOrDeclareRuntimeKernel(
        module, name,
        b.getFunctionType({i64, i64, i64, i64, index, index, index, index,
                           b.getF32Type(), i32, i64, index, i64, i64, i64},
                          {}));
  }

  void rewrite(Attention a) {
    OpBuilder b(a.output);
    Location loc = a.output.getLoc();
    auto qt = cast<RankedTensorType>(a.q.getType());
    int64_t rank = qt.getRank();
    ArrayRef<int64_t> qs = qt.getShape();
    int64_t sk = cast<RankedTensorType>(a.kt.getType()).getShape().back();
    int64_t heads = rank == 4 ? qs[1] : 1;
    int64_t batchHeads = rank == 4 ? qs[0] * qs[1] : qs[0];
    // K back from Kt: [.., Sk, D].
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    Value k = dnn::TransposeOp::create(b, loc, a.kt, perm);

    Bias bias;
    bool causal = false;
    if (a.bias) {
      bias = getBias(a.bias);
      causal = isCausalMask(bias, a.biasFactor, qs[rank - 2], sk);
      if (causal) {
        a.bias = nullptr;
        bias = Bias();
      }
    }
    if (a.bias) {
      // A scale applied after the bias scales the (compact) bias too.
      if (a.biasFactor != 1.0) {
        auto type = cast<RankedTensorType>(bias.value.getType());
        auto factor = dnn::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                type, b.getFloatAttr(type.getElementType(), a.biasFactor)));
        bias.value = dnn::MulOp::create(b, loc, bias.value, factor);
      }
    }

    auto address = [&](Value tensor) {
      return getTensorAddress(b, loc, tensor);
    };
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    auto outType = cast<RankedTensorType>(a.output.getType());
    Value out = memref::AllocOp::create(
        b, loc, MemRefType::get(outType.getShape(), outType.getElementType()),
        b.getI64IntegerAttr(64));
    Value biasAddress = a.bias
                            ? address(bias.value)
                            : Value(arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> args = {
        i64(batchHeads),
        i64(qs[rank - 2]),
        i64(sk),
        i64(qs[rank - 1]),
        address(a.q),
        address(k),
        address(a.v),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, out),
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                       APFloat(static_cast<float>(a.scale))),
        arith::ConstantIntOp::create(b, loc, causal ? 1 : 0, 32),
        i64(heads),
        biasAddress,
        i64(bias.strideB),
        i64(bias.strideH),
        i64(bias.strideQ)};
    func::CallOp::create(b, loc, getKernel(qt.getElementType()), args);
    Value result = bufferization::ToTensorOp::create(
        b, loc, outType, out, /*restrict=*/true, /*writable=*/true);
    a.output.getResult().replaceAllUsesWith(result);
    // The scores, softmax and the Q K product, now unused.
    dnn::eraseWithDeadProducers(a.output);
  }
};

} // namespace
