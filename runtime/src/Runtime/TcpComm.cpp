//===- TcpComm.cpp - Ranks connected over TCP -------------------*- C++ -*-===//
//
// The bootstrap of a torchrun-style launch (rank 0 on MASTER_ADDR:
// MASTER_PORT, the address table, the mesh of sockets) and the framed
// control messages between the ranks, every wait bounded by poll()
// (TcpComm.h).
//
//===----------------------------------------------------------------------===//

#include "TcpComm.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace dnnc::rt {

namespace {
using Clock = std::chrono::steady_clock;

/// "DNNC" in the first four bytes of every frame and hello.
constexpr uint32_t kMagic = 0x434e4e44;
/// Bytes of a frame header: magic, channel, version, tag, sender, length.
constexpr size_t kHeaderBytes = 24;
/// The frame format version (2: the channels of TcpChannel since the data
/// path moved to Gloo).
constexpr uint16_t kVersion = 2;
/// The largest payload a header may announce (1 TiB): more is corruption.
constexpr uint64_t kMaxPayload = uint64_t(1) << 40;
/// The largest single read or write.
constexpr uint64_t kMaxChunk = uint64_t(1) << 30;

/// Seconds since `start`.
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Milliseconds for poll(): `seconds` rounded up, clamped to [0, 1000].
int pollMs(double seconds) {
  if (seconds <= 0)
    return 0;
  return int(std::min(1000.0, std::ceil(seconds * 1000)));
}

/// "N s" for messages.
std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

/// The error text of `code` (errno).
std::string errnoText(int code) { return std::strerror(code); }

/// Why a connection failed with `code` (errno), for a lost peer.
std::string connectionError(int code) {
  if (code == EPIPE || code == ECONNRESET)
    return errnoText(code) + " (the process exited or failed)";
  return errnoText(code);
}

/// "10.0.0.3:41234" or "[::1]:41234".
std::string addressText(const sockaddr *addr) {
  char host[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (addr->sa_family == AF_INET) {
    auto *in = reinterpret_cast<const sockaddr_in *>(addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (addr->sa_family == AF_INET6) {
    auto *in6 = reinterpret_cast<const sockaddr_in6 *>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "?";
}

/// The numeric host of `addr` (no port), as getaddrinfo() reads it back.
std::string hostText(const sockaddr *addr) {
  char host[INET6_ADDRSTRLEN] = {};
  if (addr->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(addr)->sin_addr,
              host, sizeof(host));
  else if (addr->sa_family == AF_INET6)
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6 *>(addr)->sin6_addr, host,
              sizeof(host));
  return host;
}

/// The remote address of socket `fd` ("?" when unknown).
std::string peerAddress(int fd) {
  sockaddr_storage addr = {};
  socklen_t length = sizeof(addr);
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&addr), &length) != 0)
    return "?";
  return addressText(reinterpret_cast<sockaddr *>(&addr));
}

/// Makes `fd` non-blocking, without Nagle's delay, with keepalive probes (a
/// host that vanishes without closing its sockets is noticed).
void configureSocket(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
#ifdef TCP_KEEPIDLE
  int idle = 30, interval = 10, count = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
#endif
}

/// Closes `fd` (when open) and sets it to -1.
void closeFd(int &fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

/// Owns a socket during the bootstrap.
struct Socket {
  /// The descriptor; -1 when none.
  int fd = -1;
  Socket() = default;
  explicit Socket(int fd) : fd(fd) {}
  ~Socket() { closeFd(fd); }
  Socket(const Socket &) = delete;
  Socket &operator=(const Socket &) = delete;
  /// Hands the descriptor over.
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

/// Resolves `host`:`port` (TCP); the first address in `out`.
bool resolve(const std::string &host, uint16_t port, bool numeric,
             sockaddr_storage &out, socklen_t &length, std::string &error) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = numeric ? AI_NUMERICHOST : 0;
  addrinfo *list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0 || !list) {
    error = "cannot resolve '" + host +
            "': " + (rc == EAI_SYSTEM ? errnoText(errno) : ::gai_strerror(rc));
    return false;
  }
  std::memcpy(&out, list->ai_addr, list->ai_addrlen);
  length = list->ai_addrlen;
  ::freeaddrinfo(list);
  return true;
}

/// Waits until `fd` is ready for `events` or `deadline`; false on timeout.
bool waitFd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    double left =
        std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0)
      return false;
    pollfd p = {fd, events, 0};
    int rc = ::poll(&p, 1, pollMs(left));
    if (rc > 0)
      return true;
    if (rc < 0 && errno != EINTR)
      return true; // Let the following call report the error.
  }
}

