//===- ImportONNX.cpp - ONNX model importer -----------------*- C++ -*-===//
//
// Reads an ONNX ModelProto, checks the graph (defined-once tensors, no
// cycles, static shapes, supported opsets) and builds a `func.func @main` of
// `dnn` ops through the per-op handlers.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/ONNX/ImportONNX.h"
#include "Importer.h"

#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <deque>
#include <fnmatch.h>
#include <functional>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;

//===----------------------------------------------------------------------===//
// Data types and tensors
//===----------------------------------------------------------------------===//

Type dnnc::onnx_import::convertDataType(MLIRContext *ctx, int32_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  default:
    return nullptr;
  }
}

std::string dnnc::onnx_import::dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

/// Reads `length` bytes at `offset` of the external file `location`, which
/// must resolve inside `modelDir`.
static bool readExternalData(StringRef modelDir, StringRef location,
                             uint64_t offset, std::optional<uint64_t> length,
                             std::string &out, std::string &error) {
  if (location.empty()) {
    error = "external data has no location";
    return false;
  }
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](StringRef c) { return c == ".."; })) {
    error = "external data path '" + location.str() +
            "' is outside the model directory";
    return false;
  }
  SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  SmallString<256> realDir, realFile;
  std::error_code ec = llvm::sys::fs::real_path(modelDir, realDir);
  if (!ec)
    ec = llvm::sys::fs::real_path(path, realFile);
  if (ec) {
    error =
        "cannot open external data '" + location.str() + "': " + ec.message();
    return false;
  }
  if (!StringRef(realFile).starts_with((realDir + "/").str())) {
    error = "external data path '" + location.str() +
            "' is outside the model directory (it resolves to " +
            realFile.str().str() + ")";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(realFile, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot open external data '" + location.str() +
            "': " + buffer.getError().message();
    return false;
  }
  uint64_t size = (*buffer)->getBufferSize();
  uint64_t len = length ? *length : (offset <= size ? size - offset : 0);
  if (offset > size || len > size - offset) {
    error = "external data '" + location.str() + "' range [" +
            std::to_string(offset) + ", +" + std::to_string(len) +
            ") exceeds the file size " + std::to_string(size);
    return false;
  }
  out.assign((*buffer)->getBufferStart() + offset, len);
  return true;
}

/// Parses an unsigned decimal string; false on junk.
static bool parseUnsigned(StringRef text, uint64_t &value) {
  return !text.getAsInteger(10, value);
}

/// Fails with `message` when a tensor of `shape` (`what`) has more than
/// kMaxElements elements, so that every shape computation on graph inputs
/// and initializers stays within int64.
static LogicalResult checkElementCount(ArrayRef<int64_t> shape,
                                       const std::string &what,
                                       std::string &message) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > kMaxElements / d) {
      message = what + " has more than 2^40 elements";
      return failure();
    }
    count *= d;
  }
  return success();
}

RankedTensorType dnnc::onnx_import::convertTensorType(
    MLIRContext *ctx, const onnx::TensorProto &t, std::string &error) {
  std::string what = "tensor '" + t.name() + "'";
  if (t.data_type() == onnx::TensorProto::STRING) {
    error = what + ": string tensors are not supported";
    return nullptr;
  }
  Type elt = convertDataType(ctx, t.data_type());
  if (!elt) {
    error = what + ": unsupported data type " + dataTypeName(t.data_type());
    return nullptr;
  }
  if (t.has_segment()) {
    error = what + ": segmented tensors are not supported";
    return nullptr;
  }
  SmallVector<int64_t> shape;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      error = what + " has negative dimension " + std::to_string(d);
      return nullptr;
    }
    shape.push_back(d);
  }
  if (failed(checkElementCount(shape, what, error)))
    return nullptr;
  return RankedTensorType::get(shape, elt);
}

