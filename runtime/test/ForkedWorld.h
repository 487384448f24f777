//===- ForkedWorld.h - Forked torchrun-style worlds for tests --*- C++ -*-===//
//
// Shared by the runtime tests of TCP and Gloo worlds (CommTcpTest.cpp,
// GlooTest.cpp): forks one process per rank with RANK, WORLD_SIZE,
// MASTER_ADDR=127.0.0.1 and a free MASTER_PORT, runs a body in each and
// collects exit codes and stderr. Children report through their exit code
// and stderr (a failed CHECK prints its line and exits 10); the parent
// kills any child still running after the test's time limit.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TEST_FORKEDWORLD_H
#define DNNC_RUNTIME_TEST_FORKEDWORLD_H

#include "TestUtil.h"
#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/World.h"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace dnnc::test {

using Clock = std::chrono::steady_clock;

/// In a child: fails the rank (exit code 10) with the line and `what`.
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "check failed: line %d: %s\n", __LINE__, #cond);    \
      std::fflush(stderr);                                                     \
      ::_exit(10);                                                             \
    }                                                                          \
  } while (0)

/// A port on 127.0.0.1 that was free a moment ago.
inline uint16_t freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&addr), length) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &length) != 0)
    return 0;
  ::close(fd);
  return ntohs(addr.sin_port);
}

/// Seconds since `start`.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// How one forked rank ended.
struct RankResult {
  /// The exit code; -1 when killed by the parent or a signal.
  int exitCode = -1;
  /// What it wrote to stderr.
  std::string err;
  /// Seconds from the fork to its end.
  double seconds = 0;
};

/// Every variable a launch reads, cleared in the children before setting
/// their own.
inline const char *const kLaunchVars[] = {"RANK",
                                          "WORLD_SIZE",
                                          "LOCAL_RANK",
                                          "LOCAL_WORLD_SIZE",
                                          "MASTER_ADDR",
                                          "MASTER_PORT",
                                          "OMPI_COMM_WORLD_RANK",
                                          "OMPI_COMM_WORLD_SIZE",
                                          "PMI_RANK",
                                          "PMI_SIZE",
                                          "SLURM_PROCID",
                                          "SLURM_NTASKS",
                                          "SLURM_STEP_ID",
                                          "DNNC_BOOTSTRAP_TIMEOUT_S",
                                          "DNNC_GLOO_TIMEOUT_S",
                                          "GLOO_SOCKET_IFNAME"};

/// Connects a child to its world; exits 11 with the error when it cannot.
inline std::unique_ptr<rt::Comm> connectRank() {
  rt::WorldInfo world;
  std::string error;
  std::unique_ptr<rt::Comm> comm;
  if (rt::detectWorld(world, error))
    comm = rt::Comm::create(world, error);
  if (!comm) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    std::fflush(stderr);
    ::_exit(11);
  }
  return comm;
}

/// Forks one process per rank of `ranks` in a world of `size` on
/// 127.0.0.1:`port` with DNNC_BOOTSTRAP_TIMEOUT_S=`timeout`; each runs
/// `body(rank)` and exits with its result. Waits at most `limit` seconds,
/// then kills what is left. Results are indexed by rank.
inline std::vector<RankResult>
runWorld(uint32_t size, const std::vector<uint32_t> &ranks,
         const std::string &timeout, double limit,
         const std::function<int(uint32_t)> &body, uint16_t port = 0) {
  if (port == 0)
    port = freePort();
  TempDir dir;
  std::vector<RankResult> results(size);
  std::vector<pid_t> pids(size, -1);
  Clock::time_point start = Clock::now();
  for (uint32_t rank : ranks) {
    std::string errPath = dir.file("err" + std::to_string(rank));
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      for (const char *name : kLaunchVars)
        ::unsetenv(name);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(size).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(size).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("DNNC_BOOTSTRAP_TIMEOUT_S", timeout.c_str(), 1);
      int code = body(rank);
      std::fflush(nullptr);
      ::_exit(code);
    }
    pids[rank] = pid;
  }
  size_t running = ranks.size();
  while (running > 0) {
    for (uint32_t rank : ranks) {
      if (pids[rank] < 0)
        continue;
      int status = 0;
      if (::waitpid(pids[rank], &status, WNOHANG) != pids[rank])
        continue;
      results[rank].exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      results[rank].seconds = secondsSince(start);
      pids[rank] = -1;
      --running;
    }
    if (running > 0 && secondsSince(start) > limit) {
      for (uint32_t rank : ranks)
        if (pids[rank] > 0) {
          ::kill(pids[rank], SIGKILL);
          ::waitpid(pids[rank], nullptr, 0);
          results[rank].seconds = secondsSince(start);
          pids[rank] = -1;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (uint32_t rank : ranks)
    results[rank].err = readBytes(dir.file("err" + std::to_string(rank)));
  return results;
}

/// "rank R: exit C, stderr: ..." for failure messages.
inline std::string describe(const std::vector<RankResult> &results) {
  std::string text;
  for (size_t r = 0; r < results.size(); ++r)
    text += "rank " + std::to_string(r) + ": exit " +
            std::to_string(results[r].exitCode) + " after " +
            std::to_string(results[r].seconds) +
            " s, stderr: " + results[r].err + "\n";
  return text;
}

} // namespace dnnc::test

#endif // DNNC_RUNTIME_TEST_FORKEDWORLD_H
