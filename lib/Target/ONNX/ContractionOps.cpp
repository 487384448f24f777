//===- ContractionOps.cpp - ONNX contractions, conv, pooling ----*- C++ -*-===//
//
// The contraction, convolution and pooling op family: MatMul, Gemm, Einsum,
// Conv, ConvTranspose (composed of a convolution), MaxPool, AveragePool and
// the global pools.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult dnnc::onnx_import::importMatMul(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (eltOf(a) != eltOf(b))
    return n.fail("operand element types differ");
  SmallVector<int64_t> as(shapeOf(a)), bs(shapeOf(b));
  if (as.empty() || bs.empty())
    return n.fail("MatMul operands must have rank >= 1");
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    return n.fail("operand shapes are incompatible: contracting dimensions " +
                  Twine(as.back()) + " and " + Twine(bs[bs.size() - 2]) +
                  " differ");
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  auto batch = dnn::broadcastShapes(aBatch, bBatch);
  if (failed(batch))
    return n.fail("operand shapes are incompatible: batch dimensions are not "
                  "broadcastable");
  auto ra = n.reshape(a, as);
  auto rb = n.reshape(b, bs);
  if (failed(ra) || failed(rb))
    return failure();
  a = *ra;
  b = *rb;
  SmallVector<int64_t> fullA(*batch), fullB(*batch);
  fullA.append({as[as.size() - 2], as.back()});
  fullB.append({bs[bs.size() - 2], bs.back()});
  if (!(bBatch.empty() && ArrayRef<int64_t>(*batch) == aBatch)) {
    auto ba = n.broadcastTo(a, fullA);
    auto bb = n.broadcastTo(b, fullB);
    if (failed(ba) || failed(bb))
      return failure();
    a = *ba;
    b = *bb;
  }
  auto r = n.build<dnn::MatMulOp>({}, a, b);
  if (failed(r))
    return failure();
  SmallVector<int64_t> outShape(*batch);
  if (!aVec)
    outShape.push_back(as[as.size() - 2]);
  if (!bVec)
    outShape.push_back(bs.back());
  return n.setResult(n.reshape(*r, outShape));
}

LogicalResult dnnc::onnx_import::importGemm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  auto transA = n.getInt("transA", 0);
  auto transB = n.getInt("transB", 0);
  auto alpha = n.getFloat("alpha", 1.0f);
  auto beta = n.getFloat("beta", 1.0f);
  if (failed(transA) || failed(transB) || failed(alpha) || failed(beta))
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (rankOf(a) != 2 || rankOf(b) != 2)
    return n.fail("A and B must be matrices");
  auto transpose = [&](Value v) {
    return n.build<dnn::TransposeOp>({}, v, n.b.getDenseI64ArrayAttr({1, 0}));
  };
  if (*transA) {
    auto t = transpose(a);
    if (failed(t))
      return failure();
    a = *t;
  }
  if (*transB) {
    auto t = transpose(b);
    if (failed(t))
      return failure();
    b = *t;
  }
  auto y = n.build<dnn::MatMulOp>({}, a, b);
  if (failed(y))
    return failure();
  auto type = cast<RankedTensorType>(y->getType());
  if (!isa<FloatType>(type.getElementType()) &&
      (*alpha != 1.0f || (n.hasInput(2) && *beta != 1.0f)))
    return n.fail("alpha and beta other than 1 need float operands");
  Value out = *y;
  if (*alpha != 1.0f) {
    auto s = n.build<dnn::MulOp>(type, out, n.splatFloat(type, *alpha));
    if (failed(s))
      return failure();
    out = *s;
  }
  if (n.hasInput(2) && *beta != 0.0f) {
    auto c = n.broadcastTo(n.input(2), type.getShape());
    if (failed(c))
      return failure();
    Value cv = *c;
    if (*beta != 1.0f) {
      auto s = n.build<dnn::MulOp>(type, cv, n.splatFloat(type, *beta));
      if (failed(s))
        return failure();
      cv = *s;
    }
    auto sum = n.build<dnn::AddOp>(type, out, cv);
    if (failed(sum))
      return failure();
    out = *sum;
  }
  n.setOutput(0, out);
  return success();
}