DenseElementsAttr dnnc::onnx_import::convertTensor(MLIRContext *ctx,
                                                   const onnx::TensorProto &t,
                                                   StringRef modelDir,
                                                   std::string &error) {
  std::string what = "tensor '" + t.name() + "'";
  RankedTensorType type = convertTensorType(ctx, t, error);
  if (!type)
    return nullptr;
  Type elt = type.getElementType();
  int64_t count = type.getNumElements();
  unsigned bits = elt.getIntOrFloatBitWidth();
  uint64_t byteWidth = bits == 1 ? 1 : bits / 8;
  uint64_t expected = static_cast<uint64_t>(count) * byteWidth;

  // Raw bytes, from raw_data (not copied) or external data.
  std::string externalBytes;
  std::optional<StringRef> raw;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        uint64_t v;
        if (!parseUnsigned(kv.value(), v)) {
          error = what + ": external data " + kv.key() + " '" + kv.value() +
                  "' is not a number";
          return nullptr;
        }
        if (kv.key() == "offset")
          offset = v;
        else
          length = v;
      }
    }
    std::string bytes, readError;
    if (!readExternalData(modelDir, location, offset, length, bytes,
                          readError)) {
      error = what + ": " + readError;
      return nullptr;
    }
    externalBytes = std::move(bytes);
    raw = externalBytes;
  } else if (t.has_raw_data()) {
    raw = StringRef(t.raw_data());
  }
  if (raw) {
    if (raw->size() != expected) {
      error = what + ": raw data size " + std::to_string(raw->size()) +
              " bytes does not match its shape and type " +
              dataTypeName(t.data_type()) + " (" + std::to_string(expected) +
              " bytes expected)";
      return nullptr;
    }
    if (bits == 1) {
      SmallVector<bool> values;
      for (char c : *raw)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, values);
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(raw->data(), raw->size()));
  }

  // Typed fields.
  auto sizeError = [&](int64_t got) {
    error = what + ": holds " + std::to_string(got) + " values but its shape " +
            "needs " + std::to_string(count);
    return DenseElementsAttr();
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT: {
    if (t.float_data_size() != count)
      return sizeError(t.float_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<float>(t.float_data().data(), t.float_data_size()));
  }
  case onnx::TensorProto::DOUBLE: {
    if (t.double_data_size() != count)
      return sizeError(t.double_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<double>(t.double_data().data(), t.double_data_size()));
  }
  case onnx::TensorProto::INT64: {
    if (t.int64_data_size() != count)
      return sizeError(t.int64_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<int64_t>(t.int64_data().data(), t.int64_data_size()));
  }
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: {
    if (t.uint64_data_size() != count)
      return sizeError(t.uint64_data_size());
    SmallVector<APInt> values;
    for (uint64_t v : t.uint64_data())
      values.push_back(
          APInt(bits, v, /*isSigned=*/false, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, values);
  }
  default: {
    // INT32 and narrower integers, BOOL, FLOAT16 and BFLOAT16 (bit patterns)
    // live in int32_data.
    if (t.int32_data_size() != count)
      return sizeError(t.int32_data_size());
    if (bits == 1) {
      SmallVector<bool> values;
      for (int32_t v : t.int32_data())
        values.push_back(v != 0);
      return DenseElementsAttr::get(type, values);
    }
    if (isa<FloatType>(elt)) {
      SmallVector<APFloat> values;
      for (int32_t v : t.int32_data())
        values.push_back(APFloat(cast<FloatType>(elt).getFloatSemantics(),
                                 APInt(16, static_cast<uint64_t>(v) & 0xffff)));
      return DenseElementsAttr::get(type, values);
    }
    SmallVector<APInt> values;
    for (int32_t v : t.int32_data())
      values.push_back(APInt(bits, static_cast<uint64_t>(v),
                             /*isSigned=*/true, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, values);
  }
  }
}

bool dnnc::parseShapeString(StringRef text, SmallVectorImpl<int64_t> &shape) {
  shape.clear();
  if (text.empty())
    return true;
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef p : parts) {
    int64_t v;
    if (p.getAsInteger(10, v) || v < 0)
      return false;
    shape.push_back(v);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// NodeImporter helpers
//===----------------------------------------------------------------------===//

LogicalResult NodeImporter::fail(const Twine &message) {
  if (error.empty())
    error = message.str();
  return failure();
}

int NodeImporter::numInputs() const {
  int n = node.input_size();
  while (n > 0 && node.input(n - 1).empty())
    --n;
  return n;
}

bool NodeImporter::hasInput(int i) const {
  return i < node.input_size() && !node.input(i).empty();
}

Value NodeImporter::input(int i) const { return values.lookup(node.input(i)); }

LogicalResult NodeImporter::checkArity(int min, int max, int maxOutputs) {
  int n = numInputs();
  if (n < min || n > max)
    return fail("expects " +
                (min == max ? Twine(min) : Twine(min) + " to " + Twine(max)) +
                " inputs, got " + Twine(n));
  for (int i = 0; i < min; ++i)
    if (!hasInput(i))
      return fail("required input " + Twine(i) + " is missing");
  for (int i = maxOutputs; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return fail("output " + Twine(i) + " ('" + node.output(i) +
                  "') is not supported");
  return success();
}

bool NodeImporter::wantsOutput(int i) const {
  return i < node.output_size() && !node.output(i).empty();
}

void NodeImporter::setOutput(int i, Value value) {
  if (wantsOutput(i))
    values[node.output(i)] = value;
}

LogicalResult NodeImporter::updateInput(int i, Value value) {
  if (!updateInitializer || !hasInput(i))
    return success();
  std::string message;
  if (failed(updateInitializer(node.input(i), value, message)))
    return fail(message);
  return success();
}

LogicalResult NodeImporter::setResult(FailureOr<Value> result) {
  if (failed(result))
    return failure();
  setOutput(0, *result);
  return success();
}

const onnx::AttributeProto *NodeImporter::findAttr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

/// Name of an attribute type for messages.
static std::string attrTypeName(const onnx::AttributeProto &a) {
  return onnx::AttributeProto::AttributeType_IsValid(a.type())
             ? onnx::AttributeProto::AttributeType_Name(a.type())
             : "type " + std::to_string(a.type());
}

FailureOr<int64_t> NodeImporter::getInt(StringRef name, int64_t dflt) {
  const auto *a = findAttr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT)
    return fail("attribute '" + name + "' must be INT, got " +
                attrTypeName(*a));
  return a->i();
}

FailureOr<float> NodeImporter::getFloat(StringRef name, float dflt) {
  const auto *a = findAttr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    return fail("attribute '" + name + "' must be FLOAT, got " +
                attrTypeName(*a));
  return a->f();
}

FailureOr<std::string> NodeImporter::getString(StringRef name, StringRef dflt) {
  const auto *a = findAttr(name);
  if (!a)
    return dflt.str();
  if (a->type() != onnx::AttributeProto::STRING)
    return fail("attribute '" + name + "' must be STRING, got " +
                attrTypeName(*a));
  return a->s();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeImporter::getInts(StringRef name) {
  const auto *a = findAttr(name);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (a->type() != onnx::AttributeProto::INTS)
    return fail("attribute '" + name + "' must be INTS, got " +
                attrTypeName(*a));
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

FailureOr<SmallVector<int64_t>> NodeImporter::getRequiredInts(StringRef name) {
  auto v = getInts(name);
  if (failed(v))
    return failure();
  if (!*v)
    return fail("required attribute '" + name + "' is missing");
  return **v;
}

DenseElementsAttr NodeImporter::getConstant(Value value) {
  if (!value)
    return nullptr;
  if (auto c = value.getDefiningOp<dnn::ConstantOp>())
    return dyn_cast<DenseElementsAttr>(c.getValue());
  return nullptr;
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(int i,
                                                           StringRef what) {
  if (readDeferred && !getConstant(input(i)) &&
      failed(readDeferred(node.input(i), error)))
    return failure();
  DenseElementsAttr attr = getConstant(input(i));
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return fail(what + " (input " + Twine(i) + " '" + node.input(i) +
                "') must be a compile-time integer constant; bind it with "
                "--bind or fold its producers");
  SmallVector<int64_t> result;
  for (const APInt &v : attr.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

FailureOr<SmallVector<double>> NodeImporter::constantFloats(int i,
                                                           StringRef what) {
  if (readDeferred && !getConstant(input(i)) &&
      failed(readDeferred(node.input(i), error)))
    return failure();
  DenseElementsAttr attr = getConstant(input(i));
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return fail(what + " (input " + Twine(i) + " '" + node.input(i) +
                "') must be a compile-time floating-point constant; bind it "
                "with --bind or fold its producers");
  SmallVector<double> result;
  for (APFloat v : attr.getValues<APFloat>()) {
    bool losesInfo;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
    result.push_back(v.convertToDouble());
  }
  return result;
}

Value NodeImporter::constant(DenseElementsAttr attr) {
  return dnn::ConstantOp::create(b, loc, attr);
}

Value NodeImporter::splatFloat(RankedTensorType type, double value) {
  auto elt = cast<FloatType>(type.getElementType());
  APFloat f(value);
  bool losesInfo;
  f.convert(elt.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return constant(DenseElementsAttr::get(type, f));
}

Value NodeImporter::constantI64(ArrayRef<int64_t> v) {
  auto type = RankedTensorType::get({static_cast<int64_t>(v.size())},
                                    b.getIntegerType(64));
  return constant(DenseElementsAttr::get(type, v));
}

/// Formats a shape as `[2, 3]`.
static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

FailureOr<Value> NodeImporter::broadcastTo(Value value,
                                           ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  int64_t rank = shape.size();
  if (type.getRank() > rank) {
    (void)fail("cannot broadcast shape " + shapeStr(type.getShape()) + " to " +
               shapeStr(shape) + ": not broadcastable");
    return failure();
  }
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t d = rank - type.getRank() + i;
    if (type.getDimSize(i) != 1 && type.getDimSize(i) != shape[d]) {
      (void)fail("cannot broadcast shape " + shapeStr(type.getShape()) +
                 " to " + shapeStr(shape) + ": not broadcastable");
      return failure();
    }
    dims.push_back(d);
  }
  return build<dnn::BroadcastInDimOp>(
      RankedTensorType::get(shape, type.getElementType()), value,
      b.getDenseI64ArrayAttr(dims));
}

FailureOr<Value> NodeImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return build<dnn::ReshapeOp>(
      RankedTensorType::get(shape, type.getElementType()), value);
}

LogicalResult NodeImporter::broadcastPair(Value &lhs, Value &rhs) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  if (lt.getElementType() != rt.getElementType())
    return fail(
        "operand element types differ (" +
        llvm::formatv("{0} vs {1}", lt.getElementType(), rt.getElementType())
            .str() +
        ")");
  if (opset < 7)
    return legacyBroadcast(lhs, rhs);
  auto shape = dnn::broadcastShapes(lt.getShape(), rt.getShape());
  if (failed(shape))
    return fail("operand shapes " + shapeStr(lt.getShape()) + " and " +
                shapeStr(rt.getShape()) + " are not broadcastable");
  auto l = broadcastTo(lhs, *shape);
  if (failed(l))
    return failure();
  auto r = broadcastTo(rhs, *shape);
  if (failed(r))
    return failure();
  lhs = *l;
  rhs = *r;
  return success();
}

LogicalResult NodeImporter::legacyBroadcast(Value &lhs, Value &rhs) {
  ArrayRef<int64_t> lshape = cast<RankedTensorType>(lhs.getType()).getShape();
  ArrayRef<int64_t> rshape = cast<RankedTensorType>(rhs.getType()).getShape();
  if (lshape == rshape)
    return success();
  auto enabled = getInt("broadcast", 0);
  if (failed(enabled))
    return failure();
  if (!*enabled)
    return fail("operand shapes " + shapeStr(lshape) + " and " +
                shapeStr(rshape) +
                " differ and attribute 'broadcast' is not set (opset " +
                Twine(opset) + ")");
  int64_t rank = lshape.size(), inner = rshape.size();
  auto axis = getInt("axis", rank - inner);
  if (failed(axis))
    return failure();
  bool fits = *axis >= 0 && *axis + inner <= rank;
  for (int64_t i = 0; fits && i < inner; ++i)
    fits = rshape[i] == 1 || rshape[i] == lshape[*axis + i];
  if (!fits)
    return fail("operand shape " + shapeStr(rshape) +
                " does not match the dimensions of " + shapeStr(lshape) +
                " from axis " + Twine(*axis));
  SmallVector<int64_t> aligned(rank, 1);
  llvm::copy(rshape, aligned.begin() + *axis);
  auto r = reshape(rhs, aligned);
  if (failed(r))
    return failure();
  auto b = broadcastTo(*r, lshape);
  if (failed(b))
    return failure();
  rhs = *b;
  return success();
}

FailureOr<SmallVector<Value>> NodeImporter::finishOp(Operation *op) {
  std::string diag;
  {
    ScopedDiagnosticHandler handler(b.getContext(), [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
      op->erase();
      (void)fail(diag.empty() ? "invalid operation" : diag);
      return failure();
    }
  }
  SmallVector<Value> folded;
  if (succeeded(b.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded;
  }
  return SmallVector<Value>(op->getResults());
}

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

namespace {
/// Imports one ModelProto.
class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, StringRef path,
                const ONNXImportOptions &options)
      : ctx(ctx), path(path), options(options) {
    modelDir = llvm::sys::path::parent_path(path).str();
    if (modelDir.empty())
      modelDir = ".";
  }

  /// Runs the import; null with `error` set on failure.
  OwningOpRef<ModuleOp> run(std::string &errorOut);

private:
  /// Sets the error (prefixed with the file) and fails.
  LogicalResult failWith(const Twine &message) {
    error = path.str() + ": " + message.str();
    return failure();
  }
  /// Converts an input's ValueInfo into a static tensor type.
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info,
                                        std::string &message);

  // The phases of run(), in order; each fails with `error` set.
  /// Parses the file into `model`, streamed.
  LogicalResult parseModel();
  /// Sets `opset`, the model's opset of the default domain.
  LogicalResult readOpset();
  /// Fills `producer` and `initializers`; rejects a tensor produced twice.
  LogicalResult collectProducers();
  /// Checks that --bind and --input-shape name graph inputs; fills
  /// `bindings`.
  LogicalResult checkInputFlags();
  /// Sets `order`, the nodes in topological order (Kahn); rejects undefined
  /// tensors and cycles.
  LogicalResult sortNodes();
  /// Creates `module` and the argument types and names of the graph inputs
  /// (bound inputs become `boundConstants`).
  LogicalResult buildSignature();
  /// Sets `rebatch` for a --batch on a graph whose batch is fixed.
  LogicalResult chooseRebatch();
  /// Creates @main with the arguments, the bound constants and, with
  /// --plan-only, the deferred initializers as weight references.
  LogicalResult createFunction();
  /// Imports the nodes in `order`.
  LogicalResult importNodes();
  /// Returns the graph outputs, drops what folding left unused, sets the
  /// signature and its attributes, and verifies the module.
  LogicalResult finishFunction();

  /// Imports one node (`where` names it in errors, `name` is its name or a
  /// made-up one).
  LogicalResult importNode(const onnx::NodeProto &node,
                           const std::string &where, const std::string &name);
  /// Imports an If whose condition is a compile-time constant: the nodes of
  /// the branch it takes, in its place.
  LogicalResult importIf(const onnx::NodeProto &node, const std::string &where);
  /// Makes initializer `name` a constant when first used; the conversion
  /// error, if any.
  std::optional<std::string> materialize(StringRef name);
  /// Reads a deferred (--plan-only) initializer whose value a handler needs:
  /// a constant at the top of the body replaces its argument.
  LogicalResult readDeferred(StringRef name, std::string &message);
  /// The name of node `i` (made up from its type and index if empty).
  std::string nodeName(int i) const {
    const auto &n = model.graph().node(i);
    return n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
  }
  /// Names node `i` in errors: name, op type and opset.
  std::string nodeWhere(int i) const {
    return "node '" + nodeName(i) + "' (" + model.graph().node(i).op_type() +
           ", opset " + std::to_string(opset) + ")";
  }

  MLIRContext &ctx;
  StringRef path;
  const ONNXImportOptions &options;
  std::string modelDir;
  onnx::ModelProto model;
  /// Whether ONNXImportOptions::batch set some input's symbolic dim 0.
  bool batchUsed = false;
  /// The first error.
  std::string error;
  /// The model's opset of the default ONNX domain.
  int64_t opset = -1;
  /// Who produces every tensor name (initializer, graph input or node).
  llvm::StringMap<std::string> producer;
  /// The initializers by name (mutable: an initializer's bytes are released
  /// once it is a constant).
  llvm::StringMap<onnx::TensorProto *> initializers;
  /// --bind: graph input name -> TensorProto file.
  llvm::StringMap<std::string> bindings;
  /// The nodes in topological order.
  SmallVector<int> order;
  /// Builds the module.
  OpBuilder b{&ctx};
  /// The model file as a location.
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  /// The module, @main and its body.
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  Block *body = nullptr;
  /// The graph inputs that are arguments of @main: types and names.
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  /// The value of every imported tensor name.
  llvm::StringMap<Value> values;
  /// The graph inputs bound to constants (--bind).
  SmallVector<std::pair<std::string, DenseElementsAttr>> boundConstants;
  /// The re-batching of a graph whose batch is fixed (--batch).
  Rebatch rebatch;
  /// The number of @main's arguments that are graph inputs.
  unsigned numInputs = 0;
  /// The --plan-only initializers not read yet, or the trainable ones not
  /// turned into constants.
  llvm::StringSet<> deferred;
  /// The values of the trainable initializers (ONNXImportOptions::trainable).
  llvm::StringMap<DenseElementsAttr> parameters;
  /// The new values of the buffers after a training step, by initializer
  /// name, with the node updating each (ONNXImportOptions::updateBuffers).
  llvm::MapVector<StringRef, std::pair<Value, std::string>> bufferUpdates;
};
} // namespace

/// The reason a graph input or output of `type` cannot be an argument of
/// the compiled rank program: it is empty with a zero extent past the first
/// dimension (the bare-pointer calling convention has no strides for such a
/// buffer; an empty tensor whose first extent is the zero one is fine).
static std::optional<std::string> emptyTensorReason(RankedTensorType type) {
  if (type.getRank() < 2 ||
      !llvm::is_contained(type.getShape().drop_front(), 0))
    return std::nullopt;
  return "is empty with a zero extent past the first dimension (shape " +
         shapeStr(type.getShape()) +
         "); dnnc supports empty graph inputs and outputs only when their "
         "first dimension is the zero one";
}

FailureOr<RankedTensorType>
ModelImporter::inputType(const onnx::ValueInfoProto &info,
                         std::string &message) {
  std::string what = "graph input '" + info.name() + "'";
  if (!info.type().has_tensor_type()) {
    message = what + " is not a tensor (sequences, maps and optionals are "
                     "not supported)";
    return failure();
  }
  const auto &tt = info.type().tensor_type();
  if (tt.elem_type() == onnx::TensorProto::STRING) {
    message = what + " is a string tensor; string tensors are not supported";
    return failure();
  }
  Type elt = convertDataType(&ctx, tt.elem_type());
  if (!elt) {
    message =
        what + " has unsupported element type " + dataTypeName(tt.elem_type());
    return failure();
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (name == info.name()) {
      if (tt.has_shape() && tt.shape().dim_size() != (int)shape.size()) {
        message = "--input-shape " + name + " has rank " +
                  std::to_string(shape.size()) + " but the model declares " +
                  std::to_string(tt.shape().dim_size());
        return failure();
      }
      for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
        const auto &d = tt.shape().dim(i);
        if (d.has_dim_value() && d.dim_value() != shape[i]) {
          message = "--input-shape " + name + " sets dimension " +
                    std::to_string(i) + " to " + std::to_string(shape[i]) +
                    " but the model fixes it to " +
                    std::to_string(d.dim_value());
          return failure();
        }
      }
      if (failed(checkElementCount(shape, what, message)))
        return failure();
      return RankedTensorType::get(shape, elt);
    }
  if (!tt.has_shape()) {
    message =
        what + " has no shape; pass --input-shape " + info.name() + "=D0xD1...";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        message = what + " has negative dimension " +
                  std::to_string(d.dim_value()) + " at index " +
                  std::to_string(i);
        return failure();
      }
      shape.push_back(d.dim_value());
      continue;
    }
    if (i == 0 && options.batch > 0) {
      shape.push_back(options.batch);
      batchUsed = true;
      continue;
    }
    std::string param = d.has_dim_param() ? "'" + d.dim_param() + "'" : "?";
    message = what + " has symbolic dimension " + param + " at index " +
              std::to_string(i) + "; fix it with --batch=N (leading " +
              "dimension) or --input-shape " + info.name() + "=D0xD1...";
    return failure();
  }
  if (failed(checkElementCount(shape, what, message)))
    return failure();
  return RankedTensorType::get(shape, elt);
}

/// Reads a serialized TensorProto file.
static bool readTensorFile(StringRef file, onnx::TensorProto &tensor,
                           std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + file.str() + "': " + buffer.getError().message();
    return false;
  }
  if (!tensor.ParseFromArray((*buffer)->getBufferStart(),
                             (*buffer)->getBufferSize())) {
    error = "'" + file.str() + "' is not a serialized ONNX TensorProto";
    return false;
  }
  return true;
}

OwningOpRef<ModuleOp> ModelImporter::run(std::string &errorOut) {
  bool ok = succeeded(parseModel()) && succeeded(readOpset()) &&
            succeeded(collectProducers()) && succeeded(checkInputFlags()) &&
            succeeded(sortNodes()) && succeeded(buildSignature()) &&
            succeeded(chooseRebatch()) && succeeded(createFunction()) &&
            succeeded(importNodes()) && succeeded(finishFunction());
  if (!ok) {
    errorOut = error;
    return nullptr;
  }
  return std::move(module);
}

LogicalResult ModelImporter::parseModel() {
  // Parse the file, streamed: a model's weights are in memory once (in the
  // parsed message), not also as the file's bytes.
  if (llvm::sys::fs::is_directory(path))
    return failWith("cannot read the model: " +
                           std::make_error_code(std::errc::is_a_directory)
                               .message());
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd))
    return failWith("cannot read the model: " + ec.message());
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize)) {
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    return failWith("cannot read the model: " + ec.message());
  }
  if (fileSize == 0) {
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    return failWith("the model file is empty");
  }
  bool parsed;
  {
    google::protobuf::io::FileInputStream file(fd, /*block_size=*/1 << 20);
    google::protobuf::io::CodedInputStream stream(&file);
    stream.SetTotalBytesLimit(INT_MAX);
    parsed = model.ParseFromCodedStream(&stream) &&
             stream.ConsumedEntireMessage() && file.GetErrno() == 0;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  if (!parsed)
    return failWith("cannot parse the ONNX model (the file is truncated "
                       "or not an ONNX ModelProto)");
  if (!model.has_graph() ||
      model.graph().node_size() + model.graph().output_size() == 0)
    return failWith("cannot parse the ONNX model: it has no graph (the "
                       "file is empty, truncated or not an ONNX ModelProto)");
  return success();
}

