//===- GlooTest.cpp - Collective kernels over Gloo -------------*- C++ -*-===//
//
// Forks torchrun-style worlds (ForkedWorld.h) whose data path runs on Gloo
// and calls the collective kernels directly under a CollectiveContext, as
// rank code does: every kernel, op and group of a dp=2 x tp=2 mesh (identity
// and permuted device order) and of a 3-rank world (not a power of two), on
// f32, f16, bf16 and i64 (bool and f64 for data movement and max), with 0,
// 1, 13 and 2^19+3 elements per member, in place and not. Each rank computes
// the reference from every member's input (a function of the world rank)
// with its own group arithmetic and its own float16/bfloat16 rounding, and
// compares the bytes. Then point-to-point: the send/recv kernels around a
// ring, stage transfers (isend/recvStage/waitAll) with tags received out of
// order, 0 bytes, 9 MiB, a size mismatch (an error on the receiver, the
// sender completes); and failures: a peer that is gone, a peer that never
// comes (DNNC_GLOO_TIMEOUT_S), a malformed DNNC_GLOO_TIMEOUT_S.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "ForkedWorld.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace dnnc;
using namespace dnnc::test;
using plan::DataType;

namespace {

/// Element k of world rank `rank`'s input in the case `seed`: a multiple of
/// 0.5 in [-8, 8], so that sums and means of up to four members and
/// products of up to four members are exact in float32, and every value
/// and sum is exact in float16 and bfloat16. Integer dtypes take twice it.
double valueAt(uint32_t rank, uint64_t k, uint32_t seed) {
  return double(int64_t((k * 7 + rank * 13 + seed * 5) % 33) - 16) / 2;
}

/// The test's own float -> float16 rounding (the compiler's conversion).
uint16_t toHalf(float f) {
  _Float16 h = _Float16(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

/// The test's own float -> bfloat16 rounding (to nearest even).
uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t lsb = (bits >> 16) & 1;
  return uint16_t((bits + 0x7fff + lsb) >> 16);
}

/// Bytes per element of the dtypes used here.
size_t sizeOf(DataType t) {
  switch (t) {
  case DataType::Float16:
  case DataType::BFloat16:
    return 2;
  case DataType::Float:
    return 4;
  case DataType::Bool:
    return 1;
  default:
    return 8; // Int64, Double.
  }
}

/// Stores `v` (float math for the floating dtypes) as element i of `out`.
void store(DataType t, std::vector<char> &out, uint64_t i, double v) {
  char *p = out.data() + i * sizeOf(t);
  switch (t) {
  case DataType::Float: {
    float f = float(v);
    std::memcpy(p, &f, 4);
    break;
  }
  case DataType::Double:
    std::memcpy(p, &v, 8);
    break;
  case DataType::Float16: {
    uint16_t h = toHalf(float(v));
    std::memcpy(p, &h, 2);
    break;
  }
  case DataType::BFloat16: {
    uint16_t b = toBf16(float(v));
    std::memcpy(p, &b, 2);
    break;
  }
  case DataType::Int64: {
    int64_t l = int64_t(v);
    std::memcpy(p, &l, 8);
    break;
  }
  default:
    *p = v != 0;
  }
}

/// Element k of `rank`'s input of dtype `t` in case `seed`.
double elementAt(DataType t, uint32_t rank, uint64_t k, uint32_t seed) {
  double v = valueAt(rank, k, seed);
  return t == DataType::Int64 ? 2 * v : t == DataType::Bool ? v > 0 : v;
}

/// `n` elements of `rank`'s input of dtype `t` in case `seed`.
std::vector<char> input(DataType t, uint32_t rank, uint64_t n, uint32_t seed) {
  std::vector<char> bytes(n * sizeOf(t));
  for (uint64_t k = 0; k < n; ++k)
    store(t, bytes, k, elementAt(t, rank, k, seed));
  return bytes;
}

/// The reduction `op` of `values` as the kernels define it, in the dtype's
/// arithmetic (float32 for float16/bfloat16; integer MEAN truncates).
double reduce(DataType t, int32_t op, const std::vector<double> &values) {
  if (t == DataType::Int64) {
    int64_t r = int64_t(values[0]);
    for (size_t i = 1; i < values.size(); ++i) {
      int64_t v = int64_t(values[i]);
      r = op == DNNC_RT_REDUCE_MAX    ? std::max(r, v)
          : op == DNNC_RT_REDUCE_MIN  ? std::min(r, v)
          : op == DNNC_RT_REDUCE_PROD ? r * v
                                      : r + v;
    }
    if (op == DNNC_RT_REDUCE_MEAN)
      r /= int64_t(values.size());
    return double(r);
  }
  float r = float(values[0]);
  for (size_t i = 1; i < values.size(); ++i) {
    float v = float(values[i]);
    r = op == DNNC_RT_REDUCE_MAX    ? std::max(r, v)
        : op == DNNC_RT_REDUCE_MIN  ? std::min(r, v)
        : op == DNNC_RT_REDUCE_PROD ? r * v
                                    : r + v;
  }
  if (op == DNNC_RT_REDUCE_MEAN)
    r /= float(values.size());
  return double(r);
}

/// The world ranks of this rank's group along the axes of `mask` of a mesh
/// of `axes` with device `order`, by group index (docs/runtime.md,
/// "Groups"), computed here independently of CollectiveContext.
std::vector<uint32_t> groupOf(uint32_t rank, const std::vector<int64_t> &axes,
                              const std::vector<uint32_t> &order,
                              int64_t mask) {
  uint64_t position =
      uint64_t(std::find(order.begin(), order.end(), rank) - order.begin());
  std::vector<int64_t> mine(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    mine[a] = int64_t(position % uint64_t(axes[a]));
    position /= uint64_t(axes[a]);
  }
  // Every position whose coordinates off the mask equal mine, in row-major
  // order of the masked coordinates (= increasing position).
  std::vector<uint32_t> members;
  for (uint64_t p = 0; p < order.size(); ++p) {
    uint64_t rest = p;
    bool same = true;
    for (size_t a = axes.size(); a-- > 0;) {
      int64_t c = int64_t(rest % uint64_t(axes[a]));
      rest /= uint64_t(axes[a]);
      same = same && (((mask >> a) & 1) || c == mine[a]);
    }
    if (same)
      members.push_back(order[p]);
  }
  return members;
}

/// Checks `got` against `want`; prints the case and the first difference.
bool same(const std::string &what, const std::vector<char> &got,
          const std::vector<char> &want) {
  if (got == want)
    return true;
  size_t at = 0;
  while (at < got.size() && at < want.size() && got[at] == want[at])
    ++at;
  std::fprintf(stderr, "%s: %zu bytes differ from byte %zu on (of %zu)\n",
               what.c_str(), got.size(), at, want.size());
  return false;
}

/// Fails the rank when a kernel recorded an error.
bool noKernelError(const std::string &what) {
  std::string message;
  if (!rt::takeKernelError(message))
    return true;
  std::fprintf(stderr, "%s: %s\n", what.c_str(), message.c_str());
  return false;
}

/// The name of dtype `t` for messages.
const char *nameOf(DataType t) {
  switch (t) {
  case DataType::Float:
    return "f32";
  case DataType::Float16:
    return "f16";
  case DataType::BFloat16:
    return "bf16";
  case DataType::Int64:
    return "i64";
  case DataType::Double:
    return "f64";
  default:
    return "bool";
  }
}

/// Runs every collective on the group of `mask` with `n` elements per
/// member of dtype `t` and compares with the reference. Returns false (after
/// printing why) on the first difference. With `large`, all_reduce runs
/// sum and max only and broadcast one root; the gathers and scatters, which
/// Gloo moves in one piece per member, use 2^16+1 elements.
bool checkGroup(uint32_t rank, const std::vector<int64_t> &axes,
                const std::vector<uint32_t> &order, int64_t mask, DataType t,
                uint64_t n, bool large) {
  std::vector<uint32_t> members = groupOf(rank, axes, order, mask);
  const uint64_t G = members.size();
  const uint64_t index =
      uint64_t(std::find(members.begin(), members.end(), rank) -
               members.begin());
  const size_t es = sizeOf(t);
  const int32_t dtype = int32_t(t);
  std::string where = "rank " + std::to_string(rank) + " mask " +
                      std::to_string(mask) + " " + nameOf(t) + " n=" +
                      std::to_string(n);
  auto value = [&](uint32_t member, uint64_t k, uint32_t seed) {
    return elementAt(t, member, k, seed);
  };

  // all_reduce, every op (the large size: sum and max), out of place, and
  // sum in place.
  bool reducible = t != DataType::Bool && t != DataType::Double;
  for (int32_t op = 0; reducible && op <= DNNC_RT_REDUCE_MEAN; ++op) {
    if (large && op != DNNC_RT_REDUCE_SUM && op != DNNC_RT_REDUCE_MAX)
      continue;
    uint32_t seed = uint32_t(op);
    std::vector<char> in = input(t, rank, n, seed), out(n * es, 0x55);
    std::vector<char> want(n * es);
    for (uint64_t k = 0; k < n; ++k) {
      std::vector<double> values;
      for (uint32_t m : members)
        values.push_back(value(m, k, seed));
      store(t, want, k, reduce(t, op, values));
    }
    std::string what = where + " all_reduce op " + std::to_string(op);
    dnnc_rt_all_reduce(mask, dtype, op, in.data(), out.data(), int64_t(n));
    if (!noKernelError(what) || !same(what, out, want))
      return false;
    if (op == DNNC_RT_REDUCE_SUM) {
      dnnc_rt_all_reduce(mask, dtype, op, in.data(), in.data(), int64_t(n));
      if (!noKernelError(what + " in place") ||
          !same(what + " in place", in, want))
        return false;
    }
  }

  const uint64_t all = n;
  if (large)
    n = (uint64_t(1) << 16) + 1;
  // all_gather: [outer, n] -> [outer, G*n], outer 1 and 3.
  for (uint64_t outer : {uint64_t(1), uint64_t(3)}) {
    std::vector<char> in = input(t, rank, outer * n, 7);
    std::vector<char> out(outer * G * n * es, 0x55), want(out.size());
    for (uint64_t o = 0; o < outer; ++o)
      for (uint64_t i = 0; i < G; ++i)
        for (uint64_t c = 0; c < n; ++c)
          store(t, want, (o * G + i) * n + c, value(members[i], o * n + c, 7));
    std::string what = where + " all_gather outer " + std::to_string(outer);
    dnnc_rt_all_gather(mask, dtype, in.data(), out.data(), int64_t(outer),
                       int64_t(n));
    if (!noKernelError(what) || !same(what, out, want))
      return false;
  }

  // reduce_scatter: [2, G*n] -> [2, n], sum and mean.
  for (int32_t op : {DNNC_RT_REDUCE_SUM, DNNC_RT_REDUCE_MEAN}) {
    if (!reducible)
      break;
    const uint64_t outer = 2;
    std::vector<char> in = input(t, rank, outer * G * n, 11);
    std::vector<char> out(outer * n * es, 0x55), want(out.size());
    for (uint64_t o = 0; o < outer; ++o)
      for (uint64_t c = 0; c < n; ++c) {
        std::vector<double> values;
        for (uint32_t m : members)
          values.push_back(value(m, (o * G + index) * n + c, 11));
        store(t, want, o * n + c, reduce(t, op, values));
      }
    std::string what = where + " reduce_scatter op " + std::to_string(op);
    dnnc_rt_reduce_scatter(mask, dtype, op, in.data(), out.data(),
                           int64_t(outer), int64_t(n));
    if (!noKernelError(what) || !same(what, out, want))
      return false;
  }

  // all_to_all: (outer, splitChunk, inner) = (1, n, n), (2, n, 2n) and
  // (2, 2n, n); member i's block j (in[:, j, :]) lands in member j's out
  // as out[:, i, :] viewed [X, G, inner].
  struct Shape {
    uint64_t outer, split, inner;
  };
  for (Shape s : {Shape{1, n, n}, Shape{2, n, 2 * n}, Shape{2, 2 * n, n}}) {
    if (n == 0)
      break; // inner must be at least 1.
    const uint64_t block = s.outer * s.split;
    std::vector<char> in = input(t, rank, G * block, 13);
    std::vector<char> out(G * block * es, 0x55), want(out.size());
    for (uint64_t i = 0; i < G; ++i)
      for (uint64_t e = 0; e < block; ++e) {
        // Element e of the block member i sends here: in_i[o, index, c].
        uint64_t o = e / s.split, c = e % s.split;
        uint64_t k = (o * G + index) * s.split + c;
        uint64_t x = e / s.inner, r = e % s.inner;
        store(t, want, (x * G + i) * s.inner + r, value(members[i], k, 13));
      }
    std::string what = where + " all_to_all (" + std::to_string(s.outer) +
                       ", " + std::to_string(s.split) + ", " +
                       std::to_string(s.inner) + ")";
    dnnc_rt_all_to_all(mask, dtype, in.data(), out.data(), int64_t(s.outer),
                       int64_t(s.split), int64_t(s.inner));
    if (!noKernelError(what) || !same(what, out, want))
      return false;
  }

  // broadcast from every member (the large size: from the last).
  n = all;
  for (uint64_t root = large ? G - 1 : 0; root < G; ++root) {
    std::vector<char> buf = input(t, rank, n, 17);
    std::vector<char> want = input(t, members[root], n, 17);
    std::string what = where + " broadcast root " + std::to_string(root);
    dnnc_rt_broadcast(mask, dtype, buf.data(), int64_t(n), int64_t(root));
    if (!noKernelError(what) || !same(what, buf, want))
      return false;
  }
  return true;
}

/// The mesh of a world: axis sizes and device order.
struct Mesh {
  std::vector<int64_t> axes;
  std::vector<uint32_t> order; ///< Empty: identity.
};

/// Connects, loads `mesh` into a CollectiveContext and runs checkGroup on
/// every mask, dtype and size; then the send/recv kernels around a ring.
int collectivesBody(uint32_t rank, const Mesh &mesh) {
  std::unique_ptr<rt::Comm> comm = connectRank();
  CHECK(comm->usesGloo());
  plan::ModelInfo model;
  model.target = "cpu";
  model.worldSize = comm->size();
  std::vector<uint32_t> order = mesh.order;
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    model.meshAxes.push_back({"a" + std::to_string(a), mesh.axes[a]});
  model.deviceOrder = order;
  if (order.empty())
    for (uint32_t r = 0; r < comm->size(); ++r)
      order.push_back(r);
  std::string error;
  std::unique_ptr<rt::CollectiveContext> context =
      rt::CollectiveContext::create(comm.get(), model, error);
  if (!context) {
    std::fprintf(stderr, "context: %s\n", error.c_str());
    return 12;
  }
  rt::ActiveCollectives active(context.get());
  const uint64_t large = (uint64_t(1) << 19) + 3;
  for (int64_t mask = 1; mask < (int64_t(1) << mesh.axes.size()); ++mask)
    for (DataType t : {DataType::Float, DataType::Float16, DataType::BFloat16,
                       DataType::Int64, DataType::Bool, DataType::Double})
      for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(13), large}) {
        if (n == large && (t == DataType::Bool || t == DataType::Double))
          continue;
        CHECK(checkGroup(rank, mesh.axes, order, mask, t, n, n == large));
      }

