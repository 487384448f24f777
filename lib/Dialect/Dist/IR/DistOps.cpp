//===- DistOps.cpp - Dist dialect operations --------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers, custom syntax and helpers of the `dist` ops, the shared sharding
// checks and collective shape functions, and the accessors for the
// discardable sharding attributes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Runtime/Mesh.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dnnc::dist;
namespace plan = dnnc::plan;

//===----------------------------------------------------------------------===//
// Diagnostic helpers
//===----------------------------------------------------------------------===//

/// Returns `types` as a parenthesized, comma-separated string.
static std::string typesToString(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '(';
  llvm::interleaveComma(types, os, [&](Type type) { os << type; });
  os << ')';
  return text;
}

/// Reports that `mesh` has no axis named `axis`.
static InFlightDiagnostic
emitUnknownAxis(function_ref<InFlightDiagnostic()> emitError, MeshOp mesh,
                StringAttr axis) {
  return emitError() << "mesh @" << mesh.getSymName() << " has no axis named \""
                     << axis.getValue() << "\"";
}

/// Checks that `dim` (the value of attribute `name`) indexes a dim of a
/// rank-`rank` tensor.
static LogicalResult
checkDimInRange(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                int64_t dim, int64_t rank) {
  if (dim >= 0 && dim < rank)
    return success();
  if (emitError)
    emitError() << name << " " << dim << " is out of range for rank " << rank;
  return failure();
}

/// Checks that dim `dim` (named by attribute `name`) of `shape` can be cut
/// into `groupSize` equal blocks. Dynamic dims are accepted.
static LogicalResult
checkDimDivisible(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                  ArrayRef<int64_t> shape, int64_t dim, int64_t groupSize) {
  if (ShapedType::isDynamic(shape[dim]) || shape[dim] % groupSize == 0)
    return success();
  if (emitError)
    emitError() << name << " " << dim << " of size " << shape[dim]
                << " is not divisible by the group size " << groupSize;
  return failure();
}

//===----------------------------------------------------------------------===//
// Mesh lookup and sharding checks
//===----------------------------------------------------------------------===//

MeshOp dnnc::dist::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                              SymbolTableCollection &symbolTables) {
  return symbolTables.lookupNearestSymbolFrom<MeshOp>(from, name);
}

MeshOp dnnc::dist::lookupMesh(Operation *from, FlatSymbolRefAttr name) {
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, name);
}

/// Looks up the mesh `name` for `op`'s symbol-use verification, reporting an
/// error on `op` if it is not a `dist.mesh`.
static MeshOp getMeshOrEmitError(Operation *op, FlatSymbolRefAttr name,
                                 SymbolTableCollection &symbolTables) {
  MeshOp mesh = lookupMesh(op, name, symbolTables);
  if (!mesh)
    op->emitOpError() << "'" << name << "' does not name a dist.mesh";
  return mesh;
}

LogicalResult dnnc::dist::verifyShardingForType(
    ShardingAttr sharding, MeshOp mesh, ShapedType type,
    function_ref<InFlightDiagnostic()> emitError) {
  if (!type.hasRank())
    return emitError() << "sharding requires a ranked type, got " << type;
  if (sharding.getRank() != type.getRank())
    return emitError() << "sharding has rank " << sharding.getRank()
                       << " but the type " << type << " has rank "
                       << type.getRank();
  for (StringAttr axis : sharding.getUsedAxes())
    if (!mesh.hasAxis(axis.getValue()))
      return emitUnknownAxis(emitError, mesh, axis);
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim) {
    int64_t size = type.getDimSize(dim);
    int64_t shards = sharding.getNumShards(dim, mesh);
    if (ShapedType::isDynamic(size) || size % shards == 0)
      continue;
    return emitError() << "dim " << dim << " of size " << size
                       << " is not divisible by " << shards
                       << ", the number of shards of mesh axes "
                       << formatAxes(sharding.getDimAxes(dim));
  }
  return success();
}