LogicalResult ModelImporter::readOpset() {
  // Opsets.
  opset = -1;
  for (const auto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  }
  if (opset < 0) {
    if (model.opset_import_size() == 0 && model.ir_version() < 3)
      opset = 1;
    else
      return failWith("the model imports no opset of the default ONNX "
                         "domain");
  }
  if (opset > kMaxSupportedOpset)
    return failWith("the model uses opset " + Twine(opset) +
                           " of the default ONNX domain; dnnc supports "
                           "opsets 1 to " +
                           Twine(kMaxSupportedOpset));
  if (opset < 1)
    return failWith("invalid opset " + Twine(opset));
  return success();
}

LogicalResult ModelImporter::collectProducers() {
  const onnx::GraphProto &graph = model.graph();
  // Producers of every tensor name: initializers, graph inputs, nodes.
  auto addProducer = [&](StringRef name,
                         const std::string &who) -> std::optional<std::string> {
    auto [it, inserted] = producer.try_emplace(name, who);
    if (!inserted)
      return "tensor '" + name.str() + "' is produced by both " + it->second +
             " and " + who;
    return std::nullopt;
  };
  // Mutable: an initializer's bytes are released once it is a constant.
  for (auto &init : *model.mutable_graph()->mutable_initializer()) {
    if (init.name().empty())
      return failWith("an initializer has no name");
    if (auto msg =
            addProducer(init.name(), "initializer '" + init.name() + "'"))
      return failWith(*msg);
    initializers[init.name()] = &init;
  }
  if (graph.sparse_initializer_size() > 0)
    return failWith("sparse initializers are not supported");
  if (graph.output_size() == 0)
    return failWith("the graph has no outputs: there is nothing to "
                       "compute");
  for (const auto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue; // IR < 4: initializers are listed as inputs too.
    if (auto msg = addProducer(in.name(), "graph input '" + in.name() + "'"))
      return failWith(*msg);
  }
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty())
        if (auto msg = addProducer(out, "node '" + nodeName(i) + "'"))
          return failWith(*msg);
  return success();
}

