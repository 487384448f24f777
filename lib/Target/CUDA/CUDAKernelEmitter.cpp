//===- CUDAKernelEmitter.cpp - CUDA kernels of linalg ops -------*- C++ -*-===//
//
// The kernel half of translateToCUDA (CUDAEmitter.h): the C++ types and
// literals of scalars, and the kernels. Every linalg op becomes one
// __global__ kernel:
//   - no reduction: one thread per point of the iteration domain (a
//     grid-stride loop, the innermost dim fastest so that neighbouring
//     threads touch neighbouring elements);
//   - a reduction whose body combines the accumulator with one value by an
//     associative operator (sum, product, max, min, and/or/xor): one block per
//     output element, the threads striding over the reduced points, then a
//     warp-shuffle and shared-memory block reduction (softmax, layer norm,
//     mean rows);
//   - any other reduction: one thread per output element looping over the
//     reduced points.
// memref.copy becomes a copy kernel (cudaMemcpyAsync when both sides are
// dense). Each kernel is launched on the backend's stream by the host
// function being emitted.
//
//===----------------------------------------------------------------------===//

#include "CUDAEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dnnc::cuda_source;

std::string dnnc::cuda_source::getCType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isBF16())
    return "__nv_bfloat16";
  if (type.isF16())
    return "__half";
  if (type.isIndex())
    return "int64_t";
  if (auto i = dyn_cast<IntegerType>(type)) {
    switch (i.getWidth()) {
    case 1:
      return "bool";
    case 8:
      return "int8_t";
    case 16:
      return "int16_t";
    case 32:
      return "int32_t";
    case 64:
      return "int64_t";
    default:
      return "";
    }
  }
  return "";
}

/// The unsigned C++ type of the same width as the integer `type`.
static std::string getUnsignedCType(Type type) {
  if (type.isIndex())
    return "uint64_t";
  switch (cast<IntegerType>(type).getWidth()) {
  case 1:
    return "bool";
  case 8:
    return "uint8_t";
  case 16:
    return "uint16_t";
  case 32:
    return "uint32_t";
  default:
    return "uint64_t";
  }
}

/// True for the 16-bit float types, which are computed on in float.
static bool isHalfFloat(Type type) { return type.isBF16() || type.isF16(); }

/// `expr` of type `type` as a float or double value to compute with.
static std::string toCompute(const std::string &expr, Type type) {
  if (type.isBF16())
    return "__bfloat162float(" + expr + ")";
  if (type.isF16())
    return "__half2float(" + expr + ")";
  return expr;
}

/// The computed float `expr` stored as `type`.
static std::string fromCompute(const std::string &expr, Type type) {
  if (type.isBF16())
    return "__float2bfloat16_rn(" + expr + ")";
  if (type.isF16())
    return "__float2half_rn(" + expr + ")";
  return expr;
}

/// The libm / libdevice name of a math function for `type` (f32: `expf`).
static std::string mathName(StringRef base, Type type) {
  return type.isF64() ? base.str() : (base + "f").str();
}

FailureOr<std::string> dnnc::cuda_source::getLiteral(TypedAttr attr) {
  Type type = attr.getType();
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    APInt bits = f.getValue().bitcastToAPInt();
    if (type.isF32())
      return llvm::formatv("dnnc_bits<float>(0x{0:x-}u)", bits.getZExtValue())
          .str();
    if (type.isF64())
      return llvm::formatv("dnnc_bits<double>(0x{0:x-}ull)",
                           bits.getZExtValue())
          .str();
    if (type.isBF16())
      return llvm::formatv("dnnc_bits<__nv_bfloat16>((uint16_t)0x{0:x-})",
                           bits.getZExtValue())
          .str();
    if (type.isF16())
      return llvm::formatv("dnnc_bits<__half>((uint16_t)0x{0:x-})",
                           bits.getZExtValue())
          .str();
    return failure();
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (type.isInteger(1))
      return std::string(i.getValue().isZero() ? "false" : "true");
    std::string ctype = getCType(type);
    if (ctype.empty())
      return failure();
    int64_t v = type.isIndex() ? i.getInt() : i.getValue().getSExtValue();
    if (v == INT64_MIN)
      return "(" + ctype + ")INT64_MIN";
    return "(" + ctype + ")" + std::to_string(v) + "LL";
  }
  return failure();
}

namespace {
/// How a reduction kernel is shaped (see the file comment).
enum class ReductionShape { None, Block, Serial };
} // namespace

FailureOr<std::string> CUDAEmitter::scalar(Value value) {
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
    FailureOr<std::string> literal = getLiteral(constant.getValue());
    if (failed(literal))
      return constant.emitError("cuda target: constant of type ")
             << constant.getType() << " has no C++ literal";
    return *literal;
  }
  return failure();
}

