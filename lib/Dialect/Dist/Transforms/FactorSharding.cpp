//===- FactorSharding.cpp - Shardings of a rule's factors -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements FactorSharding: reading factor splits off tensor shardings,
// checking them against the rule, and deriving tensor shardings back.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

FactorSharding::FactorSharding(dnn::ShardingRuleAttr rule, MeshOp mesh)
    : rule(rule), mesh(mesh), axes(rule.getNumFactors()) {}

bool FactorSharding::isSplit() const {
  return llvm::any_of(axes, [](const auto &list) { return !list.empty(); });
}

int64_t FactorSharding::getNumShards(int64_t factor) const {
  int64_t shards = 1;
  for (StringAttr axis : axes[factor])
    shards *= mesh.getAxisSize(axis);
  return shards;
}

bool FactorSharding::usesAxis(StringAttr axis) const {
  return llvm::any_of(
      axes, [&](const auto &list) { return llvm::is_contained(list, axis); });
}

/// Returns true if the dimension with factors `dimFactors` is a block split:
/// reading its factors major to minor (size-1 factors skipped), the split
/// ones all come before the unsplit ones and all but the last split one are
/// fully split.
static bool isBlockSplitDim(const FactorSharding &fs,
                            ArrayRef<int64_t> dimFactors) {
  bool sawPartlySplit = false;
  for (int64_t factor : dimFactors) {
    int64_t size = fs.getRule().getFactorSize(factor);
    if (size == 1)
      continue;
    int64_t shards = fs.getNumShards(factor);
    if (sawPartlySplit && shards > 1)
      return false;
    if (shards != size)
      sawPartlySplit = true;
  }
  return true;
}

bool FactorSharding::isBlockSplit(int64_t factor) const {
  auto check = [&](ArrayRef<dnn::TensorMappingAttr> mappings) {
    for (dnn::TensorMappingAttr mapping : mappings)
      if (std::optional<int64_t> dim = mapping.getDimOfFactor(factor))
        if (!isBlockSplitDim(*this, mapping.getDimFactors(*dim)))
          return false;
    return true;
  };
  return check(rule.getOperands()) && check(rule.getResults());
}

bool FactorSharding::trySplit(int64_t factor, ArrayRef<StringAttr> newAxes) {
  if (newAxes.empty())
    return true;
  if (!rule.canSplit(factor))
    return false;
  int64_t shards = getNumShards(factor);
  for (auto [i, axis] : llvm::enumerate(newAxes)) {
    if (!mesh.hasAxis(axis) || usesAxis(axis) ||
        llvm::is_contained(newAxes.drop_front(i + 1), axis))
      return false;
    shards *= mesh.getAxisSize(axis);
  }
  if (rule.getFactorSize(factor) % shards != 0)
    return false;
  size_t before = axes[factor].size();
  axes[factor].append(newAxes.begin(), newAxes.end());
  if (isBlockSplit(factor))
    return true;
  axes[factor].resize(before);
  return false;
}

bool FactorSharding::merge(dnn::TensorMappingAttr mapping,
                           ShardingAttr sharding) {
  if (!sharding)
    return true;
  if (sharding.getRank() != mapping.getRank())
    return false;
  bool agrees = true;
  for (int64_t dim = 0, e = mapping.getRank(); dim < e; ++dim) {
    ArrayRef<StringAttr> dimAxes = sharding.getDimAxes(dim);
    if (dimAxes.empty())
      continue;
    // Lay the dimension's axes over its factors, major to minor: a factor
    // takes axes while their product divides its size, and the next factor
    // starts only once it is fully split.
    SmallVector<std::pair<int64_t, SmallVector<StringAttr>>> laid;
    ArrayRef<int64_t> factors = mapping.getDimFactors(dim);
    size_t next = 0;
    int64_t shards = 1;
    bool fits = true;
    for (StringAttr axis : dimAxes) {
      if (!mesh.hasAxis(axis)) {
        fits = false;
        break;
      }
      int64_t size = mesh.getAxisSize(axis);
      while (next < factors.size() &&
             (rule.getFactorSize(factors[next]) == 1 ||
              shards == rule.getFactorSize(factors[next]))) {
        ++next;
        shards = 1;
      }
      if (next == factors.size() ||
          rule.getFactorSize(factors[next]) % (shards * size) != 0) {
        fits = false;
        break;
      }
      if (laid.empty() || laid.back().first != factors[next])
        laid.push_back({factors[next], {}});
      laid.back().second.push_back(axis);
      shards *= size;
    }
    if (!fits) {
      agrees = false;
      continue;
    }
    for (auto &[factor, factorAxes] : laid) {
      if (isSplit(factor)) {
        if (ArrayRef<StringAttr>(axes[factor]) != ArrayRef(factorAxes))
          agrees = false;
        continue;
      }
      if (!trySplit(factor, factorAxes))
        agrees = false;
    }
  }
  return agrees;
}