LogicalResult dnnc::dist::verifyShardingForType(
    ShardingAttr sharding, MeshOp mesh, Type type,
    function_ref<InFlightDiagnostic()> emitError) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return verifyShardingForType(sharding, mesh, shaped, emitError);
  // A scalar: rank 0, so only partial axes can be given.
  if (sharding.getRank() != 0)
    return emitError() << "sharding has rank " << sharding.getRank()
                       << " but the type " << type << " has rank 0";
  for (StringAttr axis : sharding.getPartial())
    if (!mesh.hasAxis(axis.getValue()))
      return emitUnknownAxis(emitError, mesh, axis);
  return success();
}

//===----------------------------------------------------------------------===//
// Collective shape functions
//===----------------------------------------------------------------------===//

LogicalResult
dnnc::dist::inferAllGatherShape(ArrayRef<int64_t> shape, int64_t gatherDim,
                                int64_t groupSize,
                                SmallVectorImpl<int64_t> &result,
                                function_ref<InFlightDiagnostic()> emitError) {
  if (failed(checkDimInRange(emitError, "gather_dim", gatherDim, shape.size())))
    return failure();
  result.assign(shape.begin(), shape.end());
  if (!ShapedType::isDynamic(result[gatherDim]))
    result[gatherDim] *= groupSize;
  return success();
}

LogicalResult dnnc::dist::inferReduceScatterShape(
    ArrayRef<int64_t> shape, int64_t scatterDim, int64_t groupSize,
    SmallVectorImpl<int64_t> &result,
    function_ref<InFlightDiagnostic()> emitError) {
  if (failed(checkDimInRange(emitError, "scatter_dim", scatterDim,
                             shape.size())) ||
      failed(checkDimDivisible(emitError, "scatter_dim", shape, scatterDim,
                               groupSize)))
    return failure();
  result.assign(shape.begin(), shape.end());
  if (!ShapedType::isDynamic(result[scatterDim]))
    result[scatterDim] /= groupSize;
  return success();
}

LogicalResult
dnnc::dist::inferAllToAllShape(ArrayRef<int64_t> shape, int64_t splitDim,
                               int64_t concatDim, int64_t groupSize,
                               SmallVectorImpl<int64_t> &result,
                               function_ref<InFlightDiagnostic()> emitError) {
  if (failed(checkDimInRange(emitError, "split_dim", splitDim, shape.size())) ||
      failed(
          checkDimInRange(emitError, "concat_dim", concatDim, shape.size())) ||
      failed(checkDimDivisible(emitError, "split_dim", shape, splitDim,
                               groupSize)))
    return failure();
  result.assign(shape.begin(), shape.end());
  if (!ShapedType::isDynamic(result[splitDim]))
    result[splitDim] /= groupSize;
  if (!ShapedType::isDynamic(result[concatDim]))
    result[concatDim] *= groupSize;
  return success();
}

//===----------------------------------------------------------------------===//
// Discardable sharding attributes
//===----------------------------------------------------------------------===//

SmallVector<ShardingAttr> dnnc::dist::getOpShardings(Operation *op) {
  auto shardings =
      op->getAttrOfType<ArrayAttr>(DistDialect::getShardingsAttrName());
  if (!shardings)
    return {};
  return llvm::to_vector(shardings.getAsRange<ShardingAttr>());
}

ShardingAttr dnnc::dist::getOpResultSharding(Operation *op,
                                             unsigned resultIndex) {
  auto shardings =
      op->getAttrOfType<ArrayAttr>(DistDialect::getShardingsAttrName());
  if (!shardings || resultIndex >= shardings.size())
    return {};
  return dyn_cast<ShardingAttr>(shardings[resultIndex]);
}

void dnnc::dist::setOpShardings(Operation *op,
                                ArrayRef<ShardingAttr> shardings) {
  assert(shardings.size() == op->getNumResults() &&
         "expected one sharding per result");
  SmallVector<Attribute> attrs(shardings.begin(), shardings.end());
  op->setAttr(DistDialect::getShardingsAttrName(),
              ArrayAttr::get(op->getContext(), attrs));
}