FailureOr<std::string>
CUDAEmitter::getElementOffset(Operation *op, MemRefType type,
                              ArrayRef<std::string> indices) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitError("cuda target: buffer of type ")
           << type << " has dynamic strides";
  std::string expr;
  for (auto [index, stride] : llvm::zip(indices, strides)) {
    if (stride == 0)
      continue;
    if (!expr.empty())
      expr += " + ";
    expr += stride == 1 ? index : "(" + index + ") * " + std::to_string(stride);
  }
  return expr.empty() ? std::string("0") : expr;
}

/// The C++ expression of affine `expr` over dims named `dims`.
static std::string getAffineExpr(AffineExpr expr, ArrayRef<std::string> dims) {
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return dims[d.getPosition()];
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return "(int64_t)" + std::to_string(c.getValue()) + "LL";
  auto bin = cast<AffineBinaryOpExpr>(expr);
  std::string l = getAffineExpr(bin.getLHS(), dims);
  std::string r = getAffineExpr(bin.getRHS(), dims);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return "(" + l + " + " + r + ")";
  case AffineExprKind::Mul:
    return "(" + l + " * " + r + ")";
  case AffineExprKind::Mod:
    return "dnnc_mod<int64_t>(" + l + ", " + r + ")";
  case AffineExprKind::FloorDiv:
    return "dnnc_floordiv<int64_t>(" + l + ", " + r + ")";
  case AffineExprKind::CeilDiv:
    return "dnnc_ceildiv<int64_t>(" + l + ", " + r + ")";
  default:
    return "0";
  }
}

