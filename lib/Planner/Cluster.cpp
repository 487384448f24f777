//===- Cluster.cpp - Cluster presets and JSON files -------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The embedded cluster presets (datasheet numbers, docs/cluster.md), the
// `cpu-local` preset measured from this machine, and the strict reader of
// cluster JSON files.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Cluster.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>
#include <thread>

#include <unistd.h>

using namespace dnnc;
using namespace dnnc::planner;
using llvm::ArrayRef;
using llvm::SmallVector;

double DeviceSpec::getPeakFlops(DType type) const {
  double peak = peakFlops[static_cast<int>(type)];
  return peak > 0 ? peak : peakFlops[static_cast<int>(DType::F32)];
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

/// Decimal units of the datasheets.
static constexpr double kTera = 1e12;
static constexpr double kGiga = 1e9;

/// Devices per node of the GPU presets (HGX/DGX boards).
static constexpr int64_t kGpusPerNode = 8;

/// The most nodes a `...-x<N>nodes` preset may name.
static constexpr int64_t kMaxPresetNodes = 1 << 20;

/// The fraction of this machine's memory `cpu-local` keeps back for the
/// operating system and other processes.
static constexpr double kCpuMemoryReserve = 0.10;

/// The clock `cpu-local` assumes (GHz): a typical sustained all-core clock
/// of current server and desktop CPUs; the real one is not portably known.
static constexpr double kCpuAssumedGHz = 2.5;

/// The memory bandwidth `cpu-local` assumes per core, bytes/s: a server
/// socket streams about 200-300 GB/s over 32-64 cores, a desktop about
/// 50-80 GB/s over 8-16 cores.
static constexpr double kCpuBandwidthPerCore = 10 * kGiga;

/// Sets the matrix peaks of `device` (FLOP/s; 0: unsupported).
static void setPeaks(DeviceSpec &device, double f64, double f32, double tf32,
                     double f16, double bf16, double f8, double i8) {
  device.peakFlops[static_cast<int>(DType::F64)] = f64;
  device.peakFlops[static_cast<int>(DType::F32)] = f32;
  device.peakFlops[static_cast<int>(DType::TF32)] = tf32;
  device.peakFlops[static_cast<int>(DType::F16)] = f16;
  device.peakFlops[static_cast<int>(DType::BF16)] = bf16;
  device.peakFlops[static_cast<int>(DType::F8)] = f8;
  device.peakFlops[static_cast<int>(DType::I8)] = i8;
}

/// The fraction of the tensor-core peak the GPU presets price matrix work
/// at: calibrated so that the estimates of Megatron-LM's published GPT
/// configurations (SC'21, Table 1; bench/planner.py megatron) match their
/// measured throughput (docs/cluster.md).
static constexpr double kGpuMatrixEfficiency = 0.6;

/// Returns `capacity` bytes less the default reserve.
static uint64_t usableMemory(double capacity) {
  return static_cast<uint64_t>(capacity * (1 - kDefaultMemoryReserve));
}

/// Returns an NVIDIA A100-SXM4-80GB (dense tensor-core peaks).
static DeviceSpec getA100() {
  DeviceSpec device;
  device.name = "A100-SXM4-80GB";
  setPeaks(device, /*f64=*/19.5 * kTera, /*f32=*/19.5 * kTera,
           /*tf32=*/156 * kTera, /*f16=*/312 * kTera, /*bf16=*/312 * kTera,
           /*f8=*/0, /*i8=*/624 * kTera);
  device.vectorFlops = 19.5 * kTera;
  device.memoryBytes = usableMemory(80 * kGiga);
  device.memoryBandwidth = 2039 * kGiga;
  device.matrixEfficiency = kGpuMatrixEfficiency;
  return device;
}

/// Returns an NVIDIA H100-SXM5-80GB (dense tensor-core peaks).
static DeviceSpec getH100() {
  DeviceSpec device;
  device.name = "H100-SXM5-80GB";
  setPeaks(device, /*f64=*/67 * kTera, /*f32=*/67 * kTera,
           /*tf32=*/495 * kTera, /*f16=*/989 * kTera, /*bf16=*/989 * kTera,
           /*f8=*/1979 * kTera, /*i8=*/1979 * kTera);
  device.vectorFlops = 67 * kTera;
  device.memoryBytes = usableMemory(80 * kGiga);
  device.memoryBandwidth = 3350 * kGiga;
  device.matrixEfficiency = kGpuMatrixEfficiency;
  return device;
}

/// Returns an NVIDIA H200-SXM-141GB: the H100's compute, more and faster
/// memory.
static DeviceSpec getH200() {
  DeviceSpec device = getH100();
  device.name = "H200-SXM-141GB";
  device.memoryBytes = usableMemory(141 * kGiga);
  device.memoryBandwidth = 4800 * kGiga;
  return device;
}

/// Returns NVLink3 through NVSwitch (A100): 600 GB/s both directions.
static LinkSpec getNVLink3() { return {"NVLink3/NVSwitch", 300 * kGiga, 3e-6}; }

/// Returns NVLink4 through NVSwitch (H100, H200): 900 GB/s both directions.
static LinkSpec getNVLink4() { return {"NVLink4/NVSwitch", 450 * kGiga, 3e-6}; }

/// Returns InfiniBand HDR, one 200 Gb/s adapter per GPU.
static LinkSpec getInfiniBandHDR() {
  return {"InfiniBand HDR (200 Gb/s per GPU)", 25 * kGiga, 5e-6};
}

/// Returns InfiniBand NDR, one 400 Gb/s adapter per GPU.
static LinkSpec getInfiniBandNDR() {
  return {"InfiniBand NDR (400 Gb/s per GPU)", 50 * kGiga, 5e-6};
}

/// Returns a cluster of `numNodes` 8-GPU nodes of `device`.
static Cluster makeGpuCluster(std::string name, int64_t numNodes,
                              DeviceSpec device, LinkSpec intra,
                              LinkSpec inter) {
  Cluster cluster;
  cluster.name = std::move(name);
  cluster.numNodes = numNodes;
  cluster.devicesPerNode = kGpusPerNode;
  cluster.device = std::move(device);
  cluster.intraNode = std::move(intra);
  cluster.interNode = std::move(inter);
  return cluster;
}

/// Returns the number of cores of this machine (at least 1).
static int64_t getNumCores() {
  int64_t cores = std::thread::hardware_concurrency();
  if (cores < 1)
    cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores;
}

/// Returns the physical memory of this machine in bytes (0 if unknown).
static double getPhysicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<double>(pages) * static_cast<double>(pageSize);
}