ShardingAttr dnnc::dist::getArgSharding(FunctionOpInterface fn,
                                        unsigned argIndex) {
  return fn.getArgAttrOfType<ShardingAttr>(argIndex,
                                           DistDialect::getShardingAttrName());
}

void dnnc::dist::setArgSharding(FunctionOpInterface fn, unsigned argIndex,
                                ShardingAttr sharding) {
  fn.setArgAttr(argIndex, DistDialect::getShardingAttrName(), sharding);
}

ShardingAttr dnnc::dist::getFuncResultSharding(FunctionOpInterface fn,
                                               unsigned resultIndex) {
  return fn.getResultAttrOfType<ShardingAttr>(
      resultIndex, DistDialect::getShardingAttrName());
}

void dnnc::dist::setFuncResultSharding(FunctionOpInterface fn,
                                       unsigned resultIndex,
                                       ShardingAttr sharding) {
  fn.setResultAttr(resultIndex, DistDialect::getShardingAttrName(), sharding);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses the mesh axes `["dp" = 2 : inter, "tp" = 4 : intra]`.
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &axes) {
  MLIRContext *context = parser.getContext();
  SmallVector<Attribute> parsed;
  auto parseAxis = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    std::string name;
    int64_t size = 0;
    StringRef linkName;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size) || parser.parseColon())
      return failure();
    SMLoc linkLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&linkName))
      return failure();
    std::optional<LinkClass> link = symbolizeLinkClass(linkName);
    if (!link)
      return parser.emitError(linkLoc)
             << "expected link class 'intra' or 'inter', got '" << linkName
             << "'";
    auto axis =
        MeshAxisAttr::getChecked([&] { return parser.emitError(loc); }, context,
                                 StringAttr::get(context, name), size, *link);
    if (!axis)
      return failure();
    parsed.push_back(axis);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseAxis))
    return failure();
  axes = ArrayAttr::get(context, parsed);
  return success();
}

/// Prints the mesh axes as `["dp" = 2 : inter, "tp" = 4 : intra]`.
static void printMeshAxes(OpAsmPrinter &printer, MeshOp /*op*/,
                          ArrayAttr axes) {
  printer << '[';
  llvm::interleaveComma(axes.getAsRange<MeshAxisAttr>(), printer,
                        [&](MeshAxisAttr axis) {
                          printer.printString(axis.getName().getValue());
                          printer << " = " << axis.getSize() << " : "
                                  << stringifyLinkClass(axis.getLink());
                        });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

void MeshOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   ArrayRef<MeshAxisAttr> meshAxes,
                   ArrayRef<int64_t> deviceOrder) {
  SmallVector<Attribute> axes(meshAxes.begin(), meshAxes.end());
  build(builder, state, builder.getStringAttr(name), builder.getArrayAttr(axes),
        deviceOrder.empty() ? DenseI64ArrayAttr()
                            : builder.getDenseI64ArrayAttr(deviceOrder));
}

void MeshOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   ArrayRef<MeshAxisSpec> axisSpecs) {
  MLIRContext *context = builder.getContext();
  SmallVector<MeshAxisAttr> meshAxes;
  for (const MeshAxisSpec &spec : axisSpecs)
    meshAxes.push_back(MeshAxisAttr::get(
        context, StringAttr::get(context, spec.name), spec.size, spec.link));
  build(builder, state, name, meshAxes);
}

