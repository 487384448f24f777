//===- CpuBackendTest.cpp - Running rank code on the CPU -------*- C++ -*-===//
//
// End-to-end runs of real shared objects (test/Inputs/test_code.c, compiled
// at build time) through the same Backend/Session path dnnc-run uses, the
// runtime kernels, input binding and rank detection.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/CpuBackend.h"
#include "TestUtil.h"
#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/DnncRun.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/Session.h"
#include "dnnc/Runtime/TensorBlock.h"
#include "dnnc/Runtime/TensorProto.h"
#include "dnnc/Runtime/World.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace dnnc;
using namespace dnnc::test;
using plan::BufferRole;
using plan::DataType;
using rt::HostTensor;

namespace {

const std::vector<float> kW = {1, 0, 2, -1, 0.5, 1, 0, 3, -2, 1, 1, 0};
const std::vector<float> kX = {1, 2, 3, 4, 5, 6};
const std::vector<float> kY = {0.5, -1, 2, 0, 1, -3};

/// (x + y) @ w, computed naively.
std::vector<float> addMatmulReference() {
  std::vector<float> out(8, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        out[i * 4 + j] += (kX[i * 3 + k] + kY[i * 3 + k]) * kW[k * 4 + j];
  return out;
}

std::string testCode() {
  std::string code = readBytes(testCodePath("test_code"));
  EXPECT_FALSE(code.empty()) << "missing " << testCodePath("test_code");
  return code;
}

/// A one-rank plan whose buffers are the model inputs then the outputs.
plan::Plan planFor(const std::string &code, const std::string &entry,
                   std::vector<plan::TensorDesc> inputs,
                   std::vector<plan::TensorDesc> outputs) {
  plan::Plan p;
  p.model.target = "cpu";
  p.model.inputs = std::move(inputs);
  p.model.outputs = std::move(outputs);
  plan::RankProgram r;
  r.code = code;
  for (size_t i = 0; i < p.model.inputs.size(); ++i)
    r.buffers.push_back(
        ioBuffer(BufferRole::Input, uint32_t(i), p.model.inputs[i]));
  for (size_t i = 0; i < p.model.outputs.size(); ++i)
    r.buffers.push_back(
        ioBuffer(BufferRole::Output, uint32_t(i), p.model.outputs[i]));
  plan::setSingleFunction(r, entry);
  p.ranks.push_back(std::move(r));
  return p;
}

/// A plan written and re-read (so every run goes through the reader), and
/// a session of its rank 0 on a backend of its target.
struct OpenPlan {
  plan::Plan plan;
  std::unique_ptr<rt::Backend> backend;
  std::unique_ptr<rt::Session> session;

  /// Opens `p`; returns false with `error` on failure.
  bool open(const plan::Plan &p, std::string &error) {
    std::string bytes;
    if (!plan::encodePlan(p, bytes, error) ||
        !plan::decodePlan(bytes, plan, error))
      return false;
    rt::WorldInfo world;
    backend = rt::createBackend(plan.model.target, world, error);
    if (backend)
      session = rt::Session::create(plan, 0, *backend, error);
    return session != nullptr;
  }
};

/// Runs rank 0 of `p` on `inputs`; returns false with `error` on failure.
bool runPlan(const plan::Plan &p, const std::vector<HostTensor> &inputs,
             std::vector<HostTensor> &outputs, std::string &error) {
  OpenPlan open;
  return open.open(p, error) && open.session->setInputs(inputs, error) &&
         open.session->run(error) &&
         open.session->getModelOutputs(outputs, error);
}

TEST(CpuBackend, AddMatmulThroughSession) {
  plan::Plan p = makeAddMatmulPlan(testCode(), kW);
  std::vector<HostTensor> outputs;
  std::string error;
  ASSERT_TRUE(
      runPlan(p, {floatTensor("x", {2, 3}, kX), floatTensor("y", {2, 3}, kY)},
              outputs, error))
      << error;
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "out");
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(floatValues(outputs[0]), addMatmulReference());
}

/// x: float32[4x3] for the pipelined plans.
const std::vector<float> kX4 = {1, 2, 3, 4, 5, 6, -1, 0.5, 2, 0, -2, 1};

TEST(CpuBackend, PipelineOneRankTwoFunctionsTwoMicrobatches) {
  std::string error;
  OpenPlan open;
  ASSERT_TRUE(open.open(makePipelinePlan(testCode(), kW), error)) << error;
  rt::Session *session = open.session.get();
  ASSERT_TRUE(session->setInputs({floatTensor("x", {4, 3}, kX4)}, error))
      << error;
  ASSERT_TRUE(session->run(error)) << error;
  // One block per micro-batch, rows 0-1 and 2-3 of the output.
  std::vector<plan::OutputBlock> blocks = session->getOutputBlocks();
  ASSERT_EQ(blocks.size(), 2u);
  for (uint32_t mb = 0; mb < 2; ++mb) {
    EXPECT_EQ(blocks[mb].microbatch, mb);
    EXPECT_EQ(blocks[mb].offsets, (std::vector<int64_t>{2 * mb, 0}));
    EXPECT_EQ(blocks[mb].shape, (std::vector<int64_t>{2, 4}));
    EXPECT_TRUE(blocks[mb].owns);
  }
  std::vector<float> want = pipelineReference(kX4, kW);
  std::vector<HostTensor> local;
  ASSERT_TRUE(session->getOutputs(local, error)) << error;
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(floatValues(local[1]),
            std::vector<float>(want.begin() + 8, want.end()));
  std::vector<HostTensor> outputs;
  ASSERT_TRUE(session->getModelOutputs(outputs, error)) << error;
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(floatValues(outputs[0]), want);
  // A second run gives the same result.
  ASSERT_TRUE(session->run(error) && session->getModelOutputs(outputs, error))
      << error;
  EXPECT_EQ(floatValues(outputs[0]), want);
}

// A sum over micro-batches: the accumulator starts at zero in every run,
// and its update trades places with it right after each call, so that the
// next micro-batch and the final part read the sum so far.
TEST(CpuBackend, AccumulatorSumsMicrobatchesOfEachRun) {
  plan::Plan p;
  p.model.target = "cpu";
  p.model.inputs = {desc("x", DataType::Float, {4, 3})};
  p.model.outputs = {desc("sum", DataType::Float, {3})};
  p.model.microbatches = 2;
  p.model.inputMicrobatchDims = {0};
  p.model.outputMicrobatchDims = {-1};
  plan::RankProgram r;
  r.code = testCode();
  plan::BufferDesc x = ioBuffer(BufferRole::Input, 0, p.model.inputs[0]);
  x.tensor.shape = {2, 3};
  x.size = 24;
  plan::BufferDesc acc;
  acc.role = BufferRole::Accumulator;
  acc.tensor = desc("accumulator 0", DataType::Float, {3});
  acc.size = 12;
  plan::BufferDesc update = acc;
  update.role = BufferRole::Update;
  update.index = 1;
  r.buffers = {x, acc, update,
               ioBuffer(BufferRole::Output, 0, p.model.outputs[0])};
  r.functions = {{"accumulate_columns", {0, 1, 2}},
                 {"read_accumulator", {1, 3}}};
  for (uint32_t mb = 0; mb < 2; ++mb)
    r.steps.push_back({plan::StepKind::Compute, 0, mb, 0, 0});
  r.steps.push_back({plan::StepKind::Compute, 1, 0, 0, 0});
  p.ranks.push_back(std::move(r));
  std::vector<float> want(3, 0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      want[j] += kX4[3 * i + j];
  std::string error;
  OpenPlan open;
  ASSERT_TRUE(open.open(p, error)) << error;
  rt::Session *session = open.session.get();
  EXPECT_TRUE(session->isTraining());
  ASSERT_TRUE(session->setInputs({floatTensor("x", {4, 3}, kX4)}, error))
      << error;
  for (int run = 0; run < 2; ++run) {
    std::vector<HostTensor> outputs;
    ASSERT_TRUE(session->run(error) &&
                session->getModelOutputs(outputs, error))
        << error;
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(floatValues(outputs[0]), want) << "run " << run;
  }
}

TEST(CpuBackend, PipelineThroughDnncRunMain) {
  TempDir dir;
  std::string error, bytes;
  ASSERT_TRUE(plan::writePlan(makePipelinePlan(testCode(), kW),
                              dir.file("plan.bin"), error))
      << error;
  ASSERT_TRUE(
      rt::encodeTensorProto(floatTensor("x", {4, 3}, kX4), bytes, error));
  writeBytes(dir.file("x.pb"), bytes);
  std::string out = dir.file("out"), planPath = dir.file("plan.bin"),
              xPath = dir.file("x.pb");
  const char *argv[] = {"dnnc-run",    planPath.c_str(), "--input",
                        xPath.c_str(), "--output-dir",   out.c_str()};
  std::ostringstream stdoutText, stderrText;
  ASSERT_EQ(rt::dnncRunMain(6, argv, stdoutText, stderrText), 0)
      << stderrText.str();
  HostTensor result;
  ASSERT_TRUE(rt::decodeTensorProto(readBytes(dir.file("out/output_0.pb")),
                                    result, error))
      << error;
  EXPECT_EQ(result.shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(floatValues(result), pipelineReference(kX4, kW));
}

TEST(CpuBackend, PipelineStepErrorNamesRankAndStep) {
  plan::Plan p = makePipelinePlan(testCode(), kW);
  // bad_gemm misuses the GEMM kernel (it reads buffer 0, writes buffer 1).
  p.ranks[0].functions[1].symbol = "bad_gemm";
  std::vector<HostTensor> outputs;
  std::string error;
  EXPECT_FALSE(runPlan(p, {floatTensor("x", {4, 3}, kX4)}, outputs, error));
  EXPECT_NE(error.find("rank 0 step 1 (compute bad_gemm (mb 0)): runtime "
                       "kernel dnnc_rt_gemm_f32"),
            std::string::npos)
      << error;
  // A missing function symbol is named at load time.
  p.ranks[0].functions[1].symbol = "no_such_stage";
  EXPECT_FALSE(runPlan(p, {floatTensor("x", {4, 3}, kX4)}, outputs, error));
  EXPECT_NE(error.find("the code of rank 0 does not export the symbol "
                       "'no_such_stage' of function 1"),
            std::string::npos)
      << error;
}

TEST(CpuBackend, SendAndRecvNeedSeveralRanks) {
  rt::WorldInfo world;
  rt::CpuBackend backend(world);
  rt::DeviceBuffer buffer;
  std::string error;
  ASSERT_TRUE(backend.allocate(16, buffer, error)) << error;
  EXPECT_FALSE(backend.send(buffer, 16, 1, 0, error));
  EXPECT_NE(error.find("rank 0 cannot send to rank 1: it runs in a world of "
                       "one rank"),
            std::string::npos)
      << error;
  EXPECT_FALSE(backend.recv(buffer, 16, 1, 0, error));
  EXPECT_NE(error.find("cannot receive from rank 1"), std::string::npos)
      << error;
  EXPECT_TRUE(backend.waitSends(error)) << error;
  backend.deallocate(buffer);
}

TEST(CpuBackend, EndToEndThroughDnncRunMain) {
  TempDir dir;
  std::string error;
  ASSERT_TRUE(plan::writePlan(makeAddMatmulPlan(testCode(), kW),
                              dir.file("plan.bin"), error))
      << error;
  // y first and named, x as an unnamed .npy: bound by name, then position.
  std::string bytes;
  ASSERT_TRUE(rt::encodeTensorProto(floatTensor("y", {2, 3}, kY), bytes, error,
                                    rt::TensorProtoEncoding::TypedFields));
  writeBytes(dir.file("y.pb"), bytes);
  ASSERT_TRUE(
      rt::encodeTensorProto(floatTensor("x", {2, 3}, kX), bytes, error));
  writeBytes(dir.file("x.pb"), bytes);

  std::string out = dir.file("out/nested");
  std::string planPath = dir.file("plan.bin"), xPath = dir.file("x.pb"),
              yPath = dir.file("y.pb");
  const char *argv[] = {
      "dnnc-run",    planPath.c_str(), "--input",   yPath.c_str(), "--input",
      xPath.c_str(), "--output-dir",   out.c_str(), "--repeat",    "3"};
  std::ostringstream stdoutText, stderrText;
  ASSERT_EQ(rt::dnncRunMain(10, argv, stdoutText, stderrText), 0)
      << stderrText.str();
  EXPECT_EQ(stderrText.str(), "");
  EXPECT_NE(stdoutText.str().find("time: mean "), std::string::npos);
  EXPECT_NE(stdoutText.str().find(", 3 runs"), std::string::npos);
  EXPECT_EQ(dir.list("out/nested"), std::vector<std::string>{"output_0.pb"});
  HostTensor result;
  ASSERT_TRUE(
      rt::decodeTensorProto(readBytes(out + "/output_0.pb"), result, error))
      << error;
  EXPECT_EQ(result.name, "out");
  EXPECT_EQ(result.dtype, int32_t(DataType::Float));
  EXPECT_EQ(result.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(floatValues(result), addMatmulReference());
}

TEST(CpuBackend, LibmResolvesForLoadedCode) {
  plan::Plan p =
      planFor(testCode(), "math_fns", {desc("x", DataType::Float, {4})},
              {desc("out", DataType::Float, {4, 4})});
  std::vector<float> x = {-1.5f, 0.0f, 0.25f, 2.0f};
  std::vector<HostTensor> outputs;
  std::string error;
  ASSERT_TRUE(runPlan(p, {floatTensor("x", {4}, x)}, outputs, error)) << error;
  std::vector<float> got = floatValues(outputs[0]);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(got[4 * i + 0], std::exp(x[i]), 1e-5f * std::exp(x[i]));
    EXPECT_NEAR(got[4 * i + 1], std::erf(x[i]), 1e-6f);
    EXPECT_NEAR(got[4 * i + 2], std::tanh(x[i]), 1e-6f);
    EXPECT_NEAR(got[4 * i + 3], std::pow(std::fabs(x[i]), x[i]), 1e-5f);
  }
}

TEST(CpuBackend, BatchedF64WithBroadcastOperand) {
  plan::Plan p = planFor(testCode(), "batched_f64",
                         {desc("a", DataType::Double, {2, 2, 3})},
                         {desc("c", DataType::Double, {2, 2, 2})});
  std::vector<double> b = {1, 2, 3, 4, 5, 6};
  p.ranks[0].buffers.insert(p.ranks[0].buffers.begin() + 1,
                            weightBuffer(p.ranks[0],
                                         desc("b", DataType::Double, {3, 2}),
                                         bytesOf(b)));
  plan::setSingleFunction(p.ranks[0], "batched_f64");
  std::vector<double> a = {1, 0, 0, 0, 1, 0, 1, 1, 1, 2, 0, -1};
  HostTensor in{"a", int32_t(DataType::Double), {2, 2, 3}, bytesOf(a)};
  std::vector<HostTensor> outputs;
  std::string error;
  ASSERT_TRUE(runPlan(p, {in}, outputs, error)) << error;
  std::vector<double> c(8);
  std::memcpy(c.data(), outputs[0].data.data(), 64);
  EXPECT_EQ(c, (std::vector<double>{1, 2, 3, 4, 9, 12, -3, -2}));
}

TEST(CpuBackend, KernelMisuseIsARunError) {
  plan::Plan p =
      planFor(testCode(), "bad_gemm", {desc("x", DataType::Float, {2, 3})},
              {desc("out", DataType::Float, {2, 4})});
  std::vector<HostTensor> outputs;
  std::string error;
  EXPECT_FALSE(runPlan(p, {floatTensor("x", {2, 3}, kX)}, outputs, error));
  EXPECT_NE(error.find("rank 0 (entry bad_gemm): runtime kernel "
                       "dnnc_rt_gemm_f32(batch=1, M=-2"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("negative argument"), std::string::npos) << error;
}

TEST(CpuBackend, GemmEpilogueMisuseIsARunError) {
  plan::Plan p =
      planFor(testCode(), "bad_gemm_bias", {desc("x", DataType::Float, {2, 3})},
              {desc("out", DataType::Float, {2, 4})});
  std::vector<HostTensor> outputs;
  std::string error;
  EXPECT_FALSE(runPlan(p, {floatTensor("x", {2, 3}, kX)}, outputs, error));
  EXPECT_NE(error.find("runtime kernel dnnc_rt_gemm_bias_f32: unknown "
                       "activation 7"),
            std::string::npos)
      << error;
}

TEST(CpuBackend, MissingKernelIsNamed) {
  std::string code = readBytes(testCodePath("missing_kernel"));
  ASSERT_FALSE(code.empty());
  plan::Plan p = planFor(code, "entry", {}, {desc("o", DataType::Float, {1})});
  std::vector<HostTensor> outputs;
  std::string error;
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("cannot load the code of rank 0: undefined symbol: "
                       "dnnc_rt_not_a_kernel"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("runtime kernels provided: dnnc_rt_gemm_f32, "
                       "dnnc_rt_gemm_f64"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("/proc/self/fd"), std::string::npos) << error;
}

TEST(CpuBackend, MissingEntryAndBadCode) {
  std::vector<HostTensor> outputs;
  std::string error;
  plan::Plan p = planFor(testCode(), "no_such_entry", {},
                         {desc("o", DataType::Float, {1})});
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("does not export the symbol 'no_such_entry' of "
                       "function 0"),
            std::string::npos)
      << error;
  // A function of a library the object depends on is not its entry.
  p.ranks[0].functions[0].symbol = "malloc";
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("does not export the symbol 'malloc'"),
            std::string::npos)
      << error;
  p.ranks[0].code = "definitely not ELF";
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("the code of rank 0 is not an ELF shared object"),
            std::string::npos)
      << error;
  std::string object = testCode();
  object[16] = 1; // e_type = ET_REL
  p.ranks[0].code = object;
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("not a shared object"), std::string::npos) << error;
  std::string truncated = testCode().substr(0, 200);
  p.ranks[0].code = truncated;
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("cannot load the code of rank 0"), std::string::npos)
      << error;
}

