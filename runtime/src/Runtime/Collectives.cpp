//===- Collectives.cpp - Collective kernels for CPU rank code --*- C++ -*-===//
//
// The collective and point-to-point kernels of Kernels.h on MPI, and the
// mesh groups behind them (dnnc_rt_group_index reads this rank's place in a
// group without MPI). Each group's communicator is created the first
// time a kernel names its `axesMask` and kept until the plan is unloaded.
// Groups of one rank (a process alone, `axesMask` 0, axes of size 1) never
// touch MPI: the kernels then copy `in` to `out`. In a torchrun-style launch
// the groups are Gloo contexts and each kernel hands its data movement to
// GlooCollectives.h.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "GlooCollectives.h"
#include "KernelCall.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/Mesh.h"

#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>

namespace dnnc::rt {

using plan::DataType;

//===----------------------------------------------------------------------===//
// The active context
//===----------------------------------------------------------------------===//

/// The context of the entry running now. Like the kernel error slot, this is
/// process-wide because the kernels' C ABI has no context argument.
static std::atomic<CollectiveContext *> &activeContextSlot() {
  static std::atomic<CollectiveContext *> slot{nullptr};
  return slot;
}

ActiveCollectives::ActiveCollectives(CollectiveContext *context)
    : previous(activeContextSlot().exchange(context)) {
  if (context)
    context->diverged = false;
}

ActiveCollectives::~ActiveCollectives() { activeContextSlot().store(previous); }

//===----------------------------------------------------------------------===//
// Mesh groups
//===----------------------------------------------------------------------===//

std::unique_ptr<CollectiveContext>
CollectiveContext::create(Comm *comm, const plan::ModelInfo &model,
                          std::string &error) {
  uint32_t size = comm ? comm->size() : 1;
  if (size != model.worldSize) {
    error = "plan.bin needs " + std::to_string(model.worldSize) +
            " ranks but this process runs in a world of " +
            std::to_string(size);
    return nullptr;
  }
  std::unique_ptr<CollectiveContext> context(new CollectiveContext());
  context->worldRank = comm ? comm->rank() : 0;
  context->worldSize = size;
  context->mpiState = comm && comm->usesMpi() ? comm->getImpl() : nullptr;
  context->glooState = comm ? comm->getGloo() : nullptr;
  for (const auto &axis : model.meshAxes)
    context->axisSizes.push_back(axis.second);
  if (context->axisSizes.empty())
    context->axisSizes.push_back(model.worldSize);
  context->order.assign(model.deviceOrder.begin(), model.deviceOrder.end());
  if (context->order.empty())
    for (uint32_t r = 0; r < model.worldSize; ++r)
      context->order.push_back(r);
  if (!plan::meshMultiIndex(context->axisSizes, context->order,
                            context->worldRank, context->coords)) {
    error = "rank " + std::to_string(context->worldRank) +
            " is not in the mesh's device order";
    return nullptr;
  }
  return context;
}

CollectiveContext::~CollectiveContext() {
#if DNNC_RUNTIME_WITH_MPI
  for (auto &entry : groups)
    if (entry.second->comm != MPI_COMM_NULL)
      MPI_Comm_free(&entry.second->comm);
#endif
}

void CollectiveContext::groupMembers(int64_t axesMask,
                                     std::vector<uint32_t> &members,
                                     uint32_t &index) const {
  members.clear();
  index = 0;
  std::vector<int64_t> devices = plan::meshGroupDevices(
      axisSizes, order, coords, plan::meshMaskAxes(axesMask, numAxes()));
  for (size_t k = 0; k < devices.size(); ++k) {
    members.push_back(uint32_t(devices[k]));
    if (members.back() == worldRank)
      index = uint32_t(k);
  }
}

const MeshGroup *CollectiveContext::group(int64_t axesMask,
                                          std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = groups.find(axesMask);
  if (it != groups.end())
    return it->second.get();

  auto group = std::make_unique<MeshGroup>();
  groupMembers(axesMask, group->members, group->index);
  uint64_t groupSize = group->members.size();

  bool viaGloo = false;
#if DNNC_RUNTIME_WITH_GLOO
  if (groupSize > 1 && glooState) {
    // The rendezvous frames of different masks never mix (tag 0 is the
    // world's).
    group->gloo = glooState->group(group->members, int32_t(1 + axesMask),
                                   error);
    if (!group->gloo)
      return nullptr;
    viaGloo = true;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  if (groupSize > 1 && !viaGloo) {
    if (!mpiState) {
      error = "internal error: a group of " + std::to_string(groupSize) +
              " ranks without MPI";
      return nullptr;
    }
    // MPI_Comm_create_group is collective over the members only (unlike
    // MPI_Comm_split over the whole world): ranks that never use this
    // group, or use their groups in another order (pipeline stages), take
    // no part. The members are listed by group index, so the communicator
    // rank of member i is i — the same communicator MPI_Comm_split would
    // give with color = the coordinates on the other axes and key = the
    // index in the group.
    std::vector<int> ranks(group->members.begin(), group->members.end());
    MPI_Group world = MPI_GROUP_NULL, members = MPI_GROUP_NULL;
    int rc = MPI_Comm_group(mpiState->kernels, &world);
    if (rc == MPI_SUCCESS)
      rc = MPI_Group_incl(world, int(ranks.size()), ranks.data(), &members);
    if (rc == MPI_SUCCESS)
      rc = MPI_Comm_create_group(mpiState->kernels, members,
                                 int(axesMask & 0x7fff), &group->comm);
    if (members != MPI_GROUP_NULL)
      MPI_Group_free(&members);
    if (world != MPI_GROUP_NULL)
      MPI_Group_free(&world);
    if (rc != MPI_SUCCESS) {
      error = "creating the communicator of axesMask " +
              std::to_string(axesMask) + ": " +
              mpiError("MPI_Comm_create_group", rc);
      return nullptr;
    }
    MPI_Comm_set_errhandler(group->comm, MPI_ERRORS_RETURN);
    int commRank = -1;
    MPI_Comm_rank(group->comm, &commRank);
    if (commRank != int(group->index)) {
      error = "internal error: group communicator rank " +
              std::to_string(commRank) + ", expected " +
              std::to_string(group->index);
      return nullptr;
    }
  }
#else
  if (groupSize > 1 && !viaGloo) {
    error = "internal error: a group of " + std::to_string(groupSize) +
            " ranks without MPI";
    return nullptr;
  }
#endif
  const MeshGroup *result = group.get();
  groups.emplace(axesMask, std::move(group));
  return result;
}

int64_t CollectiveContext::groupIndex(int64_t axesMask) const {
  return plan::meshGroupIndex(axisSizes, coords,
                              plan::meshMaskAxes(axesMask, numAxes()));
}

//===----------------------------------------------------------------------===//
// Kernel plumbing
//===----------------------------------------------------------------------===//

CollectiveContext *activeCollectiveContext() {
  return activeContextSlot().load();
}

bool KernelCall::fail(const std::string &why) {
  setKernelError("runtime kernel " + std::string(name) + "(" + arguments() +
                 "): " + why);
  if (context)
    context->diverged = true;
  return false;
}

bool checkedProduct(KernelCall &call, std::initializer_list<int64_t> factors,
                    uint64_t elementSize, uint64_t &elements) {
  elements = 1;
  bool zero = false;
  for (int64_t f : factors) {
    if (f < 0)
      return call.fail("negative argument");
    zero = zero || f == 0;
  }
  if (zero) {
    elements = 0;
    return true;
  }
  for (int64_t f : factors) {
    if (uint64_t(f) > plan::kMaxTensorBytes / elements / elementSize)
      return call.fail("buffer size too large (more than 2^48 bytes)");
    elements *= uint64_t(f);
  }
  return true;
}

namespace {

/// The group of a collective call, resolved and checked.
struct GroupCall {
  const MeshGroup *group = nullptr; ///< Null: the caller alone.
  uint64_t size = 1;
  uint32_t index = 0;
  uint64_t elementSize = 0;
};

/// What every copying collective does before talking to other ranks, for
/// `n` elements per member: nothing to move, a null buffer (the call
/// fails), or a group of one (`in` copied to `out`). Returns true when the
/// call is thereby finished.
bool finishedLocally(KernelCall &call, const GroupCall &g, const void *in,
                     void *out, uint64_t n) {
  if (n == 0)
    return true;
  if (!in || !out) {
    call.fail("null buffer");
    return true;
  }
  if (g.size != 1)
    return false;
  std::memmove(out, in, n * g.elementSize);
  return true;
}

/// Checks that `axesMask` is a set of axes of the active mesh (outside a
/// run: of up to plan::kMaxMeshAxes axes).
bool checkAxesMask(KernelCall &call, int64_t axesMask) {
  size_t axes = call.context ? call.context->numAxes() : plan::kMaxMeshAxes;
  if (axesMask < 0 || axesMask >= (int64_t(1) << axes))
    return call.fail("axesMask " + std::to_string(axesMask) +
                     " is not a set of mesh axes (the mesh has " +
                     std::to_string(axes) + " axes: 0 <= axesMask < " +
                     std::to_string(int64_t(1) << axes) + ")");
  return true;
}

/// Validates `axesMask` and `dtype` and finds the group.
bool resolveGroup(KernelCall &call, int64_t axesMask, int32_t dtype,
                  GroupCall &g) {
  g.elementSize = uint64_t(plan::dtypeByteSize(dtype));
  if (g.elementSize == 0)
    return call.fail("unsupported dtype " + std::to_string(dtype));
  if (!checkAxesMask(call, axesMask))
    return false;
  if (!call.context)
    return true;
  std::string error;
  g.group = call.context->group(axesMask, error);
  if (!g.group)
    return call.fail(error);
  g.size = g.group->members.size();
  g.index = g.group->index;
  return true;
}

/// How a dtype is reduced.
enum class ReduceAs { Native, Float16, BFloat16, Bool };

/// Checks `dtype` and `op` of a reduction.
bool checkReduction(KernelCall &call, int32_t dtype, int32_t op, ReduceAs &as) {
  if (op < DNNC_RT_REDUCE_SUM || op > DNNC_RT_REDUCE_MEAN)
    return call.fail("invalid op " + std::to_string(op) +
                     " (0 sum, 1 max, 2 min, 3 prod, 4 mean)");
  switch (DataType(dtype)) {
  case DataType::Float:
  case DataType::Double:
  case DataType::Int8:
  case DataType::UInt8:
  case DataType::Int16:
  case DataType::UInt16:
  case DataType::Int32:
  case DataType::UInt32:
  case DataType::Int64:
  case DataType::UInt64:
    as = ReduceAs::Native;
    return true;
  case DataType::Float16:
    as = ReduceAs::Float16;
    return true;
  case DataType::BFloat16:
    as = ReduceAs::BFloat16;
    return true;
  case DataType::Bool:
    as = ReduceAs::Bool;
    if (op == DNNC_RT_REDUCE_MAX || op == DNNC_RT_REDUCE_MIN)
      return true;
    return call.fail("bool reduces with max (or) and min (and) only");
  default:
    return call.fail("dtype " + plan::dtypeName(dtype) + " cannot be reduced");
  }
}

#if DNNC_RUNTIME_WITH_MPI
//===----------------------------------------------------------------------===//
// float16 / bfloat16 through float32 (groups of one only copy)
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // Subnormal: normalise.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // Inf or NaN (kept quiet).
    return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >> 13) : 0);
  int e = int(exponent) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00;
  if (e <= 0) { // Subnormal or zero: round the shifted mantissa.
    if (e < -10)
      return sign;
    uint32_t m = mantissa | 0x800000;
    int shift = 14 - e;
    uint32_t half = m >> shift, rest = m & ((1u << shift) - 1),
             midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return sign | uint16_t(half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // May carry into the exponent, up to infinity: correct.
  return sign | uint16_t(half);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it quiet.
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

/// Widens `count` float16/bfloat16 values to float32.
std::vector<float> widen(ReduceAs as, const void *in, uint64_t count) {
  std::vector<float> wide(count);
  const uint16_t *p = static_cast<const uint16_t *>(in);
  for (uint64_t i = 0; i < count; ++i)
    wide[i] = as == ReduceAs::Float16 ? halfToFloat(p[i]) : bf16ToFloat(p[i]);
  return wide;
}

/// Narrows `count` float32 values to float16/bfloat16 at `out`.
void narrow(ReduceAs as, const float *wide, void *out, uint64_t count) {
  uint16_t *p = static_cast<uint16_t *>(out);
  for (uint64_t i = 0; i < count; ++i)
    p[i] =
        as == ReduceAs::Float16 ? floatToHalf(wide[i]) : floatToBf16(wide[i]);
}

template <typename T> void divideAll(void *data, uint64_t count, uint64_t by) {
  T *p = static_cast<T *>(data);
  for (uint64_t i = 0; i < count; ++i)
    p[i] = T(p[i] / T(by));
}

/// data[i] /= by for `count` elements of the reducible `dtype` (float16 and
/// bfloat16 are divided in float32 before narrowing, not here).
void divideBy(int32_t dtype, void *data, uint64_t count, uint64_t by) {
  switch (DataType(dtype)) {
  case DataType::Float:
    return divideAll<float>(data, count, by);
  case DataType::Double:
    return divideAll<double>(data, count, by);
  case DataType::Int8:
    return divideAll<int8_t>(data, count, by);
  case DataType::UInt8:
    return divideAll<uint8_t>(data, count, by);
  case DataType::Int16:
    return divideAll<int16_t>(data, count, by);
  case DataType::UInt16:
    return divideAll<uint16_t>(data, count, by);
  case DataType::Int32:
    return divideAll<int32_t>(data, count, by);
  case DataType::UInt32:
    return divideAll<uint32_t>(data, count, by);
  case DataType::Int64:
    return divideAll<int64_t>(data, count, by);
  case DataType::UInt64:
    return divideAll<uint64_t>(data, count, by);
  default:
    return;
  }
}

//===----------------------------------------------------------------------===//
// MPI mappings
//===----------------------------------------------------------------------===//

/// True when the byte ranges [a, a+an) and [b, b+bn) share a byte.
bool overlaps(const void *a, uint64_t an, const void *b, uint64_t bn) {
  uintptr_t x = reinterpret_cast<uintptr_t>(a),
            y = reinterpret_cast<uintptr_t>(b);
  return an && bn && x < y + bn && y < x + an;
}

/// The MPI type that reduces `dtype` (bool as uint8: max = or, min = and;
/// float16/bfloat16 are reduced as float).
MPI_Datatype reduceType(int32_t dtype) {
  switch (DataType(dtype)) {
  case DataType::Float:
  case DataType::Float16:
  case DataType::BFloat16:
    return MPI_FLOAT;
  case DataType::Double:
    return MPI_DOUBLE;
  case DataType::Int8:
    return MPI_INT8_T;
  case DataType::UInt8:
  case DataType::Bool:
    return MPI_UINT8_T;
  case DataType::Int16:
    return MPI_INT16_T;
  case DataType::UInt16:
    return MPI_UINT16_T;
  case DataType::Int32:
    return MPI_INT32_T;
  case DataType::UInt32:
    return MPI_UINT32_T;
  case DataType::Int64:
    return MPI_INT64_T;
  default:
    return MPI_UINT64_T;
  }
}

MPI_Op reduceOp(int32_t op) {
  switch (op) {
  case DNNC_RT_REDUCE_MAX:
    return MPI_MAX;
  case DNNC_RT_REDUCE_MIN:
    return MPI_MIN;
  case DNNC_RT_REDUCE_PROD:
    return MPI_PROD;
  default:
    return MPI_SUM; // SUM and MEAN.
  }
}

/// An MPI type of `elementSize` bytes that moves elements unchanged.
MPI_Datatype moveType(uint64_t elementSize) {
  switch (elementSize) {
  case 1:
    return MPI_UINT8_T;
  case 2:
    return MPI_UINT16_T;
  case 4:
    return MPI_UINT32_T;
  case 8:
    return MPI_UINT64_T;
  default:
    return MPI_C_DOUBLE_COMPLEX; // 16 bytes: complex128.
  }
}

/// Fails `call` when `elements` per group member exceed an MPI count.
bool checkCount(KernelCall &call, uint64_t elements) {
  if (elements > uint64_t(INT_MAX))
    return call.fail("more than 2^31-1 elements per group member");
  return true;
}
#endif

} // namespace

} // namespace dnnc::rt

using namespace dnnc::rt;

//===----------------------------------------------------------------------===//
// The kernels
//===----------------------------------------------------------------------===//

extern "C" void dnnc_rt_all_reduce(int64_t axesMask, int32_t dtype, int32_t op,
                                   const void *in, void *out, int64_t count) {
  KernelCall call("dnnc_rt_all_reduce", [&]() {
    return "axesMask=" + std::to_string(axesMask) +
           ", dtype=" + std::to_string(dtype) + ", op=" + std::to_string(op) +
           ", count=" + std::to_string(count);
  });
  GroupCall g;
  ReduceAs as;
  uint64_t n = 0;
  if (call.skipped() || !resolveGroup(call, axesMask, dtype, g) ||
      !checkReduction(call, dtype, op, as) ||
      !checkedProduct(call, {count}, g.elementSize, n))
    return;
  uint64_t bytes = n * g.elementSize;
  if (finishedLocally(call, g, in, out, n))
    return;
#if DNNC_RUNTIME_WITH_GLOO
  if (g.group->gloo) {
    std::string error;
    if (!glooAllReduce(*g.group->gloo, dtype, op, in, out, n, error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  MPI_Comm comm = g.group->comm;
  MPI_Datatype type = reduceType(dtype);
  MPI_Op mpiOp = reduceOp(op);
  if (as == ReduceAs::Float16 || as == ReduceAs::BFloat16) {
    std::vector<float> wide = widen(as, in, n);
    if (!forEachPiece(n, [&](uint64_t at, uint64_t piece) {
          int rc = MPI_Allreduce(MPI_IN_PLACE, wide.data() + at, int(piece),
                                 type, mpiOp, comm);
          return rc == MPI_SUCCESS || call.fail(mpiError("MPI_Allreduce", rc));
        }))
      return;
    if (op == DNNC_RT_REDUCE_MEAN)
      divideBy(int32_t(DataType::Float), wide.data(), n, g.size);
    narrow(as, wide.data(), out, n);
    return;
  }
  // Reduce in place in `out` (a copy of `in` unless they are the same).
  if (in != out) {
    if (overlaps(in, bytes, out, bytes)) {
      std::vector<char> copy(static_cast<const char *>(in),
                             static_cast<const char *>(in) + bytes);
      std::memcpy(out, copy.data(), bytes);
    } else {
      std::memcpy(out, in, bytes);
    }
  }
  if (!forEachPiece(n, [&](uint64_t at, uint64_t piece) {
        int rc = MPI_Allreduce(MPI_IN_PLACE,
                               static_cast<char *>(out) + at * g.elementSize,
                               int(piece), type, mpiOp, comm);
        return rc == MPI_SUCCESS || call.fail(mpiError("MPI_Allreduce", rc));
      }))
    return;
  if (op == DNNC_RT_REDUCE_MEAN)
    divideBy(dtype, out, n, g.size);
#endif
}

#if DNNC_RUNTIME_WITH_MPI
/// Copies `src`, viewed as [a, b] blocks of `blockBytes`, into `dst` viewed
/// as [b, a]: the block reorderings around the MPI collectives, which
/// exchange one contiguous block per group member.
static void swapBlockAxes(char *dst, const char *src, uint64_t a, uint64_t b,
                          uint64_t blockBytes) {
  for (uint64_t i = 0; i < a; ++i)
    for (uint64_t j = 0; j < b; ++j)
      std::memcpy(dst + (j * a + i) * blockBytes,
                  src + (i * b + j) * blockBytes, blockBytes);
}
#endif

extern "C" void dnnc_rt_all_gather(int64_t axesMask, int32_t dtype,
                                   const void *in, void *out, int64_t outer,
                                   int64_t chunk) {
  KernelCall call("dnnc_rt_all_gather", [&]() {
    return "axesMask=" + std::to_string(axesMask) +
           ", dtype=" + std::to_string(dtype) +
           ", outer=" + std::to_string(outer) +
           ", chunk=" + std::to_string(chunk);
  });
  GroupCall g;
  uint64_t n = 0, total = 0;
  if (call.skipped() || !resolveGroup(call, axesMask, dtype, g) ||
      !checkedProduct(call, {outer, chunk}, g.elementSize, n) ||
      !checkedProduct(call, {outer, chunk, int64_t(g.size)}, g.elementSize,
                      total))
    return;
  if (finishedLocally(call, g, in, out, n))
    return;
  const uint64_t es = g.elementSize, bytes = n * es;
#if DNNC_RUNTIME_WITH_GLOO
  if (g.group->gloo) {
    std::string error;
    if (!glooAllGather(*g.group->gloo, es, in, out, uint64_t(outer),
                       uint64_t(chunk), error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  if (!checkCount(call, n))
    return;
  std::vector<char> inCopy;
  if (overlaps(in, bytes, out, total * es)) {
    inCopy.assign(static_cast<const char *>(in),
                  static_cast<const char *>(in) + bytes);
    in = inCopy.data();
  }
  MPI_Datatype type = moveType(es);
  // outer == 1: the gathered blocks are already out's layout.
  std::vector<char> staging(outer == 1 ? 0 : total * es);
  char *receive = outer == 1 ? static_cast<char *>(out) : staging.data();
  int rc =
      MPI_Allgather(in, int(n), type, receive, int(n), type, g.group->comm);
  if (rc != MPI_SUCCESS) {
    call.fail(mpiError("MPI_Allgather", rc));
    return;
  }
  if (outer == 1)
    return;
  // staging [G, outer, chunk] -> out [outer, G, chunk].
  swapBlockAxes(static_cast<char *>(out), staging.data(), g.size,
                uint64_t(outer), uint64_t(chunk) * es);
#endif
}

extern "C" void dnnc_rt_reduce_scatter(int64_t axesMask, int32_t dtype,
                                       int32_t op, const void *in, void *out,
                                       int64_t outer, int64_t chunk) {
  KernelCall call("dnnc_rt_reduce_scatter", [&]() {
    return "axesMask=" + std::to_string(axesMask) +
           ", dtype=" + std::to_string(dtype) + ", op=" + std::to_string(op) +
           ", outer=" + std::to_string(outer) +
           ", chunk=" + std::to_string(chunk);
  });
  GroupCall g;
  ReduceAs as;
  uint64_t n = 0, total = 0;
  if (call.skipped() || !resolveGroup(call, axesMask, dtype, g) ||
      !checkReduction(call, dtype, op, as) ||
      !checkedProduct(call, {outer, chunk}, g.elementSize, n) ||
      !checkedProduct(call, {outer, chunk, int64_t(g.size)}, g.elementSize,
                      total))
    return;
  if (finishedLocally(call, g, in, out, n))
    return;
  const uint64_t es = g.elementSize;
#if DNNC_RUNTIME_WITH_GLOO
  if (g.group->gloo) {
    std::string error;
    if (!glooReduceScatter(*g.group->gloo, dtype, op, in, out, uint64_t(outer),
                           uint64_t(chunk), error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  if (!checkCount(call, n))
    return;
  // Pack in [outer, G, chunk] as [G, outer, chunk] (member i's block
  // contiguous), widening float16/bfloat16 to float32.
  bool wide = as == ReduceAs::Float16 || as == ReduceAs::BFloat16;
  const uint64_t packedEs = wide ? 4 : es;
  std::vector<char> packed(total * packedEs);
  const char *src = static_cast<const char *>(in);
  std::vector<float> widened;
  if (wide) {
    widened = widen(as, in, total);
    src = reinterpret_cast<const char *>(widened.data());
  }
  swapBlockAxes(packed.data(), src, uint64_t(outer), g.size,
                uint64_t(chunk) * packedEs);
  std::vector<char> result(n * packedEs);
  int rc =
      MPI_Reduce_scatter_block(packed.data(), result.data(), int(n),
                               reduceType(dtype), reduceOp(op), g.group->comm);
  if (rc != MPI_SUCCESS) {
    call.fail(mpiError("MPI_Reduce_scatter_block", rc));
    return;
  }
  if (op == DNNC_RT_REDUCE_MEAN)
    divideBy(wide ? int32_t(DataType::Float) : dtype, result.data(), n, g.size);
  if (wide)
    narrow(as, reinterpret_cast<const float *>(result.data()), out, n);
  else
    std::memcpy(out, result.data(), n * es);
#endif
}

extern "C" void dnnc_rt_all_to_all(int64_t axesMask, int32_t dtype,
                                   const void *in, void *out, int64_t outer,
                                   int64_t splitChunk, int64_t inner) {
  KernelCall call("dnnc_rt_all_to_all", [&]() {
    return "axesMask=" + std::to_string(axesMask) +
           ", dtype=" + std::to_string(dtype) +
           ", outer=" + std::to_string(outer) +
           ", splitChunk=" + std::to_string(splitChunk) +
           ", inner=" + std::to_string(inner);
  });
  GroupCall g;
  uint64_t n = 0, total = 0;
  if (call.skipped() || !resolveGroup(call, axesMask, dtype, g) ||
      !checkedProduct(call, {outer, splitChunk}, g.elementSize, n) ||
      !checkedProduct(call, {outer, splitChunk, int64_t(g.size)}, g.elementSize,
                      total))
    return;
  if (inner < 1 || n % uint64_t(inner) != 0) {
    call.fail("inner must be at least 1 and divide outer * splitChunk");
    return;
  }
  if (finishedLocally(call, g, in, out, n))
    return;
  const uint64_t es = g.elementSize;
#if DNNC_RUNTIME_WITH_GLOO
  if (g.group->gloo) {
    std::string error;
    if (!glooAllToAll(*g.group->gloo, es, in, out, uint64_t(outer),
                      uint64_t(splitChunk), uint64_t(inner), error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  if (!checkCount(call, n))
    return;
  const uint64_t G = g.size;
  const char *send = static_cast<const char *>(in);
  std::vector<char> packed;
  if (outer > 1 || overlaps(in, total * es, out, total * es)) {
    // in [outer, G, splitChunk] -> [G, outer, splitChunk].
    packed.resize(total * es);
    swapBlockAxes(packed.data(), send, uint64_t(outer), G,
                  uint64_t(splitChunk) * es);
    send = packed.data();
  }
  const uint64_t rows = n / uint64_t(inner); // X in the contract.
  std::vector<char> staging(rows == 1 ? 0 : total * es);
  char *receive = rows == 1 ? static_cast<char *>(out) : staging.data();
  MPI_Datatype type = moveType(es);
  int rc =
      MPI_Alltoall(send, int(n), type, receive, int(n), type, g.group->comm);
  if (rc != MPI_SUCCESS) {
    call.fail(mpiError("MPI_Alltoall", rc));
    return;
  }
  if (rows == 1)
    return;
  // staging [G, X, inner] -> out [X, G, inner].
  swapBlockAxes(static_cast<char *>(out), staging.data(), G, rows,
                uint64_t(inner) * es);
#endif
}

extern "C" void dnnc_rt_broadcast(int64_t axesMask, int32_t dtype, void *buf,
                                  int64_t count, int64_t root) {
  KernelCall call("dnnc_rt_broadcast", [&]() {
    return "axesMask=" + std::to_string(axesMask) +
           ", dtype=" + std::to_string(dtype) +
           ", count=" + std::to_string(count) +
           ", root=" + std::to_string(root);
  });
  GroupCall g;
  uint64_t n = 0;
  if (call.skipped() || !resolveGroup(call, axesMask, dtype, g) ||
      !checkedProduct(call, {count}, g.elementSize, n))
    return;
  if (root < 0 || uint64_t(root) >= g.size) {
    call.fail("root " + std::to_string(root) +
              " is not an index in the group (size " + std::to_string(g.size) +
              ")");
    return;
  }
  if (n == 0 || g.size == 1)
    return;
  if (!buf) {
    call.fail("null buffer");
    return;
  }
#if DNNC_RUNTIME_WITH_GLOO
  if (g.group->gloo) {
    std::string error;
    if (!glooBroadcast(*g.group->gloo, g.elementSize, buf, n, uint32_t(root),
                       error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  MPI_Datatype type = moveType(g.elementSize);
  forEachPiece(n, [&](uint64_t at, uint64_t piece) {
    int rc = MPI_Bcast(static_cast<char *>(buf) + at * g.elementSize,
                       int(piece), type, int(root), g.group->comm);
    return rc == MPI_SUCCESS || call.fail(mpiError("MPI_Bcast", rc));
  });
#endif
}

extern "C" int64_t dnnc_rt_group_index(int64_t axesMask) {
  KernelCall call("dnnc_rt_group_index",
                  [&]() { return "axesMask=" + std::to_string(axesMask); });
  // No communication: computed even after an earlier kernel was skipped.
  if (!checkAxesMask(call, axesMask) || !call.context)
    return 0;
  return call.context->groupIndex(axesMask);
}

extern "C" int64_t dnnc_rt_microbatch_index(void) {
  KernelCall call("dnnc_rt_microbatch_index", [] { return std::string(); });
  return call.context ? call.context->microbatch : 0;
}

/// Checks the arguments of a point-to-point kernel.
static bool checkPointToPoint(KernelCall &call, int32_t dtype, const void *buf,
                              int64_t count, int64_t peer, int64_t tag,
                              uint64_t &elementSize, uint64_t &n) {
  elementSize = uint64_t(dnnc::plan::dtypeByteSize(dtype));
  if (elementSize == 0)
    return call.fail("unsupported dtype " + std::to_string(dtype));
  if (!checkedProduct(call, {count}, elementSize, n))
    return false;
  uint32_t rank = call.context ? call.context->rank() : 0;
  uint32_t size = call.context ? call.context->size() : 1;
  if (peer < 0 || peer >= int64_t(size) || peer == int64_t(rank))
    return call.fail(
        "peer " + std::to_string(peer) + " is not another rank (this is rank " +
        std::to_string(rank) + " of " + std::to_string(size) + ")");
  if (tag < 0 || tag > 32767)
    return call.fail("tag " + std::to_string(tag) +
                     " is out of range (0 .. 32767)");
  if (n > 0 && !buf)
    return call.fail("null buffer");
  return true;
}

extern "C" void dnnc_rt_send(int32_t dtype, const void *buf, int64_t count,
                             int64_t peer, int64_t tag) {
  KernelCall call("dnnc_rt_send", [&]() {
    return "dtype=" + std::to_string(dtype) +
           ", count=" + std::to_string(count) +
           ", peer=" + std::to_string(peer) + ", tag=" + std::to_string(tag);
  });
  uint64_t es = 0, n = 0;
  if (call.skipped() ||
      !checkPointToPoint(call, dtype, buf, count, peer, tag, es, n))
    return;
#if DNNC_RUNTIME_WITH_GLOO
  if (GlooWorld *gloo = call.context ? call.context->gloo() : nullptr) {
    std::string error;
    if (!gloo->send(buf, n * es, uint32_t(peer), GlooTraffic::Kernels,
                    uint32_t(tag), true, error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  MPI_Datatype type = moveType(es);
  forEachPiece(n, [&](uint64_t at, uint64_t piece) {
    int rc = MPI_Send(static_cast<const char *>(buf) + at * es, int(piece),
                      type, int(peer), int(tag), call.context->mpi()->kernels);
    return rc == MPI_SUCCESS || call.fail(mpiError("MPI_Send", rc));
  });
#endif
}

extern "C" void dnnc_rt_recv(int32_t dtype, void *buf, int64_t count,
                             int64_t peer, int64_t tag) {
  KernelCall call("dnnc_rt_recv", [&]() {
    return "dtype=" + std::to_string(dtype) +
           ", count=" + std::to_string(count) +
           ", peer=" + std::to_string(peer) + ", tag=" + std::to_string(tag);
  });
  uint64_t es = 0, n = 0;
  if (call.skipped() ||
      !checkPointToPoint(call, dtype, buf, count, peer, tag, es, n))
    return;
#if DNNC_RUNTIME_WITH_GLOO
  if (GlooWorld *gloo = call.context ? call.context->gloo() : nullptr) {
    std::string error;
    if (!gloo->recv(buf, n * es, uint32_t(peer), GlooTraffic::Kernels,
                    uint32_t(tag), error))
      call.fail(error);
    return;
  }
#endif
#if DNNC_RUNTIME_WITH_MPI
  MPI_Datatype type = moveType(es);
  forEachPiece(n, [&](uint64_t at, uint64_t piece) {
    MPI_Status status;
    int rc =
        MPI_Recv(static_cast<char *>(buf) + at * es, int(piece), type,
                 int(peer), int(tag), call.context->mpi()->kernels, &status);
    int got = 0;
    if (rc == MPI_SUCCESS)
      rc = MPI_Get_count(&status, type, &got);
    if (rc != MPI_SUCCESS)
      return call.fail(mpiError("MPI_Recv", rc));
    if (uint64_t(got) != piece)
      return call.fail("received " + std::to_string(got) +
                       " elements, expected " + std::to_string(piece) +
                       " (the send does not match)");
    return true;
  });
#endif
}