LogicalResult ModelImporter::checkInputFlags() {
  const onnx::GraphProto &graph = model.graph();
  // Bindings must name graph inputs.
  for (const auto &[name, file] : options.bindings) {
    bool isInput = llvm::any_of(graph.input(), [&](const auto &in) {
      return in.name() == name && !initializers.count(name);
    });
    if (!isInput)
      return failWith("--bind " + name +
                             ": the model has no graph input "
                             "named '" +
                             name + "'");
    bindings[name] = file;
  }
  for (const auto &[name, shape] : options.inputShapes) {
    bool isInput =
        llvm::any_of(graph.input(), [&, &name = name](const auto &in) {
          return in.name() == name;
        });
    if (!isInput)
      return failWith("--input-shape " + name +
                             ": the model has no graph "
                             "input named '" +
                             name + "'");
  }
  return success();
}

LogicalResult ModelImporter::sortNodes() {
  const onnx::GraphProto &graph = model.graph();
  // Topological order (Kahn), rejecting undefined tensors and cycles.
  llvm::StringMap<SmallVector<int>> consumers;
  SmallVector<int> pending(graph.node_size(), 0);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &n = graph.node(i);
    for (const auto &in : n.input()) {
      if (in.empty())
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return failWith(nodeWhere(i) + ": input '" + in +
                               "' is an undefined tensor (no initializer, "
                               "graph input or node produces it)");
      if (StringRef(it->second).starts_with("node ")) {
        consumers[in].push_back(i);
        ++pending[i];
      }
    }
  }
  std::deque<int> ready;
  for (int i = 0; i < graph.node_size(); ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (const auto &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      auto it = consumers.find(out);
      if (it == consumers.end())
        continue;
      for (int c : it->second)
        if (--pending[c] == 0)
          ready.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) != graph.node_size()) {
    for (int i = 0; i < graph.node_size(); ++i)
      if (pending[i] > 0)
        return failWith("the graph has a cycle through " + nodeWhere(i));
  }
  for (const auto &out : graph.output())
    if (!producer.count(out.name()))
      return failWith("graph output '" + out.name() +
                      "' is not produced by any node, initializer or graph "
                      "input");
  return success();
}

