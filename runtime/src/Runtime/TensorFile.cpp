//===- TensorFile.cpp - Reading tensor files -------------------*- C++ -*-===//
//
// Tells .npy from TensorProto files by content and decodes them.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/TensorFile.h"
#include "dnnc/Runtime/DataType.h"
#include "dnnc/Runtime/FileUtil.h"
#include "dnnc/Runtime/Npy.h"
#include "dnnc/Runtime/TensorProto.h"

#include <cstring>

namespace dnnc::rt {

bool readTensorFile(const std::string &path, HostTensor &tensor,
                    std::string &error) {
  std::string bytes;
  // A tensor file holds at most one maximal tensor plus its header.
  if (!plan::readWholeFile(path, bytes, plan::kMaxTensorBytes + (1u << 20),
                           error))
    return false;
  if (bytes.size() >= sizeof(kNpyMagic) &&
      std::memcmp(bytes.data(), kNpyMagic, sizeof(kNpyMagic)) == 0)
    return decodeNpy(bytes, tensor, error);
  return decodeTensorProto(bytes, tensor, error);
}

} // namespace dnnc::rt
