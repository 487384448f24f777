//===- MemoryCheck.cpp - Does a rank program fit its device? ----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/MemoryCheck.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <unistd.h>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

/// Bytes of a statically shaped tensor value (booleans take a byte); 0 for
/// anything else.
static uint64_t bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  uint64_t width = type.getElementType().isIntOrFloat()
                       ? (type.getElementType().getIntOrFloatBitWidth() + 7) / 8
                       : 8;
  uint64_t count = 1;
  for (int64_t d : type.getShape()) {
    if (d != 0 && count > UINT64_MAX / static_cast<uint64_t>(d) / width)
      return UINT64_MAX / 4;
    count *= static_cast<uint64_t>(d);
  }
  return count * width;
}

RankMemoryBound dnnc::planner::boundRankMemory(ModuleOp module) {
  RankMemoryBound bound;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return bound;
  for (BlockArgument arg : main.getArguments())
    bound.argumentBytes += bytesOf(arg);
  main.walk([&](Operation *op) {
    if (op == main.getOperation() || op->getNumResults() == 0)
      return;
    uint64_t need = 0;
    for (Value result : op->getResults())
      need += bytesOf(result);
    for (Value operand : op->getOperands())
      if (!isa<BlockArgument>(operand) ||
          cast<BlockArgument>(operand).getOwner() != &main.front())
        need += bytesOf(operand);
    if (need > bound.largestOpBytes) {
      bound.largestOpBytes = need;
      bound.largestOp = op;
    }
  });
  return bound;
}

std::optional<uint64_t> dnnc::planner::getHostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return std::nullopt;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

std::string dnnc::planner::formatBytes(uint64_t bytes) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB",
                                      "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} bytes", bytes).str();
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}
