//===- CudaBackendTest.cpp - The cuda backend without a GPU ----*- C++ -*-===//
//
// Built only with DNNC_RUNTIME_WITH_CUDA. What can be checked on a machine
// without a GPU: the target is listed, creating the backend fails in one
// clear line, a cuda plan on the cpu backend is refused, and the kernels
// fail cleanly outside a run. Where a device is present, a buffer round trip
// runs instead of the no-device check.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/CudaBackend.h"
#include "TestUtil.h"
#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/CpuBackend.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/Session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <dlfcn.h>

using namespace dnnc;
using namespace dnnc::test;

namespace {

/// The backend for target "cuda" of a world of one rank, or null with
/// `error`.
std::unique_ptr<rt::Backend> cudaBackend(std::string &error) {
  rt::WorldInfo world;
  return rt::createBackend("cuda", world, error);
}

} // namespace

TEST(CudaBackend, SupportedTargets) {
  EXPECT_TRUE(rt::cudaCompiledIn());
  std::vector<std::string> targets = rt::supportedTargets();
  EXPECT_NE(std::find(targets.begin(), targets.end(), "cuda"), targets.end());
  // The kernels resolve from the executable, as they must for the rank
  // code dnnc-run dlopen()s.
  EXPECT_EQ(rt::cudaKernelNames().size(), 19u);
  for (const std::string &name : rt::cudaKernelNames())
    EXPECT_NE(::dlsym(RTLD_DEFAULT, name.c_str()), nullptr) << name;
}

TEST(CudaBackend, NoDeviceIsAClearError) {
  std::string error;
  std::unique_ptr<rt::Backend> backend = cudaBackend(error);
  if (backend)
    GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(error.rfind("no CUDA device for rank 0: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(CudaBackend, DeviceBufferRoundTrip) {
  std::string error;
  std::unique_ptr<rt::Backend> backend = cudaBackend(error);
  if (!backend)
    GTEST_SKIP() << error;
  EXPECT_STREQ(backend->target(), "cuda");
  plan::ModelInfo model;
  model.target = "cuda";
  model.worldSize = 1;
  ASSERT_TRUE(backend->connect(model, error)) << error;
  rt::DeviceBuffer buffer;
  ASSERT_TRUE(backend->allocate(100, buffer, error)) << error;
  std::vector<uint8_t> zeros(100, 1);
  ASSERT_TRUE(backend->copyToHost(zeros.data(), buffer, 100, error)) << error;
  EXPECT_EQ(zeros, std::vector<uint8_t>(100, 0));
  std::vector<uint8_t> data(100), back(100);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 7);
  ASSERT_TRUE(backend->copyToDevice(buffer, data.data(), 100, error)) << error;
  ASSERT_TRUE(backend->copyToHost(back.data(), buffer, 100, error)) << error;
  EXPECT_EQ(back, data);
  EXPECT_FALSE(backend->send(buffer, 100, 1, 0, error));
  EXPECT_NE(error.find("world of one rank"), std::string::npos) << error;
  backend->deallocate(buffer);
  EXPECT_EQ(buffer.data, nullptr);
}

TEST(CudaBackend, CudaPlanOnTheCpuBackend) {
  plan::Plan p =
      makeAddMatmulPlan("code", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  p.model.target = "cuda";
  rt::WorldInfo world;
  rt::CpuBackend cpu(world);
  std::string error;
  EXPECT_EQ(rt::Session::create(p, 0, cpu, error), nullptr);
  EXPECT_EQ(error, "plan.bin was built for target 'cuda'; this backend runs "
                   "'cpu'");
}

TEST(CudaBackend, KernelsOutsideARunDoNothing) {
  // No active backend: the kernels record an error (discarded by the next
  // run) and touch no memory.
  EXPECT_EQ(dnnc_rt_cuda_stream(), nullptr);
  float x = 1;
  dnnc_rt_cuda_all_reduce(0, 1, DNNC_RT_REDUCE_SUM, &x, &x, 1);
  dnnc_rt_cuda_broadcast(0, 1, &x, 1, 0);
  EXPECT_EQ(x, 1);
}