/// Returns one core of this machine: f32 FLOPs per cycle from the widest
/// FMA the CPU has (two FMA units per core), times an assumed clock.
static DeviceSpec getLocalCore(int64_t cores) {
  DeviceSpec device;
  double f32PerCycle = 16; // AArch64 NEON: 2 x 4 lanes x FMA; SSE alike.
  bool bf16 = false, f16 = false, vnni = false;
  std::string isa = "scalar/SIMD";
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    f32PerCycle = 64; // 2 x 16 lanes x FMA.
    isa = "AVX-512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    f32PerCycle = 32; // 2 x 8 lanes x FMA.
    isa = "AVX2+FMA";
  } else if (__builtin_cpu_supports("avx")) {
    f32PerCycle = 16; // 8-lane add + 8-lane mul.
    isa = "AVX";
  } else {
    f32PerCycle = 8; // 4-lane add + 4-lane mul.
    isa = "SSE";
  }
  bf16 = __builtin_cpu_supports("avx512bf16");
  f16 = __builtin_cpu_supports("avx512fp16");
  vnni =
      __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
#elif defined(__aarch64__)
  isa = "NEON";
#endif
  double f32 = f32PerCycle * kCpuAssumedGHz * kGiga;
  // Dot-product instructions pack two bf16/f16 or four i8 products into
  // each f32 lane; without them the type runs at the f32 rate (0 falls back).
  setPeaks(device, /*f64=*/f32 / 2, /*f32=*/f32, /*tf32=*/0,
           /*f16=*/f16 ? 2 * f32 : 0, /*bf16=*/bf16 ? 2 * f32 : 0, /*f8=*/0,
           /*i8=*/vnni ? 4 * f32 : 0);
  device.name = "CPU core (" + isa + ")";
  device.vectorFlops = f32;
  double memory = getPhysicalMemory();
  if (memory <= 0)
    memory = 4 * kGiga * cores; // A guess when sysconf does not know.
  device.memoryBytes =
      static_cast<uint64_t>(memory * (1 - kCpuMemoryReserve) / cores);
  device.memoryBandwidth = kCpuBandwidthPerCore;
  return device;
}