TEST(CpuBackend, TargetAndOutputChecks) {
  std::string error;
  rt::WorldInfo world;
#if DNNC_RUNTIME_WITH_CUDA
  // CudaBackendTest.cpp covers the cuda target of a CUDA build.
  EXPECT_EQ(rt::createBackend("tpu", world, error), nullptr);
  EXPECT_EQ(error, "plan.bin was built for target 'tpu'; this dnnc-run "
                   "supports: cpu, cuda");
  EXPECT_EQ(rt::supportedTargets(), (std::vector<std::string>{"cpu", "cuda"}));
#else
  EXPECT_EQ(rt::createBackend("cuda", world, error), nullptr);
  EXPECT_EQ(error, "plan.bin was built for target 'cuda'; this dnnc-run "
                   "supports: cpu");
  EXPECT_EQ(rt::supportedTargets(), std::vector<std::string>{"cpu"});
#endif
  EXPECT_EQ(rt::cpuKernelNames(),
            (std::vector<std::string>{
                "dnnc_rt_gemm_f32",       "dnnc_rt_gemm_f64",
                "dnnc_rt_gemm_tf32",      "dnnc_rt_gemm_bf16",
                "dnnc_rt_gemm_f16",       "dnnc_rt_gemm_bias_f32",
                "dnnc_rt_gemm_bias_f64",  "dnnc_rt_gemm_bias_tf32",
                "dnnc_rt_gemm_bias_bf16", "dnnc_rt_gemm_bias_f16",
                "dnnc_rt_attention_f32",  "dnnc_rt_attention_bf16",
                "dnnc_rt_attention_f16",  "dnnc_rt_all_reduce",
                "dnnc_rt_all_gather",     "dnnc_rt_reduce_scatter",
                "dnnc_rt_all_to_all",     "dnnc_rt_broadcast",
                "dnnc_rt_group_index",    "dnnc_rt_microbatch_index",
                "dnnc_rt_send",           "dnnc_rt_recv",
                "dnnc_rt_workspace"}));

  // A single-rank plan must produce every output: the writer, the reader
  // and Session::create (for plans that went through neither) refuse it.
  plan::Plan p = makeAddMatmulPlan(testCode(), kW);
  p.model.outputs.push_back(desc("unused", DataType::Float, {1}));
  std::vector<HostTensor> outputs;
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("model output 'unused' float32[1] is not written by "
                       "any rank"),
            std::string::npos)
      << error;
  rt::WorldInfo one;
  rt::CpuBackend backend(one);
  EXPECT_EQ(rt::Session::create(p, 0, backend, error), nullptr);
  EXPECT_NE(error.find("'unused' float32[1] is not written"), std::string::npos)
      << error;
  // Without slice offsets a buffer holds the whole tensor.
  p = makeAddMatmulPlan(testCode(), kW);
  p.ranks[0].buffers[0].tensor.shape = {1, 3};
  p.ranks[0].buffers[0].size = 12;
  EXPECT_FALSE(runPlan(p, {}, outputs, error));
  EXPECT_NE(error.find("float32[1x3] (no slice offsets: the whole tensor) is "
                       "not a part of model input 'x'"),
            std::string::npos)
      << error;
  // A multi-rank plan needs a backend connected to as many ranks.
  p = makeAddMatmulPlan(testCode(), kW, 2);
  rt::CpuBackend alone(one);
  EXPECT_EQ(rt::Session::create(p, 0, alone, error), nullptr);
  EXPECT_NE(error.find("plan.bin needs 2 ranks but this process runs in a "
                       "world of 1"),
            std::string::npos)
      << error;
}