FailureOr<SmallVector<MeshAxisSpec>> dnnc::dist::parseMeshAxisSpecs(
    StringRef text, function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<MeshAxisSpec> specs;
  llvm::StringSet<> seen;
  int64_t numDevices = 1;
  SmallVector<StringRef> entries;
  text.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (StringRef entry : entries) {
    auto malformed = [&]() {
      return emitError() << "axes='" << text << "': malformed entry '" << entry
                         << "' (expected NAME=SIZE or NAME=SIZE:LINK, LINK "
                            "being intra or inter)";
    };
    StringRef trimmed = entry.trim();
    if (!trimmed.contains('='))
      return malformed();
    auto [name, rest] = trimmed.split('=');
    auto [sizeText, linkText] = rest.split(':');
    name = name.trim();
    sizeText = sizeText.trim();
    linkText = linkText.trim();
    if (name.empty() || sizeText.empty() ||
        (rest.contains(':') && linkText.empty()))
      return malformed();
    MeshAxisSpec spec;
    spec.name = name.str();
    if (sizeText.getAsInteger(10, spec.size))
      return emitError() << "axes='" << text << "': axis '" << name
                         << "' has size '" << sizeText
                         << "', which is not an integer";
    if (spec.size < 1)
      return emitError() << "axes='" << text << "': axis '" << name
                         << "' has size " << spec.size
                         << "; a mesh axis needs at least 1 device";
    if (!linkText.empty()) {
      std::optional<LinkClass> link = symbolizeLinkClass(linkText);
      if (!link)
        return emitError() << "axes='" << text << "': axis '" << name
                           << "' has link class '" << linkText
                           << "' (expected intra or inter)";
      spec.link = *link;
    }
    if (!seen.insert(spec.name).second)
      return emitError() << "axes='" << text << "': more than one axis named '"
                         << name << "'";
    if (llvm::MulOverflow(numDevices, spec.size, numDevices))
      return emitError() << "axes='" << text
                         << "': the mesh has more devices than fit in a 64-bit "
                            "integer";
    specs.push_back(std::move(spec));
  }
  return specs;
}

LogicalResult MeshOp::verify() {
  if (getAxes().empty())
    return emitOpError("must have at least one axis");
  llvm::DenseSet<StringAttr> names;
  int64_t numDevices = 1;
  for (MeshAxisAttr axis : getAxes().getAsRange<MeshAxisAttr>()) {
    if (!names.insert(axis.getName()).second)
      return emitOpError() << "has more than one axis named \""
                           << axis.getName().getValue() << "\"";
    if (llvm::MulOverflow(numDevices, axis.getSize(), numDevices))
      return emitOpError("has more devices than fit in a 64-bit integer");
  }
  std::optional<ArrayRef<int64_t>> devices = getDevices();
  if (!devices)
    return success();
  if (static_cast<int64_t>(devices->size()) != numDevices)
    return emitOpError() << "devices must list " << numDevices
                         << " device ids (the product of the axis sizes), got "
                         << devices->size();
  int64_t invalid = plan::invalidDeviceOrderPosition(*devices, numDevices);
  if (invalid < 0)
    return success();
  int64_t device = (*devices)[invalid];
  if (device < 0 || device >= numDevices)
    return emitOpError() << "device id " << device << " is out of range [0, "
                         << numDevices << ")";
  return emitOpError() << "device id " << device
                       << " appears more than once in devices";
}

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [index, axis] :
       llvm::enumerate(getAxes().getAsRange<MeshAxisAttr>()))
    if (axis.getName().getValue() == name)
      return index;
  return std::nullopt;
}

int64_t MeshOp::getAxisSize(StringRef name) {
  std::optional<unsigned> index = getAxisIndex(name);
  assert(index && "no such mesh axis");
  return getAxis(*index).getSize();
}

LinkClass MeshOp::getAxisLink(StringRef name) {
  std::optional<unsigned> index = getAxisIndex(name);
  assert(index && "no such mesh axis");
  return getAxis(*index).getLink();
}

SmallVector<int64_t> MeshOp::getShape() {
  return llvm::map_to_vector(getAxes().getAsRange<MeshAxisAttr>(),
                             [](MeshAxisAttr axis) { return axis.getSize(); });
}

int64_t MeshOp::getNumDevices() { return plan::meshSize(getShape()); }