/// Returns `cpu-local`: this machine as one node, one device per core (a
/// rank of a multi-rank CPU plan is one process).
static Cluster getCpuLocal() {
  Cluster cluster;
  cluster.name = "cpu-local";
  int64_t cores = getNumCores();
  cluster.numNodes = 1;
  cluster.devicesPerNode = cores;
  cluster.device = getLocalCore(cores);
  // A copy through shared memory reads and writes: half the bandwidth.
  cluster.intraNode = {"shared memory", kCpuBandwidthPerCore / 2, 1e-6};
  // One node: never used; a 25 GbE network if it were.
  cluster.interNode = {"Ethernet 25 Gb/s", 3.125 * kGiga, 20e-6};
  return cluster;
}

/// Parses the `<N>` of a `...-x<N>nodes` preset name after `prefix`. Returns
/// nullopt if `name` is not of that family; sets `error` if it is but `N`
/// is not a positive integer of reasonable size.
static std::optional<int64_t> parseNodeCount(llvm::StringRef name,
                                             llvm::StringRef prefix,
                                             std::string &error) {
  if (!name.consume_front(prefix) || !name.consume_back("nodes"))
    return std::nullopt;
  int64_t nodes = 0;
  if (name.empty() ||
      !llvm::all_of(name, [](char c) { return llvm::isDigit(c); }) ||
      (name.size() > 1 && name.front() == '0') ||
      name.getAsInteger(10, nodes) || nodes < 1 || nodes > kMaxPresetNodes) {
    error = "the preset family '" + prefix.str() +
            "<N>nodes' needs a node count N from 1 to " +
            std::to_string(kMaxPresetNodes) + " (got '" + name.str() + "')";
    return std::nullopt;
  }
  return nodes;
}

/// Returns the preset `name`, or nullopt (with `error` set if `name` is a
/// malformed member of a preset family).
static std::optional<Cluster> getPreset(llvm::StringRef name,
                                        std::string &error) {
  if (name == "cpu-local")
    return getCpuLocal();
  if (name == "h100x8")
    return makeGpuCluster(name.str(), 1, getH100(), getNVLink4(),
                          getInfiniBandNDR());
  if (name == "h200x8")
    return makeGpuCluster(name.str(), 1, getH200(), getNVLink4(),
                          getInfiniBandNDR());
  if (std::optional<int64_t> nodes = parseNodeCount(name, "a100-80g-x", error))
    return makeGpuCluster(name.str(), *nodes, getA100(), getNVLink3(),
                          getInfiniBandHDR());
  if (std::optional<int64_t> nodes = parseNodeCount(name, "h100-x", error))
    return makeGpuCluster(name.str(), *nodes, getH100(), getNVLink4(),
                          getInfiniBandNDR());
  if (std::optional<int64_t> nodes = parseNodeCount(name, "h200-x", error))
    return makeGpuCluster(name.str(), *nodes, getH200(), getNVLink4(),
                          getInfiniBandNDR());
  return std::nullopt;
}

std::vector<std::string> dnnc::planner::getClusterPresetNames() {
  return {"cpu-local",          "h100x8",         "h200x8",
          "a100-80g-x<N>nodes", "h100-x<N>nodes", "h200-x<N>nodes"};
}

//===----------------------------------------------------------------------===//
// JSON files
//===----------------------------------------------------------------------===//

namespace {
/// Reads one JSON object of a cluster file, member by member, remembering
/// the path for error messages.
class ObjectReader {
public:
  /// Reads `object`, found at `path` (empty for the top level).
  ObjectReader(const llvm::json::Object &object, std::string path)
      : object(object), path(std::move(path)) {}

  /// Returns the path of member `key`.
  std::string getPath(llvm::StringRef key) const {
    return path.empty() ? key.str() : path + "." + key.str();
  }

  /// Returns member `key`, or null if it is absent; sets `error` when it is
  /// absent and `required`.
  const llvm::json::Value *get(llvm::StringRef key, bool required,
                               std::string &error) {
    const llvm::json::Value *value = object.get(key);
    if (!value && required && error.empty())
      error = getPath(key) + ": missing required member";
    return value;
  }

  /// Reads a string member into `result`.
  bool readString(llvm::StringRef key, bool required, std::string &result,
                  std::string &error) {
    const llvm::json::Value *value = get(key, required, error);
    if (!value)
      return !required;
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return fail(key, "expected a string", error);
    result = text->str();
    return true;
  }

