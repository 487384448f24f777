//===- ActivationMemoryTest.cpp - Activations as Megatron counts them -----===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the activation memory of training plans against Korthikanti
// et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", section 4): a GPT layer of sequence s, micro-batch b, hidden h
// and a heads in 16-bit floats keeps
//
//   s * b * h * (10 + 24 / t + 5 * a * s / (h * t))   bytes
//
// at tensor-parallel degree t without sequence parallelism (34 + 5as/h at
// t = 1); selective recomputation drops the 5as/(ht) term (the attention
// core: scores, softmax, dropout); full recomputation keeps the layer's
// input, 2sbh, plus one layer's activations while it is recomputed. The
// layers here are written as dnnc imports a GPT (layer norms, separate
// q/k/v projections with biases, scaled and masked scores, softmax, the
// three dropouts, GELU MLP, residual adds), sharded by the Megatron-style
// propagation, and profiled by `buildPlanProfile`.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Cluster.h"
#include "dnnc/Planner/Pipeline.h"

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {

/// The shape of the test transformer.
struct GptShape {
  int64_t layers = 8, batch = 2, seq = 16, hidden = 32, heads = 4;
  /// Training-mode dropouts (attention probabilities, attention output,
  /// MLP output), as in the paper; without them their terms are 0.
  bool dropout = true;
};

/// Returns a `@main` of `shape.layers` GPT layers in f16.
std::string makeGpt(const GptShape &shape) {
  int64_t b = shape.batch, s = shape.seq, h = shape.hidden, a = shape.heads,
          d = h / a, f = 4 * h;
  auto t = [](std::initializer_list<int64_t> dims, const char *element =
                                                       "f16") {
    std::string type = "tensor<";
    for (int64_t dim : dims)
      type += std::to_string(dim) + "x";
    return type + element + ">";
  };
  std::ostringstream os;
  auto weight = [&](const std::string &name, const std::string &type) {
    os << ", %" << name << ": " << type << " {dnn.weight = dense<0.01> : "
       << type << "}";
  };
  os << "func.func @main(%x0: " << t({b, s, h});
  for (int64_t l = 0; l < shape.layers; ++l) {
    std::string p = "l" + std::to_string(l) + "_";
    for (const char *n : {"g1", "c1", "g2", "c2", "bq", "bk", "bv", "bo",
                          "b2"})
      weight(p + n, t({h}));
    weight(p + "b1", t({f}));
    for (const char *n : {"wq", "wk", "wv", "wo"})
      weight(p + n, t({h, h}));
    weight(p + "w1", t({h, f}));
    weight(p + "w2", t({f, h}));
  }
  os << ") -> " << t({b, s, h}) << " {\n";
  os << "  %r = dnn.constant dense<0.1> : tensor<f32>\n";
  os << "  %scale = dnn.constant dense<0.35> : " << t({b, a, s, s}) << "\n";
  os << "  %mask = dnn.constant dense<0.0> : " << t({b, a, s, s}) << "\n";
  // Returns the value after the dropout of `in` (`in` without dropouts).
  auto dropout = [&](const std::string &out, const std::string &in,
                     const std::string &type) {
    if (!shape.dropout)
      return in;
    std::string mask = type;
    mask.replace(mask.rfind("f16"), 3, "i1");
    os << "  %" << out << ", %" << out << "_m = dnn.dropout %" << in
       << ", %r seed = 0 : (" << type << ", tensor<f32>) -> (" << type
       << ", " << mask << ")\n";
    return out;
  };
  auto linear = [&](const std::string &out, const std::string &in,
                    const std::string &w, const std::string &bias,
                    int64_t k, int64_t n) {
    os << "  %" << out << "_mm = dnn.matmul %" << in << ", %" << w << " : ("
       << t({b, s, k}) << ", " << t({k, n}) << ") -> " << t({b, s, n})
       << "\n";
    os << "  %" << out << "_bb = dnn.broadcast_in_dim %" << bias
       << ", dims = [2] : " << t({n}) << " -> " << t({b, s, n}) << "\n";
    os << "  %" << out << " = dnn.add %" << out << "_mm, %" << out
       << "_bb : " << t({b, s, n}) << "\n";
  };
  auto layerNorm = [&](const std::string &out, const std::string &in,
                       const std::string &g, const std::string &c) {
    os << "  %" << out << ", %" << out << "_mean, %" << out
       << "_isd = dnn.layer_norm %" << in << ", %" << g << ", %" << c
       << " axis = 2 epsilon = 1.0e-05 : (" << t({b, s, h}) << ", "
       << t({h}) << ", " << t({h}) << ") -> (" << t({b, s, h}) << ", "
       << t({b, s, 1}, "f32") << ", " << t({b, s, 1}, "f32") << ")\n";
  };
  for (int64_t l = 0; l < shape.layers; ++l) {
    std::string p = "l" + std::to_string(l) + "_";
    std::string x = "x" + std::to_string(l);
    layerNorm(p + "ln1", x, p + "g1", p + "c1");
    for (const char *n : {"q", "k", "v"}) {
      linear(p + n, p + "ln1", p + "w" + n, p + "b" + n, h, h);
      os << "  %" << p << n << "_r = dnn.reshape %" << p << n << " : "
         << t({b, s, h}) << " -> " << t({b, s, a, d}) << "\n";
    }
    os << "  %" << p << "qt = dnn.transpose %" << p
       << "q_r, permutation = [0, 2, 1, 3] : " << t({b, s, a, d}) << " -> "
       << t({b, a, s, d}) << "\n";
    os << "  %" << p << "kt = dnn.transpose %" << p
       << "k_r, permutation = [0, 2, 3, 1] : " << t({b, s, a, d}) << " -> "
       << t({b, a, d, s}) << "\n";
    os << "  %" << p << "vt = dnn.transpose %" << p
       << "v_r, permutation = [0, 2, 1, 3] : " << t({b, s, a, d}) << " -> "
       << t({b, a, s, d}) << "\n";
    os << "  %" << p << "sc = dnn.matmul %" << p << "qt, %" << p << "kt : ("
       << t({b, a, s, d}) << ", " << t({b, a, d, s}) << ") -> "
       << t({b, a, s, s}) << "\n";
    os << "  %" << p << "ss = dnn.mul %" << p << "sc, %scale : "
       << t({b, a, s, s}) << "\n";
    os << "  %" << p << "sm = dnn.add %" << p << "ss, %mask : "
       << t({b, a, s, s}) << "\n";
    os << "  %" << p << "pr = dnn.softmax %" << p << "sm axis = 3 : "
       << t({b, a, s, s}) << "\n";
    std::string probs = dropout(p + "pd", p + "pr", t({b, a, s, s}));
    os << "  %" << p << "cx = dnn.matmul %" << probs << ", %" << p << "vt : ("
       << t({b, a, s, s}) << ", " << t({b, a, s, d}) << ") -> "
       << t({b, a, s, d}) << "\n";
    os << "  %" << p << "ct = dnn.transpose %" << p
       << "cx, permutation = [0, 2, 1, 3] : " << t({b, a, s, d}) << " -> "
       << t({b, s, a, d}) << "\n";
    os << "  %" << p << "cr = dnn.reshape %" << p << "ct : "
       << t({b, s, a, d}) << " -> " << t({b, s, h}) << "\n";
    linear(p + "o", p + "cr", p + "wo", p + "bo", h, h);
    std::string attention = dropout(p + "od", p + "o", t({b, s, h}));
    os << "  %" << p << "x1 = dnn.add %" << x << ", %" << attention << " : "
       << t({b, s, h}) << "\n";
    layerNorm(p + "ln2", p + "x1", p + "g2", p + "c2");
    linear(p + "f1", p + "ln2", p + "w1", p + "b1", h, f);
    os << "  %" << p << "ge = dnn.gelu %" << p
       << "f1 approximation = <none> : " << t({b, s, f}) << "\n";
    linear(p + "f2", p + "ge", p + "w2", p + "b2", f, h);
    std::string mlp = dropout(p + "fd", p + "f2", t({b, s, h}));
    os << "  %x" << l + 1 << " = dnn.add %" << p << "x1, %" << mlp << " : "
       << t({b, s, h}) << "\n";
  }
  os << "  return %x" << shape.layers << " : " << t({b, s, h}) << "\n}\n";
  return os.str();
}

class ActivationMemoryTest : public ::testing::Test {
protected:
  ActivationMemoryTest() {
    context.loadDialect<dnn::DnnDialect, dist::DistDialect,
                        func::FuncDialect>();
    std::string error;
    std::optional<Cluster> loaded = loadCluster("h100x8", error);
    EXPECT_TRUE(loaded) << error;
    cluster = *loaded;
  }

  /// Returns the single-stage training estimate of `shape` at tensor
  /// parallelism `tp` (Megatron-sharded; 1: one device) with `recompute`.
  StageEstimate estimate(const GptShape &shape, int64_t tp,
                         Recompute recompute) {
    module = parseSourceString<ModuleOp>(makeGpt(shape), &context);
    EXPECT_TRUE(module);
    dist::MeshOp mesh;
    if (tp > 1) {
      PassManager pm(&context);
      dist::CreateMeshPassOptions meshOptions;
      meshOptions.axes = "tp=" + std::to_string(tp) + ":intra";
      pm.addPass(dist::createCreateMeshPass(meshOptions));
      dist::PropagateShardingsPassOptions propagate;
      propagate.tpAxis = "tp";
      pm.addPass(dist::createPropagateShardingsPass(propagate));
      EXPECT_TRUE(succeeded(pm.run(*module)));
      module->walk([&](dist::MeshOp op) { mesh = op; });
    }
    auto func = module->lookupSymbol<func::FuncOp>("main");
    CostModel model(cluster, Mode::Train);
    PlanProfile profile = buildPlanProfile(func, mesh, model, "", "");
    PipelineConfig config;
    config.recompute = recompute;
    int64_t n = profile.items.size();
    SmallVector<int64_t> boundaries = {0, n};
    PipelineEstimate e = estimatePipeline(profile, config, boundaries, model);
    return e.stages.front();
  }

  MLIRContext context;
  Cluster cluster;
  OwningOpRef<ModuleOp> module;
};

/// Korthikanti et al.'s bytes per layer without recomputation, at `tp`,
/// with the dropout terms only when `dropout` (masks of one byte, the
/// dropped-out probabilities of two).
double paperBytes(const GptShape &g, int64_t tp, bool dropout) {
  double s = g.seq, b = g.batch, h = g.hidden, a = g.heads, t = tp;
  double replicated = dropout ? 10 : 8;
  double core = dropout ? 5 : 2;
  return s * b * h * (replicated + 24 / t + core * a * s / (h * t));
}

TEST_F(ActivationMemoryTest, NoRecomputationMatchesThePaper) {
  for (bool dropout : {true, false})
    for (int64_t tp : {1, 2, 4}) {
      GptShape shape;
      shape.dropout = dropout;
      StageEstimate stage = estimate(shape, tp, Recompute::Off);
      EXPECT_DOUBLE_EQ(stage.activationBytes,
                       shape.layers * paperBytes(shape, tp, dropout))
          << "tp=" << tp << " dropout=" << dropout;
      EXPECT_EQ(stage.transientBytes, 0);
    }
}

TEST_F(ActivationMemoryTest, SelectiveRecomputationDropsTheAttentionCore) {
  for (int64_t tp : {1, 2, 4}) {
    GptShape shape;
    StageEstimate off = estimate(shape, tp, Recompute::Off);
    StageEstimate selective = estimate(shape, tp, Recompute::Selective);
    double s = shape.seq, b = shape.batch, h = shape.hidden,
           a = shape.heads, t = tp;
    // sbh(10 + 24/t) per layer kept; one layer's core (5as^2b/t) at a time.
    EXPECT_DOUBLE_EQ(selective.activationBytes,
                     shape.layers * s * b * h * (10 + 24 / t))
        << "tp=" << tp;
    EXPECT_DOUBLE_EQ(selective.transientBytes, 5 * a * s * s * b / t)
        << "tp=" << tp;
    // The core's forward runs again: more backward time, the same forward.
    EXPECT_DOUBLE_EQ(selective.forwardCompute, off.forwardCompute);
    EXPECT_GT(selective.backwardCompute, off.backwardCompute);
  }
}

TEST_F(ActivationMemoryTest, FullRecomputationKeepsLayerInputs) {
  for (int64_t tp : {1, 2, 4}) {
    GptShape shape;
    StageEstimate off = estimate(shape, tp, Recompute::Off);
    StageEstimate selective = estimate(shape, tp, Recompute::Selective);
    StageEstimate full = estimate(shape, tp, Recompute::Full);
    double sbh = static_cast<double>(shape.seq * shape.batch * shape.hidden);
    // One checkpoint per layer, where only the residual stream (2sbh,
    // replicated) crosses; the first and last windows may add a smaller
    // one.
    EXPECT_GE(full.activationBytes, 2 * sbh * shape.layers) << "tp=" << tp;
    EXPECT_LE(full.activationBytes, 2 * sbh * (shape.layers + 1))
        << "tp=" << tp;
    // One layer's saved values (checkpoint to checkpoint) while it is
    // recomputed.
    EXPECT_DOUBLE_EQ(full.transientBytes,
                     paperBytes(shape, tp, /*dropout=*/true))
        << "tp=" << tp;
    // The whole forward runs again.
    EXPECT_NEAR(full.backwardCompute,
                off.backwardCompute + off.forwardCompute,
                1e-12 * full.backwardCompute);
    EXPECT_GE(full.backwardCompute, selective.backwardCompute);
  }
}

} // namespace
