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
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dnnc::dist;

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
                                   bool /*zero*/) {
  if (axis && axis.getValue().empty())
    return emitError() << "pipeline axis name must be non-empty";
  for (auto [name, count] : {std::pair<StringRef, int64_t>{"stages", stages},
                             {"chunks", chunks},
                             {"microbatches", microbatches}})
    if (count < 1)
      return emitError() << "pipeline " << name << " must be >= 1, got "
                         << count;
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
