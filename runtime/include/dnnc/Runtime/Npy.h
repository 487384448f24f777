//===- Npy.h - NumPy .npy codec --------------------------------*- C++ -*-===//
//
// Reads `.npy` files (format versions 1.0, 2.0 and 3.0, little-endian or
// byte-order-free dtypes, C order) and writes version 1.0 files.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_NPY_H
#define DNNC_RUNTIME_NPY_H

#include "dnnc/Runtime/HostTensor.h"

#include <string>
#include <string_view>

namespace dnnc::rt {

/// The 6 bytes every .npy file starts with.
inline constexpr char kNpyMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/// Decodes a .npy file's bytes into `tensor` (with an empty name). Supported
/// descrs: bool (b1), int8..int64 (i1..i8), uint8..uint64 (u1..u8), float16/
/// 32/64 (f2, f4, f8), complex64/128 (c8, c16). Big-endian data, Fortran
/// order and object arrays are errors.
bool decodeNpy(std::string_view bytes, HostTensor &tensor, std::string &error);

/// Encodes `tensor` as a version 1.0 .npy file. Fails for dtypes NumPy has
/// no descr for (bfloat16, float8).
bool encodeNpy(const HostTensor &tensor, std::string &bytes,
               std::string &error);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_NPY_H
