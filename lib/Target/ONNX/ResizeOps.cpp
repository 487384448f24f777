//===- ResizeOps.cpp - ONNX Resize and Upsample -----------------*- C++ -*-===//
//
// Resize and Upsample, composed of gathers along each resized axis scaled
// by constant interpolation weights.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

namespace {
/// How Resize maps an output coordinate to an input one.
enum class ResizeCoordinates {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
/// How nearest-neighbour Resize rounds a fractional input coordinate.
enum class ResizeRounding {
  RoundPreferFloor,
  RoundPreferCeil,
  Floor,
  Ceil,
  /// Resize-10 and Upsample: truncation when upsampling, ceiling when
  /// downsampling (onnxruntime's rule for those opsets).
  Simple
};
/// The interpolation of a Resize node.
struct ResizeMode {
  enum { Nearest, Linear, Cubic } kind = Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};
/// The input elements and weights one output element of a resized axis
/// combines; `outside` marks a tf_crop_and_resize position past the input,
/// which takes the extrapolation value.
struct ResizeTaps {
  SmallVector<std::pair<int64_t, double>> taps;
  bool outside = false;
};
} // namespace

/// The interpolation weights at distance `ratio` in (0, 1] past the input
/// element left of the sample point, starting `size() / 2 - 1` elements
/// left of it (the ONNX reference's coefficient functions).
static SmallVector<double> resizeCoefficients(const ResizeMode &mode,
                                              double ratio, double scale) {
  SmallVector<double> coeffs;
  if (mode.kind == ResizeMode::Linear && !mode.antialias)
    return {1 - ratio, ratio};
  double a = mode.cubicA;
  auto cubic = [&](double x) {
    x = std::abs(x);
    if (x <= 1)
      return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
      return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  if (!mode.antialias) {
    for (double x : {ratio + 1, ratio, 1 - ratio, 2 - ratio})
      coeffs.push_back(cubic(x));
    return coeffs;
  }
  // Antialiasing stretches the filter by 1 / scale when downsampling.
  double s = std::min(scale, 1.0);
  double support = mode.kind == ResizeMode::Linear ? 1.0 : 2.0;
  int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
  int64_t end = 2 - start;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    double x = s * (i - ratio);
    double c = mode.kind == ResizeMode::Linear
                   ? std::clamp(1 - std::abs(x), 0.0, 1.0)
                   : cubic(x);
    coeffs.push_back(c);
    sum += c;
  }
  for (double &c : coeffs)
    c /= sum;
  return coeffs;
}

/// The taps of each of the `outLen` elements of an axis of `inLen` elements
/// resized by `scale` (`roi` the tf_crop_and_resize window, normalized).
static SmallVector<ResizeTaps> resizeAxisTaps(const ResizeMode &mode,
                                              int64_t inLen, int64_t outLen,
                                              double scale,
                                              std::pair<double, double> roi) {
  SmallVector<ResizeTaps> result(outLen);
  // In float arithmetic, as onnxruntime: that decides the rounding of
  // nearest-neighbour positions that fall on a half.
  float s = static_cast<float>(scale), in = static_cast<float>(inLen),
        out = static_cast<float>(outLen);
  float start = static_cast<float>(roi.first),
        end = static_cast<float>(roi.second);
  // The resized length before rounding down: align_corners and
  // tf_crop_and_resize map the ends of this window, as the ONNX reference
  // (onnxruntime uses the rounded length, which differs when the scale times
  // the extent is not an integer).
  float width = s * in;
  for (int64_t i = 0; i < outLen; ++i) {
    float x = static_cast<float>(i), coord = 0;
    switch (mode.coordinates) {
    case ResizeCoordinates::HalfPixel:
      coord = (x + 0.5f) / s - 0.5f;
      break;
    case ResizeCoordinates::HalfPixelSymmetric: {
      float adjustment = out / width;
      coord = in / 2 * (1 - adjustment) + (x + 0.5f) / s - 0.5f;
      break;
    }
    case ResizeCoordinates::PytorchHalfPixel:
      coord = outLen > 1 ? (x + 0.5f) / s - 0.5f : 0;
      break;
    case ResizeCoordinates::AlignCorners:
      coord = width != 1 ? x * (in - 1) / (width - 1) : 0;
      break;
    case ResizeCoordinates::Asymmetric:
      coord = x / s;
      break;
    case ResizeCoordinates::TfHalfPixelForNN:
      coord = (x + 0.5f) / s;
      break;
    case ResizeCoordinates::TfCropAndResize:
      coord = width != 1 ? start * (in - 1) +
                               x * (end - start) * (in - 1) / (width - 1)
                         : 0.5f * (start + end) * (in - 1);
      if (coord < 0 || coord > in - 1) {
        result[i].outside = true;
        continue;
      }
      break;
    }
    double orig = coord;
    auto clampIndex = [&](int64_t idx) {
      return std::clamp<int64_t>(idx, 0, inLen - 1);
    };
    if (mode.kind == ResizeMode::Nearest) {
      double lower = std::floor(orig);
      double frac = orig - lower;
      bool up = false;
      switch (mode.rounding) {
      case ResizeRounding::RoundPreferFloor:
        up = frac > 0.5;
        break;
      case ResizeRounding::RoundPreferCeil:
        up = frac >= 0.5;
        break;
      case ResizeRounding::Floor:
        break;
      case ResizeRounding::Ceil:
        up = frac > 0;
        break;
      case ResizeRounding::Simple:
        up = scale < 1 ? frac > 0 : (orig < 0 && frac > 0);
        break;
      }
      result[i].taps.push_back(
          {clampIndex(static_cast<int64_t>(lower) + (up ? 1 : 0)), 1.0});
      continue;
    }
    // The element left of the sample point (one further left when the point
    // is an element), and the distance past it in (0, 1].
    double base = std::ceil(orig) - 1;
    SmallVector<double> coeffs =
        resizeCoefficients(mode, orig - base, scale);
    int64_t first = static_cast<int64_t>(base) -
                    static_cast<int64_t>(coeffs.size()) / 2 + 1;
    if (mode.excludeOutside) {
      double sum = 0;
      for (auto [k, c] : llvm::enumerate(coeffs)) {
        int64_t idx = first + static_cast<int64_t>(k);
        if (idx < 0 || idx >= inLen)
          c = 0;
        sum += c;
      }
      if (sum != 0)
        for (double &c : coeffs)
          c /= sum;
    }
    for (auto [k, c] : llvm::enumerate(coeffs)) {
      if (c == 0)
        continue;
      int64_t idx = clampIndex(first + static_cast<int64_t>(k));
      auto *same = llvm::find_if(result[i].taps,
                                 [&](auto &tap) { return tap.first == idx; });
      if (same != result[i].taps.end())
        same->second += c;
      else
        result[i].taps.push_back({idx, c});
    }
  }
  return result;
}

/// Resize-10/11/13/18/19 and Upsample-7/9: separable interpolation, one
/// axis at a time. Each output element of an axis is a weighted sum of a few
/// input elements along it (`taps`, computed here from the constant scales or
/// sizes): a Gather per tap, scaled by a constant weight and summed; nearest
/// mode is a single Gather, exact for every element type. Linear and cubic
/// interpolation of float16/bfloat16 inputs runs in float32.
LogicalResult dnnc::onnx_import::importResize(NodeImporter &n) {
  bool upsample = n.node.op_type() == "Upsample";
  bool legacy = upsample || n.opset < 11;
  int maxInputs = upsample ? (n.opset >= 9 ? 2 : 1) : (legacy ? 2 : 4);
  int minInputs = legacy ? maxInputs : 1;
  if (failed(n.checkArity(minInputs, maxInputs, 1)))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();

  ResizeMode mode;
  auto modeName = n.getString("mode", "nearest");
  auto coordName = n.getString("coordinate_transformation_mode",
                               legacy ? "asymmetric" : "half_pixel");
  auto roundName = n.getString("nearest_mode", "round_prefer_floor");
  auto policyName = n.getString("keep_aspect_ratio_policy", "stretch");
  auto cubicA = n.getFloat("cubic_coeff_a", -0.75f);
  auto exclude = n.getInt("exclude_outside", 0);
  auto antialias = n.getInt("antialias", 0);
  auto extrapolation = n.getFloat("extrapolation_value", 0.0f);
  auto axesAttr = n.getInts("axes");
  if (failed(modeName) || failed(coordName) || failed(roundName) ||
      failed(policyName) || failed(cubicA) || failed(exclude) ||
      failed(antialias) || failed(extrapolation) || failed(axesAttr))
    return failure();
  if (*modeName == "nearest")
    mode.kind = ResizeMode::Nearest;
  else if (*modeName == "linear" || (legacy && *modeName == "bilinear"))
    mode.kind = ResizeMode::Linear;
  else if (*modeName == "cubic" && !legacy)
    mode.kind = ResizeMode::Cubic;
  else
    return n.fail("unsupported mode '" + *modeName + "'");
  auto coordinates =
      llvm::StringSwitch<std::optional<ResizeCoordinates>>(*coordName)
          .Case("half_pixel", ResizeCoordinates::HalfPixel)
          .Case("half_pixel_symmetric", ResizeCoordinates::HalfPixelSymmetric)
          .Case("pytorch_half_pixel", ResizeCoordinates::PytorchHalfPixel)
          .Case("align_corners", ResizeCoordinates::AlignCorners)
          .Case("asymmetric", ResizeCoordinates::Asymmetric)
          .Case("tf_half_pixel_for_nn", ResizeCoordinates::TfHalfPixelForNN)
          .Case("tf_crop_and_resize", ResizeCoordinates::TfCropAndResize)
          .Default(std::nullopt);
  if (!coordinates)
    return n.fail("unsupported coordinate_transformation_mode '" +
                  *coordName + "'");
  mode.coordinates = *coordinates;
  auto rounding = llvm::StringSwitch<std::optional<ResizeRounding>>(*roundName)
                      .Case("round_prefer_floor",
                            ResizeRounding::RoundPreferFloor)
                      .Case("round_prefer_ceil",
                            ResizeRounding::RoundPreferCeil)
                      .Case("floor", ResizeRounding::Floor)
                      .Case("ceil", ResizeRounding::Ceil)
                      .Default(std::nullopt);
  if (!rounding)
    return n.fail("unsupported nearest_mode '" + *roundName + "'");
  mode.rounding = legacy ? ResizeRounding::Simple : *rounding;
  if (*policyName != "stretch" && *policyName != "not_larger" &&
      *policyName != "not_smaller")
    return n.fail("unsupported keep_aspect_ratio_policy '" + *policyName +
                  "'");
  mode.cubicA = *cubicA;
  mode.excludeOutside = *exclude != 0;
  mode.antialias = *antialias != 0 && mode.kind != ResizeMode::Nearest;
  if (mode.kind != ResizeMode::Nearest && !isa<FloatType>(eltOf(x)))
    return n.fail("linear and cubic interpolation need a floating-point "
                  "input");

  // The resized axes: all, or those of `axes` (opset 18).
  SmallVector<int64_t> axes;
  if (*axesAttr) {
    for (int64_t a : **axesAttr) {
      auto v = normAxis(n, a, rank);
      if (failed(v))
        return failure();
      if (llvm::is_contained(axes, *v))
        return n.fail("axes contain a duplicate");
      axes.push_back(*v);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  int64_t numAxes = axes.size();

  // Scales (an attribute of Upsample-7, else an input) or sizes.
  SmallVector<double> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (upsample && n.opset < 9) {
    auto attr = n.findAttr("scales");
    if (!attr)
      return n.fail("attribute 'scales' is required");
    for (float f : attr->floats())
      scales.push_back(f);
  } else {
    int scalesInput = legacy ? 1 : 2;
    if (n.hasInput(scalesInput) &&
        product(shapeOf(n.input(scalesInput))) != 0) {
      auto v = n.constantFloats(scalesInput, "scales");
      if (failed(v))
        return failure();
      scales = *v;
    }
    if (!legacy && n.hasInput(3)) {
      auto v = n.constantInts(3, "sizes");
      if (failed(v))
        return failure();
      sizes = *v;
    }
  }
  if (scales.empty() == !sizes)
    return n.fail("exactly one of scales and sizes must be given");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != numAxes)
    return n.fail("scales has " + Twine(scales.size()) + " values for " +
                  Twine(numAxes) + " resized axes");
  if (sizes && static_cast<int64_t>(sizes->size()) != numAxes)
    return n.fail("sizes has " + Twine(sizes->size()) + " values for " +
                  Twine(numAxes) + " resized axes");

  // The tf_crop_and_resize window: starts then ends, one per resized axis.
  SmallVector<std::pair<double, double>> roi(numAxes, {0.0, 1.0});
  if (mode.coordinates == ResizeCoordinates::TfCropAndResize) {
    if (legacy || !n.hasInput(1))
      return n.fail("tf_crop_and_resize needs the roi input");
    auto v = n.constantFloats(1, "roi");
    if (failed(v))
      return failure();
    int64_t given = v->size() / 2;
    if (static_cast<int64_t>(v->size()) != 2 * numAxes &&
        !(static_cast<int64_t>(v->size()) == 2 * rank && *axesAttr))
      return n.fail("roi has " + Twine(v->size()) + " values for " +
                    Twine(numAxes) + " resized axes");
    for (int64_t i = 0; i < numAxes; ++i) {
      int64_t at = given == numAxes ? i : axes[i];
      roi[i] = {(*v)[at], (*v)[given + at]};
    }
  }

  // The scale and output extent of each resized axis.
  SmallVector<int64_t> outShape(xs);
  SmallVector<double> axisScale(numAxes);
  if (sizes) {
    for (int64_t i = 0; i < numAxes; ++i)
      if ((*sizes)[i] < 0)
        return n.fail("sizes must be non-negative");
    if (*policyName == "stretch") {
      for (int64_t i = 0; i < numAxes; ++i) {
        int64_t in = xs[axes[i]];
        axisScale[i] = in ? static_cast<double>((*sizes)[i]) / in : 1.0;
        outShape[axes[i]] = (*sizes)[i];
      }
    } else {
      bool larger = *policyName == "not_smaller";
      std::optional<double> common;
      for (int64_t i = 0; i < numAxes; ++i) {
        int64_t in = xs[axes[i]];
        if (in == 0)
          continue;
        double s = static_cast<double>((*sizes)[i]) / in;
        common = !common ? s : larger ? std::max(*common, s)
                                      : std::min(*common, s);
      }
      for (int64_t i = 0; i < numAxes; ++i) {
        axisScale[i] = common.value_or(1.0);
        outShape[axes[i]] = static_cast<int64_t>(
            std::floor(axisScale[i] * xs[axes[i]] + 0.5));
      }
    }
  } else {
    for (int64_t i = 0; i < numAxes; ++i) {
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        return n.fail("scales must be positive and finite, not " +
                    llvm::formatv("{0}", scales[i]).str());
      axisScale[i] = scales[i];
      // In double, as ONNX shape inference (onnxruntime multiplies in
      // float: 1.8f * 5 is 9 there, 8 here).
      double extent = std::floor(scales[i] * xs[axes[i]]);
      if (extent > static_cast<double>(kMaxElements))
        return n.fail("the result would have more than 2^40 elements");
      outShape[axes[i]] = static_cast<int64_t>(extent);
    }
  }
  if (failed(checkSize(n, outShape)))
    return failure();

  Composer c(n);
  Type elt = eltOf(x);
  if (product(outShape) == 0 || product(xs) == 0)
    return c.finish(c.fill(RankedTensorType::get(outShape, elt), 0.0));
  bool widen = mode.kind != ResizeMode::Nearest &&
               cast<FloatType>(elt).getWidth() < 32;
  Value y = widen ? c.convert(x, Float32Type::get(n.b.getContext())) : x;
  Type computeElt = eltOf(y);
  Type i64 = n.b.getI64Type();
  for (int64_t i = 0; i < numAxes; ++i) {
    int64_t axis = axes[i], inLen = xs[axis], outLen = outShape[axis];
    SmallVector<ResizeTaps> taps =
        resizeAxisTaps(mode, inLen, outLen, axisScale[i], roi[i]);
    bool identity = inLen == outLen;
    bool single = true, anyOutside = false;
    size_t width = 1;
    for (auto [j, t] : llvm::enumerate(taps)) {
      anyOutside |= t.outside;
      width = std::max(width, t.taps.size());
      bool one = t.outside || (t.taps.size() == 1 && t.taps[0].second == 1.0);
      single &= one;
      identity &= !t.outside && t.taps.size() == 1 &&
                  t.taps[0].first == static_cast<int64_t>(j) &&
                  t.taps[0].second == 1.0;
    }
    if (identity)
      continue;
    SmallVector<int64_t> weightShape(rank, 1);
    weightShape[axis] = outLen;
    Value combined;
    for (size_t k = 0; k < (single ? 1 : width); ++k) {
      SmallVector<int64_t> index(outLen);
      SmallVector<double> weight(outLen, 0.0);
      for (int64_t j = 0; j < outLen; ++j) {
        const auto &t = taps[j].taps;
        if (k < t.size()) {
          index[j] = t[k].first;
          weight[j] = t[k].second;
        } else {
          index[j] = t.empty() ? 0 : t.front().first;
        }
      }
      Value gathered = c.gather(
          y,
          n.constant(DenseElementsAttr::get(
              RankedTensorType::get({outLen}, i64), ArrayRef<int64_t>(index))),
          axis);
      if (!gathered)
        return failure();
      if (!single) {
        auto weightType = RankedTensorType::get(weightShape, computeElt);
        DenseElementsAttr weights =
            computeElt.isF64()
                ? DenseElementsAttr::get(weightType, ArrayRef<double>(weight))
                : DenseElementsAttr::get(
                      weightType,
                      ArrayRef<float>(llvm::to_vector(llvm::map_range(
                          weight, [](double w) { return float(w); }))));
        gathered = c.binary<dnn::MulOp>(
            gathered, c.broadcastTo(n.constant(weights), shapeOf(gathered)));
      }
      combined = combined ? c.binary<dnn::AddOp>(combined, gathered) : gathered;
    }
    if (anyOutside && combined) {
      SmallVector<bool> bits;
      for (const ResizeTaps &t : taps)
        bits.push_back(t.outside);
      auto maskType = RankedTensorType::get(weightShape, n.b.getI1Type());
      Value mask = c.broadcastTo(
          n.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(bits))),
          shapeOf(combined));
      combined = c.select(mask, c.splat(combined, *extrapolation), combined);
    }
    y = combined;
    if (!y)
      return failure();
  }
  return c.finish(widen ? c.convert(y, elt) : y);
}
