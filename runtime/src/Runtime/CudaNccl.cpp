//===- CudaNccl.cpp - NCCL for the `cuda` target backend -------*- C++ -*-===//
//
// The NCCL side of the cuda backend: the collective kernels (one
// communicator per mesh-axis group, created on first use) and pipeline
// transfers (two communicators of the world, one per direction).
//
// Every NCCL communicator is non-blocking (ncclConfig_t::blocking = 0), so
// no NCCL call can hang the host: initialisation and every operation are
// settled by polling ncclCommGetAsyncError, and waits on the device poll the
// communicators too. A wait that exceeds DNNC_NCCL_TIMEOUT_S seconds (a peer
// that is stuck or gone) aborts every communicator (ncclCommAbort) and
// becomes an error; later NCCL work of the backend then fails at once.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"
#include "dnnc/Runtime/Kernels.h"

namespace dnnc::rt {

using plan::DataType;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// "ncclAllReduce failed: <NCCL's error string> (<last error detail>)".
static std::string ncclFailure(const char *call, ncclResult_t rc,
                               ncclComm_t comm = nullptr) {
  std::string text = std::string(call) + " failed: " + ncclGetErrorString(rc);
  const char *detail = ncclGetLastError(comm);
  if (detail && *detail)
    text += " (" + std::string(detail) + ")";
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return text;
}

/// The Comm tag of the NCCL ids of pipeline transfers over TCP; group ids
/// use the tags above it (dnnc-run's own messages use small tags).
static constexpr int kNcclIdTag = 1 << 20;

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

/// True when any NCCL communicator exists.
bool CudaBackend::State::hasCommunicators() const {
  if (upComm || downComm)
    return true;
  for (const auto &entry : groupComms)
    if (entry.second)
      return true;
  return false;
}

/// Aborts every communicator (ncclCommAbort) after `why`.
void CudaBackend::State::abortAll(const std::string &why) {
  if (!aborted)
    abortReason = why;
  aborted = true;
  for (auto &entry : groupComms)
    if (entry.second) {
      ncclCommAbort(entry.second);
      entry.second = nullptr;
    }
  for (ncclComm_t *c : {&upComm, &downComm})
    if (*c) {
      ncclCommAbort(*c);
      *c = nullptr;
    }
}

/// Releases communicator `c` and nulls it: ncclCommFinalize settled with
/// the timeout, then ncclCommDestroy; ncclCommAbort once the backend has
/// aborted or the finalisation fails.
void CudaBackend::State::close(ncclComm_t &c) {
  if (!c)
    return;
  std::string ignored;
  ncclResult_t rc = aborted ? ncclInternalError : ncclCommFinalize(c);
  if ((rc == ncclSuccess || rc == ncclInProgress) &&
      settle(c, "ncclCommFinalize", ignored))
    ncclCommDestroy(c);
  else
    ncclCommAbort(c);
  c = nullptr;
}

/// Fails when a communicator reported an asynchronous error (and aborts
/// them all).
bool CudaBackend::State::checkAsyncErrors(std::string &error) {
  auto check = [&](ncclComm_t c) {
    if (!c)
      return true;
    ncclResult_t state = ncclSuccess;
    ncclResult_t rc = ncclCommGetAsyncError(c, &state);
    if (rc != ncclSuccess)
      state = rc;
    if (state == ncclSuccess || state == ncclInProgress)
      return true;
    error = ncclFailure("NCCL communication", state, c);
    return false;
  };
  bool ok = check(upComm) && check(downComm);
  for (auto &entry : groupComms)
    ok = ok && check(entry.second);
  if (!ok)
    abortAll(error);
  return ok;
}

/// Waits until the non-blocking communicator `c` has finished its last
/// call (initialisation, or enqueuing an operation): ncclInProgress turns
/// into ncclSuccess or an error. Fails after the timeout.
bool CudaBackend::State::settle(ncclComm_t c, const char *call,
                                std::string &error) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0;; ++i) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t rc = ncclCommGetAsyncError(c, &state);
    if (rc != ncclSuccess)
      state = rc;
    if (state == ncclSuccess)
      return true;
    if (state != ncclInProgress) {
      error = ncclFailure(call, state, c);
      return false;
    }
    if (secondsSince(start) > timeout) {
      error = std::string(call) + " did not complete within " +
              std::to_string(int(timeout)) +
              " s (a peer rank is stuck or gone; DNNC_NCCL_TIMEOUT_S sets "
              "the limit)";
      return false;
    }
    pollPause(i);
  }
}

