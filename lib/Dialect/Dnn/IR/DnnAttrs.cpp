//===- DnnAttrs.cpp - dnn dialect attributes --------------------*- C++ -*-===//
//
// Assembly format, verifier and helpers of `#dnn.tensor_mapping` and
// `#dnn.sharding_rule`.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dnnc::dnn;

#define GET_ATTRDEF_CLASSES
#include "dnnc/Dialect/Dnn/IR/DnnAttrs.cpp.inc"

void DnnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dnnc/Dialect/Dnn/IR/DnnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TensorMappingAttr
//===----------------------------------------------------------------------===//

TensorMappingAttr TensorMappingAttr::get(MLIRContext *context,
                                         ArrayRef<SmallVector<int64_t>> dims) {
  SmallVector<DenseI64ArrayAttr> attrs;
  for (const SmallVector<int64_t> &factors : dims)
    attrs.push_back(DenseI64ArrayAttr::get(context, factors));
  return get(context, ArrayRef<DenseI64ArrayAttr>(attrs));
}

std::optional<int64_t> TensorMappingAttr::getDimOfFactor(int64_t factor) const {
  for (int64_t dim = 0, e = getRank(); dim < e; ++dim)
    if (llvm::is_contained(getDimFactors(dim), factor))
      return dim;
  return std::nullopt;
}

Attribute TensorMappingAttr::parse(AsmParser &parser, Type /*type*/) {
  SmallVector<SmallVector<int64_t>> dims;
  auto parseDim = [&]() -> ParseResult {
    SmallVector<int64_t> &factors = dims.emplace_back();
    return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
      return parser.parseInteger(factors.emplace_back());
    });
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseGreater())
    return {};
  return get(parser.getContext(), dims);
}

void TensorMappingAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer, [&](DenseI64ArrayAttr dim) {
    printer << '[';
    llvm::interleaveComma(dim.asArrayRef(), printer);
    printer << ']';
  });
  printer << "]>";
}

//===----------------------------------------------------------------------===//
// ShardingRuleAttr: helpers
//===----------------------------------------------------------------------===//

std::string ShardingRuleAttr::getFactorName(int64_t factor) {
  // i, j, ..., z, a, ..., h, then the same letters with a suffix: i_1, ...
  static constexpr llvm::StringLiteral kLetters = "ijklmnopqrstuvwxyzabcdefgh";
  std::string name(1, kLetters[factor % kLetters.size()]);
  if (int64_t round = factor / kLetters.size())
    name += "_" + std::to_string(round);
  return name;
}

int64_t ShardingRuleAttr::getProduct(ArrayRef<int64_t> factors) const {
  int64_t product = 1;
  for (int64_t factor : factors)
    product *= getFactorSize(factor);
  return product;
}

SmallVector<int64_t>
ShardingRuleAttr::getShape(TensorMappingAttr mapping) const {
  SmallVector<int64_t> shape;
  for (int64_t dim = 0, e = mapping.getRank(); dim < e; ++dim)
    shape.push_back(getProduct(mapping.getDimFactors(dim)));
  return shape;
}

SmallVector<int64_t> ShardingRuleAttr::getFactorsOfKind(FactorKind kind) const {
  SmallVector<int64_t> factors;
  for (int64_t factor = 0, e = getNumFactors(); factor < e; ++factor)
    if (getFactorKind(factor) == kind)
      factors.push_back(factor);
  return factors;
}

SmallVector<int64_t> ShardingRuleAttr::getReductionFactors() const {
  SmallVector<int64_t> factors;
  for (int64_t factor = 0, e = getNumFactors(); factor < e; ++factor)
    if (isReduction(factor))
      factors.push_back(factor);
  return factors;
}