/// Writes all `n` bytes to `fd` by `deadline` (bootstrap only).
bool writeFd(int fd, const void *data, size_t n, Clock::time_point deadline,
             std::string &why) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= size_t(w);
      continue;
    }
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      why = errnoText(errno);
      return false;
    }
    if (!waitFd(fd, POLLOUT, deadline)) {
      why = "timed out";
      return false;
    }
  }
  return true;
}

/// Reads exactly `n` bytes from `fd` by `deadline` (bootstrap only).
bool readFd(int fd, void *data, size_t n, Clock::time_point deadline,
            std::string &why) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r > 0) {
      p += r;
      n -= size_t(r);
      continue;
    }
    if (r == 0) {
      why = "the connection was closed";
      return false;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      why = errnoText(errno);
      return false;
    }
    if (!waitFd(fd, POLLIN, deadline)) {
      why = "timed out";
      return false;
    }
  }
  return true;
}

/// What a rank says first on every connection.
struct Hello {
  uint32_t magic = kMagic;
  /// The sender's rank.
  uint32_t rank = 0;
  /// The sender's world size.
  uint32_t size = 0;
  /// The port of the sender's listening socket (to rank 0 only).
  uint32_t port = 0;
};

/// A listening socket on the wildcard address of `family`, port `port` (0:
/// any); `port` receives the port bound.
int listenOn(int family, uint16_t &port, int backlog, std::string &error) {
  Socket s(::socket(family, SOCK_STREAM, 0));
  if (s.fd < 0) {
    error = "socket() failed: " + errnoText(errno);
    return -1;
  }
  int one = 1;
  ::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage addr = {};
  socklen_t length = 0;
  if (family == AF_INET6) {
    auto *in6 = reinterpret_cast<sockaddr_in6 *>(&addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_any;
    in6->sin6_port = htons(port);
    length = sizeof(sockaddr_in6);
  } else {
    auto *in = reinterpret_cast<sockaddr_in *>(&addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    in->sin_port = htons(port);
    length = sizeof(sockaddr_in);
  }
  if (::bind(s.fd, reinterpret_cast<sockaddr *>(&addr), length) != 0 ||
      ::listen(s.fd, backlog) != 0) {
    error = "cannot listen on port " + std::to_string(port) + ": " +
            errnoText(errno);
    return -1;
  }
  length = sizeof(addr);
  ::getsockname(s.fd, reinterpret_cast<sockaddr *>(&addr), &length);
  port = family == AF_INET6
             ? ntohs(reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port)
             : ntohs(reinterpret_cast<sockaddr_in *>(&addr)->sin_port);
  configureSocket(s.fd);
  return s.release();
}

/// Connects to `addr`, retrying with back-off until `deadline`; the socket,
/// or -1 with the last failure in `why`.
int connectRetrying(const sockaddr_storage &addr, socklen_t length,
                    Clock::time_point deadline, std::string &why) {
  double backoff = 0.05;
  why = "timed out";
  for (;;) {
    Socket s(::socket(addr.ss_family, SOCK_STREAM, 0));
    if (s.fd < 0) {
      why = "socket() failed: " + errnoText(errno);
      return -1;
    }
    configureSocket(s.fd);
    int rc = ::connect(s.fd, reinterpret_cast<const sockaddr *>(&addr), length);
    if (rc != 0 && errno == EINPROGRESS) {
      Clock::time_point attempt = std::min(
          deadline, Clock::now() + std::chrono::seconds(5)); // One attempt.
      if (waitFd(s.fd, POLLOUT, attempt)) {
        int code = 0;
        socklen_t size = sizeof(code);
        ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &code, &size);
        rc = code == 0 ? 0 : -1;
        errno = code;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0)
      return s.release();
    why = errnoText(errno);
    double left =
        std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0)
      return -1;
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::min(backoff, left)));
    backoff = std::min(backoff * 2, 1.0);
  }
}