  /// Reads a positive number member into `result`.
  bool readPositive(llvm::StringRef key, bool required, double &result,
                    std::string &error) {
    const llvm::json::Value *value = get(key, required, error);
    if (!value)
      return !required;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number <= 0)
      return fail(key, "expected a positive number", error);
    result = *number;
    return true;
  }

  /// Reads a positive integer member into `result`.
  bool readPositiveInteger(llvm::StringRef key, int64_t &result,
                           std::string &error) {
    const llvm::json::Value *value = get(key, /*required=*/true, error);
    if (!value)
      return false;
    std::optional<int64_t> number = value->getAsInteger();
    if (!number || *number < 1)
      return fail(key, "expected a positive integer", error);
    result = *number;
    return true;
  }

  /// Returns the object member `key`, or null (with `error` set if it is
  /// not an object, or absent and `required`).
  const llvm::json::Object *getObject(llvm::StringRef key, bool required,
                                      std::string &error) {
    const llvm::json::Value *value = get(key, required, error);
    if (!value)
      return nullptr;
    const llvm::json::Object *member = value->getAsObject();
    if (!member)
      fail(key, "expected an object", error);
    return member;
  }

  /// Sets `error` to the first member (in sorted order) not in `known` and
  /// returns false; returns true if there is none. Checked before the
  /// members are read: a misspelt member is reported as such, not as the
  /// required one missing.
  bool checkUnknown(llvm::ArrayRef<llvm::StringRef> known,
                    std::string &error) const {
    llvm::SmallVector<llvm::StringRef> unknown;
    for (const auto &entry : object)
      if (!llvm::is_contained(known, llvm::StringRef(entry.first)))
        unknown.push_back(entry.first);
    if (unknown.empty())
      return true;
    llvm::sort(unknown);
    error = getPath(unknown.front()) + ": unknown member";
    return false;
  }

  /// Sets `error` to `reason` at member `key` and returns false.
  bool fail(llvm::StringRef key, const std::string &reason,
            std::string &error) const {
    error = getPath(key) + ": " + reason;
    return false;
  }

private:
  /// The object read.
  const llvm::json::Object &object;
  /// Its path in the file.
  std::string path;
};
} // namespace

/// Reads a link object (`name`, `bandwidth`, `latency`) into `link`.
static bool readLink(const llvm::json::Object &object, std::string path,
                     LinkSpec &link, std::string &error) {
  ObjectReader reader(object, std::move(path));
  return reader.checkUnknown({"name", "bandwidth", "latency"}, error) &&
         reader.readString("name", /*required=*/true, link.name, error) &&
         reader.readPositive("bandwidth", /*required=*/true, link.bandwidth,
                             error) &&
         reader.readPositive("latency", /*required=*/true, link.latency, error);
}

