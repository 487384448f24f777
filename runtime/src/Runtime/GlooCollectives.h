//===- GlooCollectives.h - Collective kernels over Gloo --------*- C++ -*-===//
//
// Private to the runtime: the data movement of the cpu collective kernels
// (Kernels.h) for a mesh group whose communicator is a Gloo context, as in
// a torchrun-style launch (GlooComm.h). Collectives.cpp checks the
// arguments, finds the group and handles what needs no peer (zero
// elements, groups of one) before it calls these; they implement the
// layouts and dtype rules of docs/runtime.md, "Collective kernels", exactly
// as the MPI path does. Each returns false with one line in `error` (Gloo's
// message, the context's members) when Gloo fails or times out.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_GLOOCOLLECTIVES_H
#define DNNC_SRC_RUNTIME_GLOOCOLLECTIVES_H

#include "GlooComm.h"

#include <cstdint>
#include <string>

namespace dnnc::rt {

#if DNNC_RUNTIME_WITH_GLOO

/// dnnc_rt_all_reduce of `count` (> 0) elements of the reducible `dtype`
/// with `op` (checked by the caller).
bool glooAllReduce(GlooGroup &group, int32_t dtype, int32_t op,
                   const void *in, void *out, uint64_t count,
                   std::string &error);

/// dnnc_rt_all_gather: `in` [outer, chunk] to `out` [outer, G*chunk], of
/// elements of `elementSize` bytes.
bool glooAllGather(GlooGroup &group, uint64_t elementSize, const void *in,
                   void *out, uint64_t outer, uint64_t chunk,
                   std::string &error);

/// dnnc_rt_reduce_scatter: `in` [outer, G*chunk] reduced with `op`, block
/// of this member to `out` [outer, chunk].
bool glooReduceScatter(GlooGroup &group, int32_t dtype, int32_t op,
                       const void *in, void *out, uint64_t outer,
                       uint64_t chunk, std::string &error);

/// dnnc_rt_all_to_all: `in` [outer, G, splitChunk], block j to member j;
/// `out` [X, G, inner] with X = outer*splitChunk/inner.
bool glooAllToAll(GlooGroup &group, uint64_t elementSize, const void *in,
                  void *out, uint64_t outer, uint64_t splitChunk,
                  uint64_t inner, std::string &error);

/// dnnc_rt_broadcast of `count` elements from member `root`.
bool glooBroadcast(GlooGroup &group, uint64_t elementSize, void *buf,
                   uint64_t count, uint32_t root, std::string &error);

#endif // DNNC_RUNTIME_WITH_GLOO

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_GLOOCOLLECTIVES_H