/// Accepts one connection on `listenFd` by `deadline` and reads its hello;
/// -1 on timeout (`why` says so) or an error.
int acceptHello(int listenFd, Clock::time_point deadline, Hello &hello,
                std::string &address, std::string &why) {
  for (;;) {
    if (!waitFd(listenFd, POLLIN, deadline)) {
      why = "timed out";
      return -1;
    }
    Socket s(::accept(listenFd, nullptr, nullptr));
    if (s.fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ||
          errno == ECONNABORTED)
        continue;
      why = "accept() failed: " + errnoText(errno);
      return -1;
    }
    configureSocket(s.fd);
    std::string readWhy;
    // A stranger that says nothing (or not a hello) is dropped.
    Clock::time_point helloDeadline =
        std::min(deadline, Clock::now() + std::chrono::seconds(10));
    if (!readFd(s.fd, &hello, sizeof(hello), helloDeadline, readWhy) ||
        hello.magic != kMagic)
      continue;
    address = peerAddress(s.fd);
    return s.release();
  }
}

/// "1, 2 and 5".
std::string listRanks(const std::vector<uint32_t> &ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i == 0                  ? ""
             : i + 1 == ranks.size() ? " and "
                                     : ", ") +
            std::to_string(ranks[i]);
  return text;
}
} // namespace

bool timeoutFromEnvironment(const char *variable, double defaultSeconds,
                            double &seconds, std::string &error) {
  seconds = defaultSeconds;
  const char *text = std::getenv(variable);
  if (!text)
    return true;
  char *end = nullptr;
  double value = std::strtod(text, &end);
  if (!*text || !end || *end != '\0' || !(value > 0) || value > 1e6) {
    char shown[32];
    std::snprintf(shown, sizeof(shown), "%g", defaultSeconds);
    error = std::string("invalid ") + variable + "='" + text +
            "': expected a number of seconds greater than 0 (default " +
            shown + ")";
    return false;
  }
  seconds = value;
  return true;
}

bool bootstrapTimeoutSeconds(double &seconds, std::string &error) {
  return timeoutFromEnvironment("DNNC_BOOTSTRAP_TIMEOUT_S", 120, seconds,
                                error);
}

//===----------------------------------------------------------------------===//
// Bootstrap
//===----------------------------------------------------------------------===//

/// The steps of TcpWorld::connect (a friend of TcpWorld).
struct TcpConnector {
  /// The world being connected.
  TcpWorld &world;
  /// The end of the bootstrap.
  Clock::time_point deadline;
  /// "MASTER_ADDR:MASTER_PORT".
  std::string master;