LogicalResult ModelImporter::buildSignature() {
  const onnx::GraphProto &graph = model.graph();
  // Build the module and the function signature.
  module = ModuleOp::create(fileLoc);
  (*module)->setAttr("dnn.source",
                     b.getStringAttr(llvm::sys::path::filename(path)));
  (*module)->setAttr("dnn.opset", b.getI64IntegerAttr(opset));
  if (!model.producer_name().empty())
    (*module)->setAttr("dnn.producer", b.getStringAttr(model.producer_name()));

  for (const auto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue;
    std::string message;
    auto bound = bindings.find(in.name());
    if (bound != bindings.end()) {
      onnx::TensorProto tensor;
      std::string readError;
      if (!readTensorFile(bound->second, tensor, readError))
        return failWith("--bind " + in.name() + ": " + readError);
      DenseElementsAttr attr = convertTensor(
          &ctx, tensor, llvm::sys::path::parent_path(bound->second), readError);
      if (!attr)
        return failWith("--bind " + in.name() + ": " + readError);
      // The declared type (symbolic dims match anything).
      const auto &tt = in.type().tensor_type();
      Type declared = convertDataType(&ctx, tt.elem_type());
      bool matches = declared == attr.getElementType();
      if (tt.has_shape()) {
        matches &= tt.shape().dim_size() == attr.getType().getRank();
        for (int i = 0; matches && i < tt.shape().dim_size(); ++i)
          if (tt.shape().dim(i).has_dim_value())
            matches &=
                tt.shape().dim(i).dim_value() == attr.getType().getDimSize(i);
      }
      if (!matches) {
        std::string got, want;
        llvm::raw_string_ostream gs(got);
        gs << attr.getType();
        return failWith("--bind " + in.name() + ": the tensor in '" +
                               bound->second + "' (" + got +
                               ") does not match the graph input's declared "
                               "type " +
                               dataTypeName(tt.elem_type()) + " with " +
                               std::to_string(tt.shape().dim_size()) +
                               " dimensions");
      }
      boundConstants.emplace_back(in.name(), attr);
      continue;
    }
    auto type = inputType(in, message);
    if (failed(type))
      return failWith(message);
    if (auto reason = emptyTensorReason(*type))
      return failWith("graph input '" + in.name() + "' " + *reason);
    argTypes.push_back(*type);
    argNames.push_back(in.name());
  }
  return success();
}

