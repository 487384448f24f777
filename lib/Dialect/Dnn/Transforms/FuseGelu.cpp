//===- FuseGelu.cpp - written-out GELUs to dnn.gelu --------*- C++ -*-===//
//
// Implements dnn-fuse-gelu: the tanh-approximated and the exact (erf) GELU
// written out as elementwise ops become one dnn.gelu.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include <cmath>

namespace dnnc::dnn {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

namespace {

/// A product of values and a constant factor.
struct Product {
  SmallVector<Value> factors;
  double constant = 1.0;
};

/// Flattens the tree of `dnn.mul` (and divisions by constants) rooted at `v`
/// into its non-constant factors and the product of its constants; `stop`
/// is kept whole even when it is a product itself.
void flatten(Value v, Value stop, Product &p, int depth = 0) {
  if (v != stop && depth < 8) {
    if (std::optional<double> c = getSplatFloatValue(v)) {
      p.constant *= *c;
      return;
    }
    if (auto mul = v.getDefiningOp<MulOp>()) {
      flatten(mul.getLhs(), stop, p, depth + 1);
      flatten(mul.getRhs(), stop, p, depth + 1);
      return;
    }
    if (auto div = v.getDefiningOp<DivOp>()) {
      std::optional<double> c = getSplatFloatValue(div.getRhs());
      if (c && *c != 0.0) {
        flatten(div.getLhs(), stop, p, depth + 1);
        p.constant /= *c;
        return;
      }
    }
  }
  p.factors.push_back(v);
}

/// Whether `value` is `expected` to within 1% (constants rounded to bf16
/// are within 0.4%).
bool isClose(double value, double expected) {
  return std::abs(value - expected) <= 1e-2 * std::abs(expected);
}

/// Whether `p` is `constant` times the factors `expected` (in any order).
bool isProduct(Product p, ArrayRef<Value> expected, double constant) {
  if (!isClose(p.constant, constant) || p.factors.size() != expected.size())
    return false;
  for (Value v : expected) {
    auto *it = llvm::find(p.factors, v);
    if (it == p.factors.end())
      return false;
    p.factors.erase(it);
  }
  return true;
}

/// Whether `v` is `x` raised to `power` (2 or 3): `pow(x, power)` or a
/// product of `x`s, times `constant`.
bool isPowerOf(Value v, Value x, int power, double constant) {
  Product p;
  flatten(v, x, p);
  if (p.factors.size() == 1)
    if (auto pow = p.factors.front().getDefiningOp<PowOp>()) {
      std::optional<double> exponent = getSplatFloatValue(pow.getRhs());
      return pow.getLhs() == x && exponent && *exponent == power &&
             isClose(p.constant, constant);
    }
  return isProduct(p, SmallVector<Value>(power, x), constant);
}

/// The operand `a` of `1 + a` (either order), if `v` is that sum.
Value getOnePlus(Value v) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> c = getSplatFloatValue(one);
    if (c && *c == 1.0)
      return other;
  }
  return nullptr;
}

/// The x of `x + 0.044715 x^3` or `x (1 + 0.044715 x^2)`, the tanh GELU's
/// inner polynomial, if `v` is one.
Value getTanhGeluInput(Value v) {
  constexpr double kCubic = 0.044715;
  if (auto add = v.getDefiningOp<AddOp>())
    for (auto [x, cube] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())})
      if (isPowerOf(cube, x, 3, kCubic))
        return x;
  if (auto mul = v.getDefiningOp<MulOp>())
    for (auto [x, sum] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())})
      if (Value square = getOnePlus(sum))
        if (isPowerOf(square, x, 2, kCubic))
          return x;
  return nullptr;
}

/// A GELU found: its input, its kind and the op computing it.
struct Gelu {
  Value input;
  GeluApproximation approximation;
  Operation *root;
};

/// Finds the GELU around `unary` (a dnn.tanh or dnn.erf): its argument gives
/// x, `1 + unary` must be used by a product equal to `0.5 * x * (1 +
/// unary)`, the root (up to three multiplications above the sum).
std::optional<Gelu> match(Operation *unary) {
  Value x;
  GeluApproximation approximation;
  Value argument = unary->getOperand(0);
  if (isa<TanhOp>(unary)) {
    // sqrt(2 / pi) * polynomial(x): the constant factors peeled off (the
    // polynomial may be a product itself).
    double constant = 1.0;
    Value polynomial = argument;
    while (Operation *def = polynomial.getDefiningOp()) {
      if (!isa<MulOp, DivOp>(def))
        break;
      std::optional<double> rhs = getSplatFloatValue(def->getOperand(1));
      std::optional<double> lhs = isa<MulOp>(def)
                                      ? getSplatFloatValue(def->getOperand(0))
                                      : std::nullopt;
      if (rhs && (isa<MulOp>(def) || *rhs != 0.0)) {
        constant = isa<MulOp>(def) ? constant * *rhs : constant / *rhs;
        polynomial = def->getOperand(0);
      } else if (lhs) {
        constant *= *lhs;
        polynomial = def->getOperand(1);
      } else {
        break;
      }
    }
    if (!isClose(constant, std::sqrt(2.0 / M_PI)))
      return std::nullopt;
    x = getTanhGeluInput(polynomial);
    approximation = GeluApproximation::Tanh;
  } else {
    // x / sqrt(2): x is the non-constant operand of the one multiplication
    // or division (x itself may be a product).
    Operation *def = argument.getDefiningOp();
    if (!isa_and_nonnull<MulOp, DivOp>(def))
      return std::nullopt;
    for (unsigned i = 0; i < 2 && !x; ++i) {
      Value candidate = def->getOperand(i);
      Product p;
      flatten(argument, candidate, p);
      if (isProduct(p, {candidate}, M_SQRT1_2))
        x = candidate;
    }
    approximation = GeluApproximation::None;
  }
  if (!x)
    return std::nullopt;
  for (Operation *user : unary->getUsers()) {
    Value sum = user->getNumResults() == 1 ? user->getResult(0) : nullptr;
    if (!sum || getOnePlus(sum) != unary->getResult(0))
      continue;
    // Climb the multiplications above the sum.
    Value level = sum;
    for (int i = 0; i < 3 && level.hasOneUse(); ++i) {
      auto mul = dyn_cast<MulOp>(*level.getUsers().begin());
      if (!mul)
        break;
      level = mul.getResult();
      Product p;
      flatten(level, x, p);
      // The sum itself is a factor only if the walk stopped at it: x never
      // contains it.
      if (isProduct(p, {x, sum}, 0.5))
        return Gelu{x, approximation, mul};
    }
  }
  return std::nullopt;
}

struct FuseGeluPass : public dnnc::dnn::impl::FuseGeluPassBase<FuseGeluPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (isa<TanhOp, ErfOp>(op))
        candidates.push_back(op);
    });
    for (Operation *unary : candidates) {
      std::optional<Gelu> gelu = match(unary);
      if (!gelu || gelu->input.getType() != gelu->root->getResult(0).getType())
        continue;
      OpBuilder b(gelu->root);
      Value result = GeluOp::create(
          b, gelu->root->getLoc(), gelu->input.getType(), gelu->input,
          GeluApproximationAttr::get(b.getContext(), gelu->approximation));
      gelu->root->getResult(0).replaceAllUsesWith(result);
      eraseWithDeadProducers(gelu->root);
    }
  }
};

} // namespace