  /// Rank 0: accepts every other rank on MASTER_PORT, sends the table.
  bool root(int family, std::string &error) {
    const TcpOptions &o = world.options;
    uint16_t port = o.masterPort;
    std::string why;
    Socket listener(listenOn(family, port, int(o.size) + 16, why));
    if (listener.fd < 0) {
      error = "rank 0 " + why + " (MASTER_PORT of " + master + ")";
      return false;
    }
    std::vector<std::string> tableHost(o.size);
    std::vector<uint32_t> tablePort(o.size, 0);
    uint32_t joined = 1;
    while (joined < o.size) {
      Hello hello;
      std::string address;
      int fd = acceptHello(listener.fd, deadline, hello, address, why);
      if (fd < 0) {
        std::vector<uint32_t> missing;
        for (uint32_t r = 1; r < o.size; ++r)
          if (world.peers[r].fd < 0)
            missing.push_back(r);
        error =
            "rank 0: " + std::string(missing.size() == 1 ? "rank " : "ranks ") +
            listRanks(missing) + " did not connect to " + master + " within " +
            secondsText(o.timeoutSeconds) + " (DNNC_BOOTSTRAP_TIMEOUT_S)" +
            (why == "timed out" ? "" : ": " + why);
        return false;
      }
      Socket conn(fd);
      if (hello.size != o.size || hello.rank == 0 || hello.rank >= o.size) {
        error = "rank 0: the process at " + address + " was launched as rank " +
                std::to_string(hello.rank) +
                " of WORLD_SIZE=" + std::to_string(hello.size) +
                ", rank 0 with WORLD_SIZE=" + std::to_string(o.size);
        return false;
      }
      TcpWorld::Peer &peer = world.peers[hello.rank];
      if (peer.fd >= 0) {
        error = "rank 0: two processes claim rank " +
                std::to_string(hello.rank) + " (" + peer.address + " and " +
                address + ")";
        return false;
      }
      sockaddr_storage addr = {};
      socklen_t length = sizeof(addr);
      ::getpeername(conn.fd, reinterpret_cast<sockaddr *>(&addr), &length);
      tableHost[hello.rank] = hostText(reinterpret_cast<sockaddr *>(&addr));
      tablePort[hello.rank] = hello.port;
      peer.address = address;
      peer.fd = conn.release();
      ++joined;
    }
    // The table: per rank, port (u32), host length (u32), host.
    std::string table;
    for (uint32_t r = 0; r < o.size; ++r) {
      uint32_t fields[2] = {tablePort[r], uint32_t(tableHost[r].size())};
      table.append(reinterpret_cast<const char *>(fields), sizeof(fields));
      table += tableHost[r];
    }
    uint32_t tableBytes = uint32_t(table.size());
    for (uint32_t r = 1; r < o.size; ++r)
      if (!writeFd(world.peers[r].fd, &tableBytes, 4, deadline, why) ||
          !writeFd(world.peers[r].fd, table.data(), table.size(), deadline,
                   why)) {
        error = "rank 0: sending the address table to " +
                world.describePeer(r) + ": " + why;
        return false;
      }
    return true;
  }

