//===- TcpComm.h - Ranks connected over TCP ---------------------*- C++ -*-===//
//
// Private to the runtime: the sockets behind a Comm of a torchrun-style
// launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Rank 0 listens on
// MASTER_PORT; every other rank connects to it (retrying until the bootstrap
// timeout) and announces the port of a listening socket of its own; rank 0
// sends every rank the table of addresses, and the ranks then connect to
// each other: a full mesh, one socket per pair, so any two ranks exchange
// messages directly (the CUDA backend's NCCL id exchange within a mesh group
// and the rendezvous of a Gloo context of a mesh group involve only the
// group's members, never a relay through rank 0).
//
// These sockets carry the control traffic only: Comm's status agreement,
// gathers and send/recv, and the rendezvous of the Gloo contexts
// (GlooComm.h), which carry the data (collective kernels, pipeline stages).
// Every message is a frame: a 24-byte header (magic, channel, tag, sender
// rank, payload length) and the payload. Frames that arrive while a rank
// waits for another one are kept per peer and matched later by (channel,
// tag), like MPI's tag matching. All sockets are non-blocking and every wait
// is a poll() with a deadline; while a rank sends it also reads whatever
// its peers send, so two ranks sending to each other never deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_TCPCOMM_H
#define DNNC_SRC_RUNTIME_TCPCOMM_H

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::rt {

/// How to connect the ranks of a TCP world.
struct TcpOptions {
  /// This process's rank, 0 .. size-1.
  uint32_t rank = 0;
  /// Number of processes (>= 2).
  uint32_t size = 2;
  /// The host rank 0 listens on (MASTER_ADDR): a name or a numeric address.
  std::string masterAddr;
  /// The port rank 0 listens on (MASTER_PORT).
  uint16_t masterPort = 0;
  /// Seconds the connection may take, and the longest a peer may be stuck
  /// inside an operation (DNNC_BOOTSTRAP_TIMEOUT_S).
  double timeoutSeconds = 120;
};

/// The bootstrap timeout: DNNC_BOOTSTRAP_TIMEOUT_S (a positive number of
/// seconds, at most 10^6), 120 when unset. Fails on a malformed value.
bool bootstrapTimeoutSeconds(double &seconds, std::string &error);

/// Reads a timeout in seconds from the environment variable `variable`
/// (unset: `defaultSeconds`); a value that is not a number of seconds above
/// 0 (at most 1e6) is an error naming the variable and its default.
bool timeoutFromEnvironment(const char *variable, double defaultSeconds,
                            double &seconds, std::string &error);

/// The channels frames travel on (kept apart like MPI communicators).
enum class TcpChannel : uint16_t {
  /// Connection set-up: hellos and the address table.
  Setup = 1,
  /// Comm::allOk contributions and verdicts.
  AllOk = 2,
  /// Comm::gatherToRoot.
  Gather = 3,
  /// Comm::send / Comm::recv.
  Control = 4,
  /// The key/value store of a Gloo rendezvous (GlooComm.cpp); the tag
  /// names the context.
  Rendezvous = 5,
};

/// The sockets of one rank of a TCP world.
class TcpWorld {
public:
  /// Connects this rank to all the others (collective over the world).
  /// Fails with one line naming the address or the peer on an unresolvable
  /// host, a port in use, a peer that does not arrive within the timeout or
  /// a peer of another world size.
  static std::unique_ptr<TcpWorld> connect(const TcpOptions &options,
                                           std::string &error);

  /// Closes every socket.
  ~TcpWorld();
  TcpWorld(const TcpWorld &) = delete;
  TcpWorld &operator=(const TcpWorld &) = delete;

  /// This process's rank.
  uint32_t rank() const { return options.rank; }
  /// Number of processes.
  uint32_t size() const { return options.size; }
  /// The timeout in seconds.
  double timeout() const { return options.timeoutSeconds; }

  /// Sends one frame of `bytes` bytes to rank `peer`. Fails when the peer
  /// is gone or takes no data for the timeout.
  bool send(uint32_t peer, TcpChannel channel, int32_t tag, const void *data,
            uint64_t bytes, std::string &error);

  /// Receives the next frame on `channel` with `tag` from rank `peer` into
  /// `out` (any length). Waits at most `waitSeconds` from the start, and
  /// longer only while bytes keep arriving from the peer; a negative
  /// `waitSeconds` waits as long as the peer is alive. On a wait that runs
  /// out, sets `*timedOut` (when given) as well as `error`.
  bool receive(uint32_t peer, TcpChannel channel, int32_t tag, std::string &out,
               double waitSeconds, std::string &error,
               bool *timedOut = nullptr);

  /// Receives one frame on `channel` with `tag` from each rank of `from`
  /// into `out` (indexed like `from`), as receive() does for one; fails as
  /// soon as the connection to any of them is lost.
  bool receiveEach(const std::vector<uint32_t> &from, TcpChannel channel,
                   int32_t tag, std::vector<std::string> &out,
                   double waitSeconds, std::string &error,
                   bool *timedOut = nullptr);

  /// Receives the first frame on `channel` with `tag` that arrives from any
  /// rank of `from`; `sender` is that rank. Waits while some rank of `from`
  /// sent bytes within the last `waitSeconds` (then sets `*timedOut`, when
  /// given, as well as `error`); fails when a connection to a rank of
  /// `from` is lost.
  bool receiveAny(const std::vector<uint32_t> &from, TcpChannel channel,
                  int32_t tag, uint32_t &sender, std::string &out,
                  double waitSeconds, std::string &error,
                  bool *timedOut = nullptr);

  /// Like receive() within the timeout, into `bytes` bytes at `data`; a
  /// frame of another length is an error.
  bool receiveExact(uint32_t peer, TcpChannel channel, int32_t tag, void *data,
                    uint64_t bytes, std::string &error);

  /// Closes every socket at once (shutdown and close): the peers see the
  /// connection end. Later operations fail.
  void closeAll();

  /// Collective operations (allOk, gatherToRoot) started so far: the tag of
  /// the next one, so that ranks out of step are caught.
  int32_t collectives = 0;

  /// "rank 2 (10.0.0.3:41234)": a peer and the address of its socket.
  std::string describePeer(uint32_t peer) const;

  /// The numeric address of this rank's end of its connection to rank 0
  /// (rank 0: to rank 1): the interface through which it reaches the
  /// others, where its Gloo device listens.
  std::string localHost() const;

  /// One received frame waiting to be matched.
  struct Frame {
    /// The channel it came on.
    TcpChannel channel;
    /// Its tag.
    int32_t tag;
    /// Its payload.
    std::string payload;
  };

  /// One connection to another rank.
  struct Peer {
    /// The socket; -1 when closed.
    int fd = -1;
    /// "10.0.0.3:41234": the peer's end of the socket.
    std::string address;
    /// Why the connection ended ("" while it works).
    std::string failure;
    /// The header of the frame being read, and how much of it arrived.
    unsigned char header[24] = {};
    /// Bytes of `header` read so far.
    size_t headerGot = 0;
    /// The frame being read once its header is complete.
    Frame partial;
    /// Bytes of `partial.payload` read so far.
    uint64_t payloadGot = 0;
    /// True while a header has been read and its payload is incomplete.
    bool inPayload = false;
    /// Complete frames not matched yet, in arrival order.
    std::deque<Frame> frames;
  };

private:
  explicit TcpWorld(const TcpOptions &options);

  /// Waits at most `ms` milliseconds for input on every live socket (and
  /// for `writePeer`'s socket to take data, when not -1) and reads what
  /// arrived into the peers' frame queues. Sets `writable` when the
  /// socket of `writePeer` can take data; adds the bytes read from each
  /// rank to `(*got)[rank]` (when given).
  void pump(int ms, int writePeer, bool &writable, std::vector<uint64_t> *got);

  /// Reads what is available on the socket of `peer`; returns the bytes
  /// read. Marks the peer failed on an error or the end of the stream.
  uint64_t readAvailable(uint32_t peer);

  /// Marks `peer` failed with `why` and closes its socket.
  void fail(uint32_t peer, const std::string &why);

  /// "lost the connection to rank 2 (10.0.0.3:41234): ...".
  std::string lostError(uint32_t peer) const;

  /// Checks `peer` is another rank with a connection; sets `error` if not.
  bool checkPeer(uint32_t peer, std::string &error) const;

  TcpOptions options;
  /// Indexed by rank; this rank's own entry is unused.
  std::vector<Peer> peers;

  friend struct TcpConnector;
};

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_TCPCOMM_H