/// Creates a non-blocking communicator of `nranks` ranks as rank `rank`
/// from `id`, waiting at most the timeout for the peers.
bool CudaBackend::State::initComm(ncclComm_t &out, int nranks, int rank,
                                  const ncclUniqueId &id,
                                  const std::string &what,
                                  std::string &error) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t c = nullptr;
  ncclResult_t rc = ncclCommInitRankConfig(&c, nranks, id, rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    error = "creating the NCCL communicator of " + what + ": " +
            ncclFailure("ncclCommInitRankConfig", rc, c);
    if (c)
      ncclCommAbort(c);
    return false;
  }
  if (!settle(c, "ncclCommInitRankConfig", error)) {
    error = "creating the NCCL communicator of " + what + ": " + error;
    ncclCommAbort(c);
    return false;
  }
  out = c;
  return true;
}

#if DNNC_RUNTIME_WITH_MPI
/// Waits for the MPI request `request` at most the timeout.
bool CudaBackend::State::waitMpi(MPI_Request &request,
                                 const std::string &what,
                                 std::string &error) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0;; ++i) {
    int done = 0;
    int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      error = what + ": " + mpiError("MPI_Test", rc);
      return false;
    }
    if (done)
      return true;
    if (secondsSince(start) > timeout) {
      error = what + ": timed out after " + std::to_string(int(timeout)) +
              " s (a peer rank is stuck or gone; DNNC_NCCL_TIMEOUT_S sets "
              "the limit)";
      return false;
    }
    pollPause(i);
  }
}
#endif

/// The communicator of the group of `axesMask` (null for a group of one),
/// created on first use: member 0 makes the unique id and sends it to the
/// other members over MPI.
bool CudaBackend::State::groupComm(int64_t axesMask, ncclComm_t &out,
                                   uint64_t &size, std::string &error) {
  std::vector<uint32_t> members;
  uint32_t index = 0;
  collectives->groupMembers(axesMask, members, index);
  size = members.size();
  auto it = groupComms.find(axesMask);
  if (it != groupComms.end()) {
    out = it->second;
    if (!out && size > 1) {
      error = "NCCL communicators were aborted: " + abortReason;
      return false;
    }
    return true;
  }
  out = nullptr;
  if (size == 1) {
    groupComms.emplace(axesMask, nullptr);
    return true;
  }
  if (aborted) {
    error = "NCCL communicators were aborted: " + abortReason;
    return false;
  }
  if (comm && comm->usesTcp()) {
    // Over TCP: member 0 sends the id to each member through Comm
    // (bounded by DNNC_BOOTSTRAP_TIMEOUT_S; tags apart from dnnc-run's).
    std::string what = "axesMask " + std::to_string(axesMask);
    ncclUniqueId id;
    int tag = kNcclIdTag + 1 + int(axesMask & 0xffff);
    if (index == 0) {
      ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) {
        error = "creating the NCCL communicator of " + what + ": " +
                ncclFailure("ncclGetUniqueId", rc);
        return false;
      }
      for (size_t m = 1; m < members.size(); ++m)
        if (!comm->send(&id, sizeof(id), members[m], tag, error)) {
          error = "sending the NCCL id of " + what + ": " + error;
          return false;
        }
    } else if (!comm->recv(&id, sizeof(id), members[0], tag, error)) {
      error = "receiving the NCCL id of " + what + ": " + error;
      return false;
    }
    ncclComm_t c = nullptr;
    if (!initComm(c, int(size), int(index), id, what, error))
      return false;
    groupComms.emplace(axesMask, c);
    out = c;
    return true;
  }
