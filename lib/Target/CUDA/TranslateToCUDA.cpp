//===- TranslateToCUDA.cpp - bufferized linalg to CUDA C++ --*- C++ -*-===//
//
// Translates the output of the cuda device pipeline into one CUDA C++
// translation unit. Every linalg op becomes one __global__ kernel:
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
// dense), func.call a call of the runtime (GEMMs, collectives), memref views
// pointer arithmetic, allocs stream-ordered cudaMallocAsync/cudaFreeAsync.
// The host functions enqueue everything on the backend's stream
// (`dnnc_rt_cuda_stream()`); nothing synchronizes, so the runtime may
// capture a rank's step into a CUDA graph.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CUDA/CUDATarget.h"
#include "dnnc/Target/Package/Package.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

/// The C++ type of a scalar MLIR type, or "" when it has none.
std::string getCType(Type type) {
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
std::string getUnsignedCType(Type type) {
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
bool isHalfFloat(Type type) { return type.isBF16() || type.isF16(); }

/// `expr` of type `type` as a float or double value to compute with.
std::string toCompute(const std::string &expr, Type type) {
  if (type.isBF16())
    return "__bfloat162float(" + expr + ")";
  if (type.isF16())
    return "__half2float(" + expr + ")";
  return expr;
}

/// The computed float `expr` stored as `type`.
std::string fromCompute(const std::string &expr, Type type) {
  if (type.isBF16())
    return "__float2bfloat16_rn(" + expr + ")";
  if (type.isF16())
    return "__float2half_rn(" + expr + ")";
  return expr;
}

/// The libm / libdevice name of a math function for `type` (f32: `expf`).
std::string mathName(StringRef base, Type type) {
  return type.isF64() ? base.str() : (base + "f").str();
}

/// A literal of `attr` in C++.
FailureOr<std::string> getLiteral(TypedAttr attr) {
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

/// The kernels and helpers every translation unit starts with.
constexpr const char *kCommonPrelude = R"(#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <class To, class From> DNNC_HD To dnnc_bits(From from) {
  static_assert(sizeof(To) == sizeof(From), "bit cast of different sizes");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}
template <class T> DNNC_HD T dnnc_maximumf(T a, T b) {
  if (a != a || b != b) return a != a ? a : b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T> DNNC_HD T dnnc_minimumf(T a, T b) {
  if (a != a || b != b) return a != a ? a : b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
template <class T> DNNC_HD T dnnc_floordiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <class T> DNNC_HD T dnnc_ceildiv(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
template <class T> DNNC_HD T dnnc_mod(T a, T b) {
  T r = a % b;
  return r < 0 ? r + (b < 0 ? -b : b) : r;
}
)";

/// The GPU build: kernels launched on the backend's stream.
constexpr const char *kCUDAPrelude =
    R"(// Generated by dnnc (--target=cuda): the kernels and host code of one rank.
#include <cuda_runtime.h>
#define DNNC_HD __host__ __device__ inline
)";

/// Block-wide reduction (GPU build): every thread of the block passes its
/// partial value; thread 0 gets the reduction of all of them. blockDim.x is
/// a multiple of 32.
constexpr const char *kCUDAReduce = R"(
template <class T, class F>
__device__ inline T dnnc_block_reduce(T v, T identity, F combine) {
  __shared__ __align__(16) unsigned char raw[32 * sizeof(T)];
  T *partial = reinterpret_cast<T *>(raw);
  for (int o = 16; o > 0; o >>= 1)
    v = combine(v, __shfl_xor_sync(0xffffffffu, v, o));
  unsigned warps = blockDim.x >> 5;
  if (warps == 1)
    return v;
  __syncthreads();
  if ((threadIdx.x & 31) == 0)
    partial[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < warps ? partial[threadIdx.x] : identity;
    for (int o = 16; o > 0; o >>= 1)
      v = combine(v, __shfl_xor_sync(0xffffffffu, v, o));
  }
  return v;
}

extern "C" void *dnnc_rt_cuda_stream(void);
)";

/// The host emulation: the same code as plain C++; a kernel launch runs
/// every block in turn with one thread.
constexpr const char *kEmulationPrelude =
    R"(// Generated by dnnc (--target=cuda, host emulation): the kernels and
// host code of one rank as plain C++ for the CPU.
#include <math.h>
#include <stdlib.h>
#define DNNC_HD inline
#define __global__ static
#define __device__
struct dnnc_dim3 { unsigned x; };
static dnnc_dim3 blockIdx, threadIdx, blockDim, gridDim;
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
)";

/// Block reduction in the host emulation: one thread per block.
constexpr const char *kEmulationReduce = R"(
template <class T, class F> inline T dnnc_block_reduce(T v, T, F) { return v; }
)";