  /// Rank r > 0: connects to rank 0, then to the ranks below, and accepts
  /// the ranks above.
  bool member(const sockaddr_storage &masterAddr, socklen_t masterLength,
              std::string &error) {
    const TcpOptions &o = world.options;
    std::string who = "rank " + std::to_string(o.rank) + ": ";
    uint16_t myPort = 0;
    std::string why;
    Socket listener(
        listenOn(masterAddr.ss_family, myPort, int(o.size) + 16, why));
    if (listener.fd < 0) {
      error = who + why;
      return false;
    }
    int fd = connectRetrying(masterAddr, masterLength, deadline, why);
    if (fd < 0) {
      error = who + "cannot connect to rank 0 at " + master + " (" +
              addressText(reinterpret_cast<const sockaddr *>(&masterAddr)) +
              ") within " + secondsText(o.timeoutSeconds) +
              " (DNNC_BOOTSTRAP_TIMEOUT_S): " + why;
      return false;
    }
    TcpWorld::Peer &root = world.peers[0];
    root.fd = fd;
    root.address = peerAddress(fd);
    Hello hello;
    hello.rank = o.rank;
    hello.size = o.size;
    hello.port = myPort;
    uint32_t tableBytes = 0;
    std::string table;
    if (!writeFd(fd, &hello, sizeof(hello), deadline, why) ||
        !readFd(fd, &tableBytes, 4, deadline, why) ||
        (tableBytes > (1u << 26) && (why = "malformed address table", true)) ||
        (table.assign(tableBytes, '\0'),
         !readFd(fd, &table[0], tableBytes, deadline, why))) {
      error = who + "set-up with " + world.describePeer(0) + " failed: " + why +
              (why == "the connection was closed"
                   ? " (rank 0 failed or refused this rank; see its "
                     "error)"
                   : "");
      return false;
    }
    std::vector<std::string> hosts(o.size);
    std::vector<uint16_t> ports(o.size, 0);
    size_t at = 0;
    for (uint32_t r = 0; r < o.size; ++r) {
      uint32_t fields[2];
      if (table.size() - at < sizeof(fields)) {
        error = who + "malformed address table from rank 0";
        return false;
      }
      std::memcpy(fields, table.data() + at, sizeof(fields));
      at += sizeof(fields);
      if (table.size() - at < fields[1] || fields[0] > 65535) {
        error = who + "malformed address table from rank 0";
        return false;
      }
      hosts[r] = table.substr(at, fields[1]);
      ports[r] = uint16_t(fields[0]);
      at += fields[1];
    }
    // Connect to the ranks below (their listening sockets exist already).
    for (uint32_t r = 1; r < o.rank; ++r) {
      sockaddr_storage addr = {};
      socklen_t length = 0;
      if (!resolve(hosts[r], ports[r], true, addr, length, why)) {
        error = who + "address of rank " + std::to_string(r) + ": " + why;
        return false;
      }
      std::string address =
          addressText(reinterpret_cast<const sockaddr *>(&addr));
      int peerFd = connectRetrying(addr, length, deadline, why);
      Hello mine;
      mine.rank = o.rank;
      mine.size = o.size;
      if (peerFd < 0 || !writeFd(peerFd, &mine, sizeof(mine), deadline, why)) {
        if (peerFd >= 0)
          ::close(peerFd);
        error = who + "cannot connect to rank " + std::to_string(r) + " at " +
                address + ": " + why;
        return false;
      }
      world.peers[r].fd = peerFd;
      world.peers[r].address = address;
    }
    // Accept the ranks above.
    for (uint32_t joined = o.rank + 1; joined < o.size; ++joined) {
      Hello theirs;
      std::string address;
      int peerFd = acceptHello(listener.fd, deadline, theirs, address, why);
      if (peerFd < 0) {
        std::vector<uint32_t> missing;
        for (uint32_t r = o.rank + 1; r < o.size; ++r)
          if (world.peers[r].fd < 0)
            missing.push_back(r);
        error = who + std::string(missing.size() == 1 ? "rank " : "ranks ") +
                listRanks(missing) + " did not connect within " +
                secondsText(o.timeoutSeconds) +
                " (DNNC_BOOTSTRAP_TIMEOUT_S): " + why;
        return false;
      }
      if (theirs.size != o.size || theirs.rank <= o.rank ||
          theirs.rank >= o.size || world.peers[theirs.rank].fd >= 0) {
        ::close(peerFd);
        error = who + "unexpected connection from " + address +
                " claiming rank " + std::to_string(theirs.rank) + " of " +
                std::to_string(theirs.size);
        return false;
      }
      world.peers[theirs.rank].fd = peerFd;
      world.peers[theirs.rank].address = address;
    }
    return true;
  }
};

TcpWorld::TcpWorld(const TcpOptions &options)
    : options(options), peers(options.size) {}

TcpWorld::~TcpWorld() { closeAll(); }

std::unique_ptr<TcpWorld> TcpWorld::connect(const TcpOptions &options,
                                            std::string &error) {
  std::unique_ptr<TcpWorld> world(new TcpWorld(options));
  std::string master =
      options.masterAddr + ":" + std::to_string(options.masterPort);
  sockaddr_storage addr = {};
  socklen_t length = 0;
  std::string why;
  if (!resolve(options.masterAddr, options.masterPort, false, addr, length,
               why)) {
    error = "rank " + std::to_string(options.rank) + ": MASTER_ADDR: " + why;
    return nullptr;
  }
  TcpConnector connector{
      *world,
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.timeoutSeconds)),
      "MASTER_ADDR:MASTER_PORT " + master};
  bool ok = options.rank == 0 ? connector.root(addr.ss_family, error)
                              : connector.member(addr, length, error);
  if (!ok)
    return nullptr; // ~TcpWorld closes what was opened.
  return world;
}

