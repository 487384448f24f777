//===- HostTensor.h - A dense tensor in host memory ------------*- C++ -*-===//
//
// The runtime's host-side tensor: what input files decode to and what output
// files encode from.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_HOSTTENSOR_H
#define DNNC_RUNTIME_HOSTTENSOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::rt {

/// A dense, row-major tensor with little-endian element bytes.
struct HostTensor {
  /// Tensor name ("" when the file has none, e.g. `.npy`).
  std::string name;
  /// ONNX `TensorProto.DataType` code.
  int32_t dtype = 0;
  /// Shape; empty for a scalar.
  std::vector<int64_t> shape;
  /// Exactly numElements(shape) * dtypeByteSize(dtype) bytes.
  std::string data;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_HOSTTENSOR_H
