//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// State shared by the graph-level importer (ImportONNX.cpp) and the per-op
// handlers (OpImporters.cpp). Private to lib/Target/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_TARGET_ONNX_IMPORTER_H
#define DNNC_LIB_TARGET_ONNX_IMPORTER_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>

namespace dnnc::onnx_import {

/// Failure that carries its message; the handlers return it up the chain.
struct ImportError {
  /// The reason, without the file or node prefix.
  std::string message;
};

/// The most elements a tensor of an imported model may have.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// Converts an ONNX TensorProto data type to an MLIR element type; null for
/// types dnnc does not support (strings, complex, 8-bit floats...).
mlir::Type convertDataType(mlir::MLIRContext *ctx, int32_t dataType);

/// Human-readable name of an ONNX data type (`FLOAT`, `INT64`...).
std::string dataTypeName(int32_t dataType);

/// The tensor type of a TensorProto (its dims and data type), without
/// reading its data; null with `error` set for unsupported data types,
/// segments, negative or too large dimensions.
mlir::RankedTensorType convertTensorType(mlir::MLIRContext *ctx,
                                         const onnx::TensorProto &tensor,
                                         std::string &error);

/// Converts a TensorProto to dense elements. External data is resolved
/// relative to `modelDir` and must stay inside it. Sets `error` on failure.
mlir::DenseElementsAttr convertTensor(mlir::MLIRContext *ctx,
                                      const onnx::TensorProto &tensor,
                                      llvm::StringRef modelDir,
                                      std::string &error);

/// How `dnnc --batch` re-batches a graph whose batch is fixed: its inputs'
/// dimension 0 of `from` became `from * factor`.
struct Rebatch {
  /// The graph's fixed batch.
  int64_t from = 0;
  /// The new batch over the old (1: not re-batched).
  int64_t factor = 1;
};

/// Importer of one node: holds the builder, the node and its opset, maps ONNX
/// tensor names to values, and offers the checked op-building helpers the
/// handlers use.
class NodeImporter {
public:
  /// Creates the importer for `node`; `values` maps every defined tensor name
  /// to its value.
  NodeImporter(mlir::OpBuilder &builder, const onnx::NodeProto &node,
               int64_t opset, llvm::StringMap<mlir::Value> &values,
               llvm::StringRef modelDir)
      : b(builder), node(node), opset(opset), values(values),
        modelDir(modelDir),
        loc(mlir::NameLoc::get(builder.getStringAttr(node.name()))) {}

  /// The builder, positioned at the end of the function body.
  mlir::OpBuilder &b;
  /// The ONNX node being imported.
  const onnx::NodeProto &node;
  /// The default-domain opset of the model.
  int64_t opset;
  /// Tensor name to value.
  llvm::StringMap<mlir::Value> &values;
  /// Directory of the model file (for external data of tensor attributes).
  llvm::StringRef modelDir;
  /// Location of the ops created for this node.
  mlir::Location loc;
  /// The first error a helper hit; handlers return failure after setting it.
  std::string error;
  /// Set by a plan-only import (ONNXImportOptions::planOnly): given a tensor
  /// name, replaces the `dnn.weight_ref` argument of a deferred initializer
  /// by a constant holding its data (updating `values`). Succeeds without
  /// change for any other name; fails with the reason when the data cannot
  /// be read. constantInts calls it before giving up on an input.
  std::function<mlir::LogicalResult(llvm::StringRef name, std::string &error)>
      readDeferred;
  /// How `dnnc --batch` re-batches a graph whose batch is fixed (factor 1:
  /// not re-batched).
  Rebatch rebatch;

  /// Records `message` as the node's error and returns failure.
  mlir::LogicalResult fail(const llvm::Twine &message);

  //===--------------------------------------------------------------------===//
  // Inputs, outputs, attributes
  //===--------------------------------------------------------------------===//

  /// Number of inputs, counting trailing empty names as absent.
  int numInputs() const;
  /// Whether input `i` is present (not absent, not an empty name).
  bool hasInput(int i) const;
  /// The value of input `i` (must be present).
  mlir::Value input(int i) const;
  /// Fails unless the node has between `min` and `max` inputs and at most
  /// `maxOutputs` outputs.
  mlir::LogicalResult checkArity(int min, int max, int maxOutputs);
  /// Whether output `i` is requested (present with a non-empty name).
  bool wantsOutput(int i) const;
  /// Binds output `i` (if requested) to `value`.
  void setOutput(int i, mlir::Value value);
  /// Binds output 0 to `result` when building it succeeded; returns whether
  /// it did (the usual last step of a single-result handler).
  mlir::LogicalResult setResult(mlir::FailureOr<mlir::Value> result);

  /// The attribute `name` or null.
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  /// Reads an INT attribute; fails if present with another type.
  mlir::FailureOr<int64_t> getInt(llvm::StringRef name, int64_t dflt);
  /// Reads a FLOAT attribute; fails if present with another type.
  mlir::FailureOr<float> getFloat(llvm::StringRef name, float dflt);
  /// Reads a STRING attribute; fails if present with another type.
  mlir::FailureOr<std::string> getString(llvm::StringRef name,
                                         llvm::StringRef dflt);
  /// Reads an INTS attribute (absent: nullopt); fails on another type.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  getInts(llvm::StringRef name);
  /// Reads a required INTS attribute.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getRequiredInts(llvm::StringRef name);