TEST(CpuBackend, SessionsAreIndependent) {
  std::string error;
  rt::WorldInfo world;
  rt::CpuBackend b1(world), b2(world);
  std::vector<float> w2(12, 1.0f);
  plan::Plan p1 = makeAddMatmulPlan(testCode(), kW);
  plan::Plan p2 = makeAddMatmulPlan(testCode(), w2);
  auto s1 = rt::Session::create(p1, 0, b1, error);
  auto s2 = rt::Session::create(p2, 0, b2, error);
  ASSERT_TRUE(s1 && s2) << error;
  std::vector<HostTensor> in = {floatTensor("x", {2, 3}, kX),
                                floatTensor("y", {2, 3}, kY)};
  std::vector<HostTensor> o1, o2;
  ASSERT_TRUE(s1->setInputs(in, error) && s2->setInputs(in, error));
  ASSERT_TRUE(s1->run(error) && s2->run(error) && s1->run(error)) << error;
  ASSERT_TRUE(s1->getModelOutputs(o1, error) && s2->getModelOutputs(o2, error));
  EXPECT_EQ(floatValues(o1[0]), addMatmulReference());
  EXPECT_EQ(floatValues(o2[0])[0], 7.5f); // (1+0.5) + (2-1) + (3+2)
  // Wrong input types are refused.
  in[1] = floatTensor("y", {3, 2}, kY);
  EXPECT_FALSE(s1->setInputs(in, error));
  EXPECT_NE(error.find("input 'y': expected float32[2x3], got float32[3x2]"),
            std::string::npos)
      << error;
}

