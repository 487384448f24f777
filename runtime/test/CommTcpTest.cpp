//===- CommTcpTest.cpp - Comm over TCP (torchrun-style) --------*- C++ -*-===//
//
// Forks worlds of 3 processes on 127.0.0.1 with a free MASTER_PORT and runs
// Comm's operations over TCP: allOk (true, false, grace), gatherToRoot,
// send/recv of 0 bytes and of more than 16 MiB (also between two ranks that
// are not rank 0, and in both directions at once), tag matching, stage
// traffic (over Gloo, or refused in a build without it); a grace period
// that runs out; a peer that exits, aborts or is stuck makes the others fail
// with an error naming it, within seconds (DNNC_BOOTSTRAP_TIMEOUT_S); a rank
// that never starts fails the bootstrap. Environment validation runs
// in-process; dnnc-run checks that a one-rank plan runs unchanged, also as
// RANK=0 WORLD_SIZE=1 without MASTER_ADDR, and that a cpu plan of several
// ranks launched this way runs (with Gloo) or is refused at start-up
// (without). The worlds are forked by ForkedWorld.h.
//
//===----------------------------------------------------------------------===//

#include "ForkedWorld.h"
#include "TestUtil.h"
#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/TensorProto.h"
#include "dnnc/Runtime/World.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace dnnc;
using namespace dnnc::test;

