//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// State shared by the graph-level importer (ImportONNX.cpp) and the per-op
// handlers (OpHandlers.h, one file per op family): the node importer, the
// helpers the handlers share (OpImportUtils.cpp), the Composer of composite
// ops and the registry interface (OpRegistry.cpp). Private to
// lib/Target/ONNX.
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
  /// Set by an import for a training step (ONNXImportOptions::updateBuffers):
  /// records `value` as the new value, after the step, of the initializer
  /// named `name` when it is a trainable argument (it becomes a buffer);
  /// succeeds without change for any other name; fails with the reason when
  /// another node updates it too. See updateInput.
  std::function<mlir::LogicalResult(llvm::StringRef name, mlir::Value value,
                                    std::string &error)>
      updateInitializer;
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
  /// Training steps: makes `value` the new value of input `i` after the
  /// step when that input is a trainable initializer (see
  /// updateInitializer); does nothing otherwise.
  mlir::LogicalResult updateInput(int i, mlir::Value value);
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

//===----------------------------------------------------------------------===//
// Helpers shared by the op handlers (OpImportUtils.cpp)
//===----------------------------------------------------------------------===//

/// Shape of a value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
/// Element type of a value.
mlir::Type eltOf(mlir::Value v);
/// Rank of a value.
int64_t rankOf(mlir::Value v);
/// Product of `dims`.
int64_t product(llvm::ArrayRef<int64_t> dims);

/// Fails unless a tensor of `shape` has at most kMaxElements elements.
mlir::LogicalResult checkSize(NodeImporter &n, llvm::ArrayRef<int64_t> shape);

/// Normalises a possibly negative `axis` for `rank`; fails with a message.
mlir::FailureOr<int64_t> normAxis(NodeImporter &n, int64_t axis, int64_t rank,
                                  llvm::StringRef what = "axis");
/// Normalises, sorts and checks a list of axes.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normAxes(NodeImporter &n, llvm::ArrayRef<int64_t> axes, int64_t rank);
/// Reads axes from the attribute (before `inputSince`) or input 1.
mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
axesAttrOrInput(NodeImporter &n, int64_t inputSince);

/// Fails unless every input up to numInputs() is present.
mlir::LogicalResult requireAllInputs(NodeImporter &n);
/// Fails unless input 0 of `n` is a floating-point tensor.
mlir::LogicalResult requireFloatInput(NodeImporter &n);
/// The scalar integer input `i` (`what` in messages), of any numeric type.
mlir::FailureOr<int64_t> scalarInt(NodeImporter &n, int i,
                                   llvm::StringRef what);

/// Emits `dnn.slice` taking [start, start + size * step) along `axis`.
mlir::FailureOr<mlir::Value> sliceAxis(NodeImporter &n, mlir::Value x,
                                       int64_t axis, int64_t start,
                                       int64_t size, int64_t step);
/// Broadcasts a per-channel vector [C] to the shape of `x` ([N, C, ...]).
mlir::FailureOr<mlir::Value> perChannel(NodeImporter &n, mlir::Value v,
                                        mlir::Value x);

//===----------------------------------------------------------------------===//
// Composite ops: decomposed into dnn ops, so every pass and backend (sharding
// rules, fusion, the cpu and cuda code) handles them with no op of their own
//===----------------------------------------------------------------------===//

/// Builds the dnn ops of a decomposed node as straight-line code. The first
/// failed build (its message is the node's error) makes every later call a
/// no-op returning null; `finish` reports it or binds the result.
class Composer {
public:
  /// Composes ops for the node of `n`.
  explicit Composer(NodeImporter &n) : n(n) {}

