//===- MatmulToBlas.cpp - linalg matmuls to runtime GEMMs ---*- C++ -*-===//
//
// Implements dnn-matmul-to-blas: zero-initialised linalg.matmul and
// linalg.batch_matmul on contiguous f32/f64 memrefs (or bf16/f16 inputs with
// an f32 result) become calls to the runtime's BLAS-backed dnnc_rt_gemm_*
// kernels; an operand transposed right before is read untransposed with the
// kernel's transpose bit.
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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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
          ctx, {i64, i64, i64, i64, i64, index, i64, index, i64, index, i64},
          {}));
}

/// The bits of the kernels' `transpose` argument (DNNC_RT_TRANSPOSE_A / _B
/// of the runtime's Kernels.h).
enum TransposeBits : int64_t { kTransposeA = 1, kTransposeB = 2 };

/// If `op` copies its one input into its one output with the last two
/// dimensions swapped (a linalg.transpose, or a linalg.generic whose body
/// only yields its input), returns the input.
static Value getTransposedInput(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumReductionLoops() != 0)
    return nullptr;
  OpOperand *input = linalgOp.getDpsInputOperand(0);
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  unsigned rank = linalgOp.getNumLoops();
  if (rank < 2 || !linalgOp.getMatchingIndexingMap(init).isIdentity())
    return nullptr;
  SmallVector<unsigned> swapped = llvm::to_vector(llvm::seq<unsigned>(rank));
  std::swap(swapped[rank - 2], swapped[rank - 1]);
  if (linalgOp.getMatchingIndexingMap(input) !=
      AffineMap::getPermutationMap(swapped, op->getContext()))
    return nullptr;
  if (!isa<linalg::TransposeOp>(op)) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      return nullptr;
    Block &body = generic.getRegion().front();
    auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
    if (body.getOperations().size() != 1 || !yield ||
        yield.getNumOperands() != 1 ||
        yield.getOperand(0) != body.getArgument(0))
      return nullptr;
  }
  return input->get();
}

/// Where a buffer lies: the buffer it is a view of, and its byte range in
/// it when known (a `memref.view` at a constant offset of a statically
/// shaped type, such as the workspace arena's temporaries).
struct BufferExtent {
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes;
};

/// Returns the extent of the memref `value`.
static BufferExtent getExtent(Value value) {
  auto type = cast<MemRefType>(value.getType());
  std::optional<std::pair<int64_t, int64_t>> bytes;
  if (type.hasStaticShape() && type.getLayout().isIdentity())
    bytes = std::make_pair(int64_t(0),
                           type.getNumElements() *
                               int64_t(type.getElementTypeBitWidth() / 8));
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      if (shift && bytes)
        bytes = std::make_pair(bytes->first + *shift, bytes->second + *shift);
      else
        bytes.reset();
      value = view.getSource();
      continue;
    }
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      break;
    bytes.reset();
    value = viewLike.getViewSource();
  }
  return {value, bytes};
}

/// Returns true unless the memrefs `a` and `b` provably do not overlap:
/// views of distinct function arguments, globals or allocations, or
/// disjoint byte ranges of one buffer (the arena's temporaries).
static bool mayAlias(Value a, Value b) {
  BufferExtent x = getExtent(a), y = getExtent(b);
  if (x.root != y.root) {
    auto distinct = [](Value root) {
      return isa<BlockArgument>(root) ||
             root.getDefiningOp<memref::AllocOp>() ||
             root.getDefiningOp<memref::GetGlobalOp>() ||
             dnnc::isWorkspaceArena(root);
    };
    return !(distinct(x.root) && distinct(y.root));
  }
  if (!x.bytes || !y.bytes)
    return true;
  return x.bytes->first < y.bytes->second && y.bytes->first < x.bytes->second;
}

/// Looks through the ops right before `matmul` for the transpose that wrote
/// `operand`, passing ops that write no memory and linalg ops (the zero
/// fill of the output among them) whose outputs cannot overlap the
/// transpose's input. Returns the transpose and its input when that input
/// is dense and cannot overlap the matmul's output `out` either: the GEMM
/// can read the input, unchanged since, with the operand's transpose bit.
static std::pair<Operation *, Value>
findFoldableTranspose(Operation *matmul, Value operand, Value out) {
  SmallVector<Value> written = {out};
  for (Operation *op = matmul->getPrevNode(); op; op = op->getPrevNode()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (effects && !effects.hasEffect<MemoryEffects::Write>() &&
        !effects.hasEffect<MemoryEffects::Free>() && op->getNumRegions() == 0)
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return {nullptr, nullptr};
    Value input = getTransposedInput(op);
    if (!input || linalgOp.getDpsInitOperand(0)->get() != operand) {
      llvm::append_range(written, linalgOp.getDpsInits());
      continue;
    }
    if (!isDense(input) ||
        cast<MemRefType>(input.getType()).getElementType() !=
            cast<MemRefType>(operand.getType()).getElementType() ||
        llvm::any_of(written,
                     [&](Value buffer) { return mayAlias(input, buffer); }))
      return {nullptr, nullptr};
    return {op, input};
  }
  return {nullptr, nullptr};
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

/// Returns true if nothing reads what `writer` wrote into `buffer` (a
/// temporary): up to the end of the block, or to an op that overwrites all
/// of it without reading it, no op uses it otherwise.
static bool isDeadAfter(Operation *writer, Value buffer) {
  if (isa<BlockArgument>(getExtent(buffer).root))
    return false;
  for (Operation *op = writer->getNextNode(); op; op = op->getNextNode()) {
    if (llvm::none_of(op->getOperands(),
                      [&](Value operand) { return operand == buffer; }))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return false;
    for (OpOperand &operand : op->getOpOperands()) {
      if (operand.get() != buffer)
        continue;
      if (!linalgOp.isDpsInit(&operand) ||
          linalgOp.payloadUsesValueFromOperand(&operand) ||
          !linalgOp.getMatchingIndexingMap(&operand).isPermutation())
        return false;
    }
    return true;
  }
  return true;
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

  // An operand just transposed into a buffer of its own is read where it
  // was transposed from, with the kernel's transpose bit; the transpose
  // goes when nothing else reads its result.
  int64_t transpose = 0;
  SmallVector<std::pair<Operation *, Value>, 2> folded;
  Value operands[2] = {a, bv};
  int64_t bits[2] = {kTransposeA, kTransposeB};
  for (int i = 0; i < 2; ++i) {
    auto [transposeOp, input] = findFoldableTranspose(op, operands[i], c);
    if (!transposeOp)
      continue;
    if (llvm::none_of(folded, [&, transposeOp = transposeOp](auto &entry) {
          return entry.first == transposeOp;
        }))
      folded.push_back({transposeOp, operands[i]});
    operands[i] = input;
    transpose |= bits[i];
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64).getResult();
  };
  SmallVector<Value> args = {i64(batch),
                             i64(m),
                             i64(n),
                             i64(k),
                             i64(transpose),
                             elementAddress(b, loc, operands[0]),
                             i64(batched ? m * k : 0),
                             elementAddress(b, loc, operands[1]),
                             i64(batched ? k * n : 0),
                             elementAddress(b, loc, c),
                             i64(batched ? m * n : 0)};
  func::FuncOp kernel = getKernel(module, (prefix + *suffix).str());
  func::CallOp::create(b, loc, kernel, args);
  fill.erase();
  op.erase();
  // A transpose whose result nothing reads any more is gone.
  for (auto [transposeOp, buffer] : folded)
    if (isDeadAfter(transposeOp, buffer))
      transposeOp->erase();
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