FailureOr<std::string> CUDAEmitter::getScalarExpr(Operation *op,
                                                  ArrayRef<std::string> args) {
  Type resultType = op->getNumResults() ? op->getResult(0).getType() : Type();
  Type operandType =
      op->getNumOperands() ? op->getOperand(0).getType() : Type();
  std::string ctype = resultType ? getCType(resultType) : "";
  auto arg = [&](unsigned i) { return toCompute(args[i], operandType); };
  auto binary = [&](StringRef symbol) {
    return fromCompute("(" + arg(0) + " " + symbol.str() + " " + arg(1) + ")",
                       resultType);
  };
  auto call = [&](StringRef name) {
    std::string text = name.str() + "(";
    for (unsigned i = 0; i < args.size(); ++i)
      text += (i ? ", " : "") + arg(i);
    return fromCompute(text + ")", resultType);
  };
  auto math = [&](StringRef base) {
    Type compute =
        resultType.isF64() ? resultType : Float32Type::get(op->getContext());
    return call(mathName(base, compute));
  };
  // Integer arithmetic wraps (no signed overflow in C++): unsigned math.
  auto wrapping = [&](StringRef symbol) {
    std::string u = getUnsignedCType(resultType);
    if (resultType.isInteger(1))
      return "(bool)(" + args[0] + " " + symbol.str() + " " + args[1] + ")";
    return "(" + ctype + ")((" + u + ")" + args[0] + " " + symbol.str() + " (" +
           u + ")" + args[1] + ")";
  };
  auto unsignedOp = [&](StringRef symbol) {
    std::string u = getUnsignedCType(operandType);
    return "(" + ctype + ")((" + u + ")" + args[0] + " " + symbol.str() + " (" +
           u + ")" + args[1] + ")";
  };

  if (isa<arith::AddFOp>(op))
    return binary("+");
  if (isa<arith::SubFOp>(op))
    return binary("-");
  if (isa<arith::MulFOp>(op))
    return binary("*");
  if (isa<arith::DivFOp>(op))
    return binary("/");
  if (isa<arith::RemFOp>(op))
    return math("fmod");
  if (isa<arith::NegFOp>(op))
    return fromCompute("(-" + arg(0) + ")", resultType);
  if (isa<arith::MaximumFOp>(op))
    return call("dnnc_maximumf");
  if (isa<arith::MinimumFOp>(op))
    return call("dnnc_minimumf");
  if (isa<arith::MaxNumFOp>(op))
    return math("fmax");
  if (isa<arith::MinNumFOp>(op))
    return math("fmin");
  if (isa<arith::AddIOp>(op))
    return wrapping("+");
  if (isa<arith::SubIOp>(op))
    return wrapping("-");
  if (isa<arith::MulIOp>(op))
    return wrapping("*");
  if (isa<arith::AndIOp>(op))
    return wrapping("&");
  if (isa<arith::OrIOp>(op))
    return wrapping("|");
  if (isa<arith::XOrIOp>(op))
    return wrapping("^");
  if (isa<arith::DivSIOp>(op))
    return "(" + ctype + ")(" + args[0] + " / " + args[1] + ")";
  if (isa<arith::RemSIOp>(op))
    return "(" + ctype + ")(" + args[0] + " % " + args[1] + ")";
  if (isa<arith::DivUIOp>(op))
    return unsignedOp("/");
  if (isa<arith::RemUIOp>(op))
    return unsignedOp("%");
  if (isa<arith::FloorDivSIOp>(op))
    return "dnnc_floordiv<" + ctype + ">(" + args[0] + ", " + args[1] + ")";
  if (isa<arith::CeilDivSIOp>(op))
    return "dnnc_ceildiv<" + ctype + ">(" + args[0] + ", " + args[1] + ")";
  if (isa<arith::ShLIOp>(op))
    return unsignedOp("<<");
  if (isa<arith::ShRUIOp>(op))
    return unsignedOp(">>");
  if (isa<arith::ShRSIOp>(op))
    return "(" + ctype + ")(" + args[0] + " >> " + args[1] + ")";
  if (isa<arith::MaxSIOp>(op))
    return "(" + args[0] + " > " + args[1] + " ? " + args[0] + " : " + args[1] +
           ")";
  if (isa<arith::MinSIOp>(op))
    return "(" + args[0] + " < " + args[1] + " ? " + args[0] + " : " + args[1] +
           ")";
  if (isa<arith::MaxUIOp, arith::MinUIOp>(op)) {
    std::string u = getUnsignedCType(operandType);
    std::string cmp = isa<arith::MaxUIOp>(op) ? " > " : " < ";
    return "((" + u + ")" + args[0] + cmp + "(" + u + ")" + args[1] + " ? " +
           args[0] + " : " + args[1] + ")";
  }
  if (isa<arith::SelectOp>(op))
    return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    std::string a = arg(0), b = arg(1);
    switch (cmp.getPredicate()) {
    case arith::CmpFPredicate::AlwaysFalse:
      return std::string("false");
    case arith::CmpFPredicate::AlwaysTrue:
      return std::string("true");
    case arith::CmpFPredicate::OEQ:
      return "(" + a + " == " + b + ")";
    case arith::CmpFPredicate::OGT:
      return "(" + a + " > " + b + ")";
    case arith::CmpFPredicate::OGE:
      return "(" + a + " >= " + b + ")";
    case arith::CmpFPredicate::OLT:
      return "(" + a + " < " + b + ")";
    case arith::CmpFPredicate::OLE:
      return "(" + a + " <= " + b + ")";
    case arith::CmpFPredicate::ONE:
      return "(" + a + " < " + b + " || " + a + " > " + b + ")";
    case arith::CmpFPredicate::ORD:
      return "(" + a + " == " + a + " && " + b + " == " + b + ")";
    case arith::CmpFPredicate::UEQ:
      return "!(" + a + " < " + b + " || " + a + " > " + b + ")";
    case arith::CmpFPredicate::UGT:
      return "!(" + a + " <= " + b + ")";
    case arith::CmpFPredicate::UGE:
      return "!(" + a + " < " + b + ")";
    case arith::CmpFPredicate::ULT:
      return "!(" + a + " >= " + b + ")";
    case arith::CmpFPredicate::ULE:
      return "!(" + a + " > " + b + ")";
    case arith::CmpFPredicate::UNE:
      return "(" + a + " != " + b + ")";
    case arith::CmpFPredicate::UNO:
      return "(" + a + " != " + a + " || " + b + " != " + b + ")";
    }
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    std::string a = args[0], b = args[1];
    std::string u = "(" + getUnsignedCType(operandType) + ")";
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      return "(" + a + " == " + b + ")";
    case arith::CmpIPredicate::ne:
      return "(" + a + " != " + b + ")";
    case arith::CmpIPredicate::slt:
      return "(" + a + " < " + b + ")";
    case arith::CmpIPredicate::sle:
      return "(" + a + " <= " + b + ")";
    case arith::CmpIPredicate::sgt:
      return "(" + a + " > " + b + ")";
    case arith::CmpIPredicate::sge:
      return "(" + a + " >= " + b + ")";
    case arith::CmpIPredicate::ult:
      return "(" + u + a + " < " + u + b + ")";
    case arith::CmpIPredicate::ule:
      return "(" + u + a + " <= " + u + b + ")";
    case arith::CmpIPredicate::ugt:
      return "(" + u + a + " > " + u + b + ")";
    case arith::CmpIPredicate::uge:
      return "(" + u + a + " >= " + u + b + ")";
    }
  }
  // Conversions.
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    std::string value = arg(0);
    if (isHalfFloat(resultType))
      return fromCompute("(float)" + value, resultType);
    return "(" + ctype + ")" + value;
  }
  if (isa<arith::SIToFPOp>(op))
    return fromCompute(
        "(" + std::string(resultType.isF64() ? "double" : "float") + ")" +
            args[0],
        resultType);
  if (isa<arith::UIToFPOp>(op))
    return fromCompute(
        "(" + std::string(resultType.isF64() ? "double" : "float") + ")(" +
            getUnsignedCType(operandType) + ")" + args[0],
        resultType);
  if (isa<arith::FPToSIOp>(op))
    return "(" + ctype + ")" + arg(0);
  if (isa<arith::FPToUIOp>(op))
    return "(" + ctype + ")(" + getUnsignedCType(resultType) + ")" + arg(0);
  if (isa<arith::ExtSIOp, arith::IndexCastOp>(op)) {
    if (resultType.isInteger(1))
      return "(bool)(" + args[0] + " & 1)";
    return "(" + ctype + ")" + args[0];
  }
  if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(op))
    return "(" + ctype + ")(" + getUnsignedCType(operandType) + ")" + args[0];
  if (isa<arith::TruncIOp>(op)) {
    if (resultType.isInteger(1))
      return "(bool)(" + args[0] + " & 1)";
    return "(" + ctype + ")" + args[0];
  }
  if (isa<arith::BitcastOp>(op))
    return "dnnc_bits<" + ctype + ">(" + args[0] + ")";
  // The dnn lowering's casts between an unsigned (or signed) integer type
  // and the signless one of its width, around arith's signless ops: both
  // are the same C type.
  if (isa<UnrealizedConversionCastOp>(op) && op->getNumOperands() == 1 &&
      isa<IntegerType>(operandType) && isa<IntegerType>(resultType) &&
      operandType.getIntOrFloatBitWidth() ==
          resultType.getIntOrFloatBitWidth())
    return "(" + ctype + ")" + args[0];
  // Math.
  if (isa<math::ExpOp>(op))
    return math("exp");
  if (isa<math::Exp2Op>(op))
    return math("exp2");
  if (isa<math::ExpM1Op>(op))
    return math("expm1");
  if (isa<math::LogOp>(op))
    return math("log");
  if (isa<math::Log2Op>(op))
    return math("log2");
  if (isa<math::Log1pOp>(op))
    return math("log1p");
  if (isa<math::SqrtOp>(op))
    return math("sqrt");
  if (isa<math::RsqrtOp>(op))
    return math("rsqrt");
  if (isa<math::TanhOp>(op))
    return math("tanh");
  if (isa<math::ErfOp>(op))
    return math("erf");
  if (isa<math::SinOp>(op))
    return math("sin");
  if (isa<math::CosOp>(op))
    return math("cos");
  if (isa<math::TanOp>(op))
    return math("tan");
  if (isa<math::AtanOp>(op))
    return math("atan");
  if (isa<math::AsinOp>(op))
    return math("asin");
  if (isa<math::AcosOp>(op))
    return math("acos");
  if (isa<math::SinhOp>(op))
    return math("sinh");
  if (isa<math::CoshOp>(op))
    return math("cosh");
  if (isa<math::AsinhOp>(op))
    return math("asinh");
  if (isa<math::AcoshOp>(op))
    return math("acosh");
  if (isa<math::AtanhOp>(op))
    return math("atanh");
  if (isa<math::Atan2Op>(op))
    return math("atan2");
  if (isa<math::AbsFOp>(op))
    return math("fabs");
  if (isa<math::FloorOp>(op))
    return math("floor");
  if (isa<math::CeilOp>(op))
    return math("ceil");
  if (isa<math::RoundOp>(op))
    return math("round");
  if (isa<math::RoundEvenOp>(op))
    return math("rint");
  if (isa<math::TruncOp>(op))
    return math("trunc");
  if (isa<math::CopySignOp>(op))
    return math("copysign");
  if (isa<math::FmaOp>(op))
    return math("fma");
  if (auto pow = dyn_cast<math::PowFOp>(op)) {
    // Small integral constant exponents as products (x^2, x^3 in GELU).
    if (auto c = pow.getRhs().getDefiningOp<arith::ConstantOp>()) {
      auto f = dyn_cast<FloatAttr>(c.getValue());
      double e = f ? f.getValueAsDouble() : 0.5;
      if (e == 1.0 || e == 2.0 || e == 3.0 || e == 4.0) {
        std::string x = arg(0), text = x;
        for (int i = 1; i < static_cast<int>(e); ++i)
          text += " * " + x;
        return fromCompute("(" + text + ")", resultType);
      }
    }
    return math("pow");
  }
  if (isa<math::AbsIOp>(op))
    return "(" + args[0] + " < 0 ? (" + ctype + ")-" + args[0] + " : " +
           args[0] + ")";
  return op->emitError("cuda target: '")
         << op->getName() << "' is not supported in generated kernels";
}

