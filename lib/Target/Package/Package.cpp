//===- Package.cpp - plan.bin packaging ---------------------*- C++ -*-===//
//
// Builds the plan::Plan of a compiled module: model signature, the rank's
// buffer list and its weights (raw little-endian bytes, 64-byte aligned).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Package/Package.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace plan = dnnc::plan;

int32_t dnnc::getONNXDataType(Type type) {
  // ONNX TensorProto.DataType codes.
  if (type.isF32())
    return 1;
  if (type.isF64())
    return 11;
  if (type.isF16())
    return 10;
  if (type.isBF16())
    return 16;
  auto i = dyn_cast<IntegerType>(type);
  if (!i)
    return -1;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 1:
    return 9;
  case 8:
    return u ? 2 : 3;
  case 16:
    return u ? 4 : 5;
  case 32:
    return u ? 12 : 6;
  case 64:
    return u ? 13 : 7;
  default:
    return -1;
  }
}

/// Describes a tensor of `type` named `name`.
static bool describe(StringRef name, Type type, plan::TensorDesc &desc,
                     std::string &error) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape()) {
    error = "'" + name.str() + "' is not a statically shaped tensor";
    return false;
  }
  int32_t code = dnnc::getONNXDataType(tensor.getElementType());
  if (code < 0) {
    std::string t;
    llvm::raw_string_ostream os(t);
    os << tensor.getElementType();
    error = "'" + name.str() + "' has element type " + t +
            ", which plan.bin cannot hold";
    return false;
  }
  desc.name = name.str();
  desc.dtype = code;
  desc.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return true;
}

/// Dense byte size of a described tensor.
static uint64_t byteSize(const plan::TensorDesc &desc) {
  uint64_t n = 1;
  for (int64_t d : desc.shape)
    n *= static_cast<uint64_t>(d);
  return n * static_cast<uint64_t>(plan::dtypeByteSize(desc.dtype));
}

/// Appends the raw little-endian bytes of `value` to `out`.
static void appendBytes(DenseElementsAttr value, std::string &out) {
  Type elt = value.getElementType();
  int64_t n = value.getNumElements();
  if (elt.isInteger(1)) {
    for (bool b : value.getValues<bool>())
      out.push_back(b ? 1 : 0);
    return;
  }
  ArrayRef<char> raw = value.getRawData();
  if (!value.isSplat()) {
    out.append(raw.data(), raw.size());
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out.append(raw.data(), raw.size());
}

bool dnnc::collectPlanSignature(ModuleOp module, StringRef target,
                                plan::Plan &plan, std::string &error) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal()) {
    error = "the module has no function @main";
    return false;
  }
  plan.model.target = target.str();
  plan.model.worldSize = 1;
  plan.ranks.assign(1, plan::RankProgram());
  plan::RankProgram &rank = plan.ranks.front();
  rank.rank = 0;
  rank.entry = "dnnc_entry";

  auto nameOf = [](DictionaryAttr attrs, StringRef fallback) {
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>(dnn::kNameAttrName))
        return n.getValue().str();
    return fallback.str();
  };
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = main.getArgAttrDict(i);
    plan::BufferDesc buffer;
    std::string name = nameOf(attrs, "arg" + std::to_string(i));
    if (!describe(name, main.getArgument(i).getType(), buffer.tensor, error))
      return false;
    auto weight =
        attrs ? attrs.getAs<DenseElementsAttr>(dnn::kWeightAttrName) : nullptr;
    if (weight) {
      buffer.role = plan::BufferRole::Weight;
      buffer.index = 0;
      std::string bytes;
      appendBytes(weight, bytes);
      buffer.offset = plan::appendWeight(rank.weights, bytes);
      buffer.size = bytes.size();
    } else {
      buffer.role = plan::BufferRole::Input;
      buffer.index = plan.model.inputs.size();
      buffer.offset = 0;
      buffer.size = byteSize(buffer.tensor);
      plan.model.inputs.push_back(buffer.tensor);
    }
    rank.buffers.push_back(std::move(buffer));
  }
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    plan::BufferDesc buffer;
    std::string name =
        nameOf(main.getResultAttrDict(i), "output" + std::to_string(i));
    if (!describe(name, main.getResultTypes()[i], buffer.tensor, error))
      return false;
    buffer.role = plan::BufferRole::Output;
    buffer.index = plan.model.outputs.size();
    buffer.offset = 0;
    buffer.size = byteSize(buffer.tensor);
    plan.model.outputs.push_back(buffer.tensor);
    rank.buffers.push_back(std::move(buffer));
  }
  return true;
}