std::string collectivesCode() {
  std::string code = readBytes(testCodePath("collectives_code"));
  EXPECT_FALSE(code.empty()) << "missing " << testCodePath("collectives_code");
  return code;
}

TEST(Collectives, SingleRankPlanRunsItsCollectivesAsCopies) {
  // The rank takes rows 2..3 of a [4x3] model input: Session::setInputs
  // cuts the block out of the whole input.
  plan::Plan p =
      planFor(collectivesCode(), "single", {desc("x", DataType::Float, {4, 3})},
              {desc("out", DataType::Float, {6, 2, 3})});
  p.model.meshAxes = {{"tp", 1}};
  p.ranks[0].buffers[0] =
      blockBuffer(BufferRole::Input, 0, p.model.inputs[0], {2, 0}, {2, 3});
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::vector<HostTensor> outputs;
  std::string error;
  ASSERT_TRUE(runPlan(p, {floatTensor("x", {4, 3}, x)}, outputs, error))
      << error;
  std::vector<float> want;
  for (int copy = 0; copy < 6; ++copy)
    want.insert(want.end(), x.begin() + 6, x.end());
  EXPECT_EQ(floatValues(outputs[0]), want);

  // axesMask names an axis the mesh does not have.
  plan::Plan bad = planFor(collectivesCode(), "bad_mask",
                           {desc("x", DataType::Float, {2, 3})},
                           {desc("out", DataType::Float, {2, 3})});
  bad.model.meshAxes = {{"tp", 1}};
  EXPECT_FALSE(runPlan(bad, {floatTensor("x", {2, 3}, kX)}, outputs, error));
  EXPECT_NE(error.find("rank 0 (entry bad_mask): runtime kernel "
                       "dnnc_rt_all_reduce(axesMask=2, dtype=1, op=0, "
                       "count=6): axesMask 2 is not a set of mesh axes (the "
                       "mesh has 1 axes: 0 <= axesMask < 2)"),
            std::string::npos)
      << error;
  // A plan without mesh axes has one implicit axis.
  bad.model.meshAxes.clear();
  EXPECT_FALSE(runPlan(bad, {floatTensor("x", {2, 3}, kX)}, outputs, error));
  EXPECT_NE(error.find("the mesh has 1 axes"), std::string::npos) << error;
}

TEST(Collectives, KernelsOutsideARunAreCopies) {
  // No active run: a world of one process; every group is the caller.
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, out(6, 0);
  dnnc_rt_all_reduce(3, 1, DNNC_RT_REDUCE_SUM, x.data(), out.data(), 6);
  EXPECT_EQ(out, x);
  std::vector<int64_t> l = {-7, 8}, lout(2, 0);
  dnnc_rt_all_reduce(1, 7, DNNC_RT_REDUCE_MEAN, l.data(), lout.data(), 2);
  EXPECT_EQ(lout, l);
  std::fill(out.begin(), out.end(), 0.0f);
  dnnc_rt_all_gather(1, 1, x.data(), out.data(), 3, 2);
  EXPECT_EQ(out, x);
  std::fill(out.begin(), out.end(), 0.0f);
  dnnc_rt_reduce_scatter(1, 1, DNNC_RT_REDUCE_MAX, x.data(), out.data(), 2, 3);
  EXPECT_EQ(out, x);
  std::fill(out.begin(), out.end(), 0.0f);
  dnnc_rt_all_to_all(1, 1, x.data(), out.data(), 3, 2, 1);
  EXPECT_EQ(out, x);
  // In place.
  dnnc_rt_all_reduce(1, 1, DNNC_RT_REDUCE_PROD, out.data(), out.data(), 6);
  EXPECT_EQ(out, x);
  dnnc_rt_broadcast(1, 1, out.data(), 6, 0);
  EXPECT_EQ(out, x);
  for (int64_t mask = 0; mask < 4; ++mask)
    EXPECT_EQ(dnnc_rt_group_index(mask), 0) << "axesMask " << mask;
}

TEST(Collectives, GroupIndexOfOneRank) {
  // One rank on a 1x1 mesh: the rank is member 0 of every group.
  plan::Plan p = planFor(collectivesCode(), "group_index_single", {},
                         {desc("out", DataType::Int64, {4})});
  p.model.meshAxes = {{"a", 1}, {"b", 1}};
  std::vector<HostTensor> outputs;
  std::string error;
  ASSERT_TRUE(runPlan(p, {}, outputs, error)) << error;
  std::vector<int64_t> got(4, -1);
  ASSERT_EQ(outputs[0].data.size(), got.size() * sizeof(int64_t));
  std::memcpy(got.data(), outputs[0].data.data(), outputs[0].data.size());
  EXPECT_EQ(got, (std::vector<int64_t>{0, 0, 0, 0}));

  // axesMask names an axis the mesh does not have.
  plan::Plan bad = planFor(collectivesCode(), "bad_group_index", {},
                           {desc("out", DataType::Int64, {1})});
  bad.model.meshAxes = {{"tp", 1}};
  EXPECT_FALSE(runPlan(bad, {}, outputs, error));
  EXPECT_NE(error.find("rank 0 (entry bad_group_index): runtime kernel "
                       "dnnc_rt_group_index(axesMask=2): axesMask 2 is not a "
                       "set of mesh axes (the mesh has 1 axes: 0 <= axesMask "
                       "< 2)"),
            std::string::npos)
      << error;
}

/// Element k of a test tensor.
int32_t blockValue(uint64_t k) { return int32_t(k * 7 + 1); }