//===----------------------------------------------------------------------===//
// Frames
//===----------------------------------------------------------------------===//

std::string TcpWorld::describePeer(uint32_t peer) const {
  std::string text = "rank " + std::to_string(peer);
  if (peer < peers.size() && !peers[peer].address.empty())
    text += " (" + peers[peer].address + ")";
  return text;
}

std::string TcpWorld::localHost() const {
  uint32_t peer = options.rank == 0 ? 1 : 0;
  if (peer >= peers.size() || peers[peer].fd < 0)
    return "";
  sockaddr_storage addr = {};
  socklen_t length = sizeof(addr);
  if (::getsockname(peers[peer].fd, reinterpret_cast<sockaddr *>(&addr),
                    &length) != 0)
    return "";
  return hostText(reinterpret_cast<sockaddr *>(&addr));
}

std::string TcpWorld::lostError(uint32_t peer) const {
  return "lost the connection to " + describePeer(peer) + ": " +
         (peers[peer].failure.empty() ? "closed" : peers[peer].failure);
}

void TcpWorld::closeAll() {
  for (Peer &peer : peers) {
    if (peer.fd >= 0)
      ::shutdown(peer.fd, SHUT_RDWR);
    closeFd(peer.fd);
    if (peer.failure.empty())
      peer.failure = "this rank closed its connections";
  }
}

void TcpWorld::fail(uint32_t peer, const std::string &why) {
  if (peers[peer].failure.empty())
    peers[peer].failure = why;
  closeFd(peers[peer].fd);
}

bool TcpWorld::checkPeer(uint32_t peer, std::string &error) const {
  if (peer >= options.size || peer == options.rank) {
    error = "internal error: no connection to rank " + std::to_string(peer) +
            " from rank " + std::to_string(options.rank) + " of " +
            std::to_string(options.size);
    return false;
  }
  return true;
}

uint64_t TcpWorld::readAvailable(uint32_t index) {
  Peer &peer = peers[index];
  uint64_t total = 0;
  while (peer.fd >= 0) {
    char *into;
    uint64_t want;
    if (!peer.inPayload) {
      into = reinterpret_cast<char *>(peer.header) + peer.headerGot;
      want = kHeaderBytes - peer.headerGot;
    } else {
      into = &peer.partial.payload[0] + peer.payloadGot;
      want = peer.partial.payload.size() - peer.payloadGot;
    }
    ssize_t r = ::recv(peer.fd, into, size_t(std::min(want, kMaxChunk)), 0);
    if (r == 0) {
      fail(index, "the connection was closed (the process exited or "
                  "failed)");
      break;
    }
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        fail(index, connectionError(errno));
      break;
    }
    total += uint64_t(r);
    if (!peer.inPayload) {
      peer.headerGot += size_t(r);
      if (peer.headerGot < kHeaderBytes)
        continue;
      uint32_t magic, from;
      uint16_t channel, version;
      int32_t tag;
      uint64_t length;
      std::memcpy(&magic, peer.header, 4);
      std::memcpy(&channel, peer.header + 4, 2);
      std::memcpy(&version, peer.header + 6, 2);
      std::memcpy(&tag, peer.header + 8, 4);
      std::memcpy(&from, peer.header + 12, 4);
      std::memcpy(&length, peer.header + 16, 8);
      if (magic != kMagic || version != kVersion || from != index ||
          length > kMaxPayload) {
        fail(index, "malformed frame header (magic " + std::to_string(magic) +
                        ", sender " + std::to_string(from) + ", length " +
                        std::to_string(length) + ")");
        break;
      }
      peer.headerGot = 0;
      peer.partial.channel = TcpChannel(channel);
      peer.partial.tag = tag;
      peer.partial.payload.assign(length, '\0');
      peer.payloadGot = 0;
      peer.inPayload = length > 0;
      if (length == 0)
        peer.frames.push_back(std::move(peer.partial));
      continue;
    }
    peer.payloadGot += uint64_t(r);
    if (peer.payloadGot == peer.partial.payload.size()) {
      peer.inPayload = false;
      peer.frames.push_back(std::move(peer.partial));
      peer.partial.payload.clear();
    }
  }
  return total;
}