LogicalResult ShardingRuleAttr::verifyForTypes(
    TypeRange operandTypes, TypeRange resultTypes,
    function_ref<InFlightDiagnostic()> emitError) const {
  auto check = [&](StringRef what, TypeRange types,
                   ArrayRef<TensorMappingAttr> mappings) -> LogicalResult {
    if (types.size() != mappings.size())
      return emitError() << "the rule has " << mappings.size() << " " << what
                         << " mapping(s) but the op has " << types.size() << " "
                         << what << "(s)";
    for (auto [index, type, mapping] : llvm::enumerate(types, mappings)) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape())
        return emitError() << what << " #" << index
                           << " is not a statically shaped tensor";
      if (tensor.getRank() != mapping.getRank())
        return emitError() << what << " #" << index << " has rank "
                           << tensor.getRank() << " but the rule maps "
                           << mapping.getRank() << " dimension(s)";
      for (auto [dim, extent] : llvm::enumerate(tensor.getShape())) {
        ArrayRef<int64_t> factors = mapping.getDimFactors(dim);
        // Empty tensors are never split: a dimension of extent 0 has no
        // factors.
        if (extent == 0 && factors.empty())
          continue;
        int64_t product = getProduct(factors);
        if (product != extent)
          return emitError() << "dimension " << dim << " of " << what << " #"
                             << index << " has extent " << extent
                             << " but its factors multiply to " << product;
      }
    }
    return success();
  };
  if (failed(check("operand", operandTypes, getOperands())) ||
      failed(check("result", resultTypes, getResults())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ShardingRuleAttr: verifier
//===----------------------------------------------------------------------===//

LogicalResult ShardingRuleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> factorSizes,
    ArrayRef<FactorKind> factorKinds, ArrayRef<TensorMappingAttr> operands,
    ArrayRef<TensorMappingAttr> results) {
  int64_t numFactors = factorSizes.size();
  if (factorKinds.size() != factorSizes.size())
    return emitError() << "expects one kind per factor, got "
                       << factorKinds.size() << " kinds for " << numFactors
                       << " factors";
  for (auto [factor, size] : llvm::enumerate(factorSizes))
    if (size <= 0)
      return emitError() << "factor '" << getFactorName(factor) << "' has size "
                         << size << "; factor sizes must be positive";

  // Where each factor is used: per tensor, at most once.
  SmallVector<bool> used(numFactors, false);
  SmallVector<int64_t> numResultsWith(numFactors, 0);
  auto checkTensor = [&](StringRef what, int64_t index,
                         TensorMappingAttr mapping) -> LogicalResult {
    llvm::SmallSet<int64_t, 8> seen;
    for (DenseI64ArrayAttr dim : mapping.getDims()) {
      for (int64_t factor : dim.asArrayRef()) {
        if (factor < 0 || factor >= numFactors)
          return emitError()
                 << "factor index " << factor << " of " << what << " #" << index
                 << " is out of range [0, " << numFactors << ")";
        if (!seen.insert(factor).second)
          return emitError()
                 << "factor '" << getFactorName(factor)
                 << "' appears more than once in " << what << " #" << index;
        used[factor] = true;
      }
    }
    return success();
  };
  for (auto [index, mapping] : llvm::enumerate(operands))
    if (failed(checkTensor("operand", index, mapping)))
      return failure();
  for (auto [index, mapping] : llvm::enumerate(results)) {
    if (failed(checkTensor("result", index, mapping)))
      return failure();
    for (int64_t factor = 0; factor < numFactors; ++factor)
      if (mapping.hasFactor(factor))
        ++numResultsWith[factor];
  }

  int64_t numResults = results.size();
  for (int64_t factor = 0; factor < numFactors; ++factor) {
    std::string name = getFactorName(factor);
    if (!used[factor])
      return emitError() << "factor '" << name
                         << "' is used by no operand or result";
    FactorKind kind = factorKinds[factor];
    if (kind == FactorKind::Parallel && numResultsWith[factor] != numResults) {
      int64_t missing = 0;
      while (results[missing].hasFactor(factor))
        ++missing;
      return emitError() << "parallel factor '" << name
                         << "' is missing from result #" << missing
                         << "; a factor some results lack is a reduction";
    }
    if (isReductionKind(kind) && numResults != 0 &&
        numResultsWith[factor] == numResults)
      return emitError() << "reduction factor '" << name
                         << "' appears in every result; a reduction factor "
                            "must leave some result partial";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ShardingRuleAttr: assembly format
//===----------------------------------------------------------------------===//
//
//   #dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4}
//                      reduction={k:sum} replication={...} halo={...}>
//
// A dimension is a concatenation of factor names (`ij`), or `1` for none.

/// Splits `word` (`ij`, `i_1k`) into factor names: a letter, optionally
/// followed by `_` and digits.
static LogicalResult splitFactorNames(StringRef word,
                                      SmallVectorImpl<StringRef> &names) {
  while (!word.empty()) {
    if (!llvm::isAlpha(word.front()))
      return failure();
    size_t length = 1;
    if (length < word.size() && word[length] == '_') {
      size_t digits = length + 1;
      while (digits < word.size() && llvm::isDigit(word[digits]))
        ++digits;
      if (digits == length + 1)
        return failure();
      length = digits;
    }
    names.push_back(word.take_front(length));
    word = word.drop_front(length);
  }
  return success();
}

/// One dimension as parsed: its factor names and where they were written.
struct ParsedDim {
  SmallVector<std::string> names;
  SMLoc loc;
};
/// The dimensions of one tensor, as parsed.
using ParsedTensor = SmallVector<ParsedDim>;

/// Parses `[ij, k, 1]`.
static ParseResult parseTensor(AsmParser &parser, ParsedTensor &tensor) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        ParsedDim &dim = tensor.emplace_back();
        SMLoc loc = dim.loc = parser.getCurrentLocation();
        uint64_t one = 0;
        OptionalParseResult integer = parser.parseOptionalInteger(one);
        if (integer.has_value()) {
          if (failed(*integer))
            return failure();
          if (one != 1)
            return parser.emitError(loc, "expected factor names or '1' (a "
                                         "dimension without factors)");
          return success();
        }
        StringRef word;
        if (parser.parseKeyword(&word))
          return failure();
        SmallVector<StringRef> names;
        if (failed(splitFactorNames(word, names)))
          return parser.emitError(loc, "invalid factor names '")
                 << word << "': expected letters, each optionally followed "
                 << "by '_' and digits";
        for (StringRef name : names)
          dim.names.push_back(name.str());
        return success();
      });
}