/// A memref value of the host code: the C++ pointer variable holding its
/// base and the C++ expression of its offset in elements.
struct HostBuffer {
  std::string base;
  std::string offset;
};

/// How a reduction kernel is shaped (see the file comment).
enum class ReductionShape { None, Block, Serial };

/// The translator: one instance per module.
class CUDAEmitter {
public:
  CUDAEmitter(ModuleOp module, const dnnc::CUDASourceOptions &options)
      : module(module), options(options) {}

  /// Translates the module into `os`.
  LogicalResult emit(raw_ostream &os);

private:
  /// A fresh C++ name with `prefix`.
  std::string fresh(StringRef prefix) {
    return (prefix + Twine(counter++)).str();
  }

  /// The C++ expression of scalar `value` in the current scope.
  FailureOr<std::string> scalar(Value value);

  /// Emits the statement defining the results of the scalar op `op` (arith,
  /// math, linalg.index, memref.load) in the current scope.
  LogicalResult emitScalarOp(Operation *op, raw_ostream &os, StringRef indent);

  /// The expression of the scalar op `op` applied to operand expressions
  /// `args`, or failure (with an error) when `op` is not translated.
  FailureOr<std::string> getScalarExpr(Operation *op,
                                       ArrayRef<std::string> args);

  /// The element offset of `indices` (C++ expressions) in a memref of
  /// `type` (static strides).
  FailureOr<std::string> getElementOffset(Operation *op, MemRefType type,
                                          ArrayRef<std::string> indices);

  /// Emits the kernel of the linalg op `op` and its launch.
  LogicalResult emitLinalg(linalg::LinalgOp op, raw_ostream &host);

  /// Emits a copy between two memrefs of the same shape.
  LogicalResult emitCopy(memref::CopyOp op, raw_ostream &host);

  /// Emits the host code of `op` in a host function.
  LogicalResult emitHostOp(Operation *op, raw_ostream &host);

  /// Emits the host function `func` and its runtime entry.
  LogicalResult emitFunction(func::FuncOp func);

  /// Emits a module-level constant buffer.
  LogicalResult emitGlobal(memref::GlobalOp global);

  /// The name of the runtime function `name` (the cpu kernel under host
  /// emulation).
  std::string calleeName(StringRef name) const {
    if (options.hostEmulation && name.starts_with("dnnc_rt_cuda_"))
      return ("dnnc_rt_" + name.drop_front(strlen("dnnc_rt_cuda_"))).str();
    return name.str();
  }

  /// The C++ pointer expression of host buffer `value` at its offset.
  FailureOr<std::string> pointer(Value value);

  /// Emits a launch of kernel `name` over `blocks` x `threads`.
  void emitLaunch(raw_ostream &host, StringRef name, const std::string &blocks,
                  int64_t threads, ArrayRef<std::string> args);

  ModuleOp module;
  dnnc::CUDASourceOptions options;
  unsigned counter = 0;
  /// Names of scalar values in the scope being emitted.
  DenseMap<Value, std::string> names;
  /// Host memrefs of the function being emitted.
  DenseMap<Value, HostBuffer> buffers;
  /// C++ names of the host scalars (index arithmetic, call results) of the
  /// function being emitted.
  DenseMap<Value, std::string> hostScalars;
  /// C++ names of the host pointers (LLVM pointer results of runtime calls)
  /// and the aligned pointer of the memref descriptors built from them.
  DenseMap<Value, std::string> pointers, descriptors;
  /// C++ names of the module's globals.
  llvm::StringMap<std::string> globals;
  std::string declarations, kernels, functions;
};

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

