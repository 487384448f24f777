//===- GlooComm.h - The Gloo data path of a TCP world -----------*- C++ -*-===//
//
// Private to the runtime. In a torchrun-style launch (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) the data moves through Gloo, the CPU collective
// library PyTorch uses: the cpu collective kernels (GlooCollectives.h), the
// point-to-point kernels and the pipeline-stage transfers. A GlooWorld owns
// the Gloo TCP device and the Gloo contexts of one Comm: the context of the
// whole world, made when the Comm connects, and one per distinct member list
// of a mesh group, made the first time a kernel uses the group.
//
// The rendezvous of a context (gloo::rendezvous::Context::connectFullMesh)
// goes through a key/value store over the bootstrap sockets of the TcpWorld
// (TcpComm.h): a key a member sets is sent to every other member of the
// context, and a member waiting for a key reads what the others sent. So
// only the members of a context take part in its rendezvous, as with
// MPI_Comm_create_group.
//
// Without Gloo (DNNC_RUNTIME_WITH_GLOO off) GlooWorld is an empty type and
// a Comm never has one.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_GLOOCOMM_H
#define DNNC_SRC_RUNTIME_GLOOCOMM_H

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gloo {
class Context;
namespace transport {
class Device;
class UnboundBuffer;
} // namespace transport
} // namespace gloo

namespace dnnc::rt {

class TcpWorld;

#if DNNC_RUNTIME_WITH_GLOO

/// The Gloo timeout: DNNC_GLOO_TIMEOUT_S (a positive number of seconds, at
/// most 10^6), 300 when unset. Fails on a malformed value.
bool glooTimeoutSeconds(double &seconds, std::string &error);

/// One Gloo context and what its collectives need.
struct GlooGroup {
  /// The context: rank i is members[i].
  std::shared_ptr<gloo::Context> context;
  /// World ranks of the members, by rank in the context.
  std::vector<uint32_t> members;
  /// The tag of the next collective (the members run the same collectives
  /// on a context in the same order, so their counters agree).
  uint32_t nextTag = 0;
  /// The longest a collective may wait for the members.
  std::chrono::milliseconds timeout{0};

  /// "the Gloo context of ranks 0 and 1", for messages.
  std::string describe() const;
};

/// Which point-to-point traffic a message belongs to: each kind has its
/// own Gloo slots (the tags of one kind never match the other's).
enum class GlooTraffic : uint8_t {
  /// dnnc_rt_send / dnnc_rt_recv.
  Kernels = 0x41,
  /// Comm::isend / Comm::recvStage (pipeline stages).
  Stages = 0x42,
};

/// The Gloo contexts of one rank of a TCP world.
class GlooWorld {
public:
  /// Creates the Gloo device (on the interface of the bootstrap sockets,
  /// or GLOO_SOCKET_IFNAME) and the context of the whole world; collective
  /// over every rank of `tcp`, which must outlive the result. Fails with
  /// one line naming the rank and what went wrong.
  static std::unique_ptr<GlooWorld> connect(TcpWorld &tcp, std::string &error);

  /// Releases the contexts and the device.
  ~GlooWorld();
  GlooWorld(const GlooWorld &) = delete;
  GlooWorld &operator=(const GlooWorld &) = delete;

  /// The context over `members` (world ranks in context order; this rank
  /// among them, at least two), made on first use and cached: collective
  /// over the members only, whose rendezvous frames carry `tag` (members
  /// of different contexts that may make them at the same time use
  /// different tags). Null with `error` set on failure.
  std::shared_ptr<GlooGroup> group(const std::vector<uint32_t> &members,
                                   int32_t tag, std::string &error);

  /// Sends `bytes` bytes at `data` to world rank `peer` with `tag`. With
  /// `wait`, returns once the peer took them (blocking, as MPI_Send may);
  /// otherwise `data` must stay unchanged until waitSends(). The byte count
  /// travels first, so that a receive of another size is an error rather
  /// than a corrupted buffer.
  bool send(const void *data, uint64_t bytes, uint32_t peer,
            GlooTraffic traffic, uint32_t tag, bool wait, std::string &error);

  /// Receives exactly `bytes` bytes from world rank `peer` with `tag`.
  /// Fails when the peer sends another number of bytes, is lost, or sends
  /// nothing within the Gloo timeout.
  bool recv(void *data, uint64_t bytes, uint32_t peer, GlooTraffic traffic,
            uint32_t tag, std::string &error);

  /// Waits until every send started without `wait` has completed.
  bool waitSends(std::string &error);

  /// This process's world rank.
  uint32_t rank() const;

  /// The Gloo timeout in seconds (DNNC_GLOO_TIMEOUT_S).
  double timeoutSeconds() const { return timeout; }

private:
  GlooWorld(TcpWorld &tcp, double timeout);

  /// Makes the context over `members` with a rendezvous on `tag`, waiting
  /// at most `waitSeconds` for the members.
  std::shared_ptr<GlooGroup> makeGroup(const std::vector<uint32_t> &members,
                                       int32_t tag, double waitSeconds,
                                       std::string &error);

  /// A send that has not completed yet.
  struct PendingSend {
    /// The byte count, sent ahead of the data.
    uint64_t header = 0;
    /// The buffers of the count and of the data (null for 0 bytes).
    std::unique_ptr<gloo::transport::UnboundBuffer> headerBuffer, dataBuffer;
    /// Where it goes, for messages.
    uint32_t peer = 0;
    /// Its tag, for messages.
    uint32_t tag = 0;
  };

  /// Waits for `send`; false with `error` set when it failed.
  bool finish(PendingSend &send, std::string &error);

  TcpWorld &tcp;
  /// DNNC_GLOO_TIMEOUT_S.
  double timeout;
  std::shared_ptr<gloo::transport::Device> device;
  /// The context of the whole world (point-to-point traffic).
  std::shared_ptr<GlooGroup> world;
  /// Every context made, by member list.
  std::map<std::vector<uint32_t>, std::shared_ptr<GlooGroup>> groups;
  /// Sends started without `wait`.
  std::vector<std::unique_ptr<PendingSend>> pending;
};

#else // !DNNC_RUNTIME_WITH_GLOO

/// Without Gloo there is no Gloo data path.
class GlooWorld {};

#endif // DNNC_RUNTIME_WITH_GLOO

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_GLOOCOMM_H