namespace {

/// `n` bytes of a pattern that differs per `seed`.
std::string pattern(uint64_t n, uint32_t seed) {
  std::string bytes(n, '\0');
  for (uint64_t i = 0; i < n; ++i)
    bytes[i] = char((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return bytes;
}

/// Receives exactly `n` bytes from `peer` with `tag` and compares them with
/// pattern(n, seed).
bool receivePattern(rt::Comm &comm, uint64_t n, uint32_t peer, int tag,
                    uint32_t seed) {
  std::string got(n, '\0');
  std::string error;
  if (!comm.recv(n ? &got[0] : nullptr, n, peer, tag, error)) {
    std::fprintf(stderr, "recv: %s\n", error.c_str());
    return false;
  }
  return got == pattern(n, seed);
}

/// Sends pattern(n, seed) to `peer` with `tag`.
bool sendPattern(rt::Comm &comm, uint64_t n, uint32_t peer, int tag,
                 uint32_t seed) {
  std::string bytes = pattern(n, seed);
  std::string error;
  if (!comm.send(bytes.data(), n, peer, tag, error)) {
    std::fprintf(stderr, "send: %s\n", error.c_str());
    return false;
  }
  return true;
}

constexpr uint64_t kMiB = uint64_t(1) << 20;

TEST(CommTcp, Operations) {
  auto body = [](uint32_t rank) {
    // Rank 0 comes late: the others retry their connection.
    if (rank == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::unique_ptr<rt::Comm> comm = connectRank();
    CHECK(comm->usesTcp() && !comm->usesMpi());
    CHECK(comm->usesGloo() == rt::glooCompiledIn());
    CHECK(comm->rank() == rank && comm->size() == 3);
    CHECK(comm->launcher().find("MASTER_ADDR:MASTER_PORT 127.0.0.1:") !=
          std::string::npos);
    std::string error;

    // allOk: all true; one false; all false (within the grace: no timeout).
    CHECK(comm->allOk(true));
    bool timedOut = true;
    CHECK(!comm->allOk(rank != 1, 5, &timedOut));
    CHECK(!timedOut);
    timedOut = true;
    CHECK(!comm->allOk(false, 5, &timedOut));
    CHECK(!timedOut);
    CHECK(comm->allOk(true, 0));

    // gatherToRoot: a different size per rank, rank 1's empty.
    std::vector<std::string> all;
    std::string mine =
        rank == 1 ? "" : std::string(1000 * (rank + 1), char('a' + rank));
    CHECK(comm->gatherToRoot(mine, all, error));
    if (rank == 0) {
      CHECK(all.size() == 3);
      CHECK(all[0] == std::string(1000, 'a'));
      CHECK(all[1].empty());
      CHECK(all[2] == std::string(3000, 'c'));
    } else {
      CHECK(all.empty());
    }

    // More than 16 MiB: 1 -> 2 (no rank 0 involved), 0 -> 1.
    uint64_t big = 17 * kMiB + 3, bigger = 20 * kMiB + 1;
    if (rank == 1) {
      CHECK(sendPattern(*comm, big, 2, 7, 1));
      CHECK(receivePattern(*comm, bigger, 0, 8, 2));
    } else if (rank == 2) {
      CHECK(receivePattern(*comm, big, 1, 7, 1));
    } else {
      CHECK(sendPattern(*comm, bigger, 1, 8, 2));
    }
    // Zero bytes, 2 -> 0.
    if (rank == 2)
      CHECK(comm->send(nullptr, 0, 0, 9, error));
    if (rank == 0)
      CHECK(comm->recv(nullptr, 0, 2, 9, error));
    // Both directions at once, 18 MiB each: both send first.
    if (rank != 1) {
      uint32_t peer = 2 - rank;
      CHECK(sendPattern(*comm, 18 * kMiB, peer, 4, rank));
      CHECK(receivePattern(*comm, 18 * kMiB, peer, 4, peer));
    }
    // Tags are matched, not just ordered: 11 then 10, received 10 then 11.
    if (rank == 1) {
      CHECK(sendPattern(*comm, 100, 0, 11, 11));
      CHECK(sendPattern(*comm, 200, 0, 10, 10));
    }
    if (rank == 0) {
      CHECK(receivePattern(*comm, 200, 1, 10, 10));
      CHECK(receivePattern(*comm, 100, 1, 11, 11));
    }
    // A message of the wrong length is an error.
    if (rank == 1)
      CHECK(sendPattern(*comm, 8, 0, 12, 0));
    if (rank == 0) {
      char four[4];
      CHECK(!comm->recv(four, 4, 1, 12, error));
      CHECK(error.find("rank 1 (127.0.0.1:") != std::string::npos);
      CHECK(error.find("sent 8 bytes with tag 12, expected 4") !=
            std::string::npos);
    }
    // Stage traffic (isend / recvStage / waitAll), 2 -> 1: over Gloo, or
    // an error naming the missing Gloo (GlooTest.cpp tests it further).
    std::string stage = pattern(3 * kMiB, 5);
    if (rank == 2 && comm->usesGloo()) {
      CHECK(comm->isend(stage.data(), stage.size(), 1, 3, error));
      CHECK(comm->waitAll(error));
    }
    if (rank == 1 && comm->usesGloo()) {
      std::string got(stage.size(), '\0');
      CHECK(comm->recvStage(&got[0], got.size(), 2, 3, error));
      CHECK(got == stage);
    }
    if (rank == 2 && !comm->usesGloo()) {
      CHECK(!comm->isend(stage.data(), stage.size(), 1, 3, error));
      CHECK(error.find("this build has none (DNNC_RUNTIME_WITH_GLOO is "
                       "off)") != std::string::npos);
    }
    // Sending to oneself is an error, not a hang.
    CHECK(!comm->send("x", 1, rank, 1, error));
    CHECK(comm->allOk(true));
    return 0;
  };
  std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "30", 90, body);
  for (uint32_t r = 0; r < 3; ++r)
    EXPECT_EQ(results[r].exitCode, 0) << describe(results);
}

TEST(CommTcp, PeerExitsEarly) {
  auto body = [](uint32_t rank) {
    std::unique_ptr<rt::Comm> comm = connectRank();
    if (rank == 2)
      return 5; // Gone without a word.
    std::string error;
    if (rank == 0) {
      char buffer[4];
      CHECK(!comm->recv(buffer, 4, 2, 1, error));
      CHECK(error.find("lost the connection to rank 2 (127.0.0.1:") !=
            std::string::npos);
      std::fprintf(stderr, "recv: %s\n", error.c_str());
    }
    CHECK(!comm->allOk(true));
    return 1;
  };
  // A long timeout: the loss must be seen from the closed socket, at once.
  std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "60", 30, body);
  EXPECT_EQ(results[2].exitCode, 5) << describe(results);
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exitCode, 1) << describe(results);
    EXPECT_LT(results[r].seconds, 10) << describe(results);
    EXPECT_NE(results[r].err.find("lost the connection to rank 2 (127.0.0.1:"),
              std::string::npos)
        << describe(results);
  }
  // Rank 1 learns it from rank 0's verdict, as one error line.
  EXPECT_NE(results[1].err.find("error: rank 1: rank 0 lost the connection "
                                "to rank 2"),
            std::string::npos)
      << describe(results);
}

