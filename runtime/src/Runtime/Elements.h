//===- Elements.h - Element storage of the cpu reference kernels -*- C++
//-*-===//
//
// Private to the runtime: how the reference kernels (attention, GEMM
// epilogues) load and store float, bfloat16 and IEEE half elements. They
// compute in float.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_ELEMENTS_H
#define DNNC_SRC_RUNTIME_ELEMENTS_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dnnc::rt::elements {

/// float elements.
struct F32 {
  using Storage = float;
  static float load(const Storage *p, int64_t i) { return p[i]; }
  static void store(Storage *p, int64_t i, float v) { p[i] = v; }
};

/// bfloat16: the high half of a float; stores round to nearest even.
struct BF16 {
  using Storage = uint16_t;
  static float load(const Storage *p, int64_t i) {
    uint32_t bits = uint32_t(p[i]) << 16;
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  static void store(Storage *p, int64_t i, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (std::isnan(v))
      p[i] = uint16_t((bits >> 16) | 0x40);
    else
      p[i] = uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
  }
};

/// IEEE half through the compiler's _Float16.
struct F16 {
  using Storage = _Float16;
  static float load(const Storage *p, int64_t i) { return float(p[i]); }
  static void store(Storage *p, int64_t i, float v) { p[i] = _Float16(v); }
};

} // namespace dnnc::rt::elements

#endif // DNNC_SRC_RUNTIME_ELEMENTS_H