LogicalResult ModelImporter::chooseRebatch() {
  // --batch sets a symbolic batch. On a graph whose batch is fixed at B (the
  // first input's dimension 0) the graph is re-batched to a multiple of B:
  // the inputs of dimension 0 = B get the new batch, and Reshape shapes that
  // spell the batch in their first entry scale with it (importReshape).
  if (options.batch > 0 && !batchUsed) {
    for (auto [name, type] : llvm::zip(argNames, argTypes)) {
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!ranked || ranked.getRank() == 0)
        continue;
      int64_t fixed = ranked.getDimSize(0);
      if (fixed != options.batch &&
          (fixed == 0 || options.batch % fixed != 0))
        return failWith("--batch=" + std::to_string(options.batch) +
                        ": the graph's batch is fixed (graph input '" + name +
                        "' has dimension 0 = " + std::to_string(fixed) +
                        ", and no input has a symbolic one for --batch to "
                        "set), and re-batching needs a multiple of it; "
                        "export the model with a dynamic batch, or give a "
                        "multiple of " +
                        std::to_string(fixed));
      if (fixed != options.batch)
        rebatch = {fixed, options.batch / fixed};
      break;
    }
  }
  if (rebatch.factor > 1)
    for (Type &type : argTypes) {
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!ranked || ranked.getRank() == 0 ||
          ranked.getDimSize(0) != rebatch.from)
        continue;
      SmallVector<int64_t> shape(ranked.getShape());
      shape[0] = options.batch;
      type = ranked.clone(shape);
    }

  return success();
}

LogicalResult ModelImporter::createFunction() {
  const onnx::GraphProto &graph = model.graph();
  // Result types are only known after the body; build the function with a
  // provisional signature and fix it at the end.
  func =
      func::FuncOp::create(b, fileLoc, "main", b.getFunctionType(argTypes, {}));
  module->push_back(func);
  body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values[name] = body->getArgument(i);
    func.setArgAttr(i, "dnn.name", b.getStringAttr(name));
  }
  b.setInsertionPointToEnd(body);
  for (auto &[name, attr] : boundConstants)
    values[name] =
        dnn::ConstantOp::create(b, NameLoc::get(b.getStringAttr(name)), attr);

  // With --plan-only, the data of most initializers is not read: they
  // become `dnn.weight_ref` arguments after the graph inputs, in the order
  // of the model (deferred), read only if a handler needs the value; those
  // left unused are dropped at the end. Invalid ones are reported if used.
  numInputs = argTypes.size();
  if (!options.planOnly && options.trainable) {
    for (auto &init : *model.mutable_graph()->mutable_initializer()) {
      std::string typeError;
      RankedTensorType type = convertTensorType(&ctx, init, typeError);
      if (!type || type.getRank() == 0 ||
          !isa<FloatType>(type.getElementType()) ||
          llvm::any_of(options.freeze, [&](const std::string &pattern) {
            return fnmatch(pattern.c_str(), init.name().c_str(), 0) == 0;
          }))
        continue;
      std::string convError;
      DenseElementsAttr value = convertTensor(&ctx, init, modelDir, convError);
      if (!value)
        return failWith(convError);
      // The attribute holds the value now: the model's copy goes.
      std::string().swap(*init.mutable_raw_data());
      values[init.name()] =
          body->addArgument(type, NameLoc::get(b.getStringAttr(init.name())));
      parameters[init.name()] = value;
      deferred.insert(init.name());
    }
  }
  if (options.planOnly) {
    for (const auto &init : graph.initializer()) {
      std::string typeError;
      RankedTensorType type = convertTensorType(&ctx, init, typeError);
      if (!type || (init.data_location() != onnx::TensorProto::EXTERNAL &&
                    type.getNumElements() <= kPlanOnlyInlineElements))
        continue;
      values[init.name()] =
          body->addArgument(type, NameLoc::get(b.getStringAttr(init.name())));
      deferred.insert(init.name());
    }
  }
  return success();
}