TEST(CommTcp, AbortEndsThePeers) {
  auto body = [](uint32_t rank) {
    std::unique_ptr<rt::Comm> comm = connectRank();
    if (rank == 1)
      comm->abort(3);
    CHECK(!comm->allOk(true));
    return 1;
  };
  std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "60", 30, body);
  EXPECT_EQ(results[1].exitCode, 3) << describe(results);
  for (uint32_t r : {0u, 2u}) {
    EXPECT_EQ(results[r].exitCode, 1) << describe(results);
    EXPECT_LT(results[r].seconds, 10) << describe(results);
    EXPECT_NE(results[r].err.find("rank 1 (127.0.0.1:"), std::string::npos)
        << describe(results);
  }
}

TEST(CommTcp, GraceRunsOut) {
  // A failed rank waits the grace period for peers that are busy elsewhere,
  // reports timedOut and aborts (as dnnc-run does); the others, arriving
  // later, learn that the phase failed. Rank 0 fails in the second world.
  for (uint32_t failing : {1u, 0u}) {
    auto body = [failing](uint32_t rank) {
      std::unique_ptr<rt::Comm> comm = connectRank();
      if (rank == failing) {
        bool timedOut = false;
        Clock::time_point start = Clock::now();
        CHECK(!comm->allOk(false, 1, &timedOut));
        CHECK(timedOut);
        double seconds = secondsSince(start);
        CHECK(seconds >= 0.9 && seconds < 3);
        comm->abort(6);
      }
      std::this_thread::sleep_for(std::chrono::seconds(2)); // Busy.
      CHECK(!comm->allOk(true));
      return 1;
    };
    std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "60", 30, body);
    for (uint32_t r = 0; r < 3; ++r) {
      EXPECT_EQ(results[r].exitCode, r == failing ? 6 : 1) << describe(results);
      EXPECT_LT(results[r].seconds, 10) << describe(results);
    }
  }
}

TEST(CommTcp, StuckPeerTimesOut) {
  auto body = [](uint32_t rank) {
    std::unique_ptr<rt::Comm> comm = connectRank();
    if (rank == 2) {
      std::this_thread::sleep_for(std::chrono::seconds(6)); // Alive, silent.
      return 0;
    }
    if (rank == 1) {
      CHECK(!comm->allOk(true)); // Until rank 0 aborts.
      return 1;
    }
    std::string error;
    char buffer[4];
    Clock::time_point start = Clock::now();
    CHECK(!comm->recv(buffer, 4, 2, 1, error));
    double seconds = secondsSince(start);
    std::fprintf(stderr, "recv after %.2f s: %s\n", seconds, error.c_str());
    CHECK(seconds >= 1.5 && seconds < 8);
    CHECK(error.find("rank 2 (127.0.0.1:") != std::string::npos);
    CHECK(error.find("sent nothing for 2 s (DNNC_BOOTSTRAP_TIMEOUT_S)") !=
          std::string::npos);
    comm->abort(4);
  };
  std::vector<RankResult> results = runWorld(3, {0, 1, 2}, "2", 15, body);
  EXPECT_EQ(results[0].exitCode, 4) << describe(results);
  EXPECT_EQ(results[1].exitCode, 1) << describe(results);
  EXPECT_LT(results[1].seconds, 12) << describe(results);
  EXPECT_NE(results[1].err.find("lost the connection to rank 0 (127.0.0.1:"),
            std::string::npos)
      << describe(results);
}

