//===- CommImpl.h - MPI state behind Comm ----------------------*- C++ -*-===//
//
// Private to the runtime: the MPI communicators of a Comm, shared by
// Comm.cpp (dnnc-run's own traffic) and Collectives.cpp (the kernels), and
// the loop that cuts a message into pieces of MPI's `int` counts.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_COMMIMPL_H
#define DNNC_SRC_RUNTIME_COMMIMPL_H

#include "dnnc/Runtime/Comm.h"

#if DNNC_RUNTIME_WITH_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::rt {

#if DNNC_RUNTIME_WITH_MPI
/// The MPI side of a Comm that uses MPI.
struct Comm::Impl {
  /// dnnc-run's own traffic: status agreement, descriptors, output gather.
  MPI_Comm control = MPI_COMM_NULL;
  /// The collective kernels: point-to-point kernels and the parent of every
  /// group communicator. A duplicate of MPI_COMM_WORLD (same ranks).
  MPI_Comm kernels = MPI_COMM_NULL;
  /// Point-to-point traffic between pipeline stages (Comm::isend,
  /// Comm::recvStage). A duplicate of MPI_COMM_WORLD.
  MPI_Comm stages = MPI_COMM_NULL;
  /// The sends isend() started and waitAll() has not completed yet.
  std::vector<MPI_Request> pending;
  /// The largest tag MPI accepts (MPI_TAG_UB).
  int tagUpperBound = 32767;
};

/// "MPI_Allreduce failed: <MPI's error string>".
std::string mpiError(const char *call, int code);

/// Largest element count of one MPI call: MPI counts are `int`.
inline constexpr uint64_t kMaxPieceElements = uint64_t(1) << 30;

/// Calls `piece(at, count)` for the consecutive pieces of at most
/// kMaxPieceElements elements that cover `n` elements (elements `at` ..
/// `at + count - 1`), in order, and stops at the first that returns false;
/// for `n` 0, once with `count` 0 (an empty message still meets its peer's).
/// Returns false when a piece did.
template <typename PieceFn> bool forEachPiece(uint64_t n, PieceFn &&piece) {
  uint64_t at = 0;
  do {
    uint64_t count = std::min(kMaxPieceElements, n - at);
    if (!piece(at, count))
      return false;
    at += count;
  } while (at < n);
  return true;
}
#else
/// A Comm without MPI has no state.
struct Comm::Impl {};
#endif

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_COMMIMPL_H
