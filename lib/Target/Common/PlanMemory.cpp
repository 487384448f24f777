//===- PlanMemory.cpp - static buffers in one workspace arena -*- C++ -*-===//
//
// Implements dnn-plan-memory: the statically shaped allocations of a
// function's top-level block get offsets in one arena, from their live
// ranges by a greedy best fit (largest first); the function asks the
// runtime for the arena once (dnnc_rt_workspace) and views it.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

#define DEBUG_TYPE "dnn-plan-memory"

namespace dnnc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Name of the runtime function that returns the rank's workspace arena.

namespace {
/// One allocation placed in the arena.
struct Buffer {
  /// The memref.alloc or memref.alloca.
  Operation *alloc;
  /// Bytes it occupies.
  int64_t size;
  /// Alignment of its offset.
  int64_t align;
  /// Positions (in the top-level block) of the first and the last operation
  /// that uses it.
  int64_t first, last;
  /// Its offset in the arena, once placed.
  int64_t offset = -1;
  /// memref.dealloc ops of the allocation itself, erased with it.
  SmallVector<Operation *> deallocs;
};
} // namespace

/// Whether a value of `type` can carry (part of) a buffer: a memref, a tensor
/// (bufferization.to_tensor) or an integer address.
static bool canCarryBuffer(Type type) {
  return isa<BaseMemRefType, TensorType, IndexType, IntegerType>(type);
}

/// The live range of `alloc`'s buffer in `block` (numbered by `position`):
/// the first and last positions of top-level operations that use it or a
/// value derived from it. A buffer that escapes (an address stored, an
/// unknown user) lives to `end`. Returns a reason when the buffer cannot be
/// planned (returned, deallocated through a view).
static std::optional<StringRef>
computeLiveRange(Buffer &buffer, Block &block,
                 const DenseMap<Operation *, int64_t> &position, int64_t end) {
  Value root = buffer.alloc->getResult(0);
  buffer.first = buffer.last = position.lookup(buffer.alloc);
  bool used = false;
  SmallVector<Value> worklist = {root};
  DenseSet<Value> seen = {root};
  auto track = [&](Value v) {
    if (canCarryBuffer(v.getType()) && seen.insert(v).second)
      worklist.push_back(v);
  };
  auto trackAll = [&](ValueRange values) {
    for (Value v : values)
      track(v);
  };
  bool escapes = false;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    bool isBuffer = isa<BaseMemRefType, TensorType>(v.getType());
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      int64_t at = position.lookup(top);
      if (!used) {
        buffer.first = buffer.last = at;
        used = true;
      }
      buffer.first = std::min(buffer.first, at);
      buffer.last = std::max(buffer.last, at);

      if (user->hasTrait<OpTrait::IsTerminator>()) {
        Operation *parent = user->getParentOp();
        if (!parent || isa<FunctionOpInterface>(parent))
          return StringRef("it is returned by the function");
        // Yielded out of a region: the parent's matching result aliases it.
        if (parent->getNumResults() == user->getNumOperands())
          track(parent->getResult(use.getOperandNumber()));
        else
          trackAll(parent->getResults());
        continue;
      }
      if (isa<memref::DeallocOp>(user)) {
        if (v != root)
          return StringRef("it is deallocated through a view");
        buffer.deallocs.push_back(user);
        continue;
      }
      if (isa<CallOpInterface>(user)) {
        // The callee uses the buffer during the call (runtime kernels keep
        // nothing); a returned memref may alias it.
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            track(r);
        continue;
      }
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        track(user->getResult(0));
        continue;
      }
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        track(meta.getBaseBuffer());
        continue;
      }
      if (isa<ViewLikeOpInterface, bufferization::ToTensorOp,
              bufferization::ToBufferOp>(user)) {
        trackAll(user->getResults());
        continue;
      }
      if (isa<arith::ArithDialect>(user->getDialect()) || isPure(user)) {
        // Arithmetic on an address derives addresses; a side-effect free op
        // on a buffer (select) may return it, not its sizes (dim).
        for (Value r : user->getResults())
          if (!isBuffer || isa<BaseMemRefType, TensorType>(r.getType()))
            track(r);
        continue;
      }
      if (!isBuffer) {
        // An address stored, or passed to an op that may keep it.
        escapes = true;
        continue;
      }
      if (isa<MemoryEffectOpInterface>(user) ||
          user->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
        // Reads or writes it (linalg, memref.copy, load/store, loops);
        // buffer results (loop-carried) may alias it.
        for (Value r : user->getResults())
          if (isa<BaseMemRefType, TensorType>(r.getType()))
            track(r);
        continue;
      }
      escapes = true;
    }
  }
  if (escapes)
    buffer.last = end;
  return std::nullopt;
}