void TcpWorld::pump(int ms, int writePeer, bool &writable,
                    std::vector<uint64_t> *got) {
  writable = false;
  std::vector<pollfd> fds;
  std::vector<uint32_t> owners;
  for (uint32_t r = 0; r < peers.size(); ++r) {
    if (peers[r].fd < 0)
      continue;
    short events = POLLIN;
    if (int(r) == writePeer)
      events |= POLLOUT;
    fds.push_back({peers[r].fd, events, 0});
    owners.push_back(r);
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return;
  }
  int rc = ::poll(fds.data(), fds.size(), ms);
  if (rc <= 0)
    return;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      uint64_t bytes = readAvailable(owners[i]);
      if (got)
        (*got)[owners[i]] += bytes;
    }
    if (int(owners[i]) == writePeer && (fds[i].revents & POLLOUT))
      writable = true;
  }
}

bool TcpWorld::send(uint32_t peer, TcpChannel channel, int32_t tag,
                    const void *data, uint64_t bytes, std::string &error) {
  if (!checkPeer(peer, error))
    return false;
  unsigned char header[kHeaderBytes];
  uint32_t magic = kMagic, from = options.rank;
  uint16_t ch = uint16_t(channel), version = kVersion;
  std::memcpy(header, &magic, 4);
  std::memcpy(header + 4, &ch, 2);
  std::memcpy(header + 6, &version, 2);
  std::memcpy(header + 8, &tag, 4);
  std::memcpy(header + 12, &from, 4);
  std::memcpy(header + 16, &bytes, 8);
  auto write = [&](const char *p, uint64_t n) {
    Clock::time_point progress = Clock::now();
    while (n > 0) {
      int fd = peers[peer].fd;
      if (fd < 0) {
        error = lostError(peer);
        return false;
      }
      ssize_t w = ::send(fd, p, size_t(std::min(n, kMaxChunk)),
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) {
        p += w;
        n -= uint64_t(w);
        progress = Clock::now();
        continue;
      }
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        int code = errno;
        readAvailable(peer); // Keep what the peer sent before it went.
        fail(peer, connectionError(code));
        error = lostError(peer);
        return false;
      }
      double left = options.timeoutSeconds - secondsSince(progress);
      if (left <= 0) {
        error = describePeer(peer) + " took no data for " +
                secondsText(options.timeoutSeconds) +
                " (DNNC_BOOTSTRAP_TIMEOUT_S): it is stuck or not receiving";
        return false;
      }
      // Read what the peers send meanwhile: two ranks sending to each
      // other both make progress.
      bool writable = false;
      pump(pollMs(left), int(peer), writable, nullptr);
    }
    return true;
  };
  return write(reinterpret_cast<const char *>(header), kHeaderBytes) &&
         write(static_cast<const char *>(data), bytes);
}

bool TcpWorld::receive(uint32_t peer, TcpChannel channel, int32_t tag,
                       std::string &out, double waitSeconds, std::string &error,
                       bool *timedOut) {
  std::vector<std::string> all;
  if (!receiveEach({peer}, channel, tag, all, waitSeconds, error, timedOut))
    return false;
  out = std::move(all[0]);
  return true;
}

