//===- GlooComm.cpp - The Gloo data path of a TCP world ---------*- C++ -*-===//
//
// The Gloo device and contexts of a torchrun-style launch, their rendezvous
// over the bootstrap sockets, and point-to-point messages over Gloo
// (GlooComm.h). Built only with DNNC_RUNTIME_WITH_GLOO.
//
//===----------------------------------------------------------------------===//

#include "GlooComm.h"
#include "TcpComm.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace dnnc::rt {

bool glooTimeoutSeconds(double &seconds, std::string &error) {
  return timeoutFromEnvironment("DNNC_GLOO_TIMEOUT_S", 300, seconds, error);
}

namespace {

/// "0, 1 and 3".
std::string listRanks(const std::vector<uint32_t> &ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i == 0                  ? ""
             : i + 1 == ranks.size() ? " and "
                                     : ", ") +
            std::to_string(ranks[i]);
  return text;
}

/// `seconds` as Gloo's milliseconds (at least 1).
std::chrono::milliseconds toMilliseconds(double seconds) {
  return std::chrono::milliseconds(
      std::max<int64_t>(1, int64_t(std::ceil(seconds * 1000))));
}

/// Gloo's message of `e`, with the variable that sets the limit when it is
/// a timeout.
std::string glooFailure(const std::exception &e, double timeout) {
  std::string what = e.what();
  if (what.find("Timed out") != std::string::npos) {
    char limit[64];
    std::snprintf(limit, sizeof(limit), " (DNNC_GLOO_TIMEOUT_S=%g)", timeout);
    what += limit;
  }
  return what;
}

/// The key/value store of one rendezvous, over the bootstrap sockets. Every
/// set() goes to each other member as a frame on TcpChannel::Rendezvous
/// with the context's tag: [u32 key length][key][value]. get() and wait()
/// read the members' frames until the key has arrived. finish() sends an
/// empty frame (the end) to every member and reads each member's frames up
/// to its end, so that nothing of this rendezvous is left queued (a later
/// context of the same members may use the same tag). Failures throw
/// std::runtime_error, which connectFullMesh passes on.
class BootstrapStore : public gloo::rendezvous::Store {
public:
  BootstrapStore(TcpWorld &tcp, const std::vector<uint32_t> &members,
                 int32_t tag, double waitSeconds)
      : tcp(tcp), tag(tag), waitSeconds(waitSeconds) {
    for (uint32_t member : members)
      if (member != tcp.rank())
        peers.push_back(member);
    ended.assign(peers.size(), false);
  }

  void set(const std::string &key, const std::vector<char> &data) override {
    std::string frame(4, '\0');
    uint32_t length = uint32_t(key.size());
    std::memcpy(&frame[0], &length, 4);
    frame += key;
    frame.append(data.begin(), data.end());
    values[key] = data;
    for (uint32_t peer : peers) {
      std::string error;
      if (!tcp.send(peer, TcpChannel::Rendezvous, tag, frame.data(),
                    frame.size(), error))
        throw std::runtime_error(error);
    }
  }

  std::vector<char> get(const std::string &key) override {
    wait({key});
    return values.at(key);
  }

  void wait(const std::vector<std::string> &keys) override {
    for (const std::string &key : keys)
      while (!values.count(key))
        receiveOne();
  }

  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &) override {
    wait(keys); // Bounded by waitSeconds of no progress.
  }

  /// Ends the rendezvous on this rank (see the class comment).
  void finish() {
    for (uint32_t peer : peers) {
      std::string error;
      if (!tcp.send(peer, TcpChannel::Rendezvous, tag, nullptr, 0, error))
        throw std::runtime_error(error);
    }
    while (std::find(ended.begin(), ended.end(), false) != ended.end())
      receiveOne();
  }

private:
  /// Reads one frame of this rendezvous from a member that has not ended.
  void receiveOne() {
    std::vector<uint32_t> from;
    for (size_t i = 0; i < peers.size(); ++i)
      if (!ended[i])
        from.push_back(peers[i]);
    if (from.empty())
      throw std::runtime_error("every member ended the rendezvous before "
                               "sending the keys this rank waits for");
    uint32_t sender = 0;
    std::string frame, error;
    if (!tcp.receiveAny(from, TcpChannel::Rendezvous, tag, sender, frame,
                        waitSeconds, error))
      throw std::runtime_error(error);
    size_t index = size_t(std::find(peers.begin(), peers.end(), sender) -
                          peers.begin());
    if (frame.empty()) {
      ended[index] = true;
      return;
    }
    uint32_t length = 0;
    if (frame.size() >= 4)
      std::memcpy(&length, frame.data(), 4);
    if (frame.size() < 4 || frame.size() - 4 < length)
      throw std::runtime_error("malformed rendezvous frame from rank " +
                               std::to_string(sender));
    std::string key = frame.substr(4, length);
    values[key].assign(frame.begin() + 4 + length, frame.end());
  }

  TcpWorld &tcp;
  int32_t tag;
  double waitSeconds;
  /// The other members.
  std::vector<uint32_t> peers;
  /// Whether each of `peers` sent its end.
  std::vector<bool> ended;
  /// Every key set so far, here or by a member.
  std::map<std::string, std::vector<char>> values;
};

} // namespace

