//===- DataType.cpp - Element types of plan.bin tensors ---------*- C++ -*-===//
//
// Byte sizes and names of ONNX dtype codes; overflow-checked size arithmetic.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/DataType.h"

namespace dnnc::plan {

int64_t dtypeByteSize(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
  case DataType::UInt8:
  case DataType::Int8:
  case DataType::Bool:
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
    return 1;
  case DataType::UInt16:
  case DataType::Int16:
  case DataType::Float16:
  case DataType::BFloat16:
    return 2;
  case DataType::Float:
  case DataType::Int32:
  case DataType::UInt32:
    return 4;
  case DataType::Int64:
  case DataType::Double:
  case DataType::UInt64:
  case DataType::Complex64:
    return 8;
  case DataType::Complex128:
    return 16;
  case DataType::String:
    return 0;
  }
  return 0;
}

std::string dtypeName(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
  case DataType::Float:
    return "float32";
  case DataType::UInt8:
    return "uint8";
  case DataType::Int8:
    return "int8";
  case DataType::UInt16:
    return "uint16";
  case DataType::Int16:
    return "int16";
  case DataType::Int32:
    return "int32";
  case DataType::Int64:
    return "int64";
  case DataType::String:
    return "string";
  case DataType::Bool:
    return "bool";
  case DataType::Float16:
    return "float16";
  case DataType::Double:
    return "float64";
  case DataType::UInt32:
    return "uint32";
  case DataType::UInt64:
    return "uint64";
  case DataType::Complex64:
    return "complex64";
  case DataType::Complex128:
    return "complex128";
  case DataType::BFloat16:
    return "bfloat16";
  case DataType::Float8E4M3FN:
    return "float8e4m3fn";
  case DataType::Float8E4M3FNUZ:
    return "float8e4m3fnuz";
  case DataType::Float8E5M2:
    return "float8e5m2";
  case DataType::Float8E5M2FNUZ:
    return "float8e5m2fnuz";
  }
  return "dtype(" + std::to_string(dtype) + ")";
}

bool checkedNumElements(const std::vector<int64_t> &shape,
                        uint64_t &numElements) {
  if (shape.size() > kMaxTensorRank)
    return false;
  uint64_t product = 1;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0 || static_cast<uint64_t>(dim) > kMaxTensorBytes)
      return false;
    if (dim == 0) {
      empty = true;
      continue;
    }
    // Both factors are <= 2^48 here, so the product cannot wrap before the
    // check: test with a division instead of multiplying first.
    if (product > kMaxTensorBytes / static_cast<uint64_t>(dim))
      return false;
    product *= static_cast<uint64_t>(dim);
  }
  numElements = empty ? 0 : product;
  return true;
}

bool checkedByteSize(int32_t dtype, const std::vector<int64_t> &shape,
                     uint64_t &bytes) {
  int64_t elementSize = dtypeByteSize(dtype);
  uint64_t numElements = 0;
  if (elementSize <= 0 || !checkedNumElements(shape, numElements))
    return false;
  if (numElements > kMaxTensorBytes / static_cast<uint64_t>(elementSize))
    return false;
  bytes = numElements * static_cast<uint64_t>(elementSize);
  return true;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

std::string formatTensorType(int32_t dtype, const std::vector<int64_t> &shape) {
  return dtypeName(dtype) + "[" + formatShape(shape) + "]";
}

} // namespace dnnc::plan