TEST(TensorBlock, ExtractAndInsertMatchNaive) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    size_t rank = trial % 5;
    std::vector<int64_t> shape(rank), at(rank), block(rank);
    for (size_t d = 0; d < rank; ++d) {
      shape[d] = int64_t(rng() % 5);
      block[d] = shape[d] ? int64_t(rng() % (shape[d] + 1)) : 0;
      at[d] = int64_t(rng() % (shape[d] - block[d] + 1));
      if (trial % 3 == 0 && d + 1 >= rank / 2) { // Whole trailing dims.
        block[d] = shape[d];
        at[d] = 0;
      }
    }
    uint64_t n = 1, bn = 1;
    for (size_t d = 0; d < rank; ++d) {
      n *= uint64_t(shape[d]);
      bn *= uint64_t(block[d]);
    }
    std::vector<int32_t> tensor(n), got(bn, -1), want;
    for (uint64_t k = 0; k < n; ++k)
      tensor[k] = blockValue(k);
    // Naive: every element of the block by its coordinates.
    for (uint64_t k = 0; k < bn; ++k) {
      uint64_t rest = k, flat = 0, stride = 1;
      std::vector<int64_t> idx(rank);
      for (size_t d = rank; d-- > 0;) {
        idx[d] = int64_t(rest % uint64_t(block[d]));
        rest /= uint64_t(block[d]);
      }
      for (size_t d = rank; d-- > 0;) {
        flat += uint64_t(at[d] + idx[d]) * stride;
        stride *= uint64_t(shape[d]);
      }
      want.push_back(tensor[flat]);
    }
    rt::extractBlock(tensor.data(), shape, at, block, 4, got.data());
    EXPECT_EQ(got, want) << "trial " << trial;
    std::vector<int32_t> back(n, -1);
    rt::insertBlock(back.data(), shape, at, block, 4, got.data());
    std::vector<int32_t> back2 = back;
    rt::extractBlock(back.data(), shape, at, block, 4, got.data());
    EXPECT_EQ(got, want) << "trial " << trial;
    // Outside the block nothing was written.
    uint64_t untouched = 0;
    for (int32_t v : back2)
      untouched += v == -1;
    EXPECT_EQ(untouched, n - bn) << "trial " << trial;
  }
}

/// Naive batched GEMM.
template <typename T>
void naiveGemm(int64_t batch, int64_t M, int64_t N, int64_t K, const T *A,
               int64_t sA, const T *B, int64_t sB, T *C, int64_t sC) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += A[b * sA + i * K + k] * B[b * sB + k * N + j];
        C[b * sC + i * N + j] = acc;
      }
}

TEST(Kernels, GemmMatchesNaive) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dist(-1, 1);
  struct Case {
    int64_t batch, M, N, K;
    bool broadcastA, broadcastB;
  } cases[] = {{1, 1, 1, 1, false, false},
               {3, 5, 7, 4, false, false},
               {4, 2, 3, 9, true, false},
               {2, 17, 1, 33, false, true},
               {1, 64, 65, 63, false, false}};
  for (const Case &c : cases) {
    int64_t sA = c.broadcastA ? 0 : c.M * c.K,
            sB = c.broadcastB ? 0 : c.K * c.N;
    std::vector<double> A(size_t(c.batch * c.M * c.K)),
        B(size_t(c.batch * c.K * c.N));
    for (double &v : A)
      v = dist(rng);
    for (double &v : B)
      v = dist(rng);
    std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end());
    size_t cSize = size_t(c.batch * c.M * c.N);
    std::vector<double> C(cSize, 99), ref(cSize);
    std::vector<float> Cf(cSize, 99), reff(cSize);
    dnnc_rt_gemm_f64(c.batch, c.M, c.N, c.K, 0, A.data(), sA, B.data(), sB,
                     C.data(), c.M * c.N);
    naiveGemm<double>(c.batch, c.M, c.N, c.K, A.data(), sA, B.data(), sB,
                      ref.data(), c.M * c.N);
    dnnc_rt_gemm_f32(c.batch, c.M, c.N, c.K, 0, Af.data(), sA, Bf.data(), sB,
                     Cf.data(), c.M * c.N);
    naiveGemm<float>(c.batch, c.M, c.N, c.K, Af.data(), sA, Bf.data(), sB,
                     reff.data(), c.M * c.N);
    for (size_t i = 0; i < cSize; ++i) {
      EXPECT_NEAR(C[i], ref[i], 1e-12);
      EXPECT_NEAR(Cf[i], reff[i], 1e-4f);
    }
  }
}

/// Returns the bfloat16 bit pattern of `x` (truncated; the tests use values
/// bf16 holds exactly).
static uint16_t toBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return static_cast<uint16_t>(bits >> 16);
}

TEST(Kernels, ReducedPrecisionGemms) {
  // Values exact in bf16 and f16 (k/8 for small k): the 16-bit GEMMs widen
  // them to f32 and accumulate in f32, so they equal the f32 GEMM.
  const int64_t batch = 2, M = 3, N = 5, K = 70;
  std::vector<float> A(size_t(batch * M * K)), B(size_t(K * N));
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = float(int(i * 7 % 17) - 8) / 8;
  for (size_t i = 0; i < B.size(); ++i)
    B[i] = float(int(i * 5 % 13) - 6) / 8;
  // IEEE half patterns of the same values: sign, exponent 15 + e, mantissa.
  auto toF16 = [](float x) -> uint16_t {
    if (x == 0)
      return 0;
    uint16_t sign = x < 0 ? 0x8000 : 0;
    int e = 0;
    float m = std::frexp(std::fabs(x), &e); // x = m * 2^e, m in [0.5, 1).
    return uint16_t(sign | ((e - 1 + 15) << 10) | uint16_t((m * 2 - 1) * 1024));
  };
  std::vector<uint16_t> Ab, Bb, Ah, Bh;
  for (float x : A) {
    Ab.push_back(toBF16(x));
    Ah.push_back(toF16(x));
  }
  for (float x : B) {
    Bb.push_back(toBF16(x));
    Bh.push_back(toF16(x));
  }
  size_t cSize = size_t(batch * M * N);
  std::vector<float> ref(cSize), bf(cSize, 99), h(cSize, 99), tf(cSize, 99);
  // B is broadcast over the batch (stride 0).
  naiveGemm<float>(batch, M, N, K, A.data(), M * K, B.data(), 0, ref.data(),
                   M * N);
  dnnc_rt_gemm_bf16(batch, M, N, K, 0, Ab.data(), M * K, Bb.data(), 0,
                    bf.data(), M * N);
  dnnc_rt_gemm_f16(batch, M, N, K, 0, Ah.data(), M * K, Bh.data(), 0, h.data(),
                   M * N);
  dnnc_rt_gemm_tf32(batch, M, N, K, 0, A.data(), M * K, B.data(), 0, tf.data(),
                    M * N);
  for (size_t i = 0; i < cSize; ++i) {
    EXPECT_FLOAT_EQ(bf[i], ref[i]) << i;
    EXPECT_FLOAT_EQ(h[i], ref[i]) << i;
    EXPECT_FLOAT_EQ(tf[i], ref[i]) << i;
  }
}