FailureOr<std::string> CUDAEmitter::pointer(Value value) {
  auto it = buffers.find(value);
  if (it == buffers.end()) {
    if (Operation *def = value.getDefiningOp())
      return def->emitError("cuda target: buffer not available in host code");
    return failure();
  }
  auto type = cast<MemRefType>(value.getType());
  std::string ctype = getCType(type.getElementType());
  if (it->second.offset == "0")
    return "(" + ctype + " *)" + it->second.base;
  return "((" + ctype + " *)" + it->second.base + " + (" + it->second.offset +
         "))";
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

LogicalResult CUDAEmitter::emitHostOp(Operation *op, raw_ostream &host) {
  // Host scalars: index arithmetic and runtime call results.
  auto defineScalar = [&](Value result, const std::string &expr) {
    std::string name = fresh("h");
    host << "  " << getCType(result.getType()) << " " << name << " = " << expr
         << ";\n";
    hostScalars[result] = name;
  };
  auto hostScalar = [&](Value v) -> FailureOr<std::string> {
    auto it = hostScalars.find(v);
    if (it != hostScalars.end())
      return it->second;
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      return getLiteral(c.getValue());
    return failure();
  };
  // An offset expression of mixed static/dynamic values.
  auto mixed = [&](OpFoldResult ofr) -> FailureOr<std::string> {
    if (auto attr = dyn_cast<Attribute>(ofr))
      return std::to_string(cast<IntegerAttr>(attr).getInt());
    return hostScalar(cast<Value>(ofr));
  };

  if (isa<arith::ConstantOp>(op))
    return success();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return emitLinalg(linalgOp, host);
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return emitCopy(copy, host);
  if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitError("cuda target: dynamically shaped buffers are not "
                           "supported");
    int64_t bytes = std::max<int64_t>(
        1, type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8));
    std::string name = fresh("m");
    if (options.hostEmulation)
      host << "  void *" << name << " = aligned_alloc(64, "
           << (bytes + 63) / 64 * 64 << ");\n";
    else
      host << "  void *" << name << " = nullptr;\n  cudaMallocAsync(&" << name
           << ", " << bytes << ", stream);\n";
    buffers[alloc.getResult()] = {name, "0"};
    return success();
  }
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
    auto it = buffers.find(dealloc.getMemref());
    if (it == buffers.end())
      return op->emitError("cuda target: dealloc of an unknown buffer");
    if (options.hostEmulation)
      host << "  free(" << it->second.base << ");\n";
    else
      host << "  cudaFreeAsync(" << it->second.base << ", stream);\n";
    return success();
  }
  if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
    auto it = globals.find(get.getName());
    if (it == globals.end())
      return op->emitError("cuda target: unknown global");
    std::string name = fresh("g");
    if (options.hostEmulation)
      host << "  void *" << name << " = (void *)" << it->second << ";\n";
    else
      host << "  void *" << name << " = nullptr;\n  cudaGetSymbolAddress(&"
           << name << ", " << it->second << ");\n";
    buffers[get.getResult()] = {name, "0"};
    return success();
  }
  if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
    auto it = buffers.find(subview.getSource());
    if (it == buffers.end())
      return op->emitError("cuda target: subview of an unknown buffer");
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(subview.getSourceType().getStridesAndOffset(strides, offset)))
      return op->emitError("cuda target: non-strided buffer");
    std::string expr = it->second.offset;
    for (auto [ofr, stride] : llvm::zip(subview.getMixedOffsets(), strides)) {
      FailureOr<std::string> o = mixed(ofr);
      if (failed(o))
        return op->emitError("cuda target: unknown subview offset");
      if (*o != "0")
        expr += " + (" + *o + ") * " + std::to_string(stride);
    }
    HostBuffer view{it->second.base, expr};
    buffers[subview.getResult()] = view;
    return success();
  }
  if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(op)) {
    auto it = buffers.find(op->getOperand(0));
    if (it == buffers.end())
      return op->emitError("cuda target: view of an unknown buffer");
    HostBuffer view = it->second;
    buffers[op->getResult(0)] = view;
    return success();
  }
  if (auto cast = dyn_cast<memref::ReinterpretCastOp>(op)) {
    auto it = buffers.find(cast.getSource());
    if (it == buffers.end())
      return op->emitError("cuda target: view of an unknown buffer");
    FailureOr<std::string> o = mixed(cast.getMixedOffsets()[0]);
    if (failed(o))
      return op->emitError("cuda target: unknown offset");
    HostBuffer view{it->second.base, *o};
    buffers[cast.getResult()] = view;
    return success();
  }
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    auto it = buffers.find(view.getSource());
    FailureOr<std::string> shift = hostScalar(view.getByteShift());
    if (it == buffers.end() || failed(shift))
      return op->emitError("cuda target: view of an unknown buffer");
    std::string name = fresh("m");
    host << "  void *" << name << " = (void *)((char *)" << it->second.base
         << " + (" << it->second.offset << ") + (" << *shift << "));\n";
    buffers[view.getResult()] = {name, "0"};
    return success();
  }
  if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
    auto it = buffers.find(meta.getSource());
    if (it == buffers.end())
      return op->emitError("cuda target: metadata of an unknown buffer");
    HostBuffer source = it->second;
    buffers[meta.getBaseBuffer()] = {source.base, "0"};
    defineScalar(meta.getOffset(), "(int64_t)(" + source.offset + ")");
    MemRefType type = meta.getSource().getType();
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return op->emitError("cuda target: non-strided buffer");
    for (auto [size, value] : llvm::zip(type.getShape(), meta.getSizes()))
      if (!value.use_empty())
        defineScalar(value, "(int64_t)" + std::to_string(size));
    for (auto [stride, value] : llvm::zip(strides, meta.getStrides()))
      if (!value.use_empty())
        defineScalar(value, "(int64_t)" + std::to_string(stride));
    return success();
  }
  if (auto ptr = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
    auto it = buffers.find(ptr.getSource());
    if (it == buffers.end())
      return op->emitError("cuda target: address of an unknown buffer");
    defineScalar(ptr.getResult(), "(int64_t)(uintptr_t)" + it->second.base);
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    SmallVector<std::string> args;
    for (Value v : call.getOperands()) {
      FailureOr<std::string> a = hostScalar(v);
      if (failed(a))
        return op->emitError("cuda target: runtime call with a non-scalar "
                             "argument");
      args.push_back(*a);
    }
    std::string text =
        calleeName(call.getCallee()) + "(" + llvm::join(args, ", ") + ")";
    if (call.getNumResults() == 0)
      host << "  " << text << ";\n";
    else
      defineScalar(call.getResult(0), text);
    return success();
  }
  if (isa<func::ReturnOp>(op))
    return success();
  // The workspace arena of dnn-plan-memory: a runtime call returning a
  // pointer, packed into a memref descriptor (LLVM dialect) and cast to a
  // byte memref.
  if (auto constant = dyn_cast<LLVM::ConstantOp>(op)) {
    auto value = dyn_cast<IntegerAttr>(constant.getValue());
    if (!value)
      return op->emitError("cuda target: unsupported LLVM constant");
    defineScalar(constant.getResult(),
                 "(int64_t)" + std::to_string(value.getInt()) + "LL");
    return success();
  }
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    if (!call.getCallee())
      return op->emitError("cuda target: indirect calls are not supported");
    SmallVector<std::string> args;
    for (Value v : call.getArgOperands()) {
      FailureOr<std::string> a = hostScalar(v);
      if (failed(a))
        return op->emitError("cuda target: runtime call with an unknown "
                             "argument");
      args.push_back(*a);
    }
    std::string text =
        calleeName(*call.getCallee()) + "(" + llvm::join(args, ", ") + ")";
    if (call.getNumResults() == 0) {
      host << "  " << text << ";\n";
    } else if (isa<LLVM::LLVMPointerType>(call.getResult().getType())) {
      std::string name = fresh("w");
      host << "  void *" << name << " = " << text << ";\n";
      pointers[call.getResult()] = name;
    } else {
      defineScalar(call.getResult(), text);
    }
    return success();
  }
  if (isa<LLVM::PoisonOp, LLVM::UndefOp>(op))
    return success();
  if (auto insert = dyn_cast<LLVM::InsertValueOp>(op)) {
    // Field 1 of a memref descriptor is the aligned pointer.
    std::string aligned = descriptors.lookup(insert.getContainer());
    if (insert.getPosition() == ArrayRef<int64_t>{1}) {
      auto it = pointers.find(insert.getValue());
      if (it == pointers.end())
        return op->emitError("cuda target: unknown descriptor pointer");
      aligned = it->second;
    }
    descriptors[insert.getResult()] = aligned;
    return success();
  }
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
    if (cast.getNumOperands() != 1 || cast.getNumResults() != 1 ||
        !isa<MemRefType>(cast.getResult(0).getType()))
      return op->emitError("cuda target: unsupported cast");
    std::string aligned = descriptors.lookup(cast.getOperand(0));
    if (aligned.empty())
      return op->emitError("cuda target: cast of an unknown descriptor");
    buffers[cast.getResult(0)] = {aligned, "0"};
    return success();
  }
  if (op->getDialect() &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) {
    SmallVector<std::string> args;
    for (Value v : op->getOperands()) {
      FailureOr<std::string> a = hostScalar(v);
      if (failed(a))
        return op->emitError("cuda target: unknown host operand");
      args.push_back(*a);
    }
    FailureOr<std::string> expr = getScalarExpr(op, args);
    if (failed(expr))
      return failure();
    defineScalar(op->getResult(0), *expr);
    return success();
  }
  return op->emitError("cuda target: cannot generate host code for '")
         << op->getName() << "'";
}