#if DNNC_RUNTIME_WITH_MPI
  Comm::Impl *mpi = collectives->mpi();
  if (!mpi) {
    error = "internal error: a group of " + std::to_string(size) +
            " ranks without MPI";
    return false;
  }
  std::string what = "axesMask " + std::to_string(axesMask);
  ncclUniqueId id;
  int tag = int(axesMask & 0x7fff);
  if (index == 0) {
    ncclResult_t rc = ncclGetUniqueId(&id);
    if (rc != ncclSuccess) {
      error = "creating the NCCL communicator of " + what + ": " +
              ncclFailure("ncclGetUniqueId", rc);
      return false;
    }
    std::vector<MPI_Request> requests(size - 1, MPI_REQUEST_NULL);
    for (size_t m = 1; m < members.size(); ++m) {
      int rc2 = MPI_Isend(&id, int(sizeof(id)), MPI_BYTE, int(members[m]),
                          tag, mpi->kernels, &requests[m - 1]);
      if (rc2 != MPI_SUCCESS) {
        error = mpiError("MPI_Isend", rc2);
        return false;
      }
    }
    for (MPI_Request &r : requests)
      if (!waitMpi(r, "sending the NCCL id of " + what, error))
        return false;
  } else {
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = MPI_Irecv(&id, int(sizeof(id)), MPI_BYTE, int(members[0]), tag,
                       mpi->kernels, &request);
    if (rc != MPI_SUCCESS) {
      error = mpiError("MPI_Irecv", rc);
      return false;
    }
    if (!waitMpi(request,
                 "receiving the NCCL id of " + what + " from rank " +
                     std::to_string(members[0]),
                 error))
      return false;
  }
  ncclComm_t c = nullptr;
  if (!initComm(c, int(size), int(index), id, what, error))
    return false;
  groupComms.emplace(axesMask, c);
  out = c;
  return true;
#else
  error = "internal error: a group of " + std::to_string(size) +
          " ranks without MPI";
  return false;
#endif
}

bool CudaBackend::connect(const plan::ModelInfo &model, std::string &error) {
  State &s = *state;
  s.collectives = CollectiveContext::create(s.comm, model, error);
  if (!s.collectives)
    return false;
  uint32_t size = s.collectives->size();
  if (size == 1)
    return true;
  if (s.comm && s.comm->usesTcp()) {
    // Over TCP: rank 0 sends the two ids to every rank through Comm
    // (bounded by DNNC_BOOTSTRAP_TIMEOUT_S).
    ncclUniqueId ids[2];
    if (s.collectives->rank() == 0) {
      for (ncclUniqueId &id : ids) {
        ncclResult_t rc = ncclGetUniqueId(&id);
        if (rc != ncclSuccess) {
          error = ncclFailure("ncclGetUniqueId", rc);
          return false;
        }
      }
      for (uint32_t r = 1; r < size; ++r)
        if (!s.comm->send(ids, sizeof(ids), r, kNcclIdTag, error)) {
          error = "sending the NCCL ids of pipeline transfers: " + error;
          return false;
        }
    } else if (!s.comm->recv(ids, sizeof(ids), 0, kNcclIdTag, error)) {
      error = "receiving the NCCL ids of pipeline transfers: " + error;
      return false;
    }
    cudaSetDevice(s.device);
    int rank = int(s.collectives->rank());
    return s.initComm(s.upComm, int(size), rank, ids[0],
                      "pipeline transfers toward higher ranks", error) &&
           s.initComm(s.downComm, int(size), rank, ids[1],
                      "pipeline transfers toward lower ranks", error);
  }
#if DNNC_RUNTIME_WITH_MPI
  Comm::Impl *mpi = s.collectives->mpi();
  if (!mpi) {
    error = "the cuda backend bootstraps NCCL over MPI: launch the " +
            std::to_string(size) +
            " ranks with mpirun or srun (RANK/WORLD_SIZE/MASTER_ADDR "
            "launches are not supported yet)";
    return false;
  }
  // Two unique ids from rank 0 to everybody; bounded by the timeout so that
  // a rank that failed before connect() makes the others fail, not hang.
  ncclUniqueId ids[2];
  if (s.collectives->rank() == 0)
    for (ncclUniqueId &id : ids) {
      ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) {
        error = ncclFailure("ncclGetUniqueId", rc);
        return false;
      }
    }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc =
      MPI_Ibcast(ids, int(sizeof(ids)), MPI_BYTE, 0, mpi->kernels, &request);
  if (rc != MPI_SUCCESS) {
    error = mpiError("MPI_Ibcast", rc);
    return false;
  }
  if (!s.waitMpi(request, "broadcasting the NCCL ids of pipeline transfers",
                 error))
    return false;
  cudaSetDevice(s.device);
  int rank = int(s.collectives->rank());
  return s.initComm(s.upComm, int(size), rank, ids[0],
                    "pipeline transfers toward higher ranks", error) &&
         s.initComm(s.downComm, int(size), rank, ids[1],
                    "pipeline transfers toward lower ranks", error);
