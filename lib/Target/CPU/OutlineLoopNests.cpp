//===- OutlineLoopNests.cpp - one function per loop nest ----*- C++ -*-===//
//
// Implements dnn-cpu-outline-loop-nests: each loop nest at the top level of
// a public function moves into a private, never-inlined function of its own,
// so that LLVM, whose optimization and register allocation grow faster than
// linearly in a function's size, compiles a rank program in time linear in
// its number of nests.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace dnnc {
#define GEN_PASS_DEF_OUTLINELOOPNESTSPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Whether a function argument of `type` survives the bare-pointer calling
/// convention: any non-memref, or a memref of static shape, strides and
/// offset.
static bool isPassable(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return !isa<UnrankedMemRefType>(type);
  if (!memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return ShapedType::isStatic(offset) &&
         llvm::all_of(strides, ShapedType::isStatic);
}

/// Whether `op` is cloned into the outlined function rather than passed:
/// a constant, or a memref view (free to recompute, no side effects).
static bool isClonable(Operation *op) {
  if (op->getNumRegions() != 0 || op->getNumResults() != 1)
    return false;
  if (op->hasTrait<OpTrait::ConstantLike>())
    return true;
  return isa<ViewLikeOpInterface>(op) &&
         isa<BaseMemRefType>(op->getResult(0).getType());
}

namespace {
/// The values a loop nest reads from its function: those passed as
/// arguments and the ops cloned in (in their original order).
struct Captures {
  SmallVector<Value> arguments;
  SmallVector<Operation *> clones;
};
} // namespace

/// The captures of `nest` (a top-level op of its function, so every value it
/// reads from outside is an argument or a result of an op of the function's
/// block); failure when a value that cannot be passed is not the result of
/// a clonable op.
static FailureOr<Captures> collectCaptures(Operation *nest) {
  llvm::SetVector<Value> worklist;
  worklist.insert(nest->getOperands().begin(), nest->getOperands().end());
  getUsedValuesDefinedAbove(nest->getRegions(), worklist);
  llvm::SetVector<Value> arguments;
  llvm::SetVector<Operation *> clones;
  for (size_t i = 0; i < worklist.size(); ++i) {
    Value value = worklist[i];
    Operation *def = value.getDefiningOp();
    // Constants always, views only where their layout cannot be passed.
    bool passable = isPassable(value.getType());
    if (def && isClonable(def) &&
        (!passable || def->hasTrait<OpTrait::ConstantLike>())) {
      if (clones.insert(def))
        worklist.insert(def->getOperands().begin(), def->getOperands().end());
      continue;
    }
    if (!passable)
      return failure();
    arguments.insert(value);
  }
  Captures captures;
  captures.arguments = arguments.takeVector();
  captures.clones = clones.takeVector();
  // Every clone's operands are clones or arguments defined before it in
  // the function's block: cloning in block order keeps them dominating.
  llvm::sort(captures.clones, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return captures;
}

/// Moves `nest` (at the top level of a function) into a new private
/// function named `name`, inserted after `after` (which then becomes the new
/// function), and calls it in its place. Leaves
/// the IR unchanged and returns false when a captured value can be neither
/// passed nor cloned.
static bool outlineNest(Operation *nest, Operation *&after, StringRef name,
                        SymbolTable &symbols) {
  FailureOr<Captures> captures = collectCaptures(nest);
  if (failed(captures))
    return false;

  MLIRContext *ctx = nest->getContext();
  SmallVector<Type> argumentTypes;
  for (Value value : captures->arguments)
    argumentTypes.push_back(value.getType());
  auto type = FunctionType::get(ctx, argumentTypes, nest->getResultTypes());
  OpBuilder b(ctx);
  b.setInsertionPointAfter(after);
  auto outlined = func::FuncOp::create(b, nest->getLoc(), name, type);
  // Private, internal to the shared object, and never inlined back (LLVM
  // would inline a local function called once).
  outlined.setPrivate();
  outlined->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  outlined->setAttr("passthrough",
                    ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  symbols.insert(outlined);
  after = outlined;

  Block *body = outlined.addEntryBlock();
  IRMapping mapping;
  for (auto [value, argument] :
       llvm::zip_equal(captures->arguments, body->getArguments()))
    mapping.map(value, argument);
  b.setInsertionPointToStart(body);
  for (Operation *clone : captures->clones)
    b.clone(*clone, mapping);
  Operation *moved = b.clone(*nest, mapping);
  func::ReturnOp::create(b, nest->getLoc(), moved->getResults());

  b.setInsertionPoint(nest);
  auto call = func::CallOp::create(b, nest->getLoc(), outlined,
                                   captures->arguments);
  nest->replaceAllUsesWith(call.getResults());
  nest->erase();
  return true;
}

namespace {
struct OutlineLoopNestsPass
    : public dnnc::impl::OutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      SmallVector<Operation *> nests;
      for (Block &block : func.getBody())
        for (Operation &op : block)
          if (isa<scf::ForOp, scf::ParallelOp, scf::WhileOp>(op))
            nests.push_back(&op);
      int64_t next = 0;
      Operation *after = func;
      for (Operation *nest : nests) {
        std::string name;
        do {
          name = (func.getName() + "_loop" + llvm::Twine(next++)).str();
        } while (symbols.lookup(name));
        outlineNest(nest, after, name, symbols);
      }
    }
  }
};
} // namespace