LogicalResult CUDAEmitter::emitFunction(func::FuncOp func) {
  buffers.clear();
  hostScalars.clear();
  pointers.clear();
  descriptors.clear();
  std::string text;
  llvm::raw_string_ostream host(text);
  SmallVector<std::string> params;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      return func.emitError("cuda target: @")
             << func.getName() << " takes a non-buffer argument";
    std::string name = "b" + std::to_string(arg.getArgNumber());
    params.push_back("void *" + name);
    buffers[arg] = {name, "0"};
  }
  if (func.getNumResults())
    return func.emitError("cuda target: @")
           << func.getName() << " returns values (results must be out-params)";
  std::string impl = "dnnc_fn_" + func.getName().str();
  host << "static void " << impl << "(" << llvm::join(params, ", ") << ") {\n";
  if (!options.hostEmulation)
    host << "  cudaStream_t stream = (cudaStream_t)dnnc_rt_cuda_stream();\n";
  if (!func.getBody().hasOneBlock())
    return func.emitError("cuda target: control flow in @")
           << func.getName() << " is not supported";
  for (Operation &op : func.getBody().front())
    if (failed(emitHostOp(&op, host)))
      return failure();
  host << "}\n\n";
  // The runtime entry: the buffers in argument order.
  host << "extern \"C\" void " << dnnc::getEntrySymbol(func.getName())
       << "(void **buffers) {\n  " << impl << "(";
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    host << (i ? ", " : "") << "buffers[" << i << "]";
  host << ");\n}\n\n";
  functions += text;
  return success();
}