#else
  error = "the cuda backend bootstraps NCCL over MPI, and this dnnc-run was "
          "built without MPI: it runs plans of one rank only";
  return false;
#endif
}

//===----------------------------------------------------------------------===//
// Pipeline transfers
//===----------------------------------------------------------------------===//

/// Checks a send (`sending`) or receive of `bytes` bytes of `buffer` with
/// `peer`, picks the communicator and stream of its direction (`up`: toward
/// the higher rank) and makes that stream wait for the work queued so far.
static bool startTransfer(CudaBackend::State &s, bool sending,
                          const DeviceBuffer &buffer, uint64_t bytes,
                          uint32_t peer, ncclComm_t &comm, cudaStream_t &stream,
                          std::string &error) {
  uint32_t rank = s.world.rank;
  const char *what = sending ? "send to" : "receive from";
  if (!s.collectives || s.collectives->size() < 2) {
    error = Backend::loneRankError(rank, what, peer);
    return false;
  }
  if (bytes > buffer.bytes || peer >= s.collectives->size() || peer == rank) {
    error = std::string("internal error: ") +
            (sending ? "send of " : "receive of ") + std::to_string(bytes) +
            " bytes with a buffer of " + std::to_string(buffer.bytes) +
            " and rank " + std::to_string(peer);
    return false;
  }
  if (s.aborted) {
    error = "NCCL communicators were aborted: " + s.abortReason;
    return false;
  }
  cudaSetDevice(s.device);
  // A message travels up from a lower rank to a higher one.
  bool up = sending ? peer > rank : peer < rank;
  comm = up ? s.upComm : s.downComm;
  stream = up ? s.upStream : s.downStream;
  // The transfer follows everything already queued on the main stream.
  cudaError_t rc = cudaEventRecord(s.ready, s.stream);
  if (rc == cudaSuccess)
    rc = cudaStreamWaitEvent(stream, s.ready, 0);
  if (rc != cudaSuccess) {
    error = std::string(what) + " rank " + std::to_string(peer) + ": " +
            cudaFailure("cudaStreamWaitEvent", rc);
    return false;
  }
  return true;
}

bool CudaBackend::send(const DeviceBuffer &buffer, uint64_t bytes,
                       uint32_t peer, uint32_t tag, std::string &error) {
  State &s = *state;
  ncclComm_t c;
  cudaStream_t st;
  if (!startTransfer(s, /*sending=*/true, buffer, bytes, peer, c, st, error))
    return false;
  // NCCL has no tags: messages between two ranks in one direction arrive in
  // order, which is what the tags of a schedule express.
  ncclResult_t nrc = ncclSend(buffer.data, bytes, ncclUint8, int(peer), c, st);
  if (nrc != ncclSuccess && nrc != ncclInProgress) {
    error = "send to rank " + std::to_string(peer) + " (tag " +
            std::to_string(tag) + "): " + ncclFailure("ncclSend", nrc, c);
    return false;
  }
  if (!s.settle(c, "ncclSend", error)) {
    s.abortAll(error);
    return false;
  }
  s.sendsPending = true;
  return true;
}

bool CudaBackend::recv(const DeviceBuffer &buffer, uint64_t bytes,
                       uint32_t peer, uint32_t tag, std::string &error) {
  State &s = *state;
  ncclComm_t c;
  cudaStream_t st;
  if (!startTransfer(s, /*sending=*/false, buffer, bytes, peer, c, st, error))
    return false;
  std::string what = "receive of " + std::to_string(bytes) +
                     " bytes from rank " + std::to_string(peer) + " (tag " +
                     std::to_string(tag) + ")";
  ncclResult_t nrc = ncclRecv(buffer.data, bytes, ncclUint8, int(peer), c, st);
  if (nrc != ncclSuccess && nrc != ncclInProgress) {
    error = what + ": " + ncclFailure("ncclRecv", nrc, c);
    return false;
  }
  if (!s.settle(c, "ncclRecv", error)) {
    error = what + ": " + error;
    s.abortAll(error);
    return false;
  }
  // Waits for the whole direction stream: earlier sends toward the same
  // side complete first (they were issued first).
  return s.wait(st, what, error);
}