bool TcpWorld::receiveEach(const std::vector<uint32_t> &from,
                           TcpChannel channel, int32_t tag,
                           std::vector<std::string> &out, double waitSeconds,
                           std::string &error, bool *timedOut) {
  if (timedOut)
    *timedOut = false;
  for (uint32_t peer : from)
    if (!checkPeer(peer, error))
      return false;
  out.assign(from.size(), std::string());
  std::vector<bool> done(from.size(), false);
  std::vector<Clock::time_point> progress(from.size(), Clock::now());
  std::vector<uint64_t> got(peers.size(), 0);
  size_t left = from.size();
  for (;;) {
    double wait = 1;
    for (size_t i = 0; i < from.size(); ++i) {
      if (done[i])
        continue;
      uint32_t peer = from[i];
      std::deque<Frame> &frames = peers[peer].frames;
      auto it = std::find_if(frames.begin(), frames.end(), [&](const Frame &f) {
        return f.channel == channel && f.tag == tag;
      });
      if (it != frames.end()) {
        out[i] = std::move(it->payload);
        frames.erase(it);
        done[i] = true;
        --left;
        continue;
      }
      if (peers[peer].fd < 0) {
        error = lostError(peer);
        return false;
      }
      if (got[peer] > 0)
        progress[i] = Clock::now();
      if (waitSeconds < 0)
        continue;
      double remaining = waitSeconds - secondsSince(progress[i]);
      if (remaining <= 0) {
        if (timedOut)
          *timedOut = true;
        error = describePeer(peer) + " sent nothing for " +
                secondsText(waitSeconds) +
                (waitSeconds == options.timeoutSeconds
                     ? " (DNNC_BOOTSTRAP_TIMEOUT_S)"
                     : "") +
                ": it is stuck or has failed";
        return false;
      }
      wait = std::min(wait, remaining);
    }
    if (left == 0)
      return true;
    std::fill(got.begin(), got.end(), 0);
    bool writable = false;
    pump(pollMs(wait), -1, writable, &got);
  }
}

bool TcpWorld::receiveAny(const std::vector<uint32_t> &from,
                          TcpChannel channel, int32_t tag, uint32_t &sender,
                          std::string &out, double waitSeconds,
                          std::string &error, bool *timedOut) {
  if (timedOut)
    *timedOut = false;
  for (uint32_t peer : from)
    if (!checkPeer(peer, error))
      return false;
  Clock::time_point progress = Clock::now();
  std::vector<uint64_t> got(peers.size(), 0);
  for (;;) {
    for (uint32_t peer : from) {
      std::deque<Frame> &frames = peers[peer].frames;
      auto it = std::find_if(frames.begin(), frames.end(), [&](const Frame &f) {
        return f.channel == channel && f.tag == tag;
      });
      if (it != frames.end()) {
        sender = peer;
        out = std::move(it->payload);
        frames.erase(it);
        return true;
      }
    }
    for (uint32_t peer : from) {
      if (peers[peer].fd < 0) {
        error = lostError(peer);
        return false;
      }
      if (got[peer] > 0)
        progress = Clock::now();
    }
    double remaining = waitSeconds - secondsSince(progress);
    if (remaining <= 0) {
      if (timedOut)
        *timedOut = true;
      std::vector<uint32_t> ranks = from;
      std::sort(ranks.begin(), ranks.end());
      error = std::string(ranks.size() == 1 ? "rank " : "ranks ") +
              listRanks(ranks) + " sent nothing for " +
              secondsText(waitSeconds) + ": stuck or failed";
      return false;
    }
    std::fill(got.begin(), got.end(), 0);
    bool writable = false;
    pump(pollMs(std::min(1.0, remaining)), -1, writable, &got);
  }
}

bool TcpWorld::receiveExact(uint32_t peer, TcpChannel channel, int32_t tag,
                            void *data, uint64_t bytes, std::string &error) {
  std::string payload;
  if (!receive(peer, channel, tag, payload, options.timeoutSeconds, error))
    return false;
  if (payload.size() != bytes) {
    error = describePeer(peer) + " sent " + std::to_string(payload.size()) +
            " bytes with tag " + std::to_string(tag) + ", expected " +
            std::to_string(bytes);
    return false;
  }
  if (bytes)
    std::memcpy(data, payload.data(), bytes);
  return true;
}

} // namespace dnnc::rt
