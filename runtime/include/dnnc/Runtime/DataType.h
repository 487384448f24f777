//===- DataType.h - Element types of plan.bin tensors -----------*- C++ -*-===//
//
// ONNX `TensorProto.DataType` codes as plan.bin and the runtime use them, with
// their byte sizes, names and overflow-checked tensor size arithmetic.
// Dependency-free: part of the DNNCPlan library that the compiler links.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_DATATYPE_H
#define DNNC_RUNTIME_DATATYPE_H

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::plan {

/// ONNX `TensorProto.DataType` codes (onnx.proto). plan.bin stores the code
/// as an `int32_t`.
enum class DataType : int32_t {
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
};

/// Largest tensor rank (number of dimensions) plan.bin and the runtime accept.
inline constexpr uint32_t kMaxTensorRank = 64;

/// Largest byte size of one tensor (256 TiB): keeps all size arithmetic far
/// from overflow.
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 48;

/// Bytes per element of ONNX dtype `dtype`, or 0 when the runtime does not
/// support it (unknown codes, STRING and sub-byte types).
int64_t dtypeByteSize(int32_t dtype);

/// True when `dtype` is a code the runtime supports (`dtypeByteSize > 0`).
inline bool isSupportedDType(int32_t dtype) { return dtypeByteSize(dtype) > 0; }

/// A short name for `dtype` ("float32", "int64", "bfloat16", ...), or
/// "dtype(N)" for codes without one.
std::string dtypeName(int32_t dtype);

/// Sets `numElements` to the product of `shape` and returns true, or returns
/// false when a dimension is negative, the rank exceeds `kMaxTensorRank` or
/// the product exceeds `kMaxTensorBytes`.
bool checkedNumElements(const std::vector<int64_t> &shape,
                        uint64_t &numElements);

/// Sets `bytes` to the byte size of a dense tensor of `dtype` and `shape` and
/// returns true, or returns false for an unsupported dtype or a shape that
/// `checkedNumElements` rejects, or a size above `kMaxTensorBytes`.
bool checkedByteSize(int32_t dtype, const std::vector<int64_t> &shape,
                     uint64_t &bytes);

/// Formats a shape as `2x3x4` (the empty string for a scalar).
std::string formatShape(const std::vector<int64_t> &shape);

/// Formats a tensor type as `float32[2x3]` (`float32[]` for a scalar).
std::string formatTensorType(int32_t dtype, const std::vector<int64_t> &shape);

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_DATATYPE_H