TEST(Kernels, GemmTransposedOperands) {
  // Each operand stored as its transpose (DNNC_RT_TRANSPOSE_A / _B), in
  // every kernel, against the GEMM of the explicitly transposed matrices.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t batch = 2, M = 5, N = 7, K = 3;
  std::vector<float> A(size_t(batch * M * K)), B(size_t(batch * K * N));
  for (float &v : A)
    v = dist(rng);
  for (float &v : B)
    v = dist(rng);
  // At = A transposed per batch (K x M), Bt = B transposed (N x K).
  std::vector<float> At(A.size()), Bt(B.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k)
        At[b * M * K + k * M + i] = A[b * M * K + i * K + k];
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        Bt[b * K * N + j * K + k] = B[b * K * N + k * N + j];
  }
  size_t cSize = size_t(batch * M * N);
  std::vector<float> ref(cSize);
  naiveGemm<float>(batch, M, N, K, A.data(), M * K, B.data(), K * N, ref.data(),
                   M * N);
  auto toBF16 = [](float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    return uint16_t(bits >> 16);
  };
  for (int64_t transpose = 0; transpose < 4; ++transpose) {
    const std::vector<float> &a = transpose & DNNC_RT_TRANSPOSE_A ? At : A;
    const std::vector<float> &b = transpose & DNNC_RT_TRANSPOSE_B ? Bt : B;
    std::vector<float> C(cSize, 99), wide(cSize, 99);
    dnnc_rt_gemm_f32(batch, M, N, K, transpose, a.data(), M * K, b.data(),
                     K * N, C.data(), M * N);
    std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()),
        Cd(cSize, 99);
    dnnc_rt_gemm_f64(batch, M, N, K, transpose, ad.data(), M * K, bd.data(),
                     K * N, Cd.data(), M * N);
    // bfloat16 operands: the reference from the rounded values.
    std::vector<uint16_t> ab, bb;
    std::vector<float> ar, br;
    for (float x : a)
      ab.push_back(toBF16(x));
    for (float x : b)
      bb.push_back(toBF16(x));
    dnnc_rt_gemm_bf16(batch, M, N, K, transpose, ab.data(), M * K, bb.data(),
                      K * N, wide.data(), M * N);
    std::vector<float> C16(cSize, 99);
    {
      std::vector<float> a16, b16;
      for (uint16_t x : ab) {
        uint32_t bits = uint32_t(x) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        a16.push_back(f);
      }
      for (uint16_t x : bb) {
        uint32_t bits = uint32_t(x) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        b16.push_back(f);
      }
      dnnc_rt_gemm_f32(batch, M, N, K, transpose, a16.data(), M * K, b16.data(),
                       K * N, C16.data(), M * N);
    }
    for (size_t i = 0; i < cSize; ++i) {
      EXPECT_NEAR(C[i], ref[i], 1e-5f) << transpose << " " << i;
      EXPECT_NEAR(Cd[i], ref[i], 1e-5) << transpose << " " << i;
      EXPECT_FLOAT_EQ(wide[i], C16[i]) << transpose << " " << i;
    }
  }
}

TEST(Kernels, GemmBiasEpilogues) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  struct Case {
    int64_t batch, M, N, K;
    bool broadcastB;
  } cases[] = {{1, 5, 7, 3, false}, {3, 4, 6, 5, true}, {2, 3, 9, 8, false}};
  for (const Case &c : cases) {
    int64_t sA = c.M * c.K, sB = c.broadcastB ? 0 : c.K * c.N, sC = c.M * c.N;
    std::vector<double> A(size_t(c.batch * sA)),
        B(size_t(c.broadcastB ? c.K * c.N : c.batch * sB)), bias(size_t(c.N));
    for (std::vector<double> *v : {&A, &B, &bias})
      for (double &x : *v)
        x = dist(rng);
    std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end()),
        biasf(bias.begin(), bias.end());
    size_t cSize = size_t(c.batch * sC);
    std::vector<double> product(cSize);
    naiveGemm<double>(c.batch, c.M, c.N, c.K, A.data(), sA, B.data(), sB,
                      product.data(), sC);
    for (int32_t act : {DNNC_RT_ACTIVATION_NONE, DNNC_RT_ACTIVATION_RELU,
                        DNNC_RT_ACTIVATION_GELU_TANH}) {
      std::vector<double> C(cSize, 99);
      std::vector<float> Cf(cSize, 99), Ct(cSize, 99);
      dnnc_rt_gemm_bias_f64(c.batch, c.M, c.N, c.K, A.data(), sA, B.data(), sB,
                            C.data(), sC, bias.data(), act);
      dnnc_rt_gemm_bias_f32(c.batch, c.M, c.N, c.K, Af.data(), sA, Bf.data(),
                            sB, Cf.data(), sC, biasf.data(), act);
      dnnc_rt_gemm_bias_tf32(c.batch, c.M, c.N, c.K, Af.data(), sA, Bf.data(),
                             sB, Ct.data(), sC, biasf.data(), act);
      for (size_t i = 0; i < cSize; ++i) {
        double want =
            activationReference(product[i] + bias[i % size_t(c.N)], act);
        EXPECT_NEAR(C[i], want, 1e-12) << i << " act " << act;
        EXPECT_NEAR(Cf[i], want, 1e-5) << i << " act " << act;
        EXPECT_NEAR(Ct[i], want, 1e-5) << i << " act " << act;
      }
    }
  }
}

TEST(Kernels, GemmEpilogueWithoutBias) {
  // A null bias: C = act(A B).
  std::vector<float> A = {1, -2, 3, -4}, B = {1, 0, 0, 1}, C(4, 99);
  dnnc_rt_gemm_bias_f32(1, 2, 2, 2, A.data(), 0, B.data(), 0, C.data(), 0,
                        nullptr, DNNC_RT_ACTIVATION_RELU);
  EXPECT_EQ(C, (std::vector<float>{1, 0, 3, 0}));
}

TEST(Kernels, GemmBiasEpilogues16) {
  // Operands exact in bf16 and f16 (k/8): the product accumulates in f32,
  // the bias is added and the activation applied in f32, and C is that
  // value rounded once to 16 bits.
  const int64_t batch = 2, M = 3, N = 5, K = 6;
  std::vector<float> A(size_t(batch * M * K)), B(size_t(K * N)), bias(N);
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = float(int(i * 7 % 17) - 8) / 8;
  for (size_t i = 0; i < B.size(); ++i)
    B[i] = float(int(i * 5 % 13) - 6) / 8;
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = float(int(i * 3 % 7) - 3) / 8;
  std::vector<uint16_t> Ab, Bb, biasb;
  std::vector<_Float16> Ah, Bh, biash;
  for (float x : A) {
    Ab.push_back(toBF16(x));
    Ah.push_back(_Float16(x));
  }
  for (float x : B) {
    Bb.push_back(toBF16(x));
    Bh.push_back(_Float16(x));
  }
  for (float x : bias) {
    biasb.push_back(toBF16(x));
    biash.push_back(_Float16(x));
  }
  size_t cSize = size_t(batch * M * N);
  std::vector<float> product(cSize);
  naiveGemm<float>(batch, M, N, K, A.data(), M * K, B.data(), 0, product.data(),
                   M * N);
  // With and without (null) a bias.
  for (bool withBias : {true, false})
    for (int32_t act : {DNNC_RT_ACTIVATION_NONE, DNNC_RT_ACTIVATION_RELU,
                        DNNC_RT_ACTIVATION_GELU_TANH}) {
      std::vector<uint16_t> Cb(cSize, 0xFFFF);
      std::vector<_Float16> Ch(cSize, _Float16(99));
      dnnc_rt_gemm_bias_bf16(batch, M, N, K, Ab.data(), M * K, Bb.data(), 0,
                             Cb.data(), M * N,
                             withBias ? biasb.data() : nullptr, act);
      dnnc_rt_gemm_bias_f16(
          batch, M, N, K, reinterpret_cast<const uint16_t *>(Ah.data()), M * K,
          reinterpret_cast<const uint16_t *>(Bh.data()), 0, Ch.data(), M * N,
          withBias ? biash.data() : nullptr, act);
      for (size_t i = 0; i < cSize; ++i) {
        float want = float(activationReference(
            double(product[i] + (withBias ? bias[i % N] : 0.0f)), act));
        uint32_t bits = uint32_t(Cb[i]) << 16;
        float got;
        std::memcpy(&got, &bits, sizeof(got));
        // One rounding to bf16 (8 bits of mantissa) and to half (11 bits).
        EXPECT_NEAR(got, want, std::ldexp(std::fabs(want), -8) + 1e-6)
            << i << " act " << act;
        EXPECT_NEAR(float(Ch[i]), want, std::ldexp(std::fabs(want), -11) + 1e-6)
            << i << " act " << act;
      }
    }
  // K = 0: C = act(bias) in every row.
  std::vector<uint16_t> Cb(size_t(M * N), 0xFFFF);
  dnnc_rt_gemm_bias_bf16(1, M, N, 0, nullptr, 0, nullptr, 0, Cb.data(), 0,
                         biasb.data(), DNNC_RT_ACTIVATION_RELU);
  for (int64_t i = 0; i < M * N; ++i)
    EXPECT_EQ(Cb[size_t(i)], toBF16(std::max(bias[size_t(i % N)], 0.0f))) << i;
}