  // send/recv kernels around the ring of world ranks: even ranks send
  // first, odd ranks receive first (a send may wait for its receive).
  const uint32_t size = comm->size();
  const uint32_t next = (rank + 1) % size, previous = (rank + size - 1) % size;
  for (DataType t : {DataType::Float, DataType::Int64})
    for (uint64_t n : {uint64_t(0), uint64_t(1), large}) {
      std::vector<char> mine = input(t, rank, n, 19), got(n * sizeOf(t), 0x55);
      int32_t dtype = int32_t(t);
      auto send = [&] {
        dnnc_rt_send(dtype, mine.data(), int64_t(n), next, 21);
      };
      auto recv = [&] {
        dnnc_rt_recv(dtype, got.data(), int64_t(n), previous, 21);
      };
      if (rank % 2 == 0) {
        send();
        recv();
      } else {
        recv();
        send();
      }
      std::string what = "rank " + std::to_string(rank) + " send/recv " +
                         nameOf(t) + " n=" + std::to_string(n);
      CHECK(noKernelError(what));
      CHECK(same(what, got, input(t, previous, n, 19)));
    }
  CHECK(comm->allOk(true));
  return 0;
}

TEST(Gloo, Mesh2x2Collectives) {
  // The device order changes the groups: identity, then positions
  // (0, 1, 2, 3) held by ranks 3, 1, 2, 0.
  for (std::vector<uint32_t> order :
       {std::vector<uint32_t>{}, std::vector<uint32_t>{3, 1, 2, 0}}) {
    Mesh mesh{{2, 2}, order};
    std::vector<RankResult> results =
        runWorld(4, {0, 1, 2, 3}, "60", 300,
                 [&](uint32_t rank) { return collectivesBody(rank, mesh); });
    for (uint32_t r = 0; r < 4; ++r)
      EXPECT_EQ(results[r].exitCode, 0) << describe(results);
  }
}

