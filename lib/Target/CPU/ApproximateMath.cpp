//===- ApproximateMath.cpp - math functions for the CPU ----------*- C++ -*-===//
//
// Implements dnn-cpu-approximate-math: powers with constant exponents become
// products, and the f32 transcendental functions the models use become
// MLIR's polynomial approximations instead of scalar libm calls, each in one
// shared function per module with vector variants LLVM's loop vectorizer
// calls.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSwitch.h"

namespace dnnc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// The math ops (by name, `math.tanh`) whose f32 form is replaced by a
/// polynomial. Not the logarithms: their approximations flush denormal
/// inputs (log(1e-40) would be log(FLT_MIN)).
static bool isApproximated(StringRef name) {
  name.consume_front("math.");
  return llvm::StringSwitch<bool>(name)
      .Cases({"tanh", "exp", "expm1", "erf"}, true)
      .Default(false);
}

/// The vector widths of the variants of each shared function: SSE/NEON,
/// AVX2 and AVX-512 registers of f32 (the loop vectorizer picks the width
/// for the host and calls the variant of that width).
static constexpr int64_t kVectorWidths[] = {4, 8, 16};

/// The name of the shared function of `opName` (`math.tanh`) on `type`:
/// `__dnnc_tanh_f32`, `__dnnc_tanh_v16f32`.
static std::string functionName(OperationName opName, Type type) {
  std::string name = "__dnnc_";
  name += opName.stripDialect();
  if (auto vector = dyn_cast<VectorType>(type))
    name += "_v" + std::to_string(vector.getNumElements());
  name += "_f32";
  return name;
}

/// Creates `func.func @name(type) -> type` at the end of `module`, whose body
/// applies `opName` to its argument. Hidden, never inlined, free of side
/// effects (LLVM may vectorize or drop its calls).
static func::FuncOp createFunction(ModuleOp module, OperationName opName,
                                   Type type, StringRef name,
                                   ArrayRef<Attribute> passthrough) {
  MLIRContext *context = module.getContext();
  Location loc = UnknownLoc::get(context);
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType(type, type));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  OperationState state(loc, opName, entry->getArguments(), {type});
  Operation *op = builder.create(state);
  func::ReturnOp::create(builder, loc, op->getResults());
  // Carried onto the llvm.func by func-to-llvm: `passthrough` as LLVM
  // function attributes, `llvm.readnone` as memory(none), and `visibility_`
  // (LLVM::Visibility, stored as an integer) as hidden, so that calls from
  // the rank's shared object bind locally.
  function->setAttr("passthrough", ArrayAttr::get(context, passthrough));
  function->setAttr(LLVM::LLVMDialect::getReadnoneAttrName(),
                    UnitAttr::get(context));
  function->setAttr("no_unwind", UnitAttr::get(context));
  function->setAttr("will_return", UnitAttr::get(context));
  function->setAttr("visibility_",
                    builder.getI64IntegerAttr(
                        static_cast<int64_t>(LLVM::Visibility::Hidden)));
  return function;
}

/// Returns the shared scalar function of `opName` in `module`, creating it
/// and its vector variants (named in its `vector-function-abi-variant`
/// attribute, the mapping LLVM's loop vectorizer reads) on first use.
static func::FuncOp getOrCreateScalarFunction(ModuleOp module,
                                              SymbolTable &symbols,
                                              OperationName opName) {
  MLIRContext *context = module.getContext();
  Type f32 = Float32Type::get(context);
  std::string scalarName = functionName(opName, f32);
  if (auto existing = symbols.lookup<func::FuncOp>(scalarName))
    return existing;
  auto noinline = StringAttr::get(context, "noinline");
  std::string mappings;
  for (int64_t width : kVectorWidths) {
    auto vectorType = VectorType::get({width}, f32);
    std::string vectorName = functionName(opName, vectorType);
    func::FuncOp variant =
        createFunction(module, opName, vectorType, vectorName, {noinline});
    symbols.insert(variant);
    // _ZGV_LLVM_N<width>v_<scalar>(<vector>): LLVM's ISA, not masked,
    // <width> lanes, one vector parameter.
    if (!mappings.empty())
      mappings += ",";
    mappings += "_ZGV_LLVM_N" + std::to_string(width) + "v_" + scalarName +
                "(" + vectorName + ")";
  }
  Attribute variants = ArrayAttr::get(
      context, {StringAttr::get(context, "vector-function-abi-variant"),
                StringAttr::get(context, mappings)});
  func::FuncOp scalar = createFunction(module, opName, f32, scalarName,
                                       {noinline, variants});
  symbols.insert(scalar);
  return scalar;
}

namespace {
struct ApproximateMathPass
    : public dnnc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every scalar f32 use becomes a call of the op's shared function: the
    // ~20-op polynomial is then compiled once per module, not once per use
    // (a graph of thousands of tanh/sigmoid nodes otherwise gives LLVM
    // hundreds of thousands of instructions).
    SmallVector<Operation *> uses;
    module.walk([&](Operation *op) {
      if (op->getNumOperands() == 1 && op->getNumResults() == 1 &&
          isApproximated(op->getName().getStringRef()) &&
          op->getResult(0).getType().isF32())
        uses.push_back(op);
    });
    SymbolTable symbols(module);
    for (Operation *op : uses) {
      func::FuncOp function =
          getOrCreateScalarFunction(module, symbols, op->getName());
      OpBuilder builder(op);
      auto call = func::CallOp::create(builder, op->getLoc(), function,
                                       op->getOperands());
      op->replaceAllUsesWith(call);
      op->erase();
    }

    RewritePatternSet patterns(&getContext());
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