LogicalResult CUDAEmitter::emitScalarOp(Operation *op, raw_ostream &os,
                                        StringRef indent) {
  if (isa<arith::ConstantOp>(op))
    return success(); // Inlined where used.
  if (op->getNumResults() != 1)
    return op->emitError("cuda target: '")
           << op->getName() << "' is not supported in generated code";
  Value result = op->getResult(0);
  if (auto index = dyn_cast<linalg::IndexOp>(op)) {
    names[result] = "d" + std::to_string(index.getDim());
    return success();
  }
  std::string ctype = getCType(result.getType());
  if (ctype.empty())
    return op->emitError("cuda target: values of type ")
           << result.getType() << " are not supported";
  std::string expr;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    auto it = names.find(load.getMemRef());
    if (it == names.end())
      return op->emitError("cuda target: load from an unknown buffer");
    SmallVector<std::string> indices;
    for (Value index : load.getIndices()) {
      FailureOr<std::string> i = scalar(index);
      if (failed(i))
        return op->emitError("cuda target: unknown index");
      indices.push_back(*i);
    }
    FailureOr<std::string> offset =
        getElementOffset(op, load.getMemRefType(), indices);
    if (failed(offset))
      return failure();
    expr = it->second + "[" + *offset + "]";
  } else {
    SmallVector<std::string> args;
    for (Value operand : op->getOperands()) {
      FailureOr<std::string> a = scalar(operand);
      if (failed(a))
        return op->emitError("cuda target: operand not available in '")
               << op->getName() << "'";
      args.push_back(*a);
    }
    FailureOr<std::string> e = getScalarExpr(op, args);
    if (failed(e))
      return failure();
    expr = *e;
  }
  std::string name = fresh("v");
  os << indent << ctype << " " << name << " = " << expr << ";\n";
  names[result] = name;
  return success();
}