TEST(Kernels, Attention) {
  const int64_t B = 2, H = 3, S = 5, T = 7, D = 4;
  auto fill = [](size_t n, int seed) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i)
      x[i] = float(int((i * 37 + seed * 11) % 23) - 11) / 8;
    return x;
  };
  std::vector<float> q = fill(B * H * S * D, 1), k = fill(B * H * T * D, 2),
                     v = fill(B * H * T * D, 3);
  // A key mask per batch [B, 1, 1, T] (strides T, 0, 0): all of batch 1's
  // keys but the first, none of batch 0's.
  std::vector<float> mask(size_t(B * T), 0.0f);
  for (int64_t j = 1; j < T; ++j)
    mask[size_t(T + j)] = -INFINITY;
  std::vector<float> out(q.size(), 99.0f);
  for (bool causal : {false, true})
    for (const float *bias : std::vector<const float *>{nullptr, mask.data()}) {
      std::vector<double> ref = attentionReference(B, H, S, T, D, q, k, v, 0.5,
                                                   causal, bias, T, 0, 0);
      dnnc_rt_attention_f32(B * H, S, T, D, q.data(), k.data(), v.data(),
                            out.data(), 0.5f, causal, H, bias, T, 0, 0);
      for (size_t i = 0; i < out.size(); ++i)
        EXPECT_NEAR(out[i], ref[i], 1e-5) << i << " causal " << causal;
    }
  // A fully masked row is zeros: mask every key of batch 0.
  std::vector<float> all(size_t(B * T), -INFINITY);
  dnnc_rt_attention_f32(B * H, S, T, D, q.data(), k.data(), v.data(),
                        out.data(), 0.5f, 0, H, all.data(), T, 0, 0);
  for (float x : out)
    EXPECT_EQ(x, 0.0f);
  // bf16: exact inputs, the result within bf16 rounding.
  std::vector<uint16_t> qb, kb, vb, ob(q.size());
  for (float x : q)
    qb.push_back(toBF16(x));
  for (float x : k)
    kb.push_back(toBF16(x));
  for (float x : v)
    vb.push_back(toBF16(x));
  std::vector<double> ref = attentionReference<float>(
      B, H, S, T, D, q, k, v, 0.5, false, nullptr, 0, 0, 0);
  dnnc_rt_attention_bf16(B * H, S, T, D, qb.data(), kb.data(), vb.data(),
                         ob.data(), 0.5f, 0, H, nullptr, 0, 0, 0);
  for (size_t i = 0; i < ob.size(); ++i) {
    uint32_t bits = uint32_t(ob[i]) << 16;
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    EXPECT_NEAR(x, ref[i], 1e-2 * (1 + std::fabs(ref[i]))) << i;
  }
}

TEST(Kernels, GemmEdgeCases) {
  std::vector<float> C(6, 5.0f);
  dnnc_rt_gemm_f32(1, 2, 3, 0, 0, nullptr, 0, nullptr, 0, C.data(), 0);
  EXPECT_EQ(C, std::vector<float>(6, 0.0f)); // K = 0: C = 0.
  C.assign(6, 5.0f);
  dnnc_rt_gemm_f32(0, 2, 3, 4, 0, nullptr, 0, nullptr, 0, C.data(), 6);
  dnnc_rt_gemm_f32(1, 0, 3, 4, 0, nullptr, 0, nullptr, 0, C.data(), 6);
  EXPECT_EQ(C, std::vector<float>(6, 5.0f)); // Nothing to compute.
}

TEST(Session, BindInputs) {
  plan::ModelInfo m;
  m.inputs = {desc("a", DataType::Float, {2}), desc("b", DataType::Int64, {})};
  auto file = [](const std::string &path, HostTensor t) {
    return rt::InputFile{path, std::move(t)};
  };
  HostTensor a = floatTensor("a", {2}, {1, 2});
  HostTensor b{"b", int32_t(DataType::Int64), {}, std::string(8, '\0')};
  HostTensor anonA = a, anonB = b;
  anonA.name = anonB.name = "";
  std::vector<HostTensor> ordered;
  std::string error;

  std::vector<rt::InputFile> files = {file("b.pb", b), file("a.pb", a)};
  ASSERT_TRUE(rt::bindInputs(m, files, ordered, error)) << error;
  EXPECT_EQ(ordered[0].dtype, int32_t(DataType::Float));
  EXPECT_EQ(ordered[1].dtype, int32_t(DataType::Int64));

  files = {file("a.npy", anonA), file("b.npy", anonB)};
  ASSERT_TRUE(rt::bindInputs(m, files, ordered, error)) << error;
  EXPECT_EQ(ordered[0].name, "a");

  files = {file("a.pb", a)};
  EXPECT_FALSE(rt::bindInputs(m, files, ordered, error));
  EXPECT_EQ(error, "the model has 2 inputs ('a' float32[2], 'b' int64[]) but "
                   "1 --input file was given");

  HostTensor c = a;
  c.name = "c";
  files = {file("a.pb", a), file("c.pb", c)};
  EXPECT_FALSE(rt::bindInputs(m, files, ordered, error));
  EXPECT_EQ(error, "input file 'c.pb' holds tensor 'c', which is not a model "
                   "input (inputs: 'a' float32[2], 'b' int64[])");

  files = {file("a.pb", a), file("a2.pb", a)};
  EXPECT_FALSE(rt::bindInputs(m, files, ordered, error));
  EXPECT_NE(error.find("model input 'a' is given twice"), std::string::npos);

  files = {file("b.npy", anonB), file("a.pb", a)};
  EXPECT_FALSE(rt::bindInputs(m, files, ordered, error));
  EXPECT_NE(error.find("model input 'a' is given twice: by 'a.pb' and by "
                       "'b.npy' (by position)"),
            std::string::npos)
      << error;

  HostTensor wrong = floatTensor("b", {}, {1});
  files = {file("a.pb", a), file("b.pb", wrong)};
  EXPECT_FALSE(rt::bindInputs(m, files, ordered, error));
  EXPECT_EQ(error, "input 'b' ('b.pb'): expected int64[], got float32[]");
}