TEST(Gloo, ThreeRankCollectives) {
  Mesh mesh{{3}, {}};
  std::vector<RankResult> results =
      runWorld(3, {0, 1, 2}, "60", 180,
               [&](uint32_t rank) { return collectivesBody(rank, mesh); });
  for (uint32_t r = 0; r < 3; ++r)
    EXPECT_EQ(results[r].exitCode, 0) << describe(results);
}

TEST(Gloo, StageTransfers) {
  auto body = [](uint32_t rank) {
    std::unique_ptr<rt::Comm> comm = connectRank();
    CHECK(comm->usesGloo());
    std::string error;
    std::vector<char> big = input(DataType::Float, 1, 9 << 18, 3); // 9 MiB.
    std::vector<char> small = input(DataType::Int64, 1, 5, 4);
    if (rank == 1) {
      // Several sends in flight at once, received in another order; 0
      // bytes; to two peers.
      CHECK(comm->isend(big.data(), big.size(), 0, 11, error));
      CHECK(comm->isend(small.data(), small.size(), 0, 10, error));
      CHECK(comm->isend(nullptr, 0, 0, 12, error));
      CHECK(comm->isend(small.data(), small.size(), 2, 10, error));
      CHECK(comm->waitAll(error));
      // Eight bytes where the receiver expects four.
      CHECK(comm->isend(small.data(), 8, 0, 13, error));
      CHECK(comm->waitAll(error)); // The receiver takes them anyway.
    } else if (rank == 0) {
      std::vector<char> got(small.size());
      CHECK(comm->recvStage(got.data(), got.size(), 1, 10, error));
      CHECK(got == small);
      got.assign(big.size(), 0);
      CHECK(comm->recvStage(got.data(), got.size(), 1, 11, error));
      CHECK(got == big);
      CHECK(comm->recvStage(nullptr, 0, 1, 12, error));
      char four[4];
      CHECK(!comm->recvStage(four, 4, 1, 13, error));
      std::fprintf(stderr, "%s\n", error.c_str());
      CHECK(error == "rank 1 sent 8 bytes with tag 13, expected 4");
    } else {
      std::vector<char> got(small.size());
      CHECK(comm->recvStage(got.data(), got.size(), 1, 10, error));
      CHECK(got == small);
    }
    // Stage traffic to oneself is an error, not a hang.
    CHECK(!comm->isend("x", 1, rank, 1, error));
    CHECK(comm->allOk(true));
    return 0;
  };
  std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "60", 60, body);
  for (uint32_t r = 0; r < 3; ++r)
    EXPECT_EQ(results[r].exitCode, 0) << describe(results);
}