/// Parses one factor name.
static ParseResult parseFactorName(AsmParser &parser, std::string &name) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  SmallVector<StringRef> names;
  if (failed(splitFactorNames(word, names)) || names.size() != 1)
    return parser.emitError(loc, "expected one factor name, got '")
           << word << "'";
  name = word.str();
  return success();
}

Attribute ShardingRuleAttr::parse(AsmParser &parser, Type /*type*/) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<ParsedTensor> operands, results;
  auto parseTensors = [&](SmallVectorImpl<ParsedTensor> &tensors) {
    return parser.parseCommaSeparatedList(AsmParser::Delimiter::Paren, [&]() {
      return parseTensor(parser, tensors.emplace_back());
    });
  };
  if (parser.parseLess() || parseTensors(operands) || parser.parseArrow() ||
      parseTensors(results))
    return {};

  // Factor sizes, in factor order.
  llvm::StringMap<int64_t> indexOf;
  SmallVector<int64_t> sizes;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Braces, [&]() -> ParseResult {
            SMLoc nameLoc = parser.getCurrentLocation();
            std::string name;
            int64_t size = 0;
            if (parseFactorName(parser, name) || parser.parseEqual() ||
                parser.parseInteger(size))
              return failure();
            if (!indexOf.try_emplace(name, sizes.size()).second)
              return parser.emitError(nameLoc, "factor '")
                     << name << "' has two sizes";
            sizes.push_back(size);
            return success();
          }))
    return {};

  // Kind groups; unlisted factors are parallel.
  SmallVector<FactorKind> kinds(sizes.size(), FactorKind::Parallel);
  SmallVector<bool> kindSet(sizes.size(), false);
  auto setKind = [&](SMLoc nameLoc, StringRef name,
                     FactorKind kind) -> ParseResult {
    auto it = indexOf.find(name);
    if (it == indexOf.end())
      return parser.emitError(nameLoc, "unknown factor '") << name << "'";
    if (kindSet[it->second])
      return parser.emitError(nameLoc, "factor '") << name << "' has two kinds";
    kindSet[it->second] = true;
    kinds[it->second] = kind;
    return success();
  };
  StringRef group;
  while (succeeded(parser.parseOptionalKeyword(
      &group, {"reduction", "replication", "halo"}))) {
    bool isReductionGroup = group == "reduction";
    FactorKind groupKind =
        group == "halo" ? FactorKind::Halo : FactorKind::NeedReplication;
    if (parser.parseEqual() ||
        parser.parseCommaSeparatedList(
            AsmParser::Delimiter::Braces, [&]() -> ParseResult {
              SMLoc nameLoc = parser.getCurrentLocation();
              std::string name;
              if (parseFactorName(parser, name))
                return failure();
              FactorKind kind = groupKind;
              if (isReductionGroup) {
                SMLoc kindLoc = parser.getCurrentLocation();
                StringRef kindName;
                if (parser.parseColon() || parser.parseKeyword(&kindName))
                  return failure();
                std::optional<FactorKind> parsed =
                    symbolizeFactorKind(kindName);
                if (!parsed || !isReductionKind(*parsed))
                  return parser.emitError(kindLoc, "expected a reduction "
                                                   "kind (sum, max, min, "
                                                   "prod, mean), got '")
                         << kindName << "'";
                kind = *parsed;
              }
              return setKind(nameLoc, name, kind);
            }))
      return {};
  }
  if (parser.parseGreater())
    return {};

  // Resolve names to indices.
  auto resolve = [&](ArrayRef<ParsedTensor> parsed,
                     SmallVectorImpl<TensorMappingAttr> &mappings) {
    for (const ParsedTensor &tensor : parsed) {
      SmallVector<SmallVector<int64_t>> dims;
      for (const ParsedDim &dim : tensor) {
        SmallVector<int64_t> &factors = dims.emplace_back();
        for (const std::string &name : dim.names) {
          auto it = indexOf.find(name);
          if (it == indexOf.end()) {
            parser.emitError(dim.loc, "factor '") << name << "' has no size";
            return failure();
          }
          factors.push_back(it->second);
        }
      }
      mappings.push_back(TensorMappingAttr::get(context, dims));
    }
    return success();
  };
  SmallVector<TensorMappingAttr> operandMappings, resultMappings;
  if (failed(resolve(operands, operandMappings)) ||
      failed(resolve(results, resultMappings)))
    return {};
  return parser.getChecked<ShardingRuleAttr>(loc, context, sizes, kinds,
                                             operandMappings, resultMappings);
}