bool CudaBackend::waitSends(std::string &error) {
  State &s = *state;
  if (!s.sendsPending)
    return true;
  cudaSetDevice(s.device);
  s.sendsPending = false;
  return s.wait(s.upStream, "waiting for sends", error) &&
         s.wait(s.downStream, "waiting for sends", error);
}

//===----------------------------------------------------------------------===//
// Collective kernels
//===----------------------------------------------------------------------===//

namespace {

/// The group, element size and communicator of a collective call.
struct Group {
  ncclComm_t comm = nullptr;
  uint64_t size = 1;
  uint32_t index = 0;
  uint64_t elementSize = 0;
};

/// Validates `axesMask` and `dtype`, and finds (or creates) the group's
/// communicator.
bool resolve(CudaCall &call, int64_t axesMask, int32_t dtype, Group &g) {
  // A function calling NCCL is captured into a CUDA graph only in
  // GraphMode::All.
  call.state->calledCollective = true;
  g.elementSize = uint64_t(plan::dtypeByteSize(dtype));
  if (g.elementSize == 0)
    return call.fail("unsupported dtype " + std::to_string(dtype));
  CollectiveContext *context = call.state->collectives.get();
  size_t axes = context ? context->numAxes() : 1;
  if (axesMask < 0 || axesMask >= (int64_t(1) << axes))
    return call.fail("axesMask " + std::to_string(axesMask) +
                     " is not a set of mesh axes (the mesh has " +
                     std::to_string(axes) + " axes: 0 <= axesMask < " +
                     std::to_string(int64_t(1) << axes) + ")");
  if (!context)
    return true; // Not connected: a process alone.
  std::string error;
  if (!call.state->groupComm(axesMask, g.comm, g.size, error))
    return call.fail(error);
  g.index = uint32_t(context->groupIndex(axesMask));
  return true;
}

/// The NCCL type that reduces `dtype`, or fails.
bool reduceType(CudaCall &call, int32_t dtype, int32_t op, ncclDataType_t &type,
                ncclRedOp_t &redOp) {
  bool floating = true;
  switch (DataType(dtype)) {
  case DataType::Float:
    type = ncclFloat32;
    break;
  case DataType::Double:
    type = ncclFloat64;
    break;
  case DataType::Float16:
    type = ncclFloat16;
    break;
  case DataType::BFloat16:
    type = ncclBfloat16;
    break;
  case DataType::Int8:
    type = ncclInt8, floating = false;
    break;
  case DataType::UInt8:
    type = ncclUint8, floating = false;
    break;
  case DataType::Int32:
    type = ncclInt32, floating = false;
    break;
  case DataType::UInt32:
    type = ncclUint32, floating = false;
    break;
  case DataType::Int64:
    type = ncclInt64, floating = false;
    break;
  case DataType::UInt64:
    type = ncclUint64, floating = false;
    break;
  default:
    return call.fail("dtype " + plan::dtypeName(dtype) +
                     " cannot be reduced by NCCL");
  }
  switch (op) {
  case DNNC_RT_REDUCE_SUM:
    redOp = ncclSum;
    return true;
  case DNNC_RT_REDUCE_MAX:
    redOp = ncclMax;
    return true;
  case DNNC_RT_REDUCE_MIN:
    redOp = ncclMin;
    return true;
  case DNNC_RT_REDUCE_PROD:
    redOp = ncclProd;
    return true;
  case DNNC_RT_REDUCE_MEAN:
    if (!floating)
      return call.fail("mean of an integer dtype is not supported on cuda");
    redOp = ncclAvg;
    return true;
  default:
    return call.fail("invalid op " + std::to_string(op) +
                     " (0 sum, 1 max, 2 min, 3 prod, 4 mean)");
  }
}

/// Settles an NCCL call on the group's communicator (the communicators are
/// non-blocking).
bool settled(CudaCall &call, const Group &g, const char *what,
             ncclResult_t rc) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    return call.fail(ncclFailure(what, rc, g.comm));
  std::string error;
  if (!call.state->settle(g.comm, what, error)) {
    call.state->abortAll(error);
    return call.fail(error);
  }
  return true;
}

