//===- FuseGemmEpilogue.cpp - bias/activation into GEMMs ---*- C++ -*-===//
//
// Implements dnn-cuda-fuse-gemm-epilogue: a matmul followed by a bias add
// (and a ReLU or tanh GELU) becomes one call of the runtime's cuBLASLt GEMM
// with a bias / activation epilogue.
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
#define GEN_PASS_DEF_FUSEGEMMEPILOGUEPASS
#include "dnnc/Target/CUDA/Passes.h.inc"
} // namespace dnnc

using namespace mlir;
using namespace dnnc;

namespace {

/// The activation codes of the runtime's GEMM epilogues (DNNC_RT_ACTIVATION_*
/// in runtime/include/dnnc/Runtime/Kernels.h).
enum Activation : int32_t { kNone = 0, kRelu = 1, kGeluTanh = 2 };

/// A matched GEMM with an epilogue: result = act(matmul [+ bias]).
struct Epilogue {
  dnn::MatMulOp matmul;
  /// The bias add (null for none) and the `N` bias values, as a tensor
  /// whose elements are contiguous.
  dnn::AddOp add;
  Value bias;
  /// The activation op after the add (null for none) and its code.
  Operation *activationOp = nullptr;
  Activation activation = kNone;
  /// A reshape between the add and the activation (null for none).
  dnn::ReshapeOp reshape;
};

/// A `[n]` constant holding the rows of `bias`, a constant or an outlined
/// weight (possibly cast to another float type), created before `before`,
/// when all its rows of `n` values are equal (a small bias broadcast that the
/// folder materialised).
Value getRowConstant(Value bias, int64_t n, Operation *before) {
  auto type = cast<RankedTensorType>(bias.getType());
  Operation *castOp = nullptr;
  DenseFPElementsAttr dense = getKnownFloatValue(bias, &castOp);
  if (!dense || dense.isSplat() || type.getRank() < 2)
    return nullptr;
  SmallVector<APFloat> values(dense.getValues<APFloat>());
  for (size_t i = n; i < values.size(); ++i)
    if (!values[i].bitwiseIsEqual(values[i % n]))
      return nullptr;
  OpBuilder b(before);
  auto rowType = RankedTensorType::get({n}, dense.getElementType());
  values.erase(values.begin() + n, values.end());
  Value row = dnn::ConstantOp::create(b, bias.getLoc(),
                                      DenseElementsAttr::get(rowType, values));
  if (castOp)
    row = dnn::CastOp::create(b, castOp->getLoc(),
                              RankedTensorType::get({n}, type.getElementType()),
                              row);
  return row;
}

/// The tensor holding the `n` bias values `bias` (of the result's shape) is
/// broadcast from along the last dimension, if it is such a broadcast; a
/// splat constant or one with equal rows (possibly cast) gives a new `[n]`
/// constant before `before`.
Value getBiasSource(Value bias, int64_t n, Operation *before) {
  auto full = cast<RankedTensorType>(bias.getType());
  if (std::optional<double> splat = dnn::getSplatFloatValue(bias);
      splat && full.getRank() > 1) {
    OpBuilder b(before);
    auto type = RankedTensorType::get({n}, full.getElementType());
    return dnn::ConstantOp::create(
        b, bias.getLoc(),
        DenseElementsAttr::get(type,
                               b.getFloatAttr(full.getElementType(), *splat)));
  }
  // A tensor whose dims are all 1 but the last.
  auto isRow = [&](RankedTensorType type) {
    return type.hasStaticShape() && type.getNumElements() == n &&
           (type.getRank() == 0 || type.getShape().back() == n);
  };
  if (isRow(full))
    return bias;
  if (Value row = getRowConstant(bias, n, before))
    return row;
  auto broadcast = bias.getDefiningOp<dnn::BroadcastInDimOp>();
  if (!broadcast)
    return nullptr;
  auto in = cast<RankedTensorType>(broadcast.getInput().getType());
  ArrayRef<int64_t> dims = broadcast.getDims();
  if (in.getRank() == 0 || dims.back() != full.getRank() - 1 || !isRow(in))
    return nullptr;
  return broadcast.getInput();
}

/// Whether `type` is an element type the GEMM kernels take.
bool isGemmElementType(Type type) {
  return type.isF32() || type.isF64() || type.isBF16() || type.isF16();
}

/// Matches the GEMM epilogue after `matmul`: an optional bias add (the
/// matmul's only use), then an optional ReLU or tanh GELU (the only use of
/// what comes before, possibly through one reshape). A 16-bit matmul with
/// neither still matches: the call writes its 16-bit result directly.
std::optional<Epilogue> match(dnn::MatMulOp matmul) {
  auto type = cast<RankedTensorType>(matmul.getType());
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  Type elt = type.getElementType();
  if (!type.hasStaticShape() || !lhs.hasStaticShape() ||
      !rhs.hasStaticShape() || !isGemmElementType(elt) ||
      lhs.getElementType() != elt || rhs.getElementType() != elt)
    return std::nullopt;
  Epilogue e{matmul};
  Value last = matmul.getResult();
  if (last.hasOneUse())
    if (auto add = dyn_cast<dnn::AddOp>(*last.getUsers().begin())) {
      Value bias = add.getLhs() == last ? add.getRhs() : add.getLhs();
      if (bias != last && bias.getType() == add.getType())
        if (Value source =
                getBiasSource(bias, type.getShape().back(), matmul)) {
          e.add = add;
          e.bias = source;
          last = add.getResult();
        }
    }
  if (last.hasOneUse()) {
    Operation *user = *last.getUsers().begin();
    // An activation after a reshape: the same on the GEMM's result shape.
    auto reshape = dyn_cast<dnn::ReshapeOp>(user);
    if (reshape && reshape->hasOneUse())
      user = *reshape->getUsers().begin();
    auto gelu = dyn_cast<dnn::GeluOp>(user);
    if (isa<dnn::ReluOp>(user))
      e.activation = kRelu;
    else if (gelu && gelu.getApproximation() == dnn::GeluApproximation::Tanh)
      e.activation = kGeluTanh;
    if (e.activation != kNone) {
      e.activationOp = user;
      e.reshape = reshape;
    }
  }
  if (!e.add && e.activation == kNone && !elt.isBF16() && !elt.isF16())
    return std::nullopt; // A plain GEMM: dnn-matmul-to-blas's.
  return e;
}

struct FuseGemmEpiloguePass
    : public dnnc::impl::FuseGemmEpiloguePassBase<FuseGemmEpiloguePass> {
  using FuseGemmEpiloguePassBase::FuseGemmEpiloguePassBase;

  void runOnOperation() override {
    SmallVector<dnn::MatMulOp> matmuls;
    getOperation().walk([&](dnn::MatMulOp op) { matmuls.push_back(op); });
    for (dnn::MatMulOp matmul : matmuls)
      if (std::optional<Epilogue> e = match(matmul))
        rewrite(*e);
  }

  /// Declares (once) the kernel for element type `type`: `_f32` (`_tf32`
  /// in a module of `dnn.precision` tf32), `_f64`, `_bf16` or `_f16`.
  func::FuncOp getKernel(Type type) {
    ModuleOp module = getOperation();
    dnn::Precision precision = dnn::getModulePrecision(module);
    StringRef suffix = type.isF64()                                  ? "_f64"
                       : type.isBF16()                               ? "_bf16"
                       : type.isF16()                                ? "_f16"
                       : precision == dnn::Precision::TF32 ? "_tf32"
                                                                     : "_f32";
    std::string name = kernelPrefix + suffix.str();
    Builder b(module.getContext());
    Type i64 = b.getI64Type(), i32 = b.getI32Type(), index = b.getIndexType();
    return getOrDeclareRuntimeKernel(
        module, name,
        b.getFunctionType({i64, i64, i64, i64, index, i64, index, i64, index,
                           i64, index, i32},
                          {}));
  }

  void rewrite(Epilogue e) {
    Operation *output = e.activationOp ? e.activationOp
                        : e.add        ? e.add.getOperation()
                                       : e.matmul.getOperation();
    OpBuilder b(output);
    Location loc = output->getLoc();
    auto type = cast<RankedTensorType>(e.matmul.getType());
    ArrayRef<int64_t> lhs =
        cast<RankedTensorType>(e.matmul.getLhs().getType()).getShape();
    ArrayRef<int64_t> rhs =
        cast<RankedTensorType>(e.matmul.getRhs().getType()).getShape();
    int64_t k = lhs.back(), n = rhs.back();
    int64_t m = lhs[lhs.size() - 2], batch = 1;
    for (int64_t d : lhs.drop_back(2))
      batch *= d;
    // A weight shared by the batch: one GEMM over all rows.
    if (rhs.size() == 2) {
      m *= batch;
      batch = 1;
    }
    bool batched = batch > 1;

    auto address = [&](Value tensor) {
      return getTensorAddress(b, loc, tensor);
    };
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    Value out = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        b.getI64IntegerAttr(64));
    SmallVector<Value> args = {
        i64(batch),
        i64(m),
        i64(n),
        i64(k),
        address(e.matmul.getLhs()),
        i64(batched ? m * k : 0),
        address(e.matmul.getRhs()),
        i64(batched ? k * n : 0),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, out),
        i64(batched ? m * n : 0),
        e.bias ? address(e.bias)
               : Value(arith::ConstantIndexOp::create(b, loc, 0)),
        arith::ConstantIntOp::create(b, loc, e.activation, 32)};
    func::CallOp::create(b, loc, getKernel(type.getElementType()), args);
    Value result = bufferization::ToTensorOp::create(
        b, loc, type, out, /*restrict=*/true, /*writable=*/true);
    if (e.reshape)
      result = dnn::ReshapeOp::create(b, loc, e.reshape.getType(), result);
    output->getResult(0).replaceAllUsesWith(result);
    // The activation, the reshape, the add and the matmul (each used only by
    // the next) and what fed only them.
    dnn::eraseWithDeadProducers(output);
  }
};

} // namespace