/// Einsum-12: the equation rewritten into the explicit form `dnn.einsum`
/// takes: every label (either case) renamed to a lower-case letter, each
/// operand's ellipsis replaced by labels of its leading dimensions (aligned
/// from the right, as numpy broadcasting), operands broadcast where an
/// ellipsis dimension has extent 1 against a larger one, and the implicit
/// output (`...` then the labels used once, alphabetically) made explicit.
LogicalResult dnnc::onnx_import::importEinsum(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<int>::max(), 1)) ||
      failed(requireAllInputs(n)))
    return failure();
  auto eq = n.getString("equation", "");
  if (failed(eq))
    return failure();
  std::string equation;
  for (char c : *eq)
    if (c != ' ')
      equation.push_back(c);
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = equation.substr(arrow + 2);
  SmallVector<std::string> terms;
  SmallVector<StringRef> parts;
  StringRef(lhs).split(parts, ',');
  for (StringRef term : parts)
    terms.push_back(term.str());
  int numInputs = n.numInputs();
  if (static_cast<int>(terms.size()) != numInputs)
    return n.fail("equation has " + Twine(terms.size()) + " operand terms "
                  "for " + Twine(numInputs) + " inputs");
  // Checks a term: letters and at most one ellipsis; returns its letters.
  auto lettersOf = [&](StringRef term,
                       bool &ellipsis) -> FailureOr<std::string> {
    size_t at = term.find("...");
    ellipsis = at != StringRef::npos;
    std::string letters =
        ellipsis ? (term.take_front(at) + term.drop_front(at + 3)).str()
                 : term.str();
    for (char c : letters)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return n.fail("equation '" + *eq + "' has an invalid term '" + term +
                      "'");
    return letters;
  };
  // Renames the letters (either case) to lower-case ones, in order of first
  // appearance; ellipsis dimensions get the letters after them.
  std::map<char, char> rename;
  auto renamed = [&](char c) -> FailureOr<char> {
    auto it = rename.find(c);
    if (it != rename.end())
      return it->second;
    if (rename.size() >= 26)
      return n.fail("einsum with more than 26 labels is not supported");
    char to = static_cast<char>('a' + rename.size());
    rename[c] = to;
    return to;
  };
  SmallVector<std::string> letters;
  SmallVector<bool> hasEllipsis;
  SmallVector<int64_t> ellipsisRank;
  int64_t maxEllipsis = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    bool ellipsis;
    auto l = lettersOf(term, ellipsis);
    if (failed(l))
      return failure();
    int64_t rank = rankOf(n.input(i));
    int64_t extra = rank - static_cast<int64_t>(l->size());
    if (extra < 0 || (!ellipsis && extra != 0))
      return n.fail("term '" + term + "' does not match input " + Twine(i) +
                    " of rank " + Twine(rank));
    letters.push_back(*l);
    hasEllipsis.push_back(ellipsis);
    ellipsisRank.push_back(extra);
    maxEllipsis = std::max(maxEllipsis, extra);
  }
  std::map<char, int> counts;
  for (const std::string &l : letters)
    for (char c : l) {
      ++counts[c];
      if (failed(renamed(c)))
        return failure();
    }
  if (rhs) {
    bool ellipsis;
    auto l = lettersOf(*rhs, ellipsis);
    if (failed(l))
      return failure();
    for (char c : *l)
      if (!counts.count(c))
        return n.fail("output label '" + Twine(c) +
                      "' is not an operand label");
  }
  if (rename.size() + maxEllipsis > 26)
    return n.fail("einsum with more than 26 labels is not supported");
  std::string ellipsisLabels;
  for (int64_t k = 0; k < maxEllipsis; ++k)
    ellipsisLabels.push_back(static_cast<char>('a' + rename.size() + k));
  // The extent of each ellipsis label: the largest among the operands, which
  // must otherwise have it or 1.
  SmallVector<int64_t> ellipsisExtent(maxEllipsis, 1);
  for (auto [i, extra] : llvm::enumerate(ellipsisRank)) {
    ArrayRef<int64_t> shape = shapeOf(n.input(i));
    size_t at = terms[i].find("...");
    for (int64_t k = 0; k < extra; ++k) {
      int64_t d = shape[at + k], &e = ellipsisExtent[maxEllipsis - extra + k];
      if (d != e && d != 1 && e != 1)
        return n.fail("ellipsis dimensions of extents " + Twine(e) + " and " +
                      Twine(d) + " do not broadcast");
      e = std::max(e, d);
    }
  }
  std::string explicitEq;
  SmallVector<Value> inputs;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value input = n.input(i);
    std::string out;
    SmallVector<int64_t> target(shapeOf(input));
    size_t at = term.find("...");
    for (size_t pos = 0; pos < term.size();) {
      if (at != std::string::npos && pos == at) {
        for (int64_t k = 0; k < ellipsisRank[i]; ++k) {
          int64_t label = maxEllipsis - ellipsisRank[i] + k;
          out.push_back(ellipsisLabels[label]);
          target[out.size() - 1] = ellipsisExtent[label];
        }
        pos += 3;
        continue;
      }
      out.push_back(rename[term[pos++]]);
    }
    if (target != shapeOf(input)) {
      auto b = n.broadcastTo(input, target);
      if (failed(b))
        return failure();
      input = *b;
    }
    inputs.push_back(input);
    explicitEq += (i ? "," : "") + out;
  }
  explicitEq += "->";
  if (rhs) {
    size_t at = rhs->find("...");
    for (size_t pos = 0; pos < rhs->size();) {
      if (at != std::string::npos && pos == at) {
        explicitEq += ellipsisLabels;
        pos += 3;
        continue;
      }
      explicitEq.push_back(rename[(*rhs)[pos++]]);
    }
  } else {
    // Implicit output: the ellipsis, then the labels used once, in
    // alphabetical order of the original letters.
    explicitEq += ellipsisLabels;
    for (auto [c, k] : counts)
      if (k == 1)
        explicitEq.push_back(rename[c]);
  }
  return n.setResult(n.build<dnn::EinsumOp>({}, ValueRange(inputs),
                                            n.b.getStringAttr(explicitEq)));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Spatial window attributes shared by Conv and the pools.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads kernel/strides/pads/dilations/auto_pad for `numSpatial` dims and