/// The reduction combiner of a single-result linalg body: the op that
/// combines the accumulator block argument (used only there) with one
/// value, when it is associative and commutative. Returns the op and sets
/// `value` to the combined operand.
static Operation *getCombiner(linalg::LinalgOp op, Value &value) {
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != 1)
    return nullptr;
  BlockArgument acc = op.getRegionOutputArgs()[0];
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body || !acc.hasOneUse() ||
      combine->getNumOperands() != 2)
    return nullptr;
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combine))
    return nullptr;
  if (combine->getOperand(0) == acc)
    value = combine->getOperand(1);
  else if (combine->getOperand(1) == acc)
    value = combine->getOperand(0);
  else
    return nullptr;
  // The block reduction shuffles values of these types only.
  Type type = acc.getType();
  if (!(type.isF32() || type.isF64() || type.isInteger(32) ||
        type.isInteger(64)))
    return nullptr;
  return combine;
}

/// The identity of the combiner `combine` on `type`, as a C++ literal.
static std::string getIdentity(Operation *combine, Type type) {
  std::string ctype = getCType(type);
  if (isa<arith::AddFOp, arith::AddIOp, arith::OrIOp, arith::XOrIOp>(combine))
    return "(" + ctype + ")0";
  if (isa<arith::MulFOp, arith::MulIOp>(combine))
    return "(" + ctype + ")1";
  if (isa<arith::AndIOp>(combine))
    return "(" + ctype + ")-1";
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return "(" + ctype + ")-INFINITY";
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    return "(" + ctype + ")INFINITY";
  if (isa<arith::MaxSIOp>(combine))
    return type.isInteger(32) ? "(int32_t)INT32_MIN" : "(int64_t)INT64_MIN";
  if (isa<arith::MinSIOp>(combine))
    return type.isInteger(32) ? "(int32_t)INT32_MAX" : "(int64_t)INT64_MAX";
  if (isa<arith::MaxUIOp>(combine))
    return "(" + ctype + ")0";
  return "(" + ctype + ")-1"; // minui
}

void CUDAEmitter::emitLaunch(raw_ostream &host, StringRef name,
                             const std::string &blocks, int64_t threads,
                             ArrayRef<std::string> args) {
  std::string list = llvm::join(args, ", ");
  if (options.hostEmulation) {
    host << "  {\n    unsigned n = (unsigned)(" << blocks
         << ");\n    gridDim.x = n; blockDim.x = 1; threadIdx.x = 0;\n"
         << "    for (unsigned b = 0; b < n; ++b) { blockIdx.x = b; " << name
         << "(" << list << "); }\n  }\n";
    return;
  }
  host << "  " << name << "<<<" << blocks << ", " << threads
       << ", 0, stream>>>(" << list << ");\n";
}

/// A short description of `loc` for comments: the ONNX node name when
/// there is one.
static std::string describe(Location loc) {
  std::string text;
  if (auto name = dyn_cast<NameLoc>(loc))
    text = name.getName().str();
  else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner)) {
        text = name.getName().str();
        break;
      }
  }
  for (char &c : text)
    if (c == '\n' || c == '\r' || c == '*' || c == '/')
      c = ' ';
  return text;
}