  /// The constant value of input `i` as integers, or failure (with a message
  /// naming `what`) if it is not a compile-time constant. A deferred
  /// initializer of a plan-only import is read here (see readDeferred).
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  constantInts(int i, llvm::StringRef what);
  /// The constant value of input `i` as doubles, or failure (with a message
  /// naming `what`) if it is not a compile-time floating-point constant.
  mlir::FailureOr<llvm::SmallVector<double>> constantFloats(int i,
                                                           llvm::StringRef what);
  /// The constant elements behind `value`, or null.
  static mlir::DenseElementsAttr getConstant(mlir::Value value);

  //===--------------------------------------------------------------------===//
  // Checked op building
  //===--------------------------------------------------------------------===//

  /// Builds `OpT` from the builder arguments `args`. Result types come from
  /// `types` when given, else from the op's type inference. Inference and
  /// verifier failures become the node's error instead of crashing; the new
  /// op is folded when possible. Returns the results.
  template <typename OpT, typename... Args>
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> buildOp(mlir::TypeRange types,
                                                          Args &&...args) {
    mlir::OperationState state(loc, OpT::getOperationName());
    llvm::SmallVector<mlir::Type> placeholder(numResults<OpT>(),
                                              b.getNoneType());
    OpT::build(b, state, types.empty() ? mlir::TypeRange(placeholder) : types,
               std::forward<Args>(args)...);
    if (types.empty()) {
      state.types.clear();
      if constexpr (OpT::template hasTrait<
                        mlir::InferTypeOpInterface::Trait>()) {
        std::string diag;
        mlir::ScopedDiagnosticHandler handler(b.getContext(),
                                              [&](mlir::Diagnostic &d) {
                                                if (diag.empty())
                                                  diag = d.str();
                                                return mlir::success();
                                              });
        if (mlir::failed(OpT::inferReturnTypes(
                b.getContext(), loc, state.operands,
                state.attributes.getDictionary(b.getContext()),
                state.getRawProperties(), state.regions, state.types))) {
          (void)fail(diag.empty() ? "invalid operands" : diag);
          return mlir::failure();
        }
      } else {
        (void)fail("internal error: no result type for " +
                   OpT::getOperationName());
        return mlir::failure();
      }
    }
    return finishOp(b.create(state));
  }

  /// Builds a single-result `OpT` (see buildOp).
  template <typename OpT, typename... Args>
  mlir::FailureOr<mlir::Value> build(mlir::TypeRange types, Args &&...args) {
    auto results = buildOp<OpT>(types, std::forward<Args>(args)...);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }

  /// A constant holding `attr`.
  mlir::Value constant(mlir::DenseElementsAttr attr);
  /// A splat constant of `type` holding the float `value`.
  mlir::Value splatFloat(mlir::RankedTensorType type, double value);
  /// A 1-D i64 constant.
  mlir::Value constantI64(llvm::ArrayRef<int64_t> values);

  /// `value` broadcast (numpy rules) to `shape`; fails with a message naming
  /// both shapes when not broadcastable.
  mlir::FailureOr<mlir::Value> broadcastTo(mlir::Value value,
                                           llvm::ArrayRef<int64_t> shape);
  /// `value` reshaped to `shape` (no-op if already so).
  mlir::FailureOr<mlir::Value> reshape(mlir::Value value,
                                       llvm::ArrayRef<int64_t> shape);
  /// Broadcasts `lhs` and `rhs` to their common shape; fails when they are
  /// not broadcastable or their element types differ. Before opset 7 this
  /// follows the legacy rule (legacyBroadcast).
  mlir::LogicalResult broadcastPair(mlir::Value &lhs, mlir::Value &rhs);
  /// The binary ops' broadcast before opset 7: equal shapes, or, with the
  /// attribute `broadcast = 1`, `rhs` matched to the dimensions of `lhs`
  /// from `axis` (default: its trailing ones) and broadcast to its shape.
  mlir::LogicalResult legacyBroadcast(mlir::Value &lhs, mlir::Value &rhs);

private:
  /// Number of results of `OpT` (all dnn ops have a fixed count).
  template <typename OpT> static unsigned numResults() {
    if constexpr (OpT::template hasTrait<mlir::OpTrait::OneResult>())
      return 1;
    else if constexpr (OpT::template hasTrait<
                           mlir::OpTrait::NResults<2>::Impl>())
      return 2;
    else
      return 3;
  }

  /// Verifies and folds a freshly created op; returns its (folded) results.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> finishOp(mlir::Operation *op);
};

/// A handler importing one ONNX op type.
using OpHandler = mlir::LogicalResult (*)(NodeImporter &);

/// Registry entry: the handler and the first opset it supports.
struct OpHandlerInfo {
  /// Imports the node.
  OpHandler handler;
  /// Oldest default-domain opset whose semantics the handler implements.
  int64_t sinceOpset;
};

/// Looks up the handler of `opType`; null if the op is not supported.
const OpHandlerInfo *lookupOpHandler(llvm::StringRef opType);

} // namespace dnnc::onnx_import

#endif // DNNC_LIB_TARGET_ONNX_IMPORTER_H
