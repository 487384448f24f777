//===- LocalizeTensorAddresses.cpp - to_buffer right at its reads -*- C++ -*-//
//
// Implements dnn-localize-tensor-addresses: every op that reads a tensor
// through an address derived from `bufferization.to_buffer` gets its own
// clone of that derivation right before it, so that one-shot bufferization,
// which models the read at the `to_buffer`, sees it where it happens.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace dnnc {
#define GEN_PASS_DEF_LOCALIZETENSORADDRESSESPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Returns true if `op` only derives values from its operands: no memory
/// effects and no regions (`to_buffer`, views, pointer extraction, index
/// arithmetic).
static bool isDerivation(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

namespace {
struct LocalizeTensorAddressesPass
    : public dnnc::impl::LocalizeTensorAddressesPassBase<
          LocalizeTensorAddressesPass> {
  void runOnOperation() override {
    // The derivations of tensor addresses, in program order, and the ops
    // that read through them.
    llvm::SetVector<Operation *> derived;
    llvm::SetVector<Operation *> readers;
    getOperation()->walk([&](Operation *op) {
      bool fromAddress =
          isa<bufferization::ToBufferOp>(op) ||
          llvm::any_of(op->getOperands(), [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && derived.contains(def);
          });
      if (!fromAddress)
        return;
      if (isa<bufferization::ToBufferOp>(op) || isDerivation(op))
        derived.insert(op);
      else
        readers.insert(op);
    });

    for (Operation *reader : readers) {
      OpBuilder b(reader);
      IRMapping mapping;
      for (OpOperand &operand : reader->getOpOperands())
        operand.set(rematerialize(b, operand.get(), derived, mapping));
    }
    // The originals, last first so that users go before their operands.
    for (Operation *op : llvm::reverse(derived))
      if (op->use_empty())
        op->erase();
  }

private:
  /// Returns `v`, or, when `derived` defines it, a clone of its derivation
  /// at `b`'s insertion point (clones recorded in `mapping`).
  Value rematerialize(OpBuilder &b, Value v,
                      const llvm::SetVector<Operation *> &derived,
                      IRMapping &mapping) {
    Operation *def = v.getDefiningOp();
    if (!def || !derived.contains(def))
      return v;
    if (Value cloned = mapping.lookupOrNull(v))
      return cloned;
    for (Value operand : def->getOperands())
      mapping.map(operand, rematerialize(b, operand, derived, mapping));
    Operation *clone = b.clone(*def, mapping);
    return clone->getResult(cast<OpResult>(v).getResultNumber());
  }
};
} // namespace