/// Places `buffers` in one arena: largest first, each at the best-fitting
/// gap between the already placed buffers whose live ranges overlap its
/// own. Returns the arena size.
static int64_t assignOffsets(MutableArrayRef<Buffer> buffers,
                             int64_t alignment) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  llvm::stable_sort(order, [](const Buffer *a, const Buffer *b) {
    if (a->size != b->size)
      return a->size > b->size;
    return a->first < b->first;
  });
  SmallVector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *b : order) {
    SmallVector<Buffer *> live;
    for (Buffer *p : placed)
      if (p->first <= b->last && b->first <= p->last && p->size > 0)
        live.push_back(p);
    llvm::sort(live, [](const Buffer *x, const Buffer *y) {
      return x->offset < y->offset;
    });
    int64_t best = -1, bestGap = 0, cursor = 0;
    for (Buffer *p : live) {
      int64_t candidate = llvm::alignTo(cursor, b->align);
      int64_t gap = p->offset - candidate;
      if (gap >= b->size && (best < 0 || gap < bestGap)) {
        best = candidate;
        bestGap = gap;
      }
      cursor = std::max(cursor, p->offset + p->size);
    }
    b->offset = best >= 0 ? best : llvm::alignTo(cursor, b->align);
    arena = std::max(arena, b->offset + b->size);
    placed.push_back(b);
  }
  return llvm::alignTo(arena, alignment);
}

/// The largest number of bytes live at once, each buffer's size rounded up
/// to `alignment`: a lower bound of any arena for these live ranges.
static int64_t peakLiveBytes(ArrayRef<Buffer> buffers, int64_t alignment) {
  SmallVector<std::pair<int64_t, int64_t>> events;
  for (const Buffer &b : buffers) {
    int64_t size = llvm::alignTo(b.size, alignment);
    events.push_back({b.first, size});
    events.push_back({b.last + 1, -size});
  }
  // At equal positions, ends (negative) before starts.
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [at, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Why the allocation `op` of `func` cannot get a place in the arena, or
/// nothing when it can; sets `size` (bytes) when it can.
static std::optional<StringRef> checkPlannable(Operation *op, Block &entry,
                                               const DataLayout &layout,
                                               int64_t &size) {
  if (op->getBlock() != &entry)
    return StringRef("it is nested in a region");
  auto type = cast<MemRefType>(op->getResult(0).getType());
  if (!type.hasStaticShape() || op->getNumOperands() != 0)
    return StringRef("its shape is dynamic");
  if (!type.getLayout().isIdentity())
    return StringRef("its layout is not the identity");
  if (Attribute space = type.getMemorySpace()) {
    auto id = dyn_cast<IntegerAttr>(space);
    if (!id || id.getInt() != 0)
      return StringRef("it is in another memory space");
  }
  size = type.getNumElements() *
         static_cast<int64_t>(
             layout.getTypeSize(type.getElementType()).getFixedValue());
  return std::nullopt;
}

/// Declares (once) `ptr @dnnc_rt_workspace(i64)` in `module`.
static LLVM::LLVMFuncOp getWorkspaceFn(ModuleOp module) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(dnnc::kWorkspaceFunction))
    return f;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(module.getBodyRegion());
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMPointerType::get(ctx),
                                          {IntegerType::get(ctx, 64)});
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), dnnc::kWorkspaceFunction,
                                  type);
}

/// Emits, at `b`'s insertion point, the call of the runtime for `bytes` of
/// arena and its `memref<bytes x i8>` view (a descriptor of the returned
/// pointer, cast to the memref type the LLVM lowering gives the same
/// descriptor).
static Value createArena(OpBuilder &b, Location loc, LLVM::LLVMFuncOp fn,
                         int64_t bytes, unsigned indexBits) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type(), idx = IntegerType::get(ctx, indexBits);
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto array = LLVM::LLVMArrayType::get(idx, 1);
  auto descType =
      LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, idx, array, array});
  auto constant = [&](Type t, int64_t v) -> Value {
    return LLVM::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
  };
  Value base =
      LLVM::CallOp::create(b, loc, fn, ValueRange{constant(i64, bytes)})
          .getResult();
  Value desc = LLVM::PoisonOp::create(b, loc, descType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, base, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, base, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(idx, 0),
                                     ArrayRef<int64_t>{2});
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(idx, bytes),
                                     ArrayRef<int64_t>{3, 0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(idx, 1),
                                     ArrayRef<int64_t>{4, 0});
  auto arenaType = MemRefType::get({bytes}, b.getI8Type());
  return UnrealizedConversionCastOp::create(b, loc, arenaType, desc)
      .getResult(0);
}