/// Returns the positions of the axes `axes` of `mesh`, which must exist.
static SmallVector<int64_t> getAxisIndices(MeshOp mesh,
                                           ArrayRef<StringAttr> axes) {
  SmallVector<int64_t> indices;
  for (StringAttr axis : axes) {
    std::optional<unsigned> index = mesh.getAxisIndex(axis.getValue());
    assert(index && "no such mesh axis");
    indices.push_back(*index);
  }
  return indices;
}

/// Returns the device order of `mesh` as given (`devices`), empty for the
/// identity.
static ArrayRef<int64_t> getGivenOrder(MeshOp mesh) {
  return mesh.getDevices().value_or(ArrayRef<int64_t>());
}

int64_t MeshOp::getGroupSize(ArrayRef<StringAttr> axes) {
  return plan::meshGroupSize(getShape(), getAxisIndices(*this, axes));
}

SmallVector<int64_t> MeshOp::getDeviceOrder() {
  return llvm::to_vector(
      plan::meshDeviceOrder(getShape(), getGivenOrder(*this)));
}

int64_t MeshOp::getDeviceId(ArrayRef<int64_t> multiIndex) {
  return plan::meshDeviceId(getShape(), getGivenOrder(*this), multiIndex);
}

SmallVector<int64_t> MeshOp::getMultiIndex(int64_t deviceId) {
  std::vector<int64_t> multiIndex;
  [[maybe_unused]] bool found = plan::meshMultiIndex(
      getShape(), getGivenOrder(*this), deviceId, multiIndex);
  assert(found && "device id not in the mesh");
  return llvm::to_vector(multiIndex);
}

SmallVector<int64_t> MeshOp::getGroupDevices(int64_t deviceId,
                                             ArrayRef<StringAttr> axes) {
  return llvm::to_vector(
      plan::meshGroupDevices(getShape(), getGivenOrder(*this),
                             getMultiIndex(deviceId),
                             getAxisIndices(*this, axes)));
}

//===----------------------------------------------------------------------===//
// AnnotateOp
//===----------------------------------------------------------------------===//