/// A device-to-device copy of `bytes` on the stream (nothing when in == out).
bool copyLocal(CudaCall &call, void *out, const void *in, uint64_t bytes) {
  if (out == in || bytes == 0)
    return true;
  return cudaOk(call, "cudaMemcpyAsync",
                cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice,
                                call.state->stream));
}

/// Copies `rows` rows of `width` bytes from `src` (row pitch `srcPitch`) to
/// `dst` (row pitch `dstPitch`) on the stream.
bool copyRows(CudaCall &call, void *dst, uint64_t dstPitch, const void *src,
              uint64_t srcPitch, uint64_t width, uint64_t rows) {
  return cudaOk(call, "cudaMemcpy2DAsync",
                cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows,
                                  cudaMemcpyDeviceToDevice,
                                  call.state->stream));
}

/// Stream-ordered scratch memory, freed on the stream at scope end.
class Scratch {
public:
  Scratch(CudaCall &call, uint64_t bytes) : call(call) {
    cudaError_t rc =
        cudaMallocAsync(&data, bytes ? bytes : 1, call.state->stream);
    if (rc != cudaSuccess) {
      data = nullptr;
      call.fail("scratch of " + std::to_string(bytes) +
                " bytes: " + cudaFailure("cudaMallocAsync", rc));
    }
  }
  ~Scratch() {
    if (data)
      cudaFreeAsync(data, call.state->stream);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  /// The memory; null when the allocation failed (the call has failed).
  char *get() const { return static_cast<char *>(data); }

private:
  CudaCall &call;
  void *data = nullptr;
};

} // namespace

extern "C" void dnnc_rt_cuda_all_reduce(int64_t axesMask, int32_t dtype,
                                        int32_t op, const void *in, void *out,
                                        int64_t count) {
  CudaCall call("dnnc_rt_cuda_all_reduce", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"op", op},
                 {"count", count}});
  });
  Group g;
  ncclDataType_t type;
  ncclRedOp_t redOp;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !reduceType(call, dtype, op, type, redOp) ||
      !checkedProduct(call, {count}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  if (g.size == 1) {
    copyLocal(call, out, in, n * g.elementSize);
    return;
  }
  settled(call, g, "ncclAllReduce",
          ncclAllReduce(in, out, n, type, redOp, g.comm, call.state->stream));
}

extern "C" void dnnc_rt_cuda_all_gather(int64_t axesMask, int32_t dtype,
                                        const void *in, void *out,
                                        int64_t outer, int64_t chunk) {
  CudaCall call("dnnc_rt_cuda_all_gather", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"outer", outer},
                 {"chunk", chunk}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !checkedProduct(call, {outer, chunk}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize, bytes = n * es;
  if (g.size == 1) {
    copyLocal(call, out, in, bytes);
    return;
  }
  if (outer == 1) {
    settled(
        call, g, "ncclAllGather",
        ncclAllGather(in, out, bytes, ncclUint8, g.comm, call.state->stream));
    return;
  }
  // NCCL gathers member blocks one after the other ([G, outer, chunk]);
  // interleave them into [outer, G, chunk].
  Scratch tmp(call, bytes * g.size);
  if (!tmp.get() || !settled(call, g, "ncclAllGather",
                             ncclAllGather(in, tmp.get(), bytes, ncclUint8,
                                           g.comm, call.state->stream)))
    return;
  uint64_t row = uint64_t(chunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, static_cast<char *>(out) + m * row, row * g.size,
                  tmp.get() + m * bytes, row, row, uint64_t(outer)))
      return;
}