LogicalResult CUDAEmitter::emitGlobal(memref::GlobalOp global) {
  MemRefType type = global.getType();
  auto init = dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr());
  if (!init || !type.hasStaticShape())
    return global.emitError("cuda target: only constant globals are supported");
  std::string name = "dnnc_g" + std::to_string(globals.size());
  globals[global.getSymName()] = name;
  // Stored as raw bits (a __device__ variable needs a constant
  // initializer); code reads it through a pointer of the element type.
  Type elementType = type.getElementType();
  unsigned width = elementType.isIndex() ? 64
                   : elementType.isInteger(1)
                       ? 8
                       : elementType.getIntOrFloatBitWidth();
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return global.emitError("cuda target: unsupported element type ")
           << elementType;
  std::string storage = "uint" + std::to_string(width) + "_t";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "__device__ " << storage << " " << name << "["
     << std::max<int64_t>(1, type.getNumElements()) << "] = {";
  int64_t n = type.getNumElements();
  int64_t i = 0;
  auto emitAttr = [&](Attribute a) -> LogicalResult {
    APInt bits;
    if (auto f = dyn_cast<FloatAttr>(a))
      bits = f.getValue().bitcastToAPInt();
    else if (auto v = dyn_cast<IntegerAttr>(a))
      bits = v.getValue();
    else
      return global.emitError("cuda target: element has no C++ literal");
    os << (i++ ? ", " : "") << "0x"
       << llvm::utohexstr(bits.zextOrTrunc(width).getZExtValue()) << "ull";
    return success();
  };
  if (init.isSplat()) {
    for (int64_t k = 0; k < n; ++k)
      if (failed(emitAttr(init.getSplatValue<Attribute>())))
        return failure();
  } else {
    for (Attribute a : init.getValues<Attribute>())
      if (failed(emitAttr(a)))
        return failure();
  }
  os << "};\n";
  declarations += text;
  return success();
}