std::optional<std::string> ModelImporter::materialize(StringRef name) {
  // Other initializers become constants when first used.
  if (values.count(name))
    return std::nullopt;
  auto it = initializers.find(name);
  if (it == initializers.end())
    return std::nullopt;
  std::string convError;
  DenseElementsAttr attr =
      convertTensor(&ctx, *it->second, modelDir, convError);
  if (!attr)
    return convError;
  values[name] =
      dnn::ConstantOp::create(b, NameLoc::get(b.getStringAttr(name)), attr);
  // The attribute holds the value now: the model's copy goes (a model's
  // weights would otherwise be in memory twice).
  std::string().swap(*it->second->mutable_raw_data());
  return std::nullopt;
}

LogicalResult ModelImporter::readDeferred(StringRef name,
                                          std::string &message) {
  // Reads a deferred initializer whose value a handler needs: a constant at
  // the top of the body replaces its argument (dropped at the end).
  if (!deferred.erase(name))
    return success();
  std::string convError;
  DenseElementsAttr attr = parameters.lookup(name);
  if (!attr)
    attr = convertTensor(&ctx, *initializers.lookup(name), modelDir, convError);
  if (!attr) {
    StringRef reason(convError);
    reason.consume_front(("tensor '" + name + "': ").str());
    message = "initializer '" + name.str() +
              "' is needed as a compile-time value (--plan-only reads "
              "only those): " +
              reason.str();
    return failure();
  }
  OpBuilder top = OpBuilder::atBlockBegin(body);
  Value value = dnn::ConstantOp::create(
      top, NameLoc::get(top.getStringAttr(name)), attr);
  values[name].replaceAllUsesWith(value);
  values[name] = value;
  return success();
}

LogicalResult ModelImporter::importIf(const onnx::NodeProto &node,
                                      const std::string &where) {
  // Imports one node (`where` names it in errors, `name` is its name or a
  // made-up one); an If whose condition is a compile-time constant imports
  // the nodes of the branch it takes in its place.
  Value cond = node.input_size() ? values.lookup(node.input(0)) : Value();
  DenseElementsAttr known =
      cond ? NodeImporter::getConstant(cond) : DenseElementsAttr();
  if (!known || known.getNumElements() != 1 ||
      !known.getElementType().isInteger(1))
    return failWith(
                where + ": control flow (If) on a run-time condition is not "
                        "supported: its condition '" +
                    (node.input_size() ? node.input(0) : std::string()) +
                    "' must be a compile-time bool (bind it with --bind or "
                    "fold its producers)");
  bool taken = (*known.getValues<APInt>().begin()).getBoolValue();
  StringRef branchName = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto *branch = nullptr;
  for (const auto &a : node.attribute())
    if (a.name() == branchName && a.has_g())
      branch = &a.g();
  if (!branch)
    return failWith(where + ": attribute '" + branchName.str() +
                           "' (a graph) is missing");
  if (branch->output_size() != node.output_size())
    return failWith(where + ": its " + branchName.str() + " has " +
                           std::to_string(branch->output_size()) +
                           " outputs for " +
                           std::to_string(node.output_size()) +
                           " node outputs");
  for (const auto &init : branch->initializer()) {
    std::string convError;
    DenseElementsAttr attr = convertTensor(&ctx, init, modelDir, convError);
    if (!attr)
      return failWith(where + ": " + branchName.str() + ": " + convError);
    values[init.name()] = dnn::ConstantOp::create(
        b, NameLoc::get(b.getStringAttr(init.name())), attr);
  }
  for (int k = 0; k < branch->node_size(); ++k) {
    const onnx::NodeProto &inner = branch->node(k);
    std::string innerName = inner.name().empty()
                                ? inner.op_type() + "_" + std::to_string(k)
                                : inner.name();
    std::string innerWhere = "node '" + innerName + "' (" +
                             inner.op_type() + ", opset " +
                             std::to_string(opset) + ") in the " +
                             branchName.str() + " of " + where;
    for (const auto &in : inner.input())
      if (!in.empty() && !values.count(in) && !initializers.count(in))
        return failWith(innerWhere + ": input '" + in +
                               "' is an undefined tensor");
    if (failed(importNode(inner, innerWhere, innerName)))
      return failure();
  }
  for (int k = 0; k < node.output_size(); ++k) {
    const std::string &from = branch->output(k).name();
    if (auto msg = materialize(from))
      return failWith(where + ": " + *msg);
    Value v = values.lookup(from);
    if (!v)
      return failWith(where + ": " + branchName.str() + " output '" +
                             from + "' is an undefined tensor");
    if (!node.output(k).empty())
      values[node.output(k)] = v;
  }
  return success();
}

