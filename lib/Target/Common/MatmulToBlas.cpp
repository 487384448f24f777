//===- MatmulToBlas.cpp - linalg matmuls to runtime GEMMs ---*- C++ -*-===//
//
// Implements dnn-matmul-to-blas: zero-initialised linalg.matmul and
// linalg.batch_matmul on contiguous f32/f64 memrefs (or bf16/f16 inputs with
// an f32 result) become calls to the runtime's BLAS-backed dnnc_rt_gemm_*
// kernels.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace dnnc {
#define GEN_PASS_DEF_MATMULTOBLASPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Whether `v` is a memref the runtime can read as a dense row-major array.
static bool isDense(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() &&
         memref::isStaticShapeAndContiguousRowMajor(type);
}

/// The zero-filling linalg.fill of `out` right before `op`, if any.
static linalg::FillOp getZeroFill(Operation *op, Value out) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getOutputs().front() != out)
    return nullptr;
  Value value = fill.getInputs().front();
  if (!matchPattern(value, m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

/// The address of the first element of `v` as an index.
static Value elementAddress(OpBuilder &b, Location loc, Value v) {
  auto type = cast<MemRefType>(v.getType());
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
  unsigned bytes = type.getElementTypeBitWidth() / 8;
  Value size = arith::ConstantIndexOp::create(b, loc, bytes);
  Value offset = arith::MulIOp::create(b, loc, meta.getOffset(), size);
  return arith::AddIOp::create(b, loc, base, offset);
}

/// Declares (once) the runtime kernel `name`.
static func::FuncOp getKernel(ModuleOp module, StringRef name) {
  MLIRContext *ctx = module.getContext();
  Type i64 = IntegerType::get(ctx, 64), index = IndexType::get(ctx);
  return dnnc::getOrDeclareRuntimeKernel(
      module, name,
      FunctionType::get(
          ctx, {i64, i64, i64, i64, index, i64, index, i64, index, i64}, {}));
}

/// The kernel suffix of a GEMM with A and B of element type `in` and C of
/// `out`: `_f32`, `_f64`, `_tf32` (f32 in a module of `dnn.precision`
/// tf32), or `_bf16`/`_f16` (bf16/f16 inputs, f32 accumulator and C);
/// none when no kernel fits.
static std::optional<StringRef> getKernelSuffix(ModuleOp module, Type in,
                                                Type out) {
  if (out.isF64() && in.isF64())
    return StringRef("_f64");
  if (!out.isF32())
    return std::nullopt;
  if (in.isBF16())
    return StringRef("_bf16");
  if (in.isF16())
    return StringRef("_f16");
  if (!in.isF32())
    return std::nullopt;
  bool tf32 =
      dnnc::dnn::getModulePrecision(module) == dnnc::dnn::Precision::TF32;
  return StringRef(tf32 ? "_tf32" : "_f32");
}

/// Rewrites `op` (matmul or batch_matmul) into a call to the runtime kernel
/// `<prefix><suffix>`; false when the operands do not qualify.
static bool rewrite(ModuleOp module, linalg::LinalgOp op, StringRef prefix) {
  if (!op.hasPureBufferSemantics())
    return false;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation()))
    if (mm.hasUserDefinedMaps())
      return false;
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation()))
    if (bmm.hasUserDefinedMaps())
      return false;
  Value a = op.getDpsInputs()[0], bv = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  if (!isDense(a) || !isDense(bv) || !isDense(c))
    return false;
  Type elt = cast<MemRefType>(c.getType()).getElementType();
  Type inElt = cast<MemRefType>(a.getType()).getElementType();
  std::optional<StringRef> suffix = getKernelSuffix(module, inElt, elt);
  if (!suffix || cast<MemRefType>(bv.getType()).getElementType() != inElt)
    return false;
  linalg::FillOp fill = getZeroFill(op, c);
  if (!fill)
    return false;

  ArrayRef<int64_t> as = cast<MemRefType>(a.getType()).getShape();
  ArrayRef<int64_t> cs = cast<MemRefType>(c.getType()).getShape();
  bool batched = as.size() == 3;
  int64_t batch = batched ? as[0] : 1;
  int64_t m = cs[cs.size() - 2], n = cs.back(), k = as.back();

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
  };
  SmallVector<Value> args = {i64(batch),
                             i64(m),
                             i64(n),
                             i64(k),
                             elementAddress(b, loc, a),
                             i64(batched ? m * k : 0),
                             elementAddress(b, loc, bv),
                             i64(batched ? k * n : 0),
                             elementAddress(b, loc, c),
                             i64(batched ? m * n : 0)};
  func::FuncOp kernel = getKernel(module, (prefix + *suffix).str());
  func::CallOp::create(b, loc, kernel, args);
  fill.erase();
  op.erase();
  return true;
}

namespace {
struct MatmulToBlasPass
    : public dnnc::impl::MatmulToBlasPassBase<MatmulToBlasPass> {
  using MatmulToBlasPassBase::MatmulToBlasPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates)
      (void)rewrite(module, op, kernelPrefix);
  }
};
} // namespace
