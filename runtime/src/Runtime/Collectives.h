//===- Collectives.h - Mesh groups for the collective kernels --*- C++ -*-===//
//
// Private to the runtime. A CollectiveContext knows the plan's device mesh
// and this rank's place in it, and creates (once, on first use) the
// communicator of every mesh-axis group the rank code's collective kernels
// name by `axesMask` (docs/runtime.md, "Collective kernels"). The CPU
// backend owns one and makes it the active context while the rank's entry
// runs: the kernels' C ABI has no context argument.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_COLLECTIVES_H
#define DNNC_SRC_RUNTIME_COLLECTIVES_H

#include "CommImpl.h"
#include "GlooComm.h"
#include "dnnc/Runtime/Plan.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dnnc::rt {

/// The group of the calling rank along some mesh axes.
struct MeshGroup {
  /// World ranks of the members, by index in the group.
  std::vector<uint32_t> members;
  /// This rank's index in `members`.
  uint32_t index = 0;
#if DNNC_RUNTIME_WITH_MPI
  /// The group's communicator (rank i = members[i]); MPI_COMM_NULL for a
  /// group of one.
  MPI_Comm comm = MPI_COMM_NULL;
#endif
#if DNNC_RUNTIME_WITH_GLOO
  /// The group's Gloo context (rank i = members[i]) when the data path runs
  /// on Gloo (a torchrun-style launch); null otherwise and for a group of
  /// one.
  std::shared_ptr<GlooGroup> gloo;
#endif
};

/// The mesh of a plan as seen from one rank, and its cached groups.
class CollectiveContext {
public:
  /// The context of rank `comm->rank()` of `comm` (or of a process alone
  /// when `comm` is null) for `model`'s mesh. Fails when the number of
  /// processes is not the plan's world size.
  static std::unique_ptr<CollectiveContext>
  create(Comm *comm, const plan::ModelInfo &model, std::string &error);
  ~CollectiveContext();
  CollectiveContext(const CollectiveContext &) = delete;
  CollectiveContext &operator=(const CollectiveContext &) = delete;

  /// This process's world rank.
  uint32_t rank() const { return worldRank; }
  /// Number of ranks.
  uint32_t size() const { return worldSize; }
  /// Number of mesh axes (1 for a plan without axes: one implicit axis).
  size_t numAxes() const { return axisSizes.size(); }
  /// The MPI state, or null without MPI.
  Comm::Impl *mpi() const { return mpiState; }
  /// The Gloo contexts when the data path runs on Gloo, or null.
  GlooWorld *gloo() const { return glooState; }

  /// The group spanning the axes of `axesMask` (bit i = mesh axis i),
  /// created on first use and cached. `axesMask` must be valid
  /// (0 <= axesMask < 2^numAxes()).
  const MeshGroup *group(int64_t axesMask, std::string &error);

  /// The world ranks of the group spanning the axes of `axesMask` (by index
  /// in the group) and this rank's index among them, computed from the mesh
  /// without creating a communicator (the cuda backend builds NCCL
  /// communicators over the same groups). `axesMask` must be valid.
  void groupMembers(int64_t axesMask, std::vector<uint32_t> &members,
                    uint32_t &index) const;

  /// This rank's index in the group spanning the axes of `axesMask`,
  /// computed from its coordinates without creating the group. `axesMask`
  /// must be valid (0 <= axesMask < 2^numAxes()).
  int64_t groupIndex(int64_t axesMask) const;

  /// True once a collective kernel of the current run was skipped because
  /// its arguments were invalid: the rank's communication no longer matches
  /// its peers', so every later communicating kernel is skipped too.
  bool diverged = false;
  /// The micro-batch the running function computes
  /// (dnnc_rt_microbatch_index).
  int64_t microbatch = 0;

private:
  CollectiveContext() = default;

  uint32_t worldRank = 0;
  uint32_t worldSize = 1;
  Comm::Impl *mpiState = nullptr;
  GlooWorld *glooState = nullptr;
  std::vector<int64_t> axisSizes;
  /// Rank at each mesh position.
  std::vector<int64_t> order;
  /// This rank's mesh coordinates.
  std::vector<int64_t> coords;
  std::mutex mutex;
  std::map<int64_t, std::unique_ptr<MeshGroup>> groups;
};

/// Makes a context the one the collective kernels use, for one scope.
class ActiveCollectives {
public:
  /// Activates `context` (null: a process alone without a mesh).
  explicit ActiveCollectives(CollectiveContext *context);
  /// Restores the previously active context.
  ~ActiveCollectives();
  ActiveCollectives(const ActiveCollectives &) = delete;
  ActiveCollectives &operator=(const ActiveCollectives &) = delete;

private:
  CollectiveContext *previous;
};

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_COLLECTIVES_H