LogicalResult ModelImporter::importNode(const onnx::NodeProto &node,
                                        const std::string &where,
                                        const std::string &name) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return failWith(where + ": unsupported domain '" + node.domain() +
                           "' (dnnc supports the default ONNX domain)");
  for (const auto &in : node.input())
    if (auto msg = materialize(in))
      return failWith(where + ": " + *msg);
  StringRef opType = node.op_type();
  if (opType == "If")
    return importIf(node, where);
  if (opType == "Loop" || opType == "Scan" || opType == "SequenceMap")
    return failWith(where + ": control flow (" + opType +
                           ") is not supported yet");
  const OpHandlerInfo *info = lookupOpHandler(opType);
  if (!info)
    return failWith(where + ": unsupported operator '" + opType + "'");
  if (opset < info->sinceOpset)
    return failWith(where + ": dnnc supports " + opType + " from opset " +
                           Twine(info->sinceOpset) + " on");
  onnx::NodeProto named = node;
  if (named.name().empty())
    named.set_name(name);
  NodeImporter importer(b, named, opset, values, modelDir);
  if (options.planOnly || options.trainable)
    importer.readDeferred = [this](StringRef name, std::string &message) {
      return readDeferred(name, message);
    };
  if (options.trainable && options.updateBuffers)
    importer.updateInitializer = [this, &where](StringRef name, Value value,
                                                std::string &message) {
      // Only a trainable initializer still an argument becomes a buffer
      // (a frozen one, or one read as a constant, keeps its value).
      Value arg = values.lookup(name);
      if (!parameters.count(name) || !isa_and_nonnull<BlockArgument>(arg))
        return success();
      auto [it, inserted] = bufferUpdates.try_emplace(
          parameters.find(name)->getKey(), std::make_pair(value, where));
      if (!inserted) {
        message = "initializer '" + name.str() + "' is updated by two nodes (" +
                  it->second.second +
                  " too): a step keeps one new value per buffer";
        return failure();
      }
      return success();
    };
  importer.rebatch = rebatch;
  if (failed(info->handler(importer))) {
    std::string reason =
        importer.error.empty() ? "import failed" : importer.error;
    if (rebatch.factor > 1)
      reason += " (the graph was re-batched from its fixed batch " +
                std::to_string(rebatch.from) + " to --batch=" +
                std::to_string(options.batch) +
                "; a graph that states its batch elsewhere than in its "
                "inputs and Reshape shapes needs an export with a "
                "dynamic batch)";
    return failWith(where + ": " + reason);
  }
  for (const auto &out : node.output())
    if (!out.empty() && !values.count(out))
      return failWith(where + ": output '" + out + "' is not supported");
  return success();
}

LogicalResult ModelImporter::importNodes() {
  for (int i : order)
    if (failed(importNode(model.graph().node(i), nodeWhere(i), nodeName(i))))
      return failure();
  return success();
}

LogicalResult ModelImporter::finishFunction() {
  const onnx::GraphProto &graph = model.graph();
  // Return the graph outputs.
  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    if (auto msg = materialize(out.name()))
      return failWith(*msg);
    Value v = values.lookup(out.name());
    if (!v)
      return failWith("graph output '" + out.name() +
                             "' is not produced by any node, initializer or "
                             "graph input");
    if (auto reason = emptyTensorReason(cast<RankedTensorType>(v.getType())))
      return failWith("graph output '" + out.name() + "' (from " +
                             producer.lookup(out.name()) + ") " + *reason);
    results.push_back(v);
  }
  // Then the buffers' new values (ONNXImportOptions::updateBuffers).
  for (auto &entry : bufferUpdates)
    results.push_back(entry.second.first);
  func::ReturnOp::create(b, fileLoc, results);

  // Drop what folding left unused (bound shape inputs, folded producers).
  // Ops are in topological order, so one reverse sweep removes dead chains.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  // So do weight references (read as constants, or used by folded ops only).
  llvm::BitVector unusedRefs(body->getNumArguments());
  for (BlockArgument arg : body->getArguments().drop_front(numInputs))
    if (arg.use_empty())
      unusedRefs.set(arg.getArgNumber());
  body->eraseArguments(unusedRefs);
  argTypes.assign(body->getArgumentTypes().begin(),
                  body->getArgumentTypes().end());
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  if (body->getNumArguments() > numInputs) {
    SmallVector<DictionaryAttr> argAttrs;
    for (BlockArgument arg : body->getArguments()) {
      SmallVector<NamedAttribute> attrs;
      if (arg.getArgNumber() < numInputs) {
        attrs.push_back(b.getNamedAttr(
            dnn::kNameAttrName, b.getStringAttr(argNames[arg.getArgNumber()])));
      } else {
        StringAttr name = cast<NameLoc>(arg.getLoc()).getName();
        attrs.push_back(b.getNamedAttr(dnn::kNameAttrName, name));
        if (options.planOnly) {
          attrs.push_back(
              b.getNamedAttr(dnn::kWeightRefAttrName, b.getUnitAttr()));
        } else {
          // A trainable parameter (ONNXImportOptions::trainable), or a
          // buffer a node updates.
          attrs.push_back(b.getNamedAttr(dnn::kWeightAttrName,
                                         parameters.lookup(name)));
          attrs.push_back(b.getNamedAttr(bufferUpdates.count(name)
                                             ? dnn::kBufferAttrName
                                             : dnn::kTrainableAttrName,
                                         b.getUnitAttr()));
        }
      }
      argAttrs.push_back(b.getDictionaryAttr(attrs));
    }
    func.setAllArgAttrs(argAttrs);
  }
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "dnn.name", b.getStringAttr(out.name()));
  if (!bufferUpdates.empty()) {
    llvm::StringMap<unsigned> argOf;
    for (BlockArgument arg : body->getArguments().drop_front(numInputs))
      argOf[cast<NameLoc>(arg.getLoc()).getName().getValue()] =
          arg.getArgNumber();
    for (auto [i, entry] : llvm::enumerate(bufferUpdates)) {
      unsigned result = graph.output_size() + i;
      func.setResultAttr(result, dnn::kNameAttrName,
                         b.getStringAttr(entry.first));
      func.setResultAttr(result, dnn::kUpdatesAttrName,
                         b.getI64IntegerAttr(argOf.lookup(entry.first)));
    }
  }

  std::string diag;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(mlir::verify(*module)))
      return failWith("internal error: the imported module does not "
                         "verify: " +
                             diag);
  }
  return success();
}

OwningOpRef<ModuleOp> dnnc::importONNXModel(MLIRContext &context,
                                            StringRef path,
                                            const ONNXImportOptions &options,
                                            std::string &error) {
  context.loadDialect<dnn::DnnDialect, func::FuncDialect>();
  ModelImporter importer(context, path, options);
  return importer.run(error);
}