LogicalResult
AnnotateOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh =
      getMeshOrEmitError(*this, getSharding().getMesh(), symbolTables);
  if (!mesh)
    return failure();
  return verifyShardingForType(getSharding(), mesh, getType(),
                               [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// ReshardOp
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verify() {
  ShardingAttr from = getFromAttr();
  if (from && from.getMesh() != getTo().getMesh())
    return emitOpError() << "cannot change meshes: 'from' is on "
                         << from.getMesh() << " but 'to' is on "
                         << getTo().getMesh();
  return success();
}

LogicalResult ReshardOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh = getMeshOrEmitError(*this, getTo().getMesh(), symbolTables);
  if (!mesh)
    return failure();
  if (failed(verifyShardingForType(getTo(), mesh, getType(),
                                   [&] { return emitOpError() << "'to' "; })))
    return failure();
  if (ShardingAttr from = getFromAttr())
    return verifyShardingForType(from, mesh, getType(),
                                 [&] { return emitOpError() << "'from' "; });
  return success();
}

OpFoldResult ReshardOp::fold(FoldAdaptor /*adaptor*/) {
  if (getFromAttr() == getTo())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks the device-group axes of a collective, without the mesh: at least
/// one, non-empty names, no repeats.
static LogicalResult verifyGroupAxes(Operation *op, ArrayAttr axes) {
  if (axes.empty())
    return op->emitOpError("requires at least one mesh axis");
  llvm::DenseSet<StringAttr> seen;
  for (StringAttr axis : axes.getAsRange<StringAttr>()) {
    if (axis.getValue().empty())
      return op->emitOpError("mesh axis names must be non-empty");
    if (!seen.insert(axis).second)
      return op->emitOpError() << "mesh axis \"" << axis.getValue()
                               << "\" appears more than once in axes";
  }
  return success();
}

/// Looks up the mesh of a collective and checks that its group axes exist.
/// Returns the mesh, or null after reporting an error.
template <typename OpT>
static MeshOp getCollectiveMesh(OpT op, SymbolTableCollection &symbolTables) {
  MeshOp mesh = getMeshOrEmitError(op, op.getMeshAttr(), symbolTables);
  if (!mesh)
    return {};
  for (StringAttr axis : op.getAxisNames()) {
    if (!mesh.hasAxis(axis.getValue())) {
      emitUnknownAxis([&] { return op.emitOpError(); }, mesh, axis);
      return {};
    }
  }
  return mesh;
}

/// Checks that the result type of `op` has shape `expected`.
static LogicalResult verifyResultShape(Operation *op,
                                       ArrayRef<int64_t> expected) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (succeeded(verifyCompatibleShape(expected, resultType.getShape())))
    return success();
  return op->emitOpError() << "expected result type "
                           << resultType.clone(expected) << ", got "
                           << resultType;
}

LogicalResult AllReduceOp::verify() {
  return verifyGroupAxes(*this, getAxes());
}

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return success(getCollectiveMesh(*this, symbolTables) != nullptr);
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyGroupAxes(*this, getAxes())))
    return failure();
  return checkDimInRange([&] { return emitOpError(); }, "gather_dim",
                         getGatherDimAttr().getInt(),
                         getInput().getType().getRank());
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh = getCollectiveMesh(*this, symbolTables);
  if (!mesh)
    return failure();
  SmallVector<int64_t> expected;
  if (failed(inferAllGatherShape(getInput().getType().getShape(),
                                 getGatherDimAttr().getInt(),
                                 mesh.getGroupSize(getAxisNames()), expected,
                                 [&] { return emitOpError(); })))
    return failure();
  return verifyResultShape(*this, expected);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyGroupAxes(*this, getAxes())))
    return failure();
  return checkDimInRange([&] { return emitOpError(); }, "scatter_dim",
                         getScatterDimAttr().getInt(),
                         getInput().getType().getRank());
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh = getCollectiveMesh(*this, symbolTables);
  if (!mesh)
    return failure();
  SmallVector<int64_t> expected;
  if (failed(inferReduceScatterShape(getInput().getType().getShape(),
                                     getScatterDimAttr().getInt(),
                                     mesh.getGroupSize(getAxisNames()),
                                     expected, [&] { return emitOpError(); })))
    return failure();
  return verifyResultShape(*this, expected);
}

LogicalResult AllToAllOp::verify() {
  if (failed(verifyGroupAxes(*this, getAxes())))
    return failure();
  int64_t rank = getInput().getType().getRank();
  auto emitError = [&] { return emitOpError(); };
  if (failed(checkDimInRange(emitError, "split_dim", getSplitDimAttr().getInt(),
                             rank)))
    return failure();
  return checkDimInRange(emitError, "concat_dim", getConcatDimAttr().getInt(),
                         rank);
}

LogicalResult
AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh = getCollectiveMesh(*this, symbolTables);
  if (!mesh)
    return failure();
  SmallVector<int64_t> expected;
  if (failed(inferAllToAllShape(
          getInput().getType().getShape(), getSplitDimAttr().getInt(),
          getConcatDimAttr().getInt(), mesh.getGroupSize(getAxisNames()),
          expected, [&] { return emitOpError(); })))
    return failure();
  return verifyResultShape(*this, expected);
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyGroupAxes(*this, getAxes())))
    return failure();
  int64_t root = getRootAttr().getInt();
  if (root < 0)
    return emitOpError() << "root must be non-negative, got " << root;
  return success();
}

LogicalResult
BroadcastOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  MeshOp mesh = getCollectiveMesh(*this, symbolTables);
  if (!mesh)
    return failure();
  int64_t root = getRootAttr().getInt();
  int64_t groupSize = mesh.getGroupSize(getAxisNames());
  if (root >= groupSize)
    return emitOpError() << "root " << root
                         << " is out of range for a group of " << groupSize
                         << " devices";
  return success();
}

//===----------------------------------------------------------------------===//
// ShardSliceOp
//===----------------------------------------------------------------------===//

