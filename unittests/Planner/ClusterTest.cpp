//===- ClusterTest.cpp - Cluster presets and JSON files --------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the planner's cluster model: every preset loads with sane
// values, the preset families parse their node count, JSON files load and
// each kind of malformed file is an error naming the member at fault.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Cluster.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace dnnc::planner;

namespace {

/// Loads `name`, failing the test with the error if it does not load.
Cluster loadOrFail(const std::string &name) {
  std::string error;
  std::optional<Cluster> cluster = loadCluster(name, error);
  EXPECT_TRUE(cluster.has_value()) << name << ": " << error;
  EXPECT_TRUE(!cluster || error.empty()) << error;
  return cluster.value_or(Cluster());
}

/// Returns the error of loading `name` (empty if it loads).
std::string loadError(const std::string &name) {
  std::string error;
  std::optional<Cluster> cluster = loadCluster(name, error);
  EXPECT_FALSE(cluster.has_value()) << name << " loaded";
  return error;
}

/// Checks the values every cluster must have.
void expectSane(const Cluster &cluster) {
  EXPECT_GE(cluster.numNodes, 1);
  EXPECT_GE(cluster.devicesPerNode, 1);
  const DeviceSpec &device = cluster.device;
  EXPECT_FALSE(device.name.empty());
  for (DType type : {DType::F64, DType::F32, DType::TF32, DType::F16,
                     DType::BF16, DType::F8, DType::I8})
    EXPECT_GT(device.getPeakFlops(type), 0);
  EXPECT_GT(device.vectorFlops, 0);
  EXPECT_GT(device.memoryBytes, 0u);
  EXPECT_GT(device.memoryBandwidth, 0);
  for (const LinkSpec *link : {&cluster.intraNode, &cluster.interNode}) {
    EXPECT_FALSE(link->name.empty());
    EXPECT_GT(link->bandwidth, 0);
    EXPECT_GT(link->latency, 0);
    EXPECT_LT(link->latency, 1e-3);
  }
  // A node's own links are at least as fast as the network between nodes.
  EXPECT_GE(cluster.intraNode.bandwidth, cluster.interNode.bandwidth);
}

TEST(ClusterTest, PresetNames) {
  std::vector<std::string> names = getClusterPresetNames();
  for (const char *name : {"cpu-local", "h100x8", "h200x8",
                           "a100-80g-x<N>nodes", "h100-x<N>nodes"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(ClusterTest, EveryPresetLoads) {
  for (std::string name : getClusterPresetNames()) {
    if (size_t at = name.find("<N>"); at != std::string::npos)
      name.replace(at, 3, "2");
    Cluster cluster = loadOrFail(name);
    EXPECT_EQ(cluster.name, name);
    expectSane(cluster);
  }
}

TEST(ClusterTest, CpuLocal) {
  Cluster cluster = loadOrFail("cpu-local");
  EXPECT_EQ(cluster.numNodes, 1);
  EXPECT_GE(cluster.getNumDevices(), 1);
  // Per core: between 1 GFLOP/s and 1 TFLOP/s in f32, f64 at half rate.
  double f32 = cluster.device.getPeakFlops(DType::F32);
  EXPECT_GE(f32, 1e9);
  EXPECT_LE(f32, 1e12);
  EXPECT_DOUBLE_EQ(cluster.device.getPeakFlops(DType::F64), f32 / 2);
  EXPECT_EQ(cluster.intraNode.name, "shared memory");
}

TEST(ClusterTest, GpuPresets) {
  Cluster h100 = loadOrFail("h100x8");
  EXPECT_EQ(h100.numNodes, 1);
  EXPECT_EQ(h100.getNumDevices(), 8);
  EXPECT_DOUBLE_EQ(h100.device.getPeakFlops(DType::BF16), 989e12);
  EXPECT_DOUBLE_EQ(h100.device.getPeakFlops(DType::F8), 1979e12);
  EXPECT_DOUBLE_EQ(h100.device.getPeakFlops(DType::TF32), 495e12);
  EXPECT_DOUBLE_EQ(h100.device.getPeakFlops(DType::F32), 67e12);
  EXPECT_DOUBLE_EQ(h100.device.memoryBandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.intraNode.bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(h100.interNode.bandwidth, 50e9);
  // 80 GB less the reserve.
  EXPECT_EQ(h100.device.memoryBytes,
            static_cast<uint64_t>(80e9 * (1 - kDefaultMemoryReserve)));

  Cluster h200 = loadOrFail("h200x8");
  EXPECT_EQ(h200.getNumDevices(), 8);
  EXPECT_DOUBLE_EQ(h200.device.getPeakFlops(DType::BF16), 989e12);
  EXPECT_DOUBLE_EQ(h200.device.memoryBandwidth, 4.8e12);
  EXPECT_GT(h200.device.memoryBytes, h100.device.memoryBytes);
  EXPECT_EQ(h200.device.memoryBytes,
            static_cast<uint64_t>(141e9 * (1 - kDefaultMemoryReserve)));

  Cluster a100 = loadOrFail("a100-80g-x1nodes");
  EXPECT_EQ(a100.getNumDevices(), 8);
  EXPECT_DOUBLE_EQ(a100.device.getPeakFlops(DType::BF16), 312e12);
  EXPECT_DOUBLE_EQ(a100.device.getPeakFlops(DType::TF32), 156e12);
  EXPECT_DOUBLE_EQ(a100.device.getPeakFlops(DType::F64), 19.5e12);
  // No FP8 on Ampere: falls back to f32.
  EXPECT_DOUBLE_EQ(a100.device.getPeakFlops(DType::F8), 19.5e12);
  EXPECT_DOUBLE_EQ(a100.device.memoryBandwidth, 2.039e12);
  EXPECT_DOUBLE_EQ(a100.intraNode.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(a100.interNode.bandwidth, 25e9);
}

TEST(ClusterTest, PresetFamilies) {
  Cluster a100 = loadOrFail("a100-80g-x128nodes");
  EXPECT_EQ(a100.numNodes, 128);
  EXPECT_EQ(a100.devicesPerNode, 8);
  EXPECT_EQ(a100.getNumDevices(), 1024);
  Cluster h100 = loadOrFail("h100-x2nodes");
  EXPECT_EQ(h100.getNumDevices(), 16);
  EXPECT_EQ(h100.device.name, "H100-SXM5-80GB");
  EXPECT_EQ(loadOrFail("h200-x3nodes").getNumDevices(), 24);
}

TEST(ClusterTest, BadNames) {
  for (const char *name :
       {"a100-80g-x0nodes", "a100-80g-xnodes", "h100-x-1nodes",
        "h100-x2.5nodes", "h100-x02nodes", "h100-x99999999999999999999nodes"})
    EXPECT_NE(loadError(name).find("needs a node count N from 1"),
              std::string::npos)
        << name;
  for (const char *name :
       {"", "h100", "H100x8", "h100-x2", "cpu", "/no/such/cluster.json"}) {
    std::string error = loadError(name);
    EXPECT_NE(error.find("neither a preset (cpu-local, h100x8"),
              std::string::npos)
        << name << ": " << error;
    EXPECT_NE(error.find("a100-80g-x<N>nodes"), std::string::npos) << error;
  }
}

TEST(ClusterTest, IntraNodeAxes) {
  Cluster cluster = loadOrFail("h100-x4nodes");
  using Shape = std::vector<int64_t>;
  using Links = std::vector<bool>;
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 8}), (Links{false, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{4, 2}), (Links{true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{4, 8}), (Links{false, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 16}), (Links{false, false}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 2, 2}),
            (Links{true, true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{4, 2, 4}),
            (Links{false, true, true}));
  // A mesh within one node is intra even when its groups do not divide it.
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 3}), (Links{true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{3, 2}), (Links{true, true}));
  // Groups of 3 over 12 devices: {6, 7, 8} crosses nodes, so does {0, 3, 6,
  // 9}.
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{4, 3}), (Links{false, false}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{3, 8}), (Links{false, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 2, 4}),
            (Links{false, true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{4, 4, 2}),
            (Links{false, true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{8, 4}), (Links{false, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{2, 0}), (Links{false, false}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{32}), (Links{false}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{1, 8}), (Links{true, true}));
  EXPECT_EQ(getIntraNodeAxes(cluster, Shape{}), Links{});
}

/// A temporary cluster file, removed at the end of the test.
class ClusterFileTest : public ::testing::Test {
protected:
  void TearDown() override {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }

  /// Writes `text` to a new temporary file and returns its path.
  std::string write(const std::string &text) {
    if (!path.empty())
      llvm::sys::fs::remove(path);
    llvm::SmallString<128> created;
    int fd = -1;
    EXPECT_FALSE(
        llvm::sys::fs::createTemporaryFile("cluster", "json", fd, created));
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << text;
    }
    path = created.str().str();
    return path;
  }

  /// Returns the error of loading `text` as a file, without the path.
  std::string fileError(const std::string &text) {
    std::string file = write(text);
    std::string error = loadError(file);
    EXPECT_EQ(error.rfind(file + ": ", 0), 0u) << error;
    return error.substr(std::min(error.size(), file.size() + 2));
  }

  /// A valid two-node cluster document, with `member` (a JSON fragment
  /// `"key": value`) added to the object at path `where` ("", "device",
  /// "device.peak_flops" or "intra_node"), and the member at path `removed`
  /// ("nodes", "device.name", ...) taken out.
  static std::string doc(const std::string &where = "",
                         const std::string &member = "",
                         const std::string &removed = "") {
    // Returns the object at `scope` with `members` ({key, value} pairs).
    auto object =
        [&](const std::string &scope,
            std::vector<std::pair<std::string, std::string>> members) {
          std::string text;
          for (const auto &[key, value] : members) {
            if ((scope.empty() ? key : scope + "." + key) == removed)
              continue;
            text += (text.empty() ? "" : ", ") + ("\"" + key + "\": " + value);
          }
          if (where == scope && !member.empty())
            text += (text.empty() ? "" : ", ") + member;
          return "{" + text + "}";
        };
    std::string peaks =
        object("device.peak_flops", {{"f32", "1e12"}, {"bf16", "8e12"}});
    std::string device = object("device", {{"name", "\"toy\""},
                                           {"peak_flops", peaks},
                                           {"vector_flops", "1e12"},
                                           {"memory_gib", "16"},
                                           {"memory_bandwidth", "1e12"}});
    std::string intra = object(
        "intra_node",
        {{"name", "\"bus\""}, {"bandwidth", "1e11"}, {"latency", "2e-6"}});
    std::string inter = object(
        "inter_node",
        {{"name", "\"net\""}, {"bandwidth", "1e10"}, {"latency", "1e-5"}});
    return object("", {{"name", "\"toy-cluster\""},
                       {"nodes", "2"},
                       {"devices_per_node", "4"},
                       {"device", device},
                       {"intra_node", intra},
                       {"inter_node", inter}});
  }

  /// The temporary file, or empty.
  std::string path;
};

TEST_F(ClusterFileTest, HappyPath) {
  Cluster cluster = loadOrFail(write(doc()));
  EXPECT_EQ(cluster.name, "toy-cluster");
  EXPECT_EQ(cluster.numNodes, 2);
  EXPECT_EQ(cluster.devicesPerNode, 4);
  EXPECT_EQ(cluster.getNumDevices(), 8);
  EXPECT_EQ(cluster.device.name, "toy");
  EXPECT_DOUBLE_EQ(cluster.device.getPeakFlops(DType::F32), 1e12);
  EXPECT_DOUBLE_EQ(cluster.device.getPeakFlops(DType::BF16), 8e12);
  // Absent types fall back to f32.
  EXPECT_DOUBLE_EQ(cluster.device.getPeakFlops(DType::F16), 1e12);
  EXPECT_DOUBLE_EQ(cluster.device.vectorFlops, 1e12);
  EXPECT_EQ(
      cluster.device.memoryBytes,
      static_cast<uint64_t>(16.0 * (1ull << 30) * (1 - kDefaultMemoryReserve)));
  EXPECT_DOUBLE_EQ(cluster.device.memoryBandwidth, 1e12);
  EXPECT_EQ(cluster.intraNode.name, "bus");
  EXPECT_DOUBLE_EQ(cluster.intraNode.bandwidth, 1e11);
  EXPECT_DOUBLE_EQ(cluster.intraNode.latency, 2e-6);
  EXPECT_EQ(cluster.interNode.name, "net");
  EXPECT_DOUBLE_EQ(cluster.interNode.bandwidth, 1e10);
  EXPECT_DOUBLE_EQ(cluster.interNode.latency, 1e-5);
  expectSane(cluster);
}

TEST_F(ClusterFileTest, OptionalMembers) {
  // Without a name the cluster is named after its file.
  std::string file = write(doc("", "", "name"));
  EXPECT_EQ(loadOrFail(file).name, file);

  // memory_bytes instead of memory_gib, and an explicit reserve.
  std::string text =
      doc("device", R"("memory_reserve": 0)", "device.memory_gib");
  text.replace(text.find("\"memory_reserve\""), 0,
               "\"memory_bytes\": 1000000, ");
  Cluster cluster = loadOrFail(write(text));
  EXPECT_EQ(cluster.device.memoryBytes, 1000000u);

  // One node needs no inter_node link.
  text = doc("", "", "inter_node");
  text.replace(text.find("\"nodes\": 2"), 10, "\"nodes\": 1");
  cluster = loadOrFail(write(text));
  EXPECT_EQ(cluster.getNumDevices(), 4);
  EXPECT_EQ(cluster.interNode.name, "bus");
}

TEST_F(ClusterFileTest, MatrixEfficiency) {
  // Absent: matrix work runs at the peak.
  EXPECT_DOUBLE_EQ(loadOrFail(write(doc())).device.matrixEfficiency, 1);
  Cluster cluster =
      loadOrFail(write(doc("device", R"("matrix_efficiency": 0.5)")));
  EXPECT_DOUBLE_EQ(cluster.device.matrixEfficiency, 0.5);
  EXPECT_NE(fileError(doc("device", R"("matrix_efficiency": 0)"))
                .find("matrix_efficiency"),
            std::string::npos);
  EXPECT_NE(fileError(doc("device", R"("matrix_efficiency": 1.5)"))
                .find("expected a number in (0, 1]"),
            std::string::npos);
  // The GPU presets sustain less than their datasheet peak.
  std::string error;
  std::optional<Cluster> a100 = loadCluster("a100-80g-x2nodes", error);
  ASSERT_TRUE(a100) << error;
  EXPECT_GT(a100->device.matrixEfficiency, 0.5);
  EXPECT_LT(a100->device.matrixEfficiency, 1);
}

TEST_F(ClusterFileTest, SyntaxErrors) {
  EXPECT_EQ(fileError("{\"nodes\": 2,").rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(fileError("").rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(fileError(R"({"nodes": 1, "nodes": 2})"),
            "nodes: duplicate member");
  EXPECT_EQ(fileError(R"({"device": {"peak_flops": {"f32": 1, "f32": 2}}})"),
            "device.peak_flops.f32: duplicate member");
  // Equal keys in different objects, and strings that are values, are fine.
  EXPECT_EQ(fileError(R"({"a": {"name": "name"}, "b": {"name": ["a", "a"]}})"),
            "a: unknown member");
  EXPECT_EQ(fileError("[1, 2]"), "expected a JSON object");
}

TEST_F(ClusterFileTest, UnknownMembers) {
  EXPECT_EQ(fileError(doc("", R"("gpus": 8)")), "gpus: unknown member");
  EXPECT_EQ(fileError(doc("device", R"("clock": 1)")),
            "device.clock: unknown member");
  EXPECT_EQ(fileError(doc("device.peak_flops", R"("f4": 1)")),
            "device.peak_flops.f4: unknown member");
  EXPECT_EQ(fileError(doc("intra_node", R"("hops": 1)")),
            "intra_node.hops: unknown member");
}

TEST_F(ClusterFileTest, MissingMembers) {
  for (const char *key :
       {"nodes", "devices_per_node", "device", "intra_node", "inter_node"})
    EXPECT_EQ(fileError(doc("", "", key)),
              std::string(key) + ": missing required member");
  for (const char *path :
       {"device.name", "device.peak_flops", "device.vector_flops",
        "device.memory_bandwidth", "device.peak_flops.f32", "intra_node.name",
        "intra_node.bandwidth", "intra_node.latency", "inter_node.latency"})
    EXPECT_EQ(fileError(doc("", "", path)),
              std::string(path) + ": missing required member");
  EXPECT_EQ(fileError(doc("", "", "device.memory_gib")),
            "device.memory_bytes: missing required member (or "
            "device.memory_gib)");
  EXPECT_EQ(fileError(doc("device", R"("memory_bytes": 1e9)")),
            "device.memory_gib: give memory_bytes or memory_gib, not both");
}

TEST_F(ClusterFileTest, WrongTypes) {
  std::string text = doc();
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string result = text;
    size_t at = result.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      result.replace(at, from.size(), to);
    return result;
  };
  EXPECT_EQ(fileError(replaced("\"toy-cluster\"", "7")),
            "name: expected a string");
  EXPECT_EQ(fileError(replaced("\"nodes\": 2", "\"nodes\": \"2\"")),
            "nodes: expected a positive integer");
  EXPECT_EQ(fileError(replaced("\"nodes\": 2", "\"nodes\": 1.5")),
            "nodes: expected a positive integer");
  EXPECT_EQ(
      fileError(replaced("\"devices_per_node\": 4", "\"devices_per_node\": 0")),
      "devices_per_node: expected a positive integer");
  EXPECT_EQ(fileError(replaced("\"name\": \"toy\"", "\"name\": null")),
            "device.name: expected a string");
  EXPECT_EQ(fileError(replaced("\"bf16\": 8e12", "\"bf16\": -1")),
            "device.peak_flops.bf16: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"bf16\": 8e12", "\"bf16\": 0")),
            "device.peak_flops.bf16: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"bf16\": 8e12", "\"bf16\": \"fast\"")),
            "device.peak_flops.bf16: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"memory_gib\": 16", "\"memory_gib\": 0")),
            "device.memory_gib: expected a positive number");
  EXPECT_EQ(
      fileError(replaced("\"vector_flops\": 1e12", "\"vector_flops\": [1]")),
      "device.vector_flops: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"latency\": 2e-6", "\"latency\": 0")),
            "intra_node.latency: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"latency\": 1e-5", "\"latency\": -1")),
            "inter_node.latency: expected a positive number");
  EXPECT_EQ(fileError(replaced("\"name\": \"net\"", "\"name\": 1")),
            "inter_node.name: expected a string");
  EXPECT_EQ(fileError(doc("device", R"("memory_reserve": 1)")),
            "device.memory_reserve: expected a number in [0, 1)");
  EXPECT_EQ(fileError(doc("device", R"("memory_reserve": "x")")),
            "device.memory_reserve: expected a number in [0, 1)");
  std::string noPeaks = doc("", "", "device.peak_flops");
  noPeaks.replace(noPeaks.find("\"vector_flops\""), 0, "\"peak_flops\": 1, ");
  EXPECT_EQ(fileError(noPeaks), "device.peak_flops: expected an object");
  std::string noDevice = doc("", "", "device");
  noDevice.replace(noDevice.find("\"intra_node\""), 0, "\"device\": [], ");
  EXPECT_EQ(fileError(noDevice), "device: expected an object");
  EXPECT_EQ(
      fileError(replaced("\"nodes\": 2", "\"nodes\": 9223372036854775807")),
      "devices_per_node: nodes x devices_per_node is too large");
}

TEST_F(ClusterFileTest, Directory) {
  // A directory is not a cluster file.
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cluster", dir));
  EXPECT_NE(loadError(dir.str().str()).find("neither a preset"),
            std::string::npos);
  llvm::sys::fs::remove(dir);
}

} // namespace