/// A two-rank context of one axis for the failure tests.
std::unique_ptr<rt::CollectiveContext> twoRankContext(rt::Comm &comm) {
  plan::ModelInfo model;
  model.target = "cpu";
  model.worldSize = 2;
  model.meshAxes = {{"tp", 2}};
  std::string error;
  std::unique_ptr<rt::CollectiveContext> context =
      rt::CollectiveContext::create(&comm, model, error);
  CHECK(context != nullptr);
  return context;
}

TEST(Gloo, PeerGone) {
  // Rank 1 makes the group (the rendezvous needs it) and exits; rank 0's
  // all_reduce fails at once, naming Gloo's reason, with a long timeout.
  auto body = [](uint32_t rank) {
    ::setenv("DNNC_GLOO_TIMEOUT_S", "60", 1);
    std::unique_ptr<rt::Comm> comm = connectRank();
    std::unique_ptr<rt::CollectiveContext> context = twoRankContext(*comm);
    rt::ActiveCollectives active(context.get());
    std::string error;
    CHECK(context->group(1, error) != nullptr);
    if (rank == 1)
      return 5;
    std::vector<float> x(1000, 1.0f), y(1000);
    Clock::time_point start = Clock::now();
    dnnc_rt_all_reduce(1, int32_t(DataType::Float), DNNC_RT_REDUCE_SUM,
                       x.data(), y.data(), 1000);
    std::string message;
    CHECK(rt::takeKernelError(message));
    std::fprintf(stderr, "after %.2f s: %s\n", secondsSince(start),
                 message.c_str());
    CHECK(secondsSince(start) < 10);
    CHECK(message.find("dnnc_rt_all_reduce(axesMask=1, dtype=1, op=0, "
                       "count=1000): allreduce over the Gloo context of "
                       "ranks 0 and 1 failed: ") != std::string::npos);
    return 0;
  };
  std::vector<RankResult> results = runWorld(2, {0, 1}, "60", 60, body);
  EXPECT_EQ(results[0].exitCode, 0) << describe(results);
  EXPECT_EQ(results[1].exitCode, 5) << describe(results);
}