TEST(CommTcp, MissingRankFailsTheBootstrap) {
  uint16_t port = freePort();
  // Rank 2 never starts; the timeout is 2 s.
  std::vector<RankResult> results = runWorld(
      3, {0, 1}, "2", 20,
      [](uint32_t) {
        connectRank();
        return 0;
      },
      port);
  EXPECT_EQ(results[0].exitCode, 11) << describe(results);
  EXPECT_NE(results[0].err.find(
                "rank 0: rank 2 did not connect to MASTER_ADDR:MASTER_PORT "
                "127.0.0.1:" +
                std::to_string(port) +
                " within 2 s (DNNC_BOOTSTRAP_TIMEOUT_S)"),
            std::string::npos)
      << describe(results);
  EXPECT_EQ(results[1].exitCode, 11) << describe(results);
  EXPECT_NE(results[1].err.find("rank 1: set-up with rank 0 (127.0.0.1:"),
            std::string::npos)
      << describe(results);
  for (uint32_t r = 0; r < 2; ++r)
    EXPECT_LT(results[r].seconds, 10) << describe(results);

  // Nobody listens: a rank gives up after the timeout, naming the address.
  results = runWorld(
      2, {1}, "1", 20,
      [](uint32_t) {
        connectRank();
        return 0;
      },
      port);
  EXPECT_EQ(results[1].exitCode, 11) << describe(results);
  EXPECT_NE(results[1].err.find("rank 1: cannot connect to rank 0 at "
                                "MASTER_ADDR:MASTER_PORT 127.0.0.1:" +
                                std::to_string(port) + " (127.0.0.1:"),
            std::string::npos)
      << describe(results);
  EXPECT_NE(results[1].err.find("within 1 s (DNNC_BOOTSTRAP_TIMEOUT_S)"),
            std::string::npos)
      << describe(results);
  EXPECT_LT(results[1].seconds, 8) << describe(results);
}

/// Sets environment variables for one scope (after clearing every launch
/// variable); restores them after.
class ScopedEnv {
public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) {
    for (const char *name : kLaunchVars)
      save(name);
    for (auto &[name, value] : vars)
      save(name);
    for (const char *name : kLaunchVars)
      ::unsetenv(name);
    for (auto &[name, value] : vars)
      ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->present)
        ::setenv(it->name.c_str(), it->value.c_str(), 1);
      else
        ::unsetenv(it->name.c_str());
    }
  }

private:
  void save(const std::string &name) {
    const char *old = std::getenv(name.c_str());
    saved.push_back(
        {name, old ? std::string(old) : std::string(), old != nullptr});
  }
  struct Saved {
    std::string name, value;
    bool present;
  };
  std::vector<Saved> saved;
};

/// detectWorld's error for `vars` ("" when it succeeds).
std::string detectError(std::vector<std::pair<std::string, std::string>> vars) {
  ScopedEnv env(std::move(vars));
  rt::WorldInfo world;
  std::string error;
  return rt::detectWorld(world, error) ? "" : error;
}

/// Comm::create's error for `vars` (after a successful detectWorld; ""
/// when both succeed).
std::string createError(std::vector<std::pair<std::string, std::string>> vars) {
  ScopedEnv env(std::move(vars));
  rt::WorldInfo world;
  std::string error;
  if (!rt::detectWorld(world, error))
    return "detectWorld: " + error;
  return rt::Comm::create(world, error) ? "" : error;
}