LogicalResult CUDAEmitter::emit(raw_ostream &os) {
  for (auto global : module.getOps<memref::GlobalOp>())
    if (failed(emitGlobal(global)))
      return failure();
  // The runtime functions the host code calls.
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isExternal())
      continue;
    SmallVector<std::string> params;
    for (Type t : func.getArgumentTypes()) {
      std::string c = getCType(t);
      if (c.empty())
        return func.emitError("cuda target: runtime function @")
               << func.getName() << " takes a " << t;
      params.push_back(c);
    }
    std::string result = "void";
    if (func.getNumResults() == 1)
      result = getCType(func.getResultTypes()[0]);
    if (result.empty() || func.getNumResults() > 1)
      return func.emitError("cuda target: runtime function @")
             << func.getName() << " has unsupported results";
    declarations += "extern \"C\" " + result + " " +
                    calleeName(func.getName()) + "(" +
                    llvm::join(params, ", ") + ");\n";
  }
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    if (!func.isExternal())
      return func.emitError("cuda target: LLVM function bodies are not "
                            "supported");
    LLVM::LLVMFunctionType type = func.getFunctionType();
    SmallVector<std::string> params;
    for (Type t : type.getParams()) {
      std::string c = isa<LLVM::LLVMPointerType>(t) ? "void *" : getCType(t);
      if (c.empty())
        return func.emitError("cuda target: runtime function @")
               << func.getName() << " takes a " << t;
      params.push_back(c);
    }
    Type result = type.getReturnType();
    std::string r = isa<LLVM::LLVMVoidType>(result)      ? "void"
                    : isa<LLVM::LLVMPointerType>(result) ? "void *"
                                                         : getCType(result);
    if (r.empty())
      return func.emitError("cuda target: runtime function @")
             << func.getName() << " returns a " << result;
    declarations += "extern \"C\" " + r + " " + calleeName(func.getName()) +
                    "(" + llvm::join(params, ", ") + ");\n";
  }
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && failed(emitFunction(func)))
      return failure();

  if (options.hostEmulation)
    os << kEmulationPrelude;
  else
    os << kCUDAPrelude;
  os << kCommonPrelude;
  os << (options.hostEmulation ? kEmulationReduce : kCUDAReduce);
  os << "\n" << declarations << "\n" << kernels << functions;
  return success();
}

LogicalResult dnnc::translateToCUDA(ModuleOp module, raw_ostream &os,
                                    const CUDASourceOptions &options) {
  CUDAEmitter emitter(module, options);
  return emitter.emit(os);
}

void dnnc::registerCUDATranslations() {
  auto dialects = [](DialectRegistry &registry) {
    registry
        .insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect>();
  };
  static TranslateFromMLIRRegistration toCUDA(
      "mlir-to-cuda", "translate bufferized linalg to CUDA C++ (dnnc)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        return translateToCUDA(module, os);
      },
      dialects);
  static TranslateFromMLIRRegistration toEmulation(
      "mlir-to-cuda-emulation",
      "translate bufferized linalg to the host emulation of its CUDA C++ "
      "(dnnc)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a module");
        CUDASourceOptions options;
        options.hostEmulation = true;
        return translateToCUDA(module, os, options);
      },
      dialects);
}