extern "C" void dnnc_rt_cuda_reduce_scatter(int64_t axesMask, int32_t dtype,
                                            int32_t op, const void *in,
                                            void *out, int64_t outer,
                                            int64_t chunk) {
  CudaCall call("dnnc_rt_cuda_reduce_scatter", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"op", op},
                 {"outer", outer},
                 {"chunk", chunk}});
  });
  Group g;
  ncclDataType_t type;
  ncclRedOp_t redOp;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !reduceType(call, dtype, op, type, redOp) ||
      !checkedProduct(call, {outer, chunk}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize;
  if (g.size == 1) {
    copyLocal(call, out, in, n * es);
    return;
  }
  if (outer == 1) {
    settled(
        call, g, "ncclReduceScatter",
        ncclReduceScatter(in, out, n, type, redOp, g.comm, call.state->stream));
    return;
  }
  // NCCL scatters contiguous blocks ([G, outer, chunk]); gather member m's
  // columns of [outer, G, chunk] into block m first.
  Scratch tmp(call, n * es * g.size);
  if (!tmp.get())
    return;
  uint64_t row = uint64_t(chunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, tmp.get() + m * n * es, row,
                  static_cast<const char *>(in) + m * row, row * g.size, row,
                  uint64_t(outer)))
      return;
  settled(call, g, "ncclReduceScatter",
          ncclReduceScatter(tmp.get(), out, n, type, redOp, g.comm,
                            call.state->stream));
}

extern "C" void dnnc_rt_cuda_all_to_all(int64_t axesMask, int32_t dtype,
                                        const void *in, void *out,
                                        int64_t outer, int64_t splitChunk,
                                        int64_t inner) {
  CudaCall call("dnnc_rt_cuda_all_to_all", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"outer", outer},
                 {"splitChunk", splitChunk},
                 {"inner", inner}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !checkedProduct(call, {outer, splitChunk}, g.elementSize, n))
    return;
  if (inner < 1 || (n && n % uint64_t(inner) != 0)) {
    call.fail("inner must be >= 1 and divide outer * splitChunk");
    return;
  }
  if (n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize, block = n * es;
  if (g.size == 1) {
    copyLocal(call, out, in, block);
    return;
  }
  // Pack the blocks ([outer, G, splitChunk] -> [G, outer, splitChunk]),
  // exchange them, and unpack ([G, X, inner] -> [X, G, inner]).
  Scratch packed(call, block * g.size), received(call, block * g.size);
  if (!packed.get() || !received.get())
    return;
  uint64_t srcRow = uint64_t(splitChunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, packed.get() + m * block, srcRow,
                  static_cast<const char *>(in) + m * srcRow, srcRow * g.size,
                  srcRow, uint64_t(outer)))
      return;
  ncclResult_t rc = ncclGroupStart();
  for (uint64_t m = 0; m < g.size && rc == ncclSuccess; ++m) {
    rc = ncclSend(packed.get() + m * block, block, ncclUint8, int(m), g.comm,
                  call.state->stream);
    if (rc == ncclSuccess || rc == ncclInProgress)
      rc = ncclRecv(received.get() + m * block, block, ncclUint8, int(m),
                    g.comm, call.state->stream);
    if (rc == ncclInProgress)
      rc = ncclSuccess;
  }
  ncclResult_t end = ncclGroupEnd();
  if (!settled(call, g, "ncclSend/ncclRecv", rc != ncclSuccess ? rc : end))
    return;
  uint64_t x = n / uint64_t(inner), dstRow = uint64_t(inner) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, static_cast<char *>(out) + m * dstRow, dstRow * g.size,
                  received.get() + m * block, dstRow, dstRow, x))
      return;
}

extern "C" void dnnc_rt_cuda_broadcast(int64_t axesMask, int32_t dtype,
                                       void *buf, int64_t count, int64_t root) {
  CudaCall call("dnnc_rt_cuda_broadcast", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"count", count},
                 {"root", root}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !checkedProduct(call, {count}, g.elementSize, n))
    return;
  if (root < 0 || uint64_t(root) >= g.size) {
    call.fail("root " + std::to_string(root) +
              " is not a member of a group "
              "of " +
              std::to_string(g.size));
    return;
  }
  if (n == 0 || g.size == 1)
    return;
  if (!buf) {
    call.fail("null buffer");
    return;
  }
  settled(call, g, "ncclBroadcast",
          ncclBroadcast(buf, buf, n * g.elementSize, ncclUint8, int(root),
                        g.comm, call.state->stream));
}

} // namespace dnnc::rt