LogicalResult CUDAEmitter::emitLinalg(linalg::LinalgOp op, raw_ostream &host) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return op.emitError("cuda target: dynamic loop bounds are not supported");
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Block *body = op.getBlock();
  SmallVector<unsigned> parallel, reduction;
  for (unsigned d = 0; d < ranges.size(); ++d)
    (iterators[d] == utils::IteratorType::parallel ? parallel : reduction)
        .push_back(d);
  int64_t parallelPoints = 1, reducedPoints = 1;
  for (unsigned d : parallel)
    parallelPoints *= ranges[d];
  for (unsigned d : reduction)
    reducedPoints *= ranges[d];
  if (parallelPoints == 0)
    return success();

  Value combined;
  Operation *combiner = nullptr;
  ReductionShape shape = ReductionShape::None;
  if (!reduction.empty()) {
    combiner = reducedPoints >= 32 ? getCombiner(op, combined) : nullptr;
    shape = combiner ? ReductionShape::Block : ReductionShape::Serial;
  }

  std::string kernelName =
      fresh("k") + "_" + op->getName().stripDialect().str();
  names.clear();
  SmallVector<std::string> params, args;
  std::string kernel;
  llvm::raw_string_ostream ks(kernel);

  // Operands: memrefs become pointer parameters, scalars value parameters.
  SmallVector<std::string> operandPointers(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    Value value = operand.get();
    bool isInit = op.isDpsInit(&operand);
    BlockArgument arg = body->getArgument(i);
    if (!isInit && arg.use_empty())
      continue;
    if (auto type = dyn_cast<MemRefType>(value.getType())) {
      FailureOr<std::string> p = pointer(value);
      if (failed(p))
        return failure();
      std::string name = "p" + std::to_string(i);
      std::string ctype = getCType(type.getElementType());
      params.push_back((isInit ? "" : "const ") + ctype + " *" + name);
      args.push_back(*p);
      operandPointers[i] = name;
    } else {
      std::string name = "s" + std::to_string(i);
      if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
        FailureOr<std::string> literal = getLiteral(constant.getValue());
        if (failed(literal))
          return op.emitError("cuda target: constant has no C++ literal");
        names[arg] = *literal;
        continue;
      }
      auto it = hostScalars.find(value);
      if (it == hostScalars.end())
        return op.emitError("cuda target: scalar operand not available");
      params.push_back(getCType(value.getType()) + " " + name);
      args.push_back(it->second);
      names[arg] = name;
    }
  }
  // Values from outside the body: constants inline, memrefs and scalars as
  // parameters.
  llvm::SetVector<Value> captured;
  body->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp()))
        captured.insert(v);
  });
  for (Value v : captured) {
    if (v.getDefiningOp<arith::ConstantOp>())
      continue;
    std::string name = fresh("c");
    if (auto type = dyn_cast<MemRefType>(v.getType())) {
      FailureOr<std::string> p = pointer(v);
      if (failed(p))
        return failure();
      params.push_back("const " + getCType(type.getElementType()) + " *" +
                       name);
      args.push_back(*p);
    } else {
      auto it = hostScalars.find(v);
      if (it == hostScalars.end())
        return op.emitError("cuda target: captured value not available");
      params.push_back(getCType(v.getType()) + " " + name);
      args.push_back(it->second);
    }
    names[v] = name;
  }

  std::string comment = describe(op.getLoc());
  ks << "// " << op->getName() << (comment.empty() ? "" : " (" + comment + ")")
     << ": "
     << llvm::join(llvm::map_range(ranges,
                                   [](int64_t r) { return std::to_string(r); }),
                   "x")
     << (reduction.empty()
             ? ""
             : ", reduced dims " + std::to_string(reduction.size()))
     << "\n__global__ void " << kernelName << "(" << llvm::join(params, ", ")
     << ") {\n";

  SmallVector<std::string> dims(ranges.size());
  for (unsigned d = 0; d < ranges.size(); ++d)
    dims[d] = "d" + std::to_string(d);
  // Decomposes the linear index `linear` over `which` dims (last fastest).
  auto decompose = [&](StringRef linear, ArrayRef<unsigned> which,
                       StringRef indent) {
    std::string rest = fresh("t");
    ks << indent << "int64_t " << rest << " = " << linear << ";\n";
    for (unsigned k = which.size(); k-- > 0;) {
      unsigned d = which[k];
      if (k == 0) {
        ks << indent << "int64_t " << dims[d] << " = " << rest << ";\n";
      } else {
        ks << indent << "int64_t " << dims[d] << " = " << rest << " % "
           << ranges[d] << ";\n";
        ks << indent << rest << " /= " << ranges[d] << ";\n";
      }
    }
  };
  // Loads the operands whose block arguments are used (and, with
  // `inits`, the init operands).
  auto load = [&](StringRef indent, bool inputs, bool inits) -> LogicalResult {
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      bool isInit = op.isDpsInit(&operand);
      if ((isInit && !inits) || (!isInit && !inputs))
        continue;
      BlockArgument arg = body->getArgument(i);
      if (operandPointers[i].empty() || arg.use_empty())
        continue;
      auto type = cast<MemRefType>(operand.get().getType());
      SmallVector<std::string> indices;
      for (AffineExpr e : maps[i].getResults())
        indices.push_back(getAffineExpr(e, dims));
      FailureOr<std::string> offset = getElementOffset(op, type, indices);
      if (failed(offset))
        return failure();
      std::string name = fresh("a");
      ks << indent << getCType(type.getElementType()) << " " << name << " = "
         << operandPointers[i] << "[" << *offset << "];\n";
      names[arg] = name;
    }
    return success();
  };
  // The offsets of the init operands.
  auto initOffset = [&](unsigned k) -> FailureOr<std::string> {
    OpOperand *init = op.getDpsInitOperand(k);
    unsigned i = init->getOperandNumber();
    SmallVector<std::string> indices;
    for (AffineExpr e : maps[i].getResults())
      indices.push_back(getAffineExpr(e, dims));
    return getElementOffset(op, cast<MemRefType>(init->get().getType()),
                            indices);
  };
  // Emits the body's ops but `skip`.
  auto emitBody = [&](StringRef indent, Operation *skip) -> LogicalResult {
    for (Operation &inner : body->without_terminator())
      if (&inner != skip && failed(emitScalarOp(&inner, ks, indent)))
        return failure();
    return success();
  };
  auto yield = cast<linalg::YieldOp>(body->getTerminator());

  int64_t threads = 256;
  std::string blocks;
  if (shape == ReductionShape::None) {
    ks << "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; "
          "i < "
       << parallelPoints << "; i += (int64_t)gridDim.x * blockDim.x) {\n";
    decompose("i", parallel, "    ");
    if (failed(load("    ", true, true)) || failed(emitBody("    ", nullptr)))
      return failure();
    for (unsigned k = 0; k < op.getNumDpsInits(); ++k) {
      FailureOr<std::string> offset = initOffset(k);
      FailureOr<std::string> value = scalar(yield.getOperand(k));
      if (failed(offset) || failed(value))
        return op.emitError("cuda target: cannot store the result");
      ks << "    "
         << operandPointers[op.getDpsInitOperand(k)->getOperandNumber()] << "["
         << *offset << "] = " << *value << ";\n";
    }
    ks << "  }\n}\n\n";
    blocks = std::to_string(
        std::min<int64_t>((parallelPoints + threads - 1) / threads, 1 << 20));
  } else if (shape == ReductionShape::Serial) {
    ks << "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; "
          "i < "
       << parallelPoints << "; i += (int64_t)gridDim.x * blockDim.x) {\n";
    decompose("i", parallel, "    ");
    // Accumulators start from the inits.
    SmallVector<std::string> accs;
    for (unsigned k = 0; k < op.getNumDpsInits(); ++k) {
      FailureOr<std::string> offset = initOffset(k);
      if (failed(offset))
        return failure();
      OpOperand *init = op.getDpsInitOperand(k);
      std::string acc = fresh("acc");
      Type type = cast<MemRefType>(init->get().getType()).getElementType();
      ks << "    " << getCType(type) << " " << acc << " = "
         << operandPointers[init->getOperandNumber()] << "[" << *offset
         << "];\n";
      accs.push_back(acc);
      names[body->getArgument(init->getOperandNumber())] = acc;
    }
    ks << "    for (int64_t r = 0; r < " << reducedPoints << "; ++r) {\n";
    decompose("r", reduction, "      ");
    if (failed(load("      ", true, false)) ||
        failed(emitBody("      ", nullptr)))
      return failure();
    for (unsigned k = 0; k < accs.size(); ++k) {
      FailureOr<std::string> value = scalar(yield.getOperand(k));
      if (failed(value))
        return op.emitError("cuda target: cannot accumulate the result");
      ks << "      " << accs[k] << " = " << *value << ";\n";
    }
    ks << "    }\n";
    for (unsigned k = 0; k < accs.size(); ++k) {
      FailureOr<std::string> offset = initOffset(k);
      ks << "    "
         << operandPointers[op.getDpsInitOperand(k)->getOperandNumber()] << "["
         << *offset << "] = " << accs[k] << ";\n";
    }
    ks << "  }\n}\n\n";
    blocks = std::to_string(
        std::min<int64_t>((parallelPoints + threads - 1) / threads, 1 << 20));
  } else {
    // One block per output element.
    threads = std::min<int64_t>(256, (reducedPoints + 31) / 32 * 32);
    Type accType = op.getRegionOutputArgs()[0].getType();
    std::string ctype = getCType(accType);
    std::string identity = getIdentity(combiner, accType);
    BlockArgument accArg = op.getRegionOutputArgs()[0];
    ks << "  for (int64_t i = blockIdx.x; i < " << parallelPoints
       << "; i += gridDim.x) {\n";
    decompose("i", parallel, "    ");
    ks << "    " << ctype << " part = " << identity << ";\n";
    ks << "    for (int64_t r = threadIdx.x; r < " << reducedPoints
       << "; r += blockDim.x) {\n";
    decompose("r", reduction, "      ");
    if (failed(load("      ", true, false)) ||
        failed(emitBody("      ", combiner)))
      return failure();
    FailureOr<std::string> value = scalar(combined);
    if (failed(value))
      return op.emitError("cuda target: cannot reduce the result");
    names[accArg] = "part";
    std::string partExpr = combiner->getOperand(0) == accArg ? "part" : *value;
    std::string valueExpr = combiner->getOperand(0) == accArg ? *value : "part";
    FailureOr<std::string> step =
        getScalarExpr(combiner, {partExpr, valueExpr});
    if (failed(step))
      return failure();
    ks << "      part = " << *step << ";\n    }\n";
    FailureOr<std::string> combineExpr = getScalarExpr(combiner, {"a", "b"});
    FailureOr<std::string> offset = initOffset(0);
    if (failed(combineExpr) || failed(offset))
      return failure();
    ks << "    part = dnnc_block_reduce<" << ctype << ">(part, " << identity
       << ", [](" << ctype << " a, " << ctype << " b) { return " << *combineExpr
       << "; });\n";
    std::string out =
        operandPointers[op.getDpsInitOperand(0)->getOperandNumber()] + "[" +
        *offset + "]";
    FailureOr<std::string> finalExpr = getScalarExpr(combiner, {out, "part"});
    ks << "    if (threadIdx.x == 0)\n      " << out << " = " << *finalExpr
       << ";\n  }\n}\n\n";
    blocks = std::to_string(std::min<int64_t>(parallelPoints, 1 << 30));
  }
  kernels += kernel;
  emitLaunch(host, kernelName, blocks, threads, args);
  return success();
}