void ShardingRuleAttr::print(AsmPrinter &printer) const {
  raw_ostream &os = printer.getStream();
  auto printTensors = [&](ArrayRef<TensorMappingAttr> tensors) {
    os << '(';
    llvm::interleaveComma(tensors, os, [&](TensorMappingAttr tensor) {
      os << '[';
      llvm::interleaveComma(tensor.getDims(), os, [&](DenseI64ArrayAttr dim) {
        if (dim.empty())
          os << '1';
        for (int64_t factor : dim.asArrayRef())
          os << getFactorName(factor);
      });
      os << ']';
    });
    os << ')';
  };
  os << '<';
  printTensors(getOperands());
  os << " -> ";
  printTensors(getResults());
  os << " {";
  llvm::interleaveComma(
      llvm::seq<int64_t>(0, getNumFactors()), os, [&](int64_t factor) {
        os << getFactorName(factor) << '=' << getFactorSize(factor);
      });
  os << '}';
  SmallVector<int64_t> reductions = getReductionFactors();
  if (!reductions.empty()) {
    os << " reduction={";
    llvm::interleaveComma(reductions, os, [&](int64_t factor) {
      os << getFactorName(factor) << ':'
         << stringifyFactorKind(getFactorKind(factor));
    });
    os << '}';
  }
  auto printGroup = [&](StringRef name, FactorKind kind) {
    SmallVector<int64_t> factors = getFactorsOfKind(kind);
    if (factors.empty())
      return;
    os << ' ' << name << "={";
    llvm::interleaveComma(factors, os,
                          [&](int64_t factor) { os << getFactorName(factor); });
    os << '}';
  };
  printGroup("replication", FactorKind::NeedReplication);
  printGroup("halo", FactorKind::Halo);
  os << '>';
}