/// resolves auto_pad to explicit pads.
static FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> spatial,
                                    ArrayRef<int64_t> kernel) {
  int64_t k = spatial.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto strides = n.getInts("strides");
  auto pads = n.getInts("pads");
  auto dilations = n.getInts("dilations");
  auto autoPad = n.getString("auto_pad", "NOTSET");
  if (failed(strides) || failed(pads) || failed(dilations) || failed(autoPad))
    return failure();
  w.strides = *strides ? **strides : SmallVector<int64_t>(k, 1);
  w.dilations = *dilations ? **dilations : SmallVector<int64_t>(k, 1);
  w.pads = *pads ? **pads : SmallVector<int64_t>(2 * k, 0);
  if (static_cast<int64_t>(w.strides.size()) != k ||
      static_cast<int64_t>(w.dilations.size()) != k ||
      static_cast<int64_t>(w.pads.size()) != 2 * k ||
      static_cast<int64_t>(w.kernel.size()) != k)
    return n.fail("kernel_shape, strides, dilations and pads do not match "
                  "the " +
                  Twine(k) + " spatial dimensions");
  if (llvm::any_of(w.strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.dilations, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.kernel, [](int64_t s) { return s < 1; }))
    return n.fail("kernel_shape, strides and dilations must be >= 1");
  if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < k; ++i) {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - spatial[i]);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = *autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + k] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
  } else if (*autoPad != "NOTSET") {
    return n.fail("unsupported auto_pad '" + *autoPad + "'");
  }
  return w;
}