LogicalResult CUDAEmitter::emitCopy(memref::CopyOp op, raw_ostream &host) {
  auto source = cast<MemRefType>(op.getSource().getType());
  auto target = cast<MemRefType>(op.getTarget().getType());
  FailureOr<std::string> src = pointer(op.getSource());
  FailureOr<std::string> dst = pointer(op.getTarget());
  if (failed(src) || failed(dst))
    return failure();
  if (source.getNumElements() == 0)
    return success();
  int64_t bytes = source.getNumElements() * source.getElementTypeBitWidth() / 8;
  if (source.getLayout().isIdentity() && target.getLayout().isIdentity() &&
      source.getElementTypeBitWidth() % 8 == 0) {
    if (options.hostEmulation)
      host << "  memcpy(" << *dst << ", " << *src << ", " << bytes << ");\n";
    else
      host << "  cudaMemcpyAsync(" << *dst << ", " << *src << ", " << bytes
           << ", cudaMemcpyDeviceToDevice, stream);\n";
    return success();
  }
  std::string name = fresh("k") + "_copy";
  std::string ctype = getCType(source.getElementType());
  SmallVector<std::string> dims;
  for (unsigned d = 0; d < source.getRank(); ++d)
    dims.push_back("d" + std::to_string(d));
  FailureOr<std::string> in = getElementOffset(op, source, dims);
  FailureOr<std::string> out = getElementOffset(op, target, dims);
  if (failed(in) || failed(out))
    return failure();
  int64_t points = source.getNumElements();
  std::string k;
  llvm::raw_string_ostream ks(k);
  std::string comment = describe(op.getLoc());
  ks << "// memref.copy" << (comment.empty() ? "" : " (" + comment + ")")
     << "\n__global__ void " << name << "(const " << ctype << " *src, " << ctype
     << " *dst) {\n"
     << "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; "
        "i < "
     << points << "; i += (int64_t)gridDim.x * blockDim.x) {\n"
     << "    int64_t t = i;\n";
  ArrayRef<int64_t> shape = source.getShape();
  for (unsigned d = source.getRank(); d-- > 0;) {
    if (d == 0)
      ks << "    int64_t d0 = t;\n";
    else
      ks << "    int64_t d" << d << " = t % " << shape[d]
         << "; t /= " << shape[d] << ";\n";
  }
  ks << "    dst[" << *out << "] = src[" << *in << "];\n  }\n}\n\n";
  kernels += k;
  emitLaunch(host, name,
             std::to_string(std::min<int64_t>((points + 255) / 256, 1 << 20)),
             256, {*src, *dst});
  return success();
}