LogicalResult ShardSliceOp::verify() {
  ShardingAttr sharding = getSharding();
  if (sharding.isPartial())
    return emitOpError() << "sharding must not have partial axes, got "
                         << formatAxes(sharding.getPartial());
  return success();
}

LogicalResult
ShardSliceOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  ShardingAttr sharding = getSharding();
  MeshOp mesh = getMeshOrEmitError(*this, sharding.getMesh(), symbolTables);
  if (!mesh)
    return failure();
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (failed(verifyShardingForType(sharding, mesh, inputType,
                                   [&] { return emitOpError(); })))
    return failure();
  RankedTensorType expected = sharding.getLocalType(inputType, mesh);
  if (getType() != expected)
    return emitOpError() << "expected result type " << expected
                         << " (the local type of " << inputType
                         << " under the sharding), got " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// MicrobatchSliceOp
//===----------------------------------------------------------------------===//

LogicalResult MicrobatchSliceOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t dim = getDimAttr().getInt(), count = getCountAttr().getInt();
  if (dim < 0 || dim >= type.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << type.getRank();
  if (count < 1)
    return emitOpError() << "count must be positive, got " << count;
  if (type.isDynamicDim(dim) || type.getDimSize(dim) % count != 0)
    return emitOpError() << "dim " << dim << " of " << type
                         << " is not a static extent divisible by " << count;
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= count;
  RankedTensorType expected = type.clone(shape);
  if (getType() != expected)
    return emitOpError() << "expected result type " << expected << ", got "
                         << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp / RecvOp
//===----------------------------------------------------------------------===//

/// Checks the peer and tag of a point-to-point op, without the mesh.
static LogicalResult verifyPeerAndTag(Operation *op, int64_t peer,
                                      int64_t tag) {
  if (peer < 0)
    return op->emitOpError() << "peer rank must be non-negative, got " << peer;
  if (tag < 0)
    return op->emitOpError() << "tag must be non-negative, got " << tag;
  return success();
}

/// Checks that `peer` is a device of the optional mesh `meshName`.
static LogicalResult verifyPeerInMesh(Operation *op, FlatSymbolRefAttr meshName,
                                      int64_t peer,
                                      SymbolTableCollection &symbolTables) {
  if (!meshName)
    return success();
  MeshOp mesh = getMeshOrEmitError(op, meshName, symbolTables);
  if (!mesh)
    return failure();
  if (peer >= mesh.getNumDevices())
    return op->emitOpError()
           << "peer rank " << peer << " is out of range for mesh " << meshName
           << " of " << mesh.getNumDevices() << " devices";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyPeerAndTag(*this, getPeerAttr().getInt(), getTagAttr().getInt());
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyPeerInMesh(*this, getMeshAttr(), getPeerAttr().getInt(),
                          symbolTables);
}

LogicalResult RecvOp::verify() {
  return verifyPeerAndTag(*this, getPeerAttr().getInt(), getTagAttr().getInt());
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  return verifyPeerInMesh(*this, getMeshAttr(), getPeerAttr().getInt(),
                          symbolTables);
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

LogicalResult TransferOp::verify() {
  int64_t src = getSrcStageAttr().getInt();
  int64_t dst = getDstStageAttr().getInt();
  if (src < 0 || dst < 0)
    return emitOpError() << "stage indices must be non-negative, got " << src
                         << " and " << dst;
  if (src == dst)
    return emitOpError()
           << "source and destination stages must differ, both are " << src;
  if (src > dst)
    return emitOpError() << "goes from stage " << src << " back to stage "
                         << dst << "; transfers go to later stages";
  if (auto stage = getInput().getDefiningOp<StageOp>();
      stage && stage.getStageAttr().getInt() != src)
    return emitOpError() << "transfers a result of stage "
                         << stage.getStageAttr().getInt()
                         << " but names source stage " << src;
  return success();
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

/// Checks the ops around the stages of a staged function body `block`
/// (called for its first `dist.stage`): only stages, transfers and the
/// terminator at the top level, stage indices increasing, and transfers
/// carrying results of dist.stage ops.
static LogicalResult verifyStagedBlock(Block &block) {
  int64_t previous = -1;
  for (Operation &op : block) {
    if (auto stage = dyn_cast<StageOp>(op)) {
      int64_t index = stage.getStageAttr().getInt();
      if (index <= previous)
        return stage.emitOpError()
               << "has index " << index << " after stage " << previous
               << "; the stages of a function appear once each, in "
                  "increasing order";
      previous = index;
      continue;
    }
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      if (!transfer.getInput().getDefiningOp<StageOp>())
        return transfer.emitOpError()
               << "must transfer a result of a dist.stage";
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    return op.emitOpError()
           << "is outside every dist.stage of a function with pipeline "
              "stages: every op but dist.transfer and the terminator belongs "
              "to exactly one stage";
  }
  return success();
}

LogicalResult StageOp::verify() {
  int64_t stage = getStageAttr().getInt();
  if (stage < 0)
    return emitOpError() << "stage index must be non-negative, got " << stage;
  Block *body = getBody();
  auto yield = body->empty() ? YieldOp() : dyn_cast<YieldOp>(body->back());
  if (!yield)
    return emitOpError("body must end with 'dist.yield'");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields "
                         << typesToString(yield.getValues().getTypes())
                         << " but the stage results are "
                         << typesToString(getResultTypes());
  // Values from outside: arguments of the function, or transfers into this
  // stage.
  Region &region = getRegion();
  WalkResult walk = body->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      if (region.isAncestor(operand.getParentRegion()))
        continue;
      if (isa<BlockArgument>(operand))
        continue;
      auto transfer = operand.getDefiningOp<TransferOp>();
      if (transfer && transfer.getDstStageAttr().getInt() == stage)
        continue;
      InFlightDiagnostic diag =
          inner->emitOpError()
          << "in stage " << stage
          << " uses a value from outside the stage that no dist.transfer "
             "into stage "
          << stage << " carries";
      diag.attachNote(operand.getLoc()) << "the value is defined here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // The block around the stages, checked once (from its first stage).
  Block *parent = (*this)->getBlock();
  if (parent && isa_and_nonnull<FunctionOpInterface>(parent->getParentOp()) &&
      *parent->getOps<StageOp>().begin() == *this)
    return verifyStagedBlock(*parent);
  return success();
}

LogicalResult StageOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  FlatSymbolRefAttr meshName = getMeshAttr();
  if (!meshName)
    return success();
  return success(getMeshOrEmitError(*this, meshName, symbolTables) != nullptr);
}

YieldOp StageOp::getYield() { return cast<YieldOp>(getBody()->back()); }

void StageOp::getSuccessorRegions(RegionBranchPoint point,
                                  SmallVectorImpl<RegionSuccessor> &regions) {
  // The body runs once, then control returns to the parent with the yielded
  // values as results.
  if (point.isParent()) {
    regions.push_back(RegionSuccessor(&getRegion()));
    return;
  }
  regions.push_back(RegionSuccessor(getOperation(), getResults()));
}

SmallVector<Value> dnnc::dist::getStageInputs(StageOp stage) {
  llvm::SetVector<Value> inputs;
  Region &region = stage.getRegion();
  stage.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!region.isAncestor(operand.getParentRegion()))
        inputs.insert(operand);
  });
  return inputs.takeVector();
}

std::string dnnc::dist::getStageFunctionName(int64_t stage) {
  return "stage_" + std::to_string(stage);
}

void dnnc::dist::copyPipelineStage(Operation *from, Operation *to) {
  for (StringRef name : {DistDialect::getStageAttrName(),
                         DistDialect::getBackwardAttrName()})
    if (Attribute attr = from->getAttr(name))
      to->setAttr(name, attr);
}

//===----------------------------------------------------------------------===//
// TableGen'd op definitions
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "dnnc/Dialect/Dist/IR/DistOps.cpp.inc"