namespace {
struct PlanMemoryPass : public dnnc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      module.emitError("dnn-plan-memory: alignment must be a power of two");
      return signalPassFailure();
    }
    bool failed = false;
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!func.isExternal())
        failed |= mlir::failed(planFunction(module, func));
    if (failed)
      signalPassFailure();
  }

  /// Plans the allocations of `func`.
  LogicalResult planFunction(ModuleOp module, func::FuncOp func);
};
} // namespace

LogicalResult PlanMemoryPass::planFunction(ModuleOp module, func::FuncOp func) {
  Block &entry = func.getBody().front();
  // A callee with a body may ask for the same arena while this function's
  // buffers are live in it.
  std::optional<StringRef> whole;
  if (!func.getBody().hasOneBlock())
    whole = "the function has several blocks";
  func.walk([&](CallOpInterface call) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
    if (callee && !callee.isExternal())
      whole = "the function calls a function with a body";
  });

  DataLayout layout = DataLayout::closest(func);
  SmallVector<Buffer> buffers;
  SmallVector<std::pair<Operation *, StringRef>> unplanned;
  func.walk([&](Operation *op) {
    if (!isa<memref::AllocOp, memref::AllocaOp>(op))
      return;
    int64_t size = 0;
    std::optional<StringRef> why =
        whole ? whole : checkPlannable(op, entry, layout, size);
    if (why) {
      unplanned.push_back({op, *why});
      return;
    }
    int64_t align = alignment;
    if (auto attr = op->getAttrOfType<IntegerAttr>("alignment"))
      align = std::max<int64_t>(align, attr.getInt());
    buffers.push_back(Buffer{
        op, size, static_cast<int64_t>(llvm::PowerOf2Ceil(align)), 0, 0});
  });

  DenseMap<Operation *, int64_t> position;
  int64_t end = 0;
  for (Operation &op : entry)
    position[&op] = end++;
  SmallVector<Buffer> planned;
  for (Buffer &b : buffers) {
    if (std::optional<StringRef> why =
            computeLiveRange(b, entry, position, end)) {
      unplanned.push_back({b.alloc, *why});
      continue;
    }
    planned.push_back(b);
  }

  if (!allowUnplanned && !unplanned.empty()) {
    for (auto &[op, why] : unplanned)
      op->emitOpError("cannot be placed in the workspace arena: ") << why;
    return failure();
  }
  Builder attrs(func.getContext());
  if (!unplanned.empty())
    func->setAttr("dnnc.unplanned_allocs",
                  attrs.getI64IntegerAttr(unplanned.size()));
  if (planned.empty())
    return success();

  int64_t bytes = assignOffsets(planned, alignment);
  int64_t total = 0;
  for (Buffer &b : planned)
    total += b.size;
  LLVM_DEBUG(llvm::dbgs() << "dnn-plan-memory: @" << func.getSymName() << ": "
                          << planned.size() << " buffers, " << total
                          << " bytes planned into an arena of " << bytes
                          << "\n");
  func->setAttr("dnnc.workspace_bytes", attrs.getI64IntegerAttr(bytes));
  func->setAttr("dnnc.planned_bytes", attrs.getI64IntegerAttr(total));
  func->setAttr("dnnc.peak_live_bytes",
                attrs.getI64IntegerAttr(peakLiveBytes(planned, alignment)));

  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  unsigned indexBits = layout.getTypeSizeInBits(b.getIndexType());
  Value arena =
      createArena(b, func.getLoc(), getWorkspaceFn(module), bytes, indexBits);
  for (Buffer &buf : planned) {
    for (Operation *dealloc : buf.deallocs)
      dealloc->erase();
    b.setInsertionPoint(buf.alloc);
    Location loc = buf.alloc->getLoc();
    Value offset = arith::ConstantIndexOp::create(b, loc, buf.offset);
    auto type = cast<MemRefType>(buf.alloc->getResult(0).getType());
    Value view =
        memref::ViewOp::create(b, loc, type, arena, offset, ValueRange{});
    buf.alloc->getResult(0).replaceAllUsesWith(view);
    buf.alloc->erase();
  }
  return success();
}
