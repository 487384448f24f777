//===- DistAttrs.cpp - Dist dialect attributes ------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Parsing, printing, verification and helpers of the `dist` attributes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Runtime/Mesh.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dnnc::dist;
namespace plan = dnnc::plan;

#include "dnnc/Dialect/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dnnc/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dnnc/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Axis sets: `{"a", "b"}`
//===----------------------------------------------------------------------===//

/// Parses a brace-enclosed, possibly empty list of axis names.
static ParseResult parseAxisSet(AsmParser &parser,
                                SmallVectorImpl<StringAttr> &axes) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        axes.push_back(StringAttr::get(parser.getContext(), name));
        return success();
      });
}

/// Prints a brace-enclosed list of axis names.
static void printAxisSet(AsmPrinter &printer, ArrayRef<StringAttr> axes) {
  printer << '{';
  llvm::interleaveComma(axes, printer, [&](StringAttr axis) {
    printer.printString(axis.getValue());
  });
  printer << '}';
}

//===----------------------------------------------------------------------===//
// MeshAxisAttr
//===----------------------------------------------------------------------===//

LogicalResult MeshAxisAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr name, int64_t size,
                                   LinkClass /*link*/) {
  if (!name || name.getValue().empty())
    return emitError() << "mesh axis name must be non-empty";
  if (size < 1)
    return emitError() << "mesh axis \"" << name.getValue()
                       << "\" must have size >= 1, got " << size;
  return success();
}

//===----------------------------------------------------------------------===//
// PipelineAttr
//===----------------------------------------------------------------------===//

LogicalResult PipelineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr axis, int64_t stages,
                                   int64_t chunks, int64_t microbatches,
                                   Schedule schedule, Recompute /*recompute*/,
                                   bool /*zero*/, int64_t updateRounds) {
  if (axis && axis.getValue().empty())
    return emitError() << "pipeline axis name must be non-empty";
  for (auto [name, count] : {std::pair<StringRef, int64_t>{"stages", stages},
                             {"chunks", chunks},
                             {"microbatches", microbatches}})
    if (count < 1)
      return emitError() << "pipeline " << name << " must be >= 1, got "
                         << count;
  if (updateRounds < 0)
    return emitError() << "pipeline updateRounds must be >= 0, got "
                       << updateRounds;
  if (chunks > 1 && schedule != Schedule::Interleaved)
    return emitError() << "pipeline with " << chunks
                       << " chunks per rank needs the interleaved schedule, "
                          "not "
                       << stringifySchedule(schedule);
  return success();
}

//===----------------------------------------------------------------------===//
// AxisListAttr
//===----------------------------------------------------------------------===//

AxisListAttr AxisListAttr::get(MLIRContext *context,
                               ArrayRef<StringRef> names) {
  SmallVector<StringAttr> axes = llvm::map_to_vector(
      names, [&](StringRef name) { return StringAttr::get(context, name); });
  return get(context, ArrayRef<StringAttr>(axes));
}

Attribute AxisListAttr::parse(AsmParser &parser, Type /*type*/) {
  SmallVector<StringAttr> axes;
  if (parser.parseLess() || parseAxisSet(parser, axes) || parser.parseGreater())
    return {};
  return get(parser.getContext(), ArrayRef<StringAttr>(axes));
}

void AxisListAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printAxisSet(printer, getAxes());
  printer << '>';
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

ShardingAttr ShardingAttr::get(MLIRContext *context, StringRef mesh,
                               ArrayRef<SmallVector<StringRef>> dimAxes,
                               ArrayRef<StringRef> partialAxes) {
  SmallVector<AxisListAttr> dims =
      llvm::map_to_vector(dimAxes, [&](const SmallVector<StringRef> &axes) {
        return AxisListAttr::get(context, ArrayRef<StringRef>(axes));
      });
  SmallVector<StringAttr> partial =
      llvm::map_to_vector(partialAxes, [&](StringRef name) {
        return StringAttr::get(context, name);
      });
  return get(context, FlatSymbolRefAttr::get(context, mesh), dims, partial);
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *context,
                                         FlatSymbolRefAttr mesh, int64_t rank) {
  SmallVector<AxisListAttr> dims(
      rank, AxisListAttr::get(context, ArrayRef<StringAttr>()));
  return get(context, mesh, dims, ArrayRef<StringAttr>());
}