  /// `OpT` built with result `types` (empty: inferred) from `args`.
  template <typename OpT, typename... Args>
  mlir::Value make(mlir::TypeRange types, Args &&...args) {
    if (failedBuild)
      return nullptr;
    auto r = n.build<OpT>(types, std::forward<Args>(args)...);
    if (mlir::failed(r)) {
      failedBuild = true;
      return nullptr;
    }
    return *r;
  }
  /// Elementwise unary `OpT` of `x`.
  template <typename OpT> mlir::Value unary(mlir::Value x) {
    return failedBuild ? nullptr : make<OpT>(x.getType(), x);
  }
  /// Elementwise binary `OpT` of operands of one type.
  template <typename OpT> mlir::Value binary(mlir::Value lhs, mlir::Value rhs) {
    return failedBuild ? nullptr : make<OpT>(lhs.getType(), lhs, rhs);
  }
  /// Elementwise comparison `OpT` (an `i1` tensor).
  template <typename OpT>
  mlir::Value compare(mlir::Value lhs, mlir::Value rhs) {
    if (failedBuild)
      return nullptr;
    return make<OpT>(
        mlir::RankedTensorType::get(shapeOf(lhs), n.b.getI1Type()), lhs, rhs);
  }
  /// Whether each element of `x` is NaN (an `i1` tensor).
  mlir::Value isNaN(mlir::Value x) {
    if (failedBuild)
      return nullptr;
    return make<dnn::IsNaNOp>(
        mlir::RankedTensorType::get(shapeOf(x), n.b.getI1Type()), x);
  }
  /// `condition ? onTrue : onFalse` elementwise.
  mlir::Value select(mlir::Value condition, mlir::Value onTrue,
                     mlir::Value onFalse) {
    if (failedBuild)
      return nullptr;
    return make<dnn::SelectOp>(onTrue.getType(), condition, onTrue, onFalse);
  }
  /// A constant of `type` with every element `value`.
  mlir::Value fill(mlir::RankedTensorType type, double value) {
    if (failedBuild)
      return nullptr;
    if (mlir::isa<mlir::FloatType>(type.getElementType()))
      return n.splatFloat(type, value);
    return n.constant(mlir::DenseElementsAttr::get(
        type, mlir::IntegerAttr::get(type.getElementType(),
                                     static_cast<int64_t>(value))));
  }
  /// A constant of the type of `like` with every element `value`.
  mlir::Value splat(mlir::Value like, double value) {
    return like ? fill(mlir::cast<mlir::RankedTensorType>(like.getType()),
                       value)
                : nullptr;
  }
  /// `x` reshaped to `shape`.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    return failedBuild ? nullptr : take(n.reshape(x, shape));
  }
  /// `x` broadcast (numpy rules) to `shape`.
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    return failedBuild ? nullptr : take(n.broadcastTo(x, shape));
  }
  /// `x` with its dimensions permuted by `perm`.
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
    return make<dnn::TransposeOp>({}, x, n.b.getDenseI64ArrayAttr(perm));
  }
  /// `size` elements of `x` along `axis` from `start`, `step` apart.
  mlir::Value slice(mlir::Value x, int64_t axis, int64_t start, int64_t size,
                    int64_t step = 1) {
    return failedBuild ? nullptr
                       : take(sliceAxis(n, x, axis, start, size, step));
  }
  /// `parts` (null or empty ones skipped) concatenated along `axis`.
  mlir::Value concat(llvm::ArrayRef<mlir::Value> parts, int64_t axis) {
    if (failedBuild)
      return nullptr;
    llvm::SmallVector<mlir::Value> present;
    for (mlir::Value v : parts)
      if (v && shapeOf(v)[axis] != 0)
        present.push_back(v);
    if (present.size() == 1)
      return present.front();
    return make<dnn::ConcatOp>({}, mlir::ValueRange(present),
                               n.b.getI64IntegerAttr(axis));
  }
  /// A constant of rank `rank`, extent 1 except `length` at `axis`, holding
  /// `0, step, 2 * step, ...` along `axis` as the integer type `elt`.
  mlir::Value ramp(mlir::Type elt, int64_t length, int64_t rank, int64_t axis,
                   int64_t step = 1) {
    if (failedBuild)
      return nullptr;
    llvm::SmallVector<int64_t> shape(rank, 1);
    shape[axis] = length;
    unsigned width = mlir::cast<mlir::IntegerType>(elt).getWidth();
    llvm::SmallVector<llvm::APInt> values;
    for (int64_t i = 0; i < length; ++i)
      values.emplace_back(width, i * step, /*isSigned=*/true);
    return n.constant(mlir::DenseElementsAttr::get(
        mlir::RankedTensorType::get(shape, elt), values));
  }
  /// `x` converted to element type `elt` (`x` itself if already so).
  mlir::Value convert(mlir::Value x, mlir::Type elt) {
    if (failedBuild || eltOf(x) == elt)
      return x;
    return make<dnn::CastOp>(mlir::RankedTensorType::get(shapeOf(x), elt), x);
  }
  /// The reduction `OpT` of `x` over `axes` (every axis when empty).
  template <typename OpT>
  mlir::Value reduce(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                     bool keepDims) {
    if (failedBuild)
      return nullptr;
    llvm::SmallVector<int64_t> all(axes);
    if (all.empty())
      all = llvm::to_vector(llvm::seq<int64_t>(0, rankOf(x)));
    if (all.empty())
      return x;
    return make<OpT>({}, x, n.b.getDenseI64ArrayAttr(all),
                     n.b.getBoolAttr(keepDims));
  }
  /// The rows of `data` along `axis` picked by the integer tensor `indices`.
  mlir::Value gather(mlir::Value data, mlir::Value indices, int64_t axis) {
    return make<dnn::GatherOp>({}, data, indices,
                               n.b.getI64IntegerAttr(axis));
  }
  /// Integer `indices` into an axis of `extent` with negative ones counted
  /// from the end, as i64.
  mlir::Value wrapIndices(mlir::Value indices, int64_t extent) {
    mlir::Value idx = convert(indices, n.b.getI64Type());
    if (failedBuild)
      return nullptr;
    return select(compare<dnn::LessOp>(idx, splat(idx, 0)),
                  binary<dnn::AddOp>(idx, splat(idx, extent)), idx);
  }
  /// Binds the node's output 0 to `result`, or fails if a build failed.
  mlir::LogicalResult finish(mlir::Value result) {
    if (failedBuild)
      return mlir::failure();
    n.setOutput(0, result);
    return mlir::success();
  }

private:
  /// The value of `v`, or null (and the composition failed) on failure.
  mlir::Value take(mlir::FailureOr<mlir::Value> v) {
    if (mlir::failed(v)) {
      failedBuild = true;
      return nullptr;
    }
    return *v;
  }

  /// The node's importer.
  NodeImporter &n;
  /// Whether a build failed.
  bool failedBuild = false;
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
