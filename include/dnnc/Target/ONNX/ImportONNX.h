//===- ImportONNX.h - ONNX model importer ------------------------*- C++
//-*-===//
//
// Imports an ONNX ModelProto into a module of `dnn` ops (the `import` phase).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_ONNX_IMPORTONNX_H
#define DNNC_TARGET_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace dnnc {

/// The newest default-domain opset the importer understands.
constexpr int64_t kMaxSupportedOpset = 23;

/// How the importer fixes what the model leaves open.
struct ONNXImportOptions {
  /// Graph inputs folded into compile-time constants: (input name, path of a
  /// serialized ONNX TensorProto).
  std::vector<std::pair<std::string, std::string>> bindings;
  /// Value of the symbolic leading dimension of every graph input; 0 = unset.
  int64_t batch = 0;
  /// Full static shapes of named graph inputs; they override the model's.
  std::vector<std::pair<std::string, llvm::SmallVector<int64_t>>> inputShapes;
  /// Plan without weights (`dnnc --plan-only`): an initializer's data is not
  /// read unless an op importer needs it as a compile-time value (a Reshape
  /// shape, Slice starts, axes...) or it is small and stored inline (at most
  /// kPlanOnlyInlineElements elements). Every other initializer becomes an
  /// argument of `@main` carrying `dnn.name` (the initializer's name) and
  /// the unit attribute `dnn.weight_ref`, so external-data files may be
  /// absent.
  bool planOnly = false;
  /// Import for differentiation (`dnnc --mode=grad`): every floating-point
  /// initializer of rank 1 or more (a parameter) becomes an argument of
  /// `@main` after the graph inputs, carrying `dnn.name`, its value
  /// (`dnn.weight`) and the unit attribute `dnn.trainable`, so that no
  /// import-time fold turns it into a constant. A handler that needs one's
  /// value at compile time (Resize scales, Clip bounds, ...) reads it, and
  /// it is then a constant, not a parameter. Ignored with `planOnly`.
  bool trainable = false;
  /// With `trainable`: initializers whose name matches one of these shell
  /// glob patterns (fnmatch: `*`, `?`, `[...]`) stay constants (`dnnc
  /// --freeze`).
  std::vector<std::string> freeze;
  /// With `trainable`, import for a training step (`dnnc --mode=train`): a
  /// node that updates a trainable initializer as it runs (the running
  /// mean and variance of a BatchNormalization in training mode) makes it
  /// a buffer (`dnn.buffer` instead of `dnn.trainable`: not trained), and
  /// @main returns its new value after the graph outputs, marked
  /// `dnn.updates` with the argument's number and named after it.
  bool updateBuffers = false;
};

/// With ONNXImportOptions::planOnly, inline initializers of at most this many
/// elements are still read as constants (shapes, axes, scalar factors: the
/// constants dnn-outline-weights leaves in the code by default).
constexpr int64_t kPlanOnlyInlineElements = 64;

/// Imports the ONNX model at `path` into a new module of `func` + `dnn` ops.
/// On failure returns null and sets `error` to one line naming the file, the
/// ONNX node (name, op type, opset) where relevant, and the reason.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(mlir::MLIRContext &context, llvm::StringRef path,
                const ONNXImportOptions &options, std::string &error);

/// Parses a shape written `D0xD1x...` (a scalar is the empty string).
/// Returns false on malformed text or negative extents.
bool parseShapeString(llvm::StringRef text,
                      llvm::SmallVectorImpl<int64_t> &shape);

} // namespace dnnc

#endif // DNNC_TARGET_ONNX_IMPORTONNX_H