std::string GlooGroup::describe() const {
  return "the Gloo context of ranks " + listRanks(members);
}

GlooWorld::GlooWorld(TcpWorld &tcp, double timeout)
    : tcp(tcp), timeout(timeout) {}

GlooWorld::~GlooWorld() {
  // Sends nobody waited for (a run that failed): their buffers go first,
  // then the contexts, then the device (its thread).
  pending.clear();
  groups.clear();
  world.reset();
  device.reset();
}

uint32_t GlooWorld::rank() const { return tcp.rank(); }

std::unique_ptr<GlooWorld> GlooWorld::connect(TcpWorld &tcp,
                                              std::string &error) {
  std::string who = "rank " + std::to_string(tcp.rank()) + ": ";
  double timeout = 0;
  if (!glooTimeoutSeconds(timeout, error))
    return nullptr;
  // Gloo writes to its sockets without MSG_NOSIGNAL: a peer that is gone
  // would kill this process with SIGPIPE instead of failing the write (a
  // clear error naming the operation). Nothing in the runtime relies on
  // SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<GlooWorld> world(new GlooWorld(tcp, timeout));
  gloo::transport::tcp::attr attr;
  const char *iface = std::getenv("GLOO_SOCKET_IFNAME");
  if (iface && *iface)
    attr.iface = iface;
  else
    attr.hostname = tcp.localHost();
  try {
    world->device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception &e) {
    error = who + "cannot create the Gloo TCP device on " +
            (attr.iface.empty() ? "address '" + attr.hostname + "'"
                                : "GLOO_SOCKET_IFNAME='" + attr.iface + "'") +
            ": " + e.what();
    return nullptr;
  }
  std::vector<uint32_t> everyone(tcp.size());
  for (uint32_t r = 0; r < tcp.size(); ++r)
    everyone[r] = r;
  // Every rank has just connected: the bootstrap timeout bounds the wait.
  world->world = world->makeGroup(everyone, 0, tcp.timeout(), error);
  if (!world->world)
    return nullptr;
  world->groups.emplace(everyone, world->world);
  return world;
}

std::shared_ptr<GlooGroup>
GlooWorld::makeGroup(const std::vector<uint32_t> &members, int32_t tag,
                     double waitSeconds, std::string &error) {
  auto position = std::find(members.begin(), members.end(), tcp.rank());
  if (members.size() < 2 || position == members.end()) {
    error = "internal error: a Gloo context of ranks " + listRanks(members) +
            " made by rank " + std::to_string(tcp.rank());
    return nullptr;
  }
  auto group = std::make_shared<GlooGroup>();
  group->members = members;
  group->timeout = toMilliseconds(timeout);
  int index = int(position - members.begin());
  auto context =
      std::make_shared<gloo::rendezvous::Context>(index, int(members.size()));
  // Connecting the pairs waits for the slowest member, like the store.
  context->setTimeout(toMilliseconds(std::max(waitSeconds, timeout)));
  BootstrapStore store(tcp, members, tag, waitSeconds);
  try {
    context->connectFullMesh(store, device);
    store.finish();
  } catch (const std::exception &e) {
    error = "rank " + std::to_string(tcp.rank()) + ": rendezvous of " +
            group->describe() + " failed: " + e.what();
    return nullptr;
  }
  context->setTimeout(group->timeout);
  group->context = context;
  return group;
}

std::shared_ptr<GlooGroup>
GlooWorld::group(const std::vector<uint32_t> &members, int32_t tag,
                 std::string &error) {
  auto it = groups.find(members);
  if (it != groups.end())
    return it->second;
  // A mesh group is made the first time a kernel uses it: the members may
  // arrive as far apart as in any collective.
  std::shared_ptr<GlooGroup> group = makeGroup(members, tag, timeout, error);
  if (group)
    groups.emplace(members, group);
  return group;
}