ShardingAttr
FactorSharding::getTensorSharding(dnn::TensorMappingAttr mapping) const {
  MLIRContext *context = rule.getContext();
  SmallVector<AxisListAttr> dims;
  for (int64_t dim = 0, e = mapping.getRank(); dim < e; ++dim) {
    SmallVector<StringAttr> dimAxes;
    for (int64_t factor : mapping.getDimFactors(dim))
      llvm::append_range(dimAxes, axes[factor]);
    dims.push_back(AxisListAttr::get(context, dimAxes));
  }
  return ShardingAttr::get(context,
                           FlatSymbolRefAttr::get(mesh.getSymNameAttr()), dims,
                           ArrayRef<StringAttr>());
}

ShardingAttr FactorSharding::getOperandSharding(int64_t index) const {
  return getTensorSharding(rule.getOperandMapping(index));
}

ShardingAttr FactorSharding::getResultSharding(int64_t index) const {
  dnn::TensorMappingAttr mapping = rule.getResultMapping(index);
  ShardingAttr sharding = getTensorSharding(mapping);
  SmallVector<StringAttr> partial;
  for (int64_t factor = 0, e = rule.getNumFactors(); factor < e; ++factor)
    if (rule.getFactorKind(factor) == dnn::FactorKind::Sum &&
        !mapping.hasFactor(factor))
      llvm::append_range(partial, axes[factor]);
  if (partial.empty())
    return sharding;
  return ShardingAttr::get(rule.getContext(), sharding.getMesh(),
                           sharding.getDims(), partial);
}

SmallVector<std::pair<dnn::FactorKind, SmallVector<StringAttr>>>
FactorSharding::getPendingReductions(int64_t index) const {
  SmallVector<std::pair<dnn::FactorKind, SmallVector<StringAttr>>> pending;
  dnn::TensorMappingAttr mapping = rule.getResultMapping(index);
  for (int64_t factor = 0, e = rule.getNumFactors(); factor < e; ++factor) {
    dnn::FactorKind kind = rule.getFactorKind(factor);
    if (!rule.isReduction(factor) || kind == dnn::FactorKind::Sum ||
        mapping.hasFactor(factor) || !isSplit(factor))
      continue;
    auto it = llvm::find_if(pending,
                            [&](const auto &p) { return p.first == kind; });
    if (it == pending.end()) {
      pending.push_back({kind, {}});
      it = std::prev(pending.end());
    }
    llvm::append_range(it->second, axes[factor]);
  }
  return pending;
}

FactorSharding dnnc::dist::inferFactorSharding(
    dnn::ShardingRuleAttr rule, MeshOp mesh, ArrayRef<ShardingAttr> operands,
    ArrayRef<ShardingAttr> results, bool *consistent) {
  FactorSharding fs(rule, mesh);
  bool agrees = true;
  for (auto [index, sharding] : llvm::enumerate(operands))
    if (sharding)
      agrees &= fs.merge(rule.getOperandMapping(index), sharding);
  for (auto [index, sharding] : llvm::enumerate(results))
    if (sharding)
      agrees &= fs.merge(rule.getResultMapping(index), sharding);
  if (consistent)
    *consistent = agrees;
  return fs;
}

ShardingAttr dnnc::dist::getStoredSharding(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getFunctionBody().front())
      return {};
    return func.getArgAttrOfType<ShardingAttr>(
        arg.getArgNumber(), DistDialect::getShardingAttrName());
  }
  Operation *op = value.getDefiningOp();
  auto list =
      op->getAttrOfType<ArrayAttr>(DistDialect::getShardingsAttrName());
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (!list || list.size() != op->getNumResults())
    return {};
  return dyn_cast<ShardingAttr>(list[index]);
}

void dnnc::dist::setStoredSharding(Value value, ShardingAttr sharding) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    func.setArgAttr(arg.getArgNumber(), DistDialect::getShardingAttrName(),
                    sharding);
    return;
  }
  Operation *op = value.getDefiningOp();
  auto list =
      op->getAttrOfType<ArrayAttr>(DistDialect::getShardingsAttrName());
  SmallVector<Attribute> entries;
  if (list && list.size() == op->getNumResults())
    entries.assign(list.begin(), list.end());
  else
    for (Value result : op->getResults())
      entries.push_back(ShardingAttr::getReplicated(
          op->getContext(), sharding.getMesh(),
          cast<RankedTensorType>(result.getType()).getRank()));
  entries[cast<OpResult>(value).getResultNumber()] = sharding;
  op->setAttr(DistDialect::getShardingsAttrName(),
              ArrayAttr::get(op->getContext(), entries));
}

FactorSharding dnnc::dist::getStoredFactorSharding(Operation *op,
                                                   dnn::ShardingRuleAttr rule,
                                                   MeshOp mesh) {
  SmallVector<ShardingAttr> operands =
      llvm::map_to_vector(op->getOperands(), getStoredSharding);
  SmallVector<ShardingAttr> results =
      llvm::map_to_vector(op->getResults(), getStoredSharding);
  return inferFactorSharding(rule, mesh, operands, results);
}
