//===- DeadOps.cpp - erasing what a fusion leaves behind ---*- C++ -*-===//

#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

void dnnc::dnn::eraseWithDeadProducers(Operation *op) {
  SmallVector<Operation *> worklist = {op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    if (!dead->use_empty() || (dead != op && !isPure(dead)))
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : dead->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (!llvm::is_contained(producers, def))
          producers.push_back(def);
    dead->erase();
    for (Operation *def : producers)
      if (!llvm::is_contained(worklist, def))
        worklist.push_back(def);
  }
}