/// The slot of the data of `traffic` with `tag`; the byte count goes on
/// the next slot. Gloo's collectives use prefixes 1 to 8 in the top byte.
static uint64_t dataSlot(GlooTraffic traffic, uint32_t tag) {
  return (uint64_t(traffic) << 56) | (uint64_t(tag) << 24);
}

bool GlooWorld::finish(PendingSend &send, std::string &error) {
  try {
    send.headerBuffer->waitSend(toMilliseconds(timeout));
    if (send.dataBuffer)
      send.dataBuffer->waitSend(toMilliseconds(timeout));
  } catch (const std::exception &e) {
    error = "sending " + std::to_string(send.header) + " bytes to rank " +
            std::to_string(send.peer) + " (tag " + std::to_string(send.tag) +
            ") over Gloo: " + glooFailure(e, timeout);
    return false;
  }
  return true;
}

bool GlooWorld::send(const void *data, uint64_t bytes, uint32_t peer,
                     GlooTraffic traffic, uint32_t tag, bool wait,
                     std::string &error) {
  if (peer >= tcp.size() || peer == tcp.rank()) {
    error = "internal error: Gloo send to rank " + std::to_string(peer) +
            " from rank " + std::to_string(tcp.rank()) + " of " +
            std::to_string(tcp.size());
    return false;
  }
  auto send = std::make_unique<PendingSend>();
  send->header = bytes;
  send->peer = peer;
  send->tag = tag;
  uint64_t slot = dataSlot(traffic, tag);
  try {
    gloo::Context &context = *world->context;
    send->headerBuffer =
        context.createUnboundBuffer(&send->header, sizeof(send->header));
    send->headerBuffer->send(int(peer), slot + 1);
    if (bytes > 0) {
      send->dataBuffer =
          context.createUnboundBuffer(const_cast<void *>(data), bytes);
      send->dataBuffer->send(int(peer), slot);
    }
  } catch (const std::exception &e) {
    error = "sending " + std::to_string(bytes) + " bytes to rank " +
            std::to_string(peer) + " (tag " + std::to_string(tag) +
            ") over Gloo: " + e.what();
    return false;
  }
  if (wait)
    return finish(*send, error);
  pending.push_back(std::move(send));
  return true;
}

bool GlooWorld::recv(void *data, uint64_t bytes, uint32_t peer,
                     GlooTraffic traffic, uint32_t tag, std::string &error) {
  if (peer >= tcp.size() || peer == tcp.rank()) {
    error = "internal error: Gloo receive from rank " + std::to_string(peer) +
            " at rank " + std::to_string(tcp.rank()) + " of " +
            std::to_string(tcp.size());
    return false;
  }
  uint64_t slot = dataSlot(traffic, tag), announced = 0;
  try {
    gloo::Context &context = *world->context;
    auto header = context.createUnboundBuffer(&announced, sizeof(announced));
    header->recv(int(peer), slot + 1);
    header->waitRecv(toMilliseconds(timeout));
    if (announced != bytes) {
      error = "rank " + std::to_string(peer) + " sent " +
              std::to_string(announced) + " bytes with tag " +
              std::to_string(tag) + ", expected " + std::to_string(bytes);
      // Take the message anyway (into scratch memory), so that the sender
      // completes and reaches the agreement that reports this error rather
      // than waiting for the timeout.
      if (announced > 0 && announced <= (uint64_t(1) << 32)) {
        try {
          std::vector<char> scratch(announced);
          auto buffer =
              context.createUnboundBuffer(scratch.data(), announced);
          buffer->recv(int(peer), slot);
          buffer->waitRecv(toMilliseconds(timeout));
        } catch (const std::exception &) {
          // The error above is the one to report.
        }
      }
      return false;
    }
    if (bytes > 0) {
      auto buffer = context.createUnboundBuffer(data, bytes);
      buffer->recv(int(peer), slot);
      buffer->waitRecv(toMilliseconds(timeout));
    }
  } catch (const std::exception &e) {
    error = "receiving " + std::to_string(bytes) + " bytes from rank " +
            std::to_string(peer) + " (tag " + std::to_string(tag) +
            ") over Gloo: " + glooFailure(e, timeout);
    return false;
  }
  return true;
}

bool GlooWorld::waitSends(std::string &error) {
  bool ok = true;
  for (std::unique_ptr<PendingSend> &send : pending) {
    std::string why;
    if (!finish(*send, why) && ok) {
      error = why;
      ok = false;
    }
  }
  pending.clear();
  return ok;
}

} // namespace dnnc::rt