LogicalResult dnnc::onnx_import::importConv(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), wt = n.input(1);
  if (rankOf(x) < 3 || rankOf(wt) != rankOf(x))
    return n.fail("input must be [N, C, spatial...] and weight of equal rank");
  auto kernelAttr = n.getInts("kernel_shape");
  auto group = n.getInt("group", 1);
  if (failed(kernelAttr) || failed(group))
    return failure();
  ArrayRef<int64_t> kernel = shapeOf(wt).drop_front(2);
  if (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != kernel)
    return n.fail("kernel_shape does not match the weight's shape");
  auto w = readWindow(n, shapeOf(x).drop_front(2), kernel);
  if (failed(w))
    return failure();
  return n.setResult(n.build<dnn::ConvOp>(
      {}, x, wt, n.hasInput(2) ? n.input(2) : Value(),
      n.b.getDenseI64ArrayAttr(w->strides), n.b.getDenseI64ArrayAttr(w->pads),
      n.b.getDenseI64ArrayAttr(w->dilations), n.b.getI64IntegerAttr(*group)));
}

/// What MaxPool and AveragePool share: the input and its resolved window.
struct PoolWindow {
  Value input;
  Window window;
  bool ceilMode;
};

/// Reads the input, kernel_shape, ceil_mode and window attributes of a pool.
static FailureOr<PoolWindow> readPool(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, spatial...]");
  auto kernel = n.getRequiredInts("kernel_shape");
  auto ceil = n.getInt("ceil_mode", 0);
  if (failed(kernel) || failed(ceil))
    return failure();
  auto w = readWindow(n, shapeOf(x).drop_front(2), *kernel);
  if (failed(w))
    return failure();
  return PoolWindow{x, *w, *ceil != 0};
}

/// MaxPool: integer inputs (uint8 images, int8) are pooled in float32 (up
/// to 16 bits) or float64, which hold them exactly.
LogicalResult dnnc::onnx_import::importMaxPool(NodeImporter &n) {
  auto p = readPool(n);
  if (failed(p) || failed(n.getInt("storage_order", 0)))
    return failure();
  const Window &w = p->window;
  Value x = p->input;
  Type elt = eltOf(x);
  auto intType = dyn_cast<IntegerType>(elt);
  if (intType && intType.getWidth() == 1)
    return n.fail("input must be numeric, not bool");
  if (intType) {
    Type f = intType.getWidth() <= 16 ? Type(n.b.getF32Type())
                                      : Type(n.b.getF64Type());
    auto cast = n.build<dnn::CastOp>(RankedTensorType::get(shapeOf(x), f), x);
    if (failed(cast))
      return failure();
    x = *cast;
  }
  auto pooled = n.build<dnn::MaxPoolOp>(
      {}, x, n.b.getDenseI64ArrayAttr(w.kernel),
      n.b.getDenseI64ArrayAttr(w.strides), n.b.getDenseI64ArrayAttr(w.pads),
      n.b.getDenseI64ArrayAttr(w.dilations), n.b.getBoolAttr(p->ceilMode));
  if (failed(pooled) || !intType)
    return n.setResult(pooled);
  return n.setResult(n.build<dnn::CastOp>(
      RankedTensorType::get(shapeOf(*pooled), elt), *pooled));
}

LogicalResult dnnc::onnx_import::importAveragePool(NodeImporter &n) {
  auto p = readPool(n);
  if (failed(p))
    return failure();
  auto countPad = n.getInt("count_include_pad", 0);
  if (failed(countPad))
    return failure();
  const Window &w = p->window;
  if (llvm::any_of(w.dilations, [](int64_t d) { return d != 1; }))
    return n.fail("dilated average pooling is not supported");
  return n.setResult(n.build<dnn::AvgPoolOp>(
      {}, p->input, n.b.getDenseI64ArrayAttr(w.kernel),
      n.b.getDenseI64ArrayAttr(w.strides), n.b.getDenseI64ArrayAttr(w.pads),
      n.b.getBoolAttr(p->ceilMode), n.b.getBoolAttr(*countPad != 0)));
}

template <typename OpT>
LogicalResult dnnc::onnx_import::importGlobalPool(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, spatial...]");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rankOf(x); ++i)
    axes.push_back(i);
  return n.setResult(n.build<OpT>({}, x, n.b.getDenseI64ArrayAttr(axes),
                                  n.b.getBoolAttr(true)));
}