/// Reads the `device` object into `device`.
static bool readDevice(const llvm::json::Object &object, DeviceSpec &device,
                       std::string &error) {
  ObjectReader reader(object, "device");
  if (!reader.checkUnknown({"name", "peak_flops", "vector_flops",
                            "memory_bytes", "memory_gib", "memory_reserve",
                            "memory_bandwidth", "matrix_efficiency"},
                           error) ||
      !reader.readString("name", /*required=*/true, device.name, error))
    return false;
  const llvm::json::Object *peaks =
      reader.getObject("peak_flops", /*required=*/true, error);
  if (!peaks)
    return false;
  ObjectReader peakReader(*peaks, "device.peak_flops");
  static const std::pair<llvm::StringRef, DType> types[] = {
      {"f64", DType::F64}, {"f32", DType::F32},   {"tf32", DType::TF32},
      {"f16", DType::F16}, {"bf16", DType::BF16}, {"f8", DType::F8},
      {"i8", DType::I8}};
  llvm::SmallVector<llvm::StringRef> typeNames;
  for (auto [key, type] : types)
    typeNames.push_back(key);
  if (!peakReader.checkUnknown(typeNames, error))
    return false;
  for (auto [key, type] : types)
    if (!peakReader.readPositive(key, /*required=*/type == DType::F32,
                                 device.peakFlops[static_cast<int>(type)],
                                 error))
      return false;
  if (!reader.readPositive("vector_flops", /*required=*/true,
                           device.vectorFlops, error))
    return false;
  if (const llvm::json::Value *value =
          reader.get("matrix_efficiency", /*required=*/false, error)) {
    std::optional<double> number = value->getAsNumber();
    if (!number || !(*number > 0 && *number <= 1))
      return reader.fail("matrix_efficiency", "expected a number in (0, 1]",
                         error);
    device.matrixEfficiency = *number;
  }

  // The capacity, in bytes or GiB, less the reserve.
  double bytes = 0, gib = 0;
  if (!reader.readPositive("memory_bytes", /*required=*/false, bytes, error) ||
      !reader.readPositive("memory_gib", /*required=*/false, gib, error))
    return false;
  if (bytes > 0 && gib > 0)
    return reader.fail("memory_gib",
                       "give memory_bytes or memory_gib, not both", error);
  if (bytes == 0 && gib == 0)
    return reader.fail("memory_bytes",
                       "missing required member (or device.memory_gib)", error);
  double capacity = bytes > 0 ? bytes : gib * 1024 * 1024 * 1024;
  double reserve = kDefaultMemoryReserve;
  if (const llvm::json::Value *value =
          reader.get("memory_reserve", /*required=*/false, error)) {
    std::optional<double> number = value->getAsNumber();
    if (!number || !(*number >= 0 && *number < 1))
      return reader.fail("memory_reserve", "expected a number in [0, 1)",
                         error);
    reserve = *number;
  }
  double usable = capacity * (1 - reserve);
  if (usable < 1 ||
      usable >= static_cast<double>(std::numeric_limits<uint64_t>::max()))
    return reader.fail(bytes > 0 ? "memory_bytes" : "memory_gib",
                       "the usable memory is out of range", error);
  device.memoryBytes = static_cast<uint64_t>(usable);
  return reader.readPositive("memory_bandwidth", /*required=*/true,
                             device.memoryBandwidth, error);
}

/// Reads a cluster JSON document into `cluster`; `error` names the member
/// at fault (without the file).
static bool readCluster(const llvm::json::Value &json, Cluster &cluster,
                        std::string &error) {
  const llvm::json::Object *root = json.getAsObject();
  if (!root) {
    error = "expected a JSON object";
    return false;
  }
  ObjectReader reader(*root, "");
  if (!reader.checkUnknown({"name", "nodes", "devices_per_node", "device",
                            "intra_node", "inter_node"},
                           error))
    return false;
  std::string name;
  if (!reader.readString("name", /*required=*/false, name, error))
    return false;
  if (!name.empty())
    cluster.name = name;
  if (!reader.readPositiveInteger("nodes", cluster.numNodes, error) ||
      !reader.readPositiveInteger("devices_per_node", cluster.devicesPerNode,
                                  error))
    return false;
  int64_t numDevices = 0;
  if (__builtin_mul_overflow(cluster.numNodes, cluster.devicesPerNode,
                             &numDevices))
    return reader.fail("devices_per_node",
                       "nodes x devices_per_node is too large", error);
  const llvm::json::Object *device =
      reader.getObject("device", /*required=*/true, error);
  if (!device || !readDevice(*device, cluster.device, error))
    return false;
  const llvm::json::Object *intra =
      reader.getObject("intra_node", /*required=*/true, error);
  if (!intra || !readLink(*intra, "intra_node", cluster.intraNode, error))
    return false;
  // One node never talks over the inter-node link: it may be left out.
  const llvm::json::Object *inter =
      reader.getObject("inter_node", /*required=*/cluster.numNodes > 1, error);
  if (!error.empty())
    return false;
  if (inter) {
    if (!readLink(*inter, "inter_node", cluster.interNode, error))
      return false;
  } else {
    cluster.interNode = cluster.intraNode;
  }
  return true;
}