Attribute ShardingAttr::parse(AsmParser &parser, Type /*type*/) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  FlatSymbolRefAttr mesh;
  SmallVector<AxisListAttr> dims;
  SmallVector<StringAttr> partial;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  auto parseDim = [&]() -> ParseResult {
    SmallVector<StringAttr> axes;
    if (parseAxisSet(parser, axes))
      return failure();
    dims.push_back(AxisListAttr::get(context, ArrayRef<StringAttr>(axes)));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("partial") || parser.parseEqual() ||
        parseAxisSet(parser, partial))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(loc, context, mesh, dims, partial);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(getDims(), printer, [&](AxisListAttr dim) {
    printAxisSet(printer, dim.getAxes());
  });
  printer << ']';
  if (isPartial()) {
    printer << ", partial = ";
    printAxisSet(printer, getPartial());
  }
  printer << '>';
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr /*mesh*/,
                                   ArrayRef<AxisListAttr> dims,
                                   ArrayRef<StringAttr> partial) {
  llvm::DenseSet<StringAttr> seen;
  auto checkAxis = [&](StringAttr axis) -> LogicalResult {
    if (axis.getValue().empty())
      return emitError() << "mesh axis names must be non-empty";
    if (!seen.insert(axis).second)
      return emitError() << "mesh axis \"" << axis.getValue()
                         << "\" is used more than once";
    return success();
  };
  for (AxisListAttr dim : dims)
    for (StringAttr axis : dim.getAxes())
      if (failed(checkAxis(axis)))
        return failure();
  for (StringAttr axis : partial)
    if (failed(checkAxis(axis)))
      return failure();
  return success();
}

bool ShardingAttr::isSplit() const {
  return llvm::any_of(getDims(), [](AxisListAttr dim) { return !dim.empty(); });
}

bool ShardingAttr::usesAxis(StringRef axis) const {
  auto matches = [&](StringAttr name) { return name.getValue() == axis; };
  return getDimOfAxis(axis).has_value() || llvm::any_of(getPartial(), matches);
}

std::optional<unsigned> ShardingAttr::getDimOfAxis(StringRef axis) const {
  for (auto [dim, axes] : llvm::enumerate(getDims()))
    if (llvm::any_of(axes.getAxes(),
                     [&](StringAttr name) { return name.getValue() == axis; }))
      return dim;
  return std::nullopt;
}

SmallVector<StringAttr> ShardingAttr::getUsedAxes() const {
  SmallVector<StringAttr> axes;
  for (AxisListAttr dim : getDims())
    llvm::append_range(axes, dim.getAxes());
  llvm::append_range(axes, getPartial());
  return axes;
}

int64_t ShardingAttr::getNumShards(unsigned dim, MeshOp mesh) const {
  return mesh.getGroupSize(getDimAxes(dim));
}

SmallVector<int64_t> ShardingAttr::getLocalShape(ArrayRef<int64_t> globalShape,
                                                 MeshOp mesh) const {
  assert(static_cast<int64_t>(globalShape.size()) == getRank() &&
         "sharding rank does not match the shape");
  SmallVector<int64_t> local(globalShape);
  for (auto [dim, size] : llvm::enumerate(local))
    if (!ShapedType::isDynamic(size))
      size /= getNumShards(dim, mesh);
  return local;
}

RankedTensorType ShardingAttr::getLocalType(RankedTensorType globalType,
                                            MeshOp mesh) const {
  return globalType.clone(getLocalShape(globalType.getShape(), mesh));
}

ShardingAttr ShardingAttr::getWithoutPartial() const {
  return get(getContext(), getMesh(), getDims(), ArrayRef<StringAttr>());
}

std::string dnnc::dist::formatAxes(ArrayRef<StringAttr> axes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '{';
  llvm::interleaveComma(
      axes, os, [&](StringAttr axis) { os << '"' << axis.getValue() << '"'; });
  os << '}';
  return text;
}

//===----------------------------------------------------------------------===//
// Plan record
//===----------------------------------------------------------------------===//