TEST(Gloo, PeerNeverComes) {
  // Rank 1 never calls the all_reduce: rank 0 gives up after
  // DNNC_GLOO_TIMEOUT_S (1 s), saying so; a receive likewise.
  auto body = [](uint32_t rank) {
    ::setenv("DNNC_GLOO_TIMEOUT_S", "1", 1);
    std::unique_ptr<rt::Comm> comm = connectRank();
    std::unique_ptr<rt::CollectiveContext> context = twoRankContext(*comm);
    rt::ActiveCollectives active(context.get());
    std::string error;
    CHECK(context->group(1, error) != nullptr);
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(4));
      return 0;
    }
    std::vector<float> x(10, 1.0f), y(10);
    Clock::time_point start = Clock::now();
    dnnc_rt_all_reduce(1, int32_t(DataType::Float), DNNC_RT_REDUCE_SUM,
                       x.data(), y.data(), 10);
    std::string message;
    CHECK(rt::takeKernelError(message));
    double seconds = secondsSince(start);
    std::fprintf(stderr, "after %.2f s: %s\n", seconds, message.c_str());
    CHECK(seconds >= 0.9 && seconds < 3.5);
    CHECK(message.find("allreduce over the Gloo context of ranks 0 and 1 "
                       "failed: ") != std::string::npos);
    CHECK(message.find("(DNNC_GLOO_TIMEOUT_S=1)") != std::string::npos);
    return 0;
  };
  std::vector<RankResult> results = runWorld(2, {0, 1}, "60", 30, body);
  for (uint32_t r = 0; r < 2; ++r)
    EXPECT_EQ(results[r].exitCode, 0) << describe(results);

  // A stage receive from a rank that sends nothing.
  auto recvBody = [](uint32_t rank) {
    ::setenv("DNNC_GLOO_TIMEOUT_S", "1", 1);
    std::unique_ptr<rt::Comm> comm = connectRank();
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return 0;
    }
    std::string error;
    char four[4];
    Clock::time_point start = Clock::now();
    CHECK(!comm->recvStage(four, 4, 1, 3, error));
    std::fprintf(stderr, "%s\n", error.c_str());
    CHECK(secondsSince(start) < 3);
    CHECK(error.find("receiving 4 bytes from rank 1 (tag 3) over Gloo: ") !=
          std::string::npos);
    CHECK(error.find("(DNNC_GLOO_TIMEOUT_S=1)") != std::string::npos);
    return 0;
  };
  results = runWorld(2, {0, 1}, "60", 30, recvBody);
  for (uint32_t r = 0; r < 2; ++r)
    EXPECT_EQ(results[r].exitCode, 0) << describe(results);
}

TEST(Gloo, BadTimeout) {
  // A malformed DNNC_GLOO_TIMEOUT_S fails the connection on every rank.
  auto body = [](uint32_t) {
    ::setenv("DNNC_GLOO_TIMEOUT_S", "soon", 1);
    connectRank();
    return 0;
  };
  std::vector<RankResult> results = runWorld(2, {0, 1}, "10", 30, body);
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exitCode, 11) << describe(results);
    EXPECT_NE(results[r].err.find("invalid DNNC_GLOO_TIMEOUT_S='soon'"),
              std::string::npos)
        << describe(results);
  }
}

} // namespace