/// Returns the path of the first member repeated within one object of the
/// (syntactically valid) JSON `text`, or nullopt: the parser keeps one of
/// them silently. Keys are compared as written (escapes not decoded).
static std::optional<std::string> findDuplicateMember(llvm::StringRef text) {
  /// An object or array being scanned.
  struct Frame {
    /// True for an object.
    bool isObject;
    /// The keys seen so far (objects).
    llvm::SmallVector<llvm::StringRef> keys;
    /// The key whose value is being scanned (objects).
    llvm::StringRef current;
  };
  llvm::SmallVector<Frame> frames;
  auto getPath = [&](llvm::StringRef last) {
    std::string path;
    for (const Frame &frame : frames)
      if (frame.isObject && !frame.current.empty() && &frame != &frames.back())
        path += frame.current.str() + ".";
    return path + last.str();
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '{' || c == '[') {
      frames.push_back({c == '{', {}, {}});
    } else if (c == '}' || c == ']') {
      if (!frames.empty())
        frames.pop_back();
    } else if (c == '"') {
      size_t begin = ++i;
      while (i < e && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      llvm::StringRef string = text.slice(begin, std::min(i, e));
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      bool isKey = !frames.empty() && frames.back().isObject &&
                   next != llvm::StringRef::npos && text[next] == ':';
      if (!isKey)
        continue;
      Frame &frame = frames.back();
      if (llvm::is_contained(frame.keys, string))
        return getPath(string);
      frame.keys.push_back(string);
      frame.current = string;
    }
  }
  return std::nullopt;
}

/// Reads the cluster JSON file `path`.
static std::optional<Cluster> loadClusterFile(const std::string &path,
                                              std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = path + ": cannot read it: " + buffer.getError().message();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = path + ": invalid JSON: " + llvm::toString(json.takeError());
    return std::nullopt;
  }
  if (std::optional<std::string> member =
          findDuplicateMember((*buffer)->getBuffer())) {
    error = path + ": " + *member + ": duplicate member";
    return std::nullopt;
  }
  Cluster cluster;
  cluster.name = path;
  std::string reason;
  if (!readCluster(*json, cluster, reason)) {
    error = path + ": " + reason;
    return std::nullopt;
  }
  return cluster;
}

std::optional<Cluster> dnnc::planner::loadCluster(const std::string &nameOrFile,
                                                  std::string &error) {
  error.clear();
  std::string presetError;
  if (std::optional<Cluster> preset = getPreset(nameOrFile, presetError))
    return preset;
  if (llvm::sys::fs::exists(nameOrFile) &&
      !llvm::sys::fs::is_directory(nameOrFile))
    return loadClusterFile(nameOrFile, error);
  if (!presetError.empty()) {
    error = presetError;
    return std::nullopt;
  }
  error = "neither a preset (";
  for (auto [index, preset] : llvm::enumerate(getClusterPresetNames()))
    error += (index ? ", " : "") + preset;
  error += ") nor a cluster JSON file";
  return std::nullopt;
}

std::vector<bool>
dnnc::planner::getIntraNodeAxes(const Cluster &cluster,
                                const std::vector<int64_t> &meshShape) {
  const int64_t perNode = cluster.devicesPerNode;
  int64_t numDevices = 1;
  for (int64_t size : meshShape)
    if (size < 1 || __builtin_mul_overflow(numDevices, size, &numDevices))
      return std::vector<bool>(meshShape.size(), false);
  std::vector<bool> intra(meshShape.size(), true);
  // Every device lies in node 0.
  if (numDevices <= perNode)
    return intra;
  int64_t stride = 1; // The product of the axes inside axis `i`.
  for (size_t i = meshShape.size(); i-- > 0; stride *= meshShape[i]) {
    int64_t block = stride * meshShape[i];
    // Groups tile blocks of `block` devices, which tile the nodes.
    if (perNode % block == 0)
      continue;
    // Otherwise check the first and last device of every group.
    for (int64_t outer = 0; outer < numDevices && intra[i]; outer += block)
      for (int64_t first = outer; first < outer + stride; ++first) {
        int64_t last = first + (meshShape[i] - 1) * stride;
        if (first / perNode != last / perNode) {
          intra[i] = false;
          break;
        }
      }
  }
  return intra;
}

SmallVector<dist::MeshAxisSpec> dnnc::planner::placeMeshAxes(
    const Cluster &cluster, ArrayRef<std::pair<std::string, int64_t>> axes) {
  std::vector<int64_t> shape;
  for (const auto &axis : axes)
    shape.push_back(axis.second);
  std::vector<bool> intra = getIntraNodeAxes(cluster, shape);
  SmallVector<dist::MeshAxisSpec> specs;
  for (auto [index, axis] : llvm::enumerate(axes))
    specs.push_back({axis.first, axis.second,
                     intra[index] ? dist::LinkClass::Intra
                                  : dist::LinkClass::Inter});
  return specs;
}