LogicalResult
PlanBufferAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       BufferRole role, StringAttr name, RankedTensorType type,
                       RankedTensorType global, int64_t index,
                       ShardingAttr sharding, DenseElementsAttr weight,
                       int64_t microbatchDim) {
  if (!type.hasStaticShape() || !global.hasStaticShape())
    return emitError() << "buffer '" << name.getValue()
                       << "' must be statically shaped";
  if (type.getRank() != global.getRank() ||
      type.getElementType() != global.getElementType())
    return emitError() << "buffer '" << name.getValue()
                       << "': its local and global types differ in more "
                          "than their shape";
  if ((role == BufferRole::Weight) != bool(weight))
    return emitError() << "buffer '" << name.getValue()
                       << "': a weight, and only a weight, has a value";
  if (weight && weight.getType().getShape() != global.getShape())
    return emitError() << "buffer '" << name.getValue()
                       << "': its weight value does not have its global "
                          "shape";
  if (index < 0)
    return emitError() << "buffer '" << name.getValue()
                       << "': negative index " << index;
  if (microbatchDim < -1 || microbatchDim >= type.getRank())
    return emitError() << "buffer '" << name.getValue()
                       << "': micro-batch dim " << microbatchDim
                       << " is not a dim of its type";
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayAttr axes, DenseI64ArrayAttr devices,
                               PipelineAttr pipeline, ArrayAttr buffers,
                               ArrayAttr functions, ArrayAttr transfers) {
  if (!llvm::all_of(axes, llvm::IsaPred<MeshAxisAttr>))
    return emitError() << "plan axes must be #dist.axis attributes";
  if (!llvm::all_of(buffers, llvm::IsaPred<PlanBufferAttr>))
    return emitError() << "plan buffers must be #dist.buffer attributes";
  if (!llvm::all_of(functions, llvm::IsaPred<PlanFunctionAttr>))
    return emitError() << "plan functions must be #dist.function attributes";
  if (!llvm::all_of(transfers, llvm::IsaPred<PlanTransferAttr>))
    return emitError() << "plan transfers must be #dist.transfer attributes";
  int64_t numDevices = 1;
  for (Attribute axis : axes)
    numDevices *= cast<MeshAxisAttr>(axis).getSize();
  if (devices) {
    if (static_cast<int64_t>(devices.size()) != numDevices ||
        plan::invalidDeviceOrderPosition(devices.asArrayRef(), numDevices) >= 0)
      return emitError() << "plan devices must be a permutation of the "
                         << numDevices << " devices of its axes";
  }
  int64_t numBuffers = buffers.size();
  auto inRange = [&](int64_t b) { return b >= 0 && b < numBuffers; };
  if (functions.empty())
    return emitError() << "a plan has at least one function";
  int64_t stages = pipeline ? pipeline.getNumStages() : 1;
  for (auto function : functions.getAsRange<PlanFunctionAttr>()) {
    if (function.getStage() < 0 || function.getStage() >= stages)
      return emitError() << "plan function " << function.getSymbol()
                         << " computes stage " << function.getStage()
                         << ", which the pipeline does not have";
    if (!llvm::all_of(function.getBuffers().asArrayRef(), inRange))
      return emitError() << "plan function " << function.getSymbol()
                         << " takes a buffer the plan does not have";
  }
  for (auto transfer : transfers.getAsRange<PlanTransferAttr>())
    if (!inRange(transfer.getSource()) || !inRange(transfer.getTarget()) ||
        transfer.getFrom() < 0 || transfer.getFrom() >= transfer.getTo() ||
        transfer.getTo() >= stages)
      return emitError() << "plan transfer from stage " << transfer.getFrom()
                         << " to stage " << transfer.getTo()
                         << " names a stage or buffer the plan does not have";
  return success();
}

std::optional<unsigned> PlanAttr::getAxisIndex(StringRef name) const {
  for (unsigned i = 0, e = getAxes().size(); i < e; ++i)
    if (getAxis(i).getName().getValue() == name)
      return i;
  return std::nullopt;
}

SmallVector<int64_t> PlanAttr::getShape() const {
  return llvm::map_to_vector(getAxes(), [](Attribute axis) {
    return cast<MeshAxisAttr>(axis).getSize();
  });
}

ArrayRef<int64_t> PlanAttr::getDeviceOrder() const {
  if (DenseI64ArrayAttr devices = getDevices())
    return devices.asArrayRef();
  return {};
}