/// ConvTranspose-1/11: the transpose of a convolution, as one: the input
/// with `stride - 1` zeros between its elements, convolved at stride 1 and
/// the same dilations with the kernel flipped and its two channel dimensions
/// swapped within each group, padded by `dilation * (kernel - 1) - pad`
/// (cropped where that is negative) and `output_padding` more at the end.
/// Explicit `output_shape` or SAME auto_pad fix the pads as the ONNX
/// reference does (the larger half at the end for SAME_UPPER, at the
/// beginning otherwise).
LogicalResult dnnc::onnx_import::importConvTranspose(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), wt = n.input(1);
  int64_t rank = rankOf(x);
  if (rank < 3 || rankOf(wt) != rank)
    return n.fail("input must be [N, C, spatial...] and weight of equal rank");
  int64_t k = rank - 2;
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(wt);
  auto group = n.getInt("group", 1);
  auto kernelAttr = n.getInts("kernel_shape");
  auto stridesAttr = n.getInts("strides");
  auto dilationsAttr = n.getInts("dilations");
  auto padsAttr = n.getInts("pads");
  auto outPadAttr = n.getInts("output_padding");
  auto outShapeAttr = n.getInts("output_shape");
  auto autoPad = n.getString("auto_pad", "NOTSET");
  if (failed(group) || failed(kernelAttr) || failed(stridesAttr) ||
      failed(dilationsAttr) || failed(padsAttr) || failed(outPadAttr) ||
      failed(outShapeAttr) || failed(autoPad))
    return failure();
  if (*group < 1 || xs[1] % *group != 0)
    return n.fail("group " + Twine(*group) + " must divide the " +
                  Twine(xs[1]) + " input channels");
  if (ws[0] != xs[1])
    return n.fail("weight must be [C, M / group, kernel...] with C = " +
                  Twine(xs[1]) + ", not " + Twine(ws[0]));
  ArrayRef<int64_t> kernel = ws.drop_front(2);
  if (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != kernel)
    return n.fail("kernel_shape does not match the weight's shape");
  auto orOnes = [&](const std::optional<SmallVector<int64_t>> &v,
                    int64_t size, int64_t fill) {
    return v ? *v : SmallVector<int64_t>(size, fill);
  };
  SmallVector<int64_t> strides = orOnes(*stridesAttr, k, 1);
  SmallVector<int64_t> dilations = orOnes(*dilationsAttr, k, 1);
  SmallVector<int64_t> pads = orOnes(*padsAttr, 2 * k, 0);
  SmallVector<int64_t> outPad = orOnes(*outPadAttr, k, 0);
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k ||
      static_cast<int64_t>(pads.size()) != 2 * k ||
      static_cast<int64_t>(outPad.size()) != k)
    return n.fail("strides, dilations, pads and output_padding do not match "
                  "the " +
                  Twine(k) + " spatial dimensions");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(kernel, [](int64_t s) { return s < 1; }))
    return n.fail("kernel_shape, strides and dilations must be >= 1");
  if (llvm::any_of(outPad, [](int64_t s) { return s < 0; }) ||
      llvm::any_of(pads, [](int64_t s) { return s < 0; }))
    return n.fail("pads and output_padding must be >= 0");
  std::optional<SmallVector<int64_t>> outShape = *outShapeAttr;
  if (outShape && static_cast<int64_t>(outShape->size()) == k + 2)
    outShape->erase(outShape->begin(), outShape->begin() + 2);
  if (outShape && static_cast<int64_t>(outShape->size()) != k)
    return n.fail("output_shape must have " + Twine(k) + " spatial extents");
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (!same && *autoPad != "NOTSET" && *autoPad != "VALID")
    return n.fail("unsupported auto_pad '" + *autoPad + "'");

  SmallVector<int64_t> resultShape{xs[0], ws[1] * *group};
  for (int64_t i = 0; i < k; ++i) {
    int64_t in = xs[2 + i];
    int64_t full = strides[i] * (in - 1) + outPad[i] +
                   (kernel[i] - 1) * dilations[i] + 1;
    if (outShape || same) {
      int64_t want = outShape ? (*outShape)[i] : in * strides[i];
      // Negative when the output is longer: an explicit output_shape grows
      // the end like output_padding (floor division, as the ONNX
      // reference); SAME never pads negatively (the output stays `full`, as
      // ONNX shape inference and onnxruntime have it).
      int64_t total = full - want;
      if (!outShape)
        total = std::max<int64_t>(total, 0);
      int64_t half = llvm::divideFloorSigned(total, 2);
      pads[i] = *autoPad == "SAME_UPPER" ? half : total - half;
      pads[k + i] = total - pads[i];
    } else if (*autoPad == "VALID") {
      pads[i] = pads[k + i] = 0;
    }
    int64_t extent = full - pads[i] - pads[k + i];
    if (extent < 1)
      return n.fail("the pads of spatial dimension " + Twine(i) +
                    " leave no output");
    resultShape.push_back(extent);
  }
  if (failed(checkSize(n, resultShape)))
    return failure();

  Composer c(n);
  // The input with stride - 1 zeros after each element but the last.
  Value y = x;
  for (int64_t i = 0; i < k && y; ++i) {
    int64_t dim = 2 + i, in = shapeOf(y)[dim], s = strides[i];
    if (s == 1 || in <= 1)
      continue;
    SmallVector<int64_t> spread(shapeOf(y));
    spread.insert(spread.begin() + dim + 1, 1);
    SmallVector<int64_t> zeroShape(spread);
    zeroShape[dim + 1] = s - 1;
    Value wide = c.concat(
        {c.reshape(y, spread),
         c.fill(RankedTensorType::get(zeroShape, eltOf(x)), 0.0)},
        dim + 1);
    SmallVector<int64_t> merged(shapeOf(y));
    merged[dim] = in * s;
    y = c.slice(c.reshape(wide, merged), dim, 0, (in - 1) * s + 1);
  }
  // [C, M/g, K...] -> [M, C/g, K...] within each group, kernel flipped.
  int64_t g = *group, cg = xs[1] / g, mg = ws[1];
  SmallVector<int64_t> grouped{g, cg, mg};
  llvm::append_range(grouped, kernel);
  SmallVector<int64_t> perm{0, 2, 1};
  for (int64_t i = 0; i < k; ++i)
    perm.push_back(3 + i);
  SmallVector<int64_t> convWeightShape{g * mg, cg};
  llvm::append_range(convWeightShape, kernel);
  Value w = c.reshape(c.transpose(c.reshape(wt, grouped), perm),
                      convWeightShape);
  for (int64_t i = 0; i < k; ++i)
    if (kernel[i] > 1)
      w = c.slice(w, 2 + i, kernel[i] - 1, kernel[i], -1);
  SmallVector<int64_t> convPads(2 * k), crop(2 * k);
  for (int64_t i = 0; i < k; ++i) {
    int64_t reach = dilations[i] * (kernel[i] - 1);
    int64_t begin = reach - pads[i], end = reach - pads[k + i] + outPad[i];
    convPads[i] = std::max<int64_t>(begin, 0);
    crop[i] = std::max<int64_t>(-begin, 0);
    convPads[k + i] = std::max<int64_t>(end, 0);
    crop[k + i] = std::max<int64_t>(-end, 0);
  }
  Value result = c.make<dnn::ConvOp>(
      {}, y, w, n.hasInput(2) ? n.input(2) : Value(),
      n.b.getDenseI64ArrayAttr(SmallVector<int64_t>(k, 1)),
      n.b.getDenseI64ArrayAttr(convPads), n.b.getDenseI64ArrayAttr(dilations),
      n.b.getI64IntegerAttr(g));
  for (int64_t i = 0; i < k; ++i)
    if (crop[i] || crop[k + i])
      result = c.slice(result, 2 + i, crop[i], resultShape[2 + i]);
  return c.finish(result);
}

//===----------------------------------------------------------------------===//
// The instantiations the registry names
//===----------------------------------------------------------------------===//

namespace dnnc::onnx_import {
template LogicalResult importGlobalPool<dnn::ReduceMeanOp>(NodeImporter &);
template LogicalResult importGlobalPool<dnn::ReduceMaxOp>(NodeImporter &);
} // namespace dnnc::onnx_import