TEST(CommTcp, BadEnvironment) {
  auto has = [](const std::string &text, const std::string &needle) {
    return text.find(needle) != std::string::npos;
  };
  std::string e;
  e = detectError({{"RANK", "abc"}, {"WORLD_SIZE", "2"}});
  EXPECT_TRUE(has(e, "RANK='abc', WORLD_SIZE='2'")) << e;
  e = detectError({{"RANK", "-1"}, {"WORLD_SIZE", "2"}});
  EXPECT_TRUE(has(e, "RANK='-1'")) << e;
  e = detectError({{"RANK", "2"}, {"WORLD_SIZE", "2"}});
  EXPECT_TRUE(has(e, "expected 0 <= RANK < WORLD_SIZE")) << e;
  e = detectError({{"RANK", "0"}, {"WORLD_SIZE", "0"}});
  EXPECT_TRUE(has(e, "WORLD_SIZE='0'")) << e;
  e = detectError({{"RANK", "0"}, {"WORLD_SIZE", "99999999999"}});
  EXPECT_TRUE(has(e, "WORLD_SIZE='99999999999'")) << e;
  e = detectError({{"RANK", "0"}, {"WORLD_SIZE", "2 "}});
  EXPECT_TRUE(has(e, "WORLD_SIZE='2 '")) << e;
  for (const char *port : {"0", "65536", "http", ""}) {
    e = detectError({{"RANK", "0"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", port}});
    EXPECT_TRUE(has(e, "invalid MASTER_PORT='" + std::string(port) + "'")) << e;
  }
  e = detectError({{"RANK", "1"},
                   {"WORLD_SIZE", "4"},
                   {"LOCAL_RANK", "2"},
                   {"LOCAL_WORLD_SIZE", "2"}});
  EXPECT_TRUE(has(e, "LOCAL_RANK='2', LOCAL_WORLD_SIZE='2'")) << e;
  e = detectError({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "x"}});
  EXPECT_TRUE(has(e, "invalid LOCAL_RANK='x'")) << e;

  // The local rank reaches WorldInfo (the world rank when unset).
  {
    ScopedEnv env({{"RANK", "5"},
                   {"WORLD_SIZE", "8"},
                   {"LOCAL_RANK", "1"},
                   {"LOCAL_WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "node0"},
                   {"MASTER_PORT", "29500"}});
    rt::WorldInfo world;
    ASSERT_TRUE(rt::detectWorld(world, e)) << e;
    EXPECT_TRUE(world.tcp);
    EXPECT_FALSE(world.mpi);
    EXPECT_EQ(world.rank, 5u);
    EXPECT_EQ(world.size, 8u);
    EXPECT_EQ(world.localRank, 1u);
    EXPECT_EQ(world.localSize, 4u);
    EXPECT_EQ(world.masterAddr, "node0");
    EXPECT_EQ(world.masterPort, 29500);
  }
  {
    ScopedEnv env({{"RANK", "3"}, {"WORLD_SIZE", "4"}});
    rt::WorldInfo world;
    ASSERT_TRUE(rt::detectWorld(world, e)) << e;
    EXPECT_EQ(world.localRank, 3u);
  }

  // Missing rendezvous, bad timeout, unresolvable host, port in use.
  e = createError({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_TRUE(has(e, "without MASTER_ADDR and MASTER_PORT")) << e;
  e = createError({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}});
  EXPECT_TRUE(has(e, "without MASTER_ADDR:")) << e;
  e = createError(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}});
  EXPECT_TRUE(has(e, "without MASTER_PORT")) << e;
  for (const char *timeout : {"abc", "0", "-3", ""}) {
    e = createError({{"RANK", "1"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", "1"},
                     {"DNNC_BOOTSTRAP_TIMEOUT_S", timeout}});
    EXPECT_TRUE(has(e, "invalid DNNC_BOOTSTRAP_TIMEOUT_S='" +
                           std::string(timeout) + "'"))
        << e;
  }
  e = createError({{"RANK", "1"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", "no-such-host.invalid"},
                   {"MASTER_PORT", "29500"}});
  EXPECT_TRUE(has(e, "rank 1: MASTER_ADDR: cannot resolve "
                     "'no-such-host.invalid'"))
      << e;
  {
    int busy = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t length = sizeof(addr);
    ASSERT_EQ(::bind(busy, reinterpret_cast<sockaddr *>(&addr), length), 0);
    ASSERT_EQ(::listen(busy, 1), 0);
    ::getsockname(busy, reinterpret_cast<sockaddr *>(&addr), &length);
    std::string port = std::to_string(ntohs(addr.sin_port));
    e = createError({{"RANK", "0"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", port}});
    ::close(busy);
    EXPECT_TRUE(has(e, "rank 0 cannot listen on port " + port)) << e;
  }

  // RANK=0 WORLD_SIZE=1 needs no rendezvous: a Comm of one, no sockets.
  {
    ScopedEnv env({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
    rt::WorldInfo world;
    ASSERT_TRUE(rt::detectWorld(world, e)) << e;
    std::unique_ptr<rt::Comm> comm = rt::Comm::create(world, e);
    ASSERT_NE(comm, nullptr) << e;
    EXPECT_EQ(comm->size(), 1u);
    EXPECT_FALSE(comm->usesTcp());
    EXPECT_TRUE(comm->allOk(true));
  }
}

/// Runs `env dnnc-run args` in `dir`; exit code, stdout and stderr.
struct RunResult {
  int exitCode = -1;
  std::string out, err;
};
RunResult runDnncRun(const TempDir &dir, const std::string &args,
                     const std::string &env) {
  std::string command = "cd '" + dir.path() +
                        "' && env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u "
                        "MASTER_PORT -u LOCAL_RANK -u LOCAL_WORLD_SIZE " +
                        env + " '" + DNNC_RUN_PATH + "' " + args +
                        " >stdout.txt 2>stderr.txt";
  int status = std::system(command.c_str());
  RunResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = readBytes(dir.file("stdout.txt"));
  r.err = readBytes(dir.file("stderr.txt"));
  return r;
}

TEST(CommTcpRun, OneRankPlanAndCpuPlans) {
  TempDir dir;
  std::string code = readBytes(testCodePath("test_code"));
  ASSERT_FALSE(code.empty());
  const std::vector<float> w = {1, 0, 2, -1, 0.5, 1, 0, 3, -2, 1, 1, 0};
  std::string error;
  ASSERT_TRUE(
      plan::writePlan(makeAddMatmulPlan(code, w), dir.file("one.bin"), error))
      << error;
  ASSERT_TRUE(plan::writePlan(makeAddMatmulPlan(code, w, 2),
                              dir.file("two.bin"), error))
      << error;
  for (const char *name : {"x", "y"}) {
    std::string bytes;
    ASSERT_TRUE(rt::encodeTensorProto(
        floatTensor(name, {2, 3}, {1, 2, 3, 4, 5, 6}), bytes, error));
    writeBytes(dir.file(std::string(name) + ".pb"), bytes);
  }
  // Plain, and as RANK=0 WORLD_SIZE=1 without MASTER_ADDR: same output.
  RunResult plain =
      runDnncRun(dir, "one.bin --input x.pb --input y.pb --output-dir a", "");
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  RunResult single =
      runDnncRun(dir, "one.bin --input x.pb --input y.pb --output-dir b",
                 "RANK=0 WORLD_SIZE=1 LOCAL_RANK=0");
  ASSERT_EQ(single.exitCode, 0) << single.err;
  EXPECT_EQ(single.err, "");
  std::string a = readBytes(dir.file("a/output_0.pb"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, readBytes(dir.file("b/output_0.pb")));

  std::string port = std::to_string(freePort());
  if (rt::glooCompiledIn()) {
    // A cpu plan of 2 ranks launched torchrun-style runs on Gloo: the same
    // output (GlooRunTest.cpp runs plans with collectives this way).
    std::string rank1 = "cd '" + dir.path() +
                        "' && RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 "
                        "MASTER_PORT=" +
                        port + " '" + DNNC_RUN_PATH +
                        "' two.bin --input x.pb --input y.pb --output-dir c "
                        ">rank1.txt 2>&1 &";
    ASSERT_EQ(std::system(rank1.c_str()), 0);
    RunResult cpu =
        runDnncRun(dir, "two.bin --input x.pb --input y.pb --output-dir c",
                   "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                       port);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string rank1Err = readBytes(dir.file("rank1.txt"));
    ASSERT_EQ(cpu.exitCode, 0) << cpu.err << "rank 1: " << rank1Err;
    EXPECT_EQ(cpu.err, "");
    EXPECT_EQ(a, readBytes(dir.file("c/output_0.pb")));
    return;
  }
  // Without Gloo, a cpu plan of 2 ranks launched torchrun-style is refused
  // at start-up, before connecting (nobody listens on the port).
  Clock::time_point start = Clock::now();
  RunResult cpu =
      runDnncRun(dir, "two.bin --input x.pb --input y.pb --output-dir c",
                 "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                     port);
  EXPECT_EQ(cpu.exitCode, 1);
  EXPECT_EQ(cpu.err, "error: cpu plans of 2 ranks need MPI (mpirun) or a "
                     "build with Gloo (DNNC_RUNTIME_WITH_GLOO, libgloo-dev); "
                     "RANK/WORLD_SIZE launches of this build run cuda "
                     "plans\n");
  EXPECT_LT(secondsSince(start), 5);
}

} // namespace
