//===- TensorFile.h - Reading and writing tensor files ---------*- C++ -*-===//
//
// Input files of dnnc-run (ONNX TensorProto `.pb` or NumPy `.npy`, told apart
// by content) and output files (TensorProto with raw_data).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TENSORFILE_H
#define DNNC_RUNTIME_TENSORFILE_H

#include "dnnc/Runtime/HostTensor.h"

#include <string>

namespace dnnc::rt {

/// Reads the tensor file at `path`: a `.npy` file when it starts with the
/// NumPy magic, else a serialized ONNX TensorProto. Errors do not repeat the
/// path; callers add it.
bool readTensorFile(const std::string &path, HostTensor &tensor,
                    std::string &error);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_TENSORFILE_H