/// Sets environment variables for one scope.
class ScopedEnv {
public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) {
    for (auto &[name, value] : vars) {
      const char *old = std::getenv(name.c_str());
      saved.push_back(
          {name, old ? std::string(old) : std::string(), old != nullptr});
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const Saved &s : saved) {
      if (s.present)
        ::setenv(s.name.c_str(), s.value.c_str(), 1);
      else
        ::unsetenv(s.name.c_str());
    }
  }

private:
  struct Saved {
    std::string name, value;
    bool present;
  };
  std::vector<Saved> saved;
};

TEST(World, DetectsLaunchers) {
  rt::WorldInfo world;
  std::string error;
  {
    ScopedEnv env(
        {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
    ASSERT_TRUE(rt::detectWorld(world, error)) << error;
    EXPECT_EQ(world.rank, 2u);
    EXPECT_EQ(world.size, 4u);
    EXPECT_EQ(world.source, "OMPI_COMM_WORLD_SIZE");
  }
  {
    ScopedEnv env({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}});
    EXPECT_FALSE(rt::detectWorld(world, error));
    EXPECT_NE(error.find("PMI_RANK='4'"), std::string::npos) << error;
  }
  {
    ScopedEnv env({{"RANK", "x"}, {"WORLD_SIZE", "2"}});
    EXPECT_FALSE(rt::detectWorld(world, error));
  }
  {
    ScopedEnv env({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
    ASSERT_TRUE(rt::detectWorld(world, error)) << error;
    EXPECT_FALSE(world.mpi);
    // Two processes MPI cannot connect: no Comm.
    EXPECT_EQ(rt::Comm::create(world, error), nullptr);
    EXPECT_NE(error.find(rt::mpiCompiledIn() ? "launcher without MPI"
                                             : "this build has no MPI"),
              std::string::npos)
        << error;
  }
  {
    ScopedEnv env({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}});
    ASSERT_TRUE(rt::detectWorld(world, error)) << error;
    EXPECT_TRUE(world.mpi);
  }
  // A plain process is a world of one without MPI.
  std::unique_ptr<rt::Comm> comm = rt::Comm::createLocal();
  EXPECT_EQ(comm->rank(), 0u);
  EXPECT_EQ(comm->size(), 1u);
  EXPECT_FALSE(comm->usesMpi());
  EXPECT_TRUE(comm->allOk(true));
  EXPECT_FALSE(comm->allOk(false, 0));
  std::vector<std::string> all;
  EXPECT_TRUE(comm->gatherToRoot("abc", all, error));
  EXPECT_EQ(all, std::vector<std::string>{"abc"});
}

} // namespace

namespace {
/// A backend on host memory that records the order of synchronize() and
/// deallocate() calls, to check how the workspace arena grows.
class RecordingBackend final : public rt::Backend {
public:
  ~RecordingBackend() override { releaseWorkspace(); }
  const char *target() const override { return "cpu"; }
  bool connect(const plan::ModelInfo &, std::string &) override { return true; }
  bool loadProgram(const plan::RankProgram &, std::string &) override {
    return true;
  }
  bool allocate(uint64_t bytes, rt::DeviceBuffer &buffer,
                std::string &) override {
    log += "alloc " + std::to_string(bytes) + ";";
    buffer.data =
        std::aligned_alloc(plan::kAlignment, plan::alignTo(bytes + 1, 64));
    buffer.bytes = bytes;
    return buffer.data != nullptr;
  }
  void deallocate(rt::DeviceBuffer &buffer) override {
    log += "free;";
    std::free(buffer.data);
    buffer = rt::DeviceBuffer();
  }
  bool copyToDevice(const rt::DeviceBuffer &, const void *, uint64_t,
                    std::string &) override {
    return true;
  }
  bool copyToHost(void *, const rt::DeviceBuffer &, uint64_t,
                  std::string &) override {
    return true;
  }
  bool run(uint32_t, uint32_t, const std::vector<void *> &,
           std::string &) override {
    return true;
  }
  bool send(const rt::DeviceBuffer &, uint64_t, uint32_t, uint32_t,
            std::string &) override {
    return true;
  }
  bool recv(const rt::DeviceBuffer &, uint64_t, uint32_t, uint32_t,
            std::string &) override {
    return true;
  }
  bool waitSends(std::string &) override { return true; }
  bool synchronize(std::string &) override {
    log += "sync;";
    return true;
  }
  /// The calls so far.
  std::string log;
};

/// Whether `p` is aligned for the workspace arena.
bool workspaceAligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % rt::Backend::kWorkspaceAlignment == 0;
}
} // namespace

TEST(Workspace, ReusedGrownAndAligned) {
  rt::WorldInfo one;
  rt::CpuBackend backend(one);
  rt::ActiveBackend active(backend);
  void *a = dnnc_rt_workspace(1000);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(workspaceAligned(a));
  EXPECT_EQ(backend.workspaceBytes(), 1024u);
  std::memset(a, 1, 1024);
  // Smaller and equal requests reuse the arena.
  EXPECT_EQ(dnnc_rt_workspace(500), a);
  EXPECT_EQ(dnnc_rt_workspace(1024), a);
  EXPECT_EQ(dnnc_rt_workspace(0), a);
  // A larger one replaces it.
  void *b = dnnc_rt_workspace(5000);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(workspaceAligned(b));
  EXPECT_EQ(backend.workspaceBytes(), 5120u);
  std::memset(b, 2, 5120);
  EXPECT_EQ(dnnc_rt_workspace(4096), b);
  backend.releaseWorkspace();
  EXPECT_EQ(backend.workspaceBytes(), 0u);
  // After a release the next call allocates again.
  void *c = dnnc_rt_workspace(256);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(workspaceAligned(c));
  EXPECT_EQ(backend.workspaceBytes(), 256u);
}

TEST(Workspace, GrowingSynchronizesBeforeFreeing) {
  RecordingBackend backend;
  std::string error;
  void *a = backend.workspace(100, error);
  ASSERT_NE(a, nullptr) << error;
  EXPECT_TRUE(workspaceAligned(a));
  EXPECT_EQ(backend.workspace(256, error), a);
  void *b = backend.workspace(257, error);
  ASSERT_NE(b, nullptr) << error;
  EXPECT_TRUE(workspaceAligned(b));
  EXPECT_EQ(backend.workspaceBytes(), 512u);
  // Room to align a 64-byte aligned allocation to 256 bytes.
  EXPECT_EQ(backend.log, "alloc 448;sync;free;alloc 704;");
}

TEST(Workspace, ActiveBackendIsScoped) {
  RecordingBackend outer, inner;
  rt::ActiveBackend a(outer);
  {
    rt::ActiveBackend b(inner);
    ASSERT_NE(dnnc_rt_workspace(64), nullptr);
  }
  EXPECT_EQ(inner.workspaceBytes(), 256u);
  EXPECT_EQ(outer.workspaceBytes(), 0u);
  ASSERT_NE(dnnc_rt_workspace(64), nullptr);
  EXPECT_EQ(outer.workspaceBytes(), 256u);
}

TEST(WorkspaceDeathTest, MisuseAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(dnnc_rt_workspace(16), "dnnc_rt_workspace\\(bytes=16\\): "
                                      "called outside a run");
  RecordingBackend backend;
  rt::ActiveBackend active(backend);
  EXPECT_DEATH(dnnc_rt_workspace(-1), "negative size");
}
