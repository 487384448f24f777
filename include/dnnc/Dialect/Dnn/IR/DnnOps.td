//===- DnnOps.td - dnn dialect ops -------------------------*- tablegen -*-===//
//
// Op definitions of the `dnn` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNNOPS_TD
#define DNNC_DIALECT_DNN_IR_DNNOPS_TD

include "dnnc/Dialect/Dnn/IR/DnnBase.td"
include "dnnc/Dialect/Dnn/IR/DnnAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Dnn_ConstantOp : Dnn_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "Tensor constant";
  let description = [{
    A constant tensor: ONNX initializers, `Constant` nodes and everything the
    importer folds (shape computations, `ConstantOfShape`).

    ```mlir
    %0 = dnn.constant dense<[2, 3]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class Dnn_UnaryOp<string mnemonic, Type tensorType, list<Trait> traits = []>
    : Dnn_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType]> {
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

class Dnn_FloatUnaryOp<string mnemonic, string formula>
    : Dnn_UnaryOp<mnemonic, Dnn_FloatTensor> {
  let summary = "Elementwise " # formula;
  let description = "Computes `" # formula # "` elementwise (ONNX `" #
    mnemonic # "` semantics).\n\n```mlir\n%1 = dnn." # mnemonic #
    " %0 : tensor<2x3xf32>\n```";
}

def Dnn_ReluOp : Dnn_FloatUnaryOp<"relu", "max(x, 0)">;
def Dnn_TanhOp : Dnn_FloatUnaryOp<"tanh", "tanh(x)">;
def Dnn_SigmoidOp : Dnn_FloatUnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Dnn_ErfOp : Dnn_FloatUnaryOp<"erf", "erf(x)">;
def Dnn_ExpOp : Dnn_FloatUnaryOp<"exp", "exp(x)">;
def Dnn_LogOp : Dnn_FloatUnaryOp<"log", "log(x)">;
def Dnn_SqrtOp : Dnn_FloatUnaryOp<"sqrt", "sqrt(x)">;
def Dnn_ReciprocalOp : Dnn_FloatUnaryOp<"reciprocal", "1 / x">;
def Dnn_FloorOp : Dnn_FloatUnaryOp<"floor", "floor(x)">;
def Dnn_CeilOp : Dnn_FloatUnaryOp<"ceil", "ceil(x)">;
def Dnn_RoundOp : Dnn_FloatUnaryOp<"round",
                                   "round(x), halves to even">;
def Dnn_SinOp : Dnn_FloatUnaryOp<"sin", "sin(x)">;
def Dnn_CosOp : Dnn_FloatUnaryOp<"cos", "cos(x)">;
def Dnn_TanOp : Dnn_FloatUnaryOp<"tan", "tan(x)">;
def Dnn_AsinOp : Dnn_FloatUnaryOp<"asin", "asin(x)">;
def Dnn_AcosOp : Dnn_FloatUnaryOp<"acos", "acos(x)">;
def Dnn_AtanOp : Dnn_FloatUnaryOp<"atan", "atan(x)">;
def Dnn_SinhOp : Dnn_FloatUnaryOp<"sinh", "sinh(x)">;
def Dnn_CoshOp : Dnn_FloatUnaryOp<"cosh", "cosh(x)">;
def Dnn_AsinhOp : Dnn_FloatUnaryOp<"asinh", "asinh(x)">;
def Dnn_AcoshOp : Dnn_FloatUnaryOp<"acosh", "acosh(x)">;
def Dnn_AtanhOp : Dnn_FloatUnaryOp<"atanh", "atanh(x)">;

def Dnn_NegOp : Dnn_UnaryOp<"neg", Dnn_NumericTensor> {
  let summary = "Elementwise negation";
  let description = [{
    ```mlir
    %1 = dnn.neg %0 : tensor<4xf32>
    ```
  }];
  let hasFolder = 1;
}

def Dnn_AbsOp : Dnn_UnaryOp<"abs", Dnn_NumericTensor> {
  let summary = "Elementwise absolute value";
  let description = [{
    ```mlir
    %1 = dnn.abs %0 : tensor<4xf32>
    ```
  }];
}

def Dnn_NotOp : Dnn_UnaryOp<"not", Dnn_BoolTensor> {
  let summary = "Elementwise logical not";
  let description = [{
    ```mlir
    %1 = dnn.not %0 : tensor<4xi1>
    ```
  }];
}

def Dnn_GeluOp : Dnn_UnaryOp<"gelu", Dnn_FloatTensor> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * 0.5 * (1 + erf(x / sqrt(2)))`, or with `approximation = tanh`,
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` (ONNX Gelu-20).

    ```mlir
    %1 = dnn.gelu %0 approximation = <tanh> : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input,
                       Dnn_GeluApproximationAttr:$approximation);
  let assemblyFormat =
      "$input `approximation` `=` $approximation attr-dict `:` type($result)";
}

def Dnn_LeakyReluOp : Dnn_UnaryOp<"leaky_relu", Dnn_FloatTensor> {
  let summary = "Leaky rectified linear unit";
  let description = [{
    `x >= 0 ? x : alpha * x`.

    ```mlir
    %1 = dnn.leaky_relu %0 alpha = 0.01 : tensor<4xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, F32Attr:$alpha);
  let assemblyFormat = "$input `alpha` `=` $alpha attr-dict `:` type($result)";
}

class Dnn_BinaryOp<string mnemonic, Type tensorType, string formula,
                   list<Trait> traits = []>
    : Dnn_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "Elementwise " # formula;
  let description = "Computes `" # formula # "` elementwise. Operands have " #
    "identical types: the importer makes ONNX broadcasting explicit with " #
    "`dnn.broadcast_in_dim`.\n\n```mlir\n%2 = dnn." # mnemonic #
    " %0, %1 : tensor<2x3xf32>\n```";
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Dnn_AddOp : Dnn_BinaryOp<"add", Dnn_NumericTensor, "lhs + rhs", [Commutative]>;
def Dnn_SubOp : Dnn_BinaryOp<"sub", Dnn_NumericTensor, "lhs - rhs">;
def Dnn_MulOp : Dnn_BinaryOp<"mul", Dnn_NumericTensor, "lhs * rhs", [Commutative]>;
def Dnn_DivOp : Dnn_BinaryOp<"div", Dnn_NumericTensor,
                             "lhs / rhs (integers: truncating)">;
// ONNX Mod: fmod = 1 is `rem` (C's % and fmod), fmod = 0 is `mod` (Python's
// %). Integer division by zero gives 0 in both.
def Dnn_RemOp : Dnn_BinaryOp<"rem", Dnn_NumericTensor,
                             "lhs - trunc(lhs / rhs) * rhs">;
def Dnn_ModOp : Dnn_BinaryOp<"mod", Dnn_NumericTensor,
                             "lhs - floor(lhs / rhs) * rhs">;
def Dnn_PowOp : Dnn_BinaryOp<"pow", Dnn_FloatTensor, "lhs ^ rhs">;
// ONNX BitShift. A shift by the bit width or more gives 0 (or -1 shifting a
// negative signed integer right), not undefined behaviour.
def Dnn_ShiftLeftOp : Dnn_BinaryOp<"shift_left", Dnn_IntegerTensor,
                                   "lhs << rhs">;
def Dnn_ShiftRightOp : Dnn_BinaryOp<"shift_right", Dnn_IntegerTensor,
                                    "lhs >> rhs (logical when unsigned)">;
def Dnn_MaxOp : Dnn_BinaryOp<"max", Dnn_NumericTensor, "max(lhs, rhs)",
                             [Commutative]>;
def Dnn_MinOp : Dnn_BinaryOp<"min", Dnn_NumericTensor, "min(lhs, rhs)",
                             [Commutative]>;
def Dnn_AndOp : Dnn_BinaryOp<"and", Dnn_BoolTensor, "lhs and rhs",
                             [Commutative]>;
def Dnn_OrOp : Dnn_BinaryOp<"or", Dnn_BoolTensor, "lhs or rhs", [Commutative]>;
def Dnn_XorOp : Dnn_BinaryOp<"xor", Dnn_BoolTensor, "lhs xor rhs",
                             [Commutative]>;

class Dnn_CompareOp<string mnemonic, string formula>
    : Dnn_Op<mnemonic, [Pure, Elementwise, SameTypeOperands,
                        SameOperandsAndResultShape]> {
  let summary = "Elementwise comparison " # formula;
  let description = "Computes `" # formula # "` elementwise into an `i1` " #
    "tensor. Operands have identical types.\n\n```mlir\n%2 = dnn." #
    mnemonic # " %0, %1 : tensor<4xf32> -> tensor<4xi1>\n```";
  let arguments = (ins Dnn_Tensor:$lhs, Dnn_Tensor:$rhs);
  let results = (outs Dnn_BoolTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasFolder = 1;
}

def Dnn_EqualOp : Dnn_CompareOp<"equal", "lhs == rhs">;
def Dnn_LessOp : Dnn_CompareOp<"less", "lhs < rhs">;
def Dnn_LessEqualOp : Dnn_CompareOp<"less_equal", "lhs <= rhs">;
def Dnn_GreaterOp : Dnn_CompareOp<"greater", "lhs > rhs">;
def Dnn_GreaterEqualOp : Dnn_CompareOp<"greater_equal", "lhs >= rhs">;

def Dnn_IsNaNOp : Dnn_Op<"is_nan", [Pure, Elementwise,
    SameOperandsAndResultShape, InferTypeOpAdaptor]> {
  let summary = "Elementwise NaN test (ONNX IsNaN)";
  let description = [{
    True where the element is a NaN. The result is an `i1` tensor of the
    input's shape. Exporters emit it after a softmax whose row is entirely
    masked with `-inf` (PyTorch's `scaled_dot_product_attention`), to replace
    the NaNs with zeros through `dnn.select`.

    ```mlir
    %1 = dnn.is_nan %0 : tensor<2x4xf32> -> tensor<2x4xi1>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input);
  let results = (outs Dnn_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Dnn_SelectOp : Dnn_Op<"select", [Pure, Elementwise,
    AllTypesMatch<["on_true", "on_false", "result"]>,
    AllShapesMatch<["condition", "result"]>]> {
  let summary = "Elementwise choice (ONNX Where)";
  let description = [{
    `condition ? on_true : on_false` elementwise; all operands have the same
    shape.

    ```mlir
    %r = dnn.select %c, %a, %b : tensor<2x2xi1>, tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Dnn_BoolTensor:$condition, Dnn_Tensor:$on_true,
                       Dnn_Tensor:$on_false);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$condition `,` $on_true `,` $on_false attr-dict `:` "
                       "type($condition) `,` type($result)";
  let hasFolder = 1;
}

def Dnn_CastOp : Dnn_Op<"cast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Elementwise element-type conversion";
  let description = [{
    Converts each element to the result's element type (ONNX Cast):
    float to integer truncates toward zero, to `i1` is `x != 0`.

    ```mlir
    %1 = dnn.cast %0 : tensor<4xf32> -> tensor<4xf16>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$input);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Dnn_ReshapeOp : Dnn_Op<"reshape", [Pure]> {
  let summary = "Reinterpret a tensor with another static shape";
  let description = [{
    Row-major reshape to the result type's shape; element count and element
    type are unchanged. ONNX Reshape, Flatten, Squeeze and Unsqueeze import to
    this op.

    ```mlir
    %1 = dnn.reshape %0 : tensor<2x3x4xf32> -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$input);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dnn_BroadcastInDimOp : Dnn_Op<"broadcast_in_dim", [Pure]> {
  let summary = "Explicit broadcast";
  let description = [{
    Broadcasts `input` to the result shape. Operand dimension `i` maps to
    result dimension `dims[i]`; `dims` is strictly increasing and each mapped
    operand dimension is either 1 or equal to the result dimension. ONNX
    Expand and every implicit broadcast import to this op.

    ```mlir
    %1 = dnn.broadcast_in_dim %0, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$input `,` `dims` `=` $dims attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dnn_TransposeOp : Dnn_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %1 = dnn.transpose %0, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$input `,` `permutation` `=` $permutation attr-dict `:` "
                       "type($input) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Dnn_ConcatOp : Dnn_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenate tensors along an axis";
  let description = [{
    ```mlir
    %2 = dnn.concat %0, %1 axis = 0 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Dnn_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$inputs `axis` `=` $axis attr-dict `:` "
                       "functional-type($inputs, $result)";
  let hasFolder = 1;
}

def Dnn_SliceOp : Dnn_Op<"slice", [Pure]> {
  let summary = "Strided slice";
  let description = [{
    Result element `[j0, j1, ...]` is input element
    `[starts[0] + j0 * steps[0], starts[1] + j1 * steps[1], ...]`; the result
    type gives the extent of each dimension. Steps are non-zero and may be
    negative; every addressed index lies inside the input. ONNX Slice and
    Split import to this op.

    ```mlir
    %1 = dnn.slice %0 starts = [0, 3] steps = [1, -1] : tensor<4x4xf32> -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$input `starts` `=` $starts `steps` `=` $steps attr-dict"
                       " `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Dnn_GatherOp : Dnn_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gather slices along an axis (ONNX Gather)";
  let description = [{
    Result shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of the axis.

    ```mlir
    %2 = dnn.gather %0[%1] axis = 0 : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Dnn_Tensor:$data, Dnn_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Dnn_Tensor:$result);
  let assemblyFormat = "$data `[` $indices `]` `axis` `=` $axis attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and convolution
//===----------------------------------------------------------------------===//

def Dnn_MatMulOp : Dnn_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "(Batched) matrix product";
  let description = [{
    `lhs` is `[B..., M, K]`; `rhs` is either `[K, N]` (shared across the
    batch, the common weight case) or `[B..., K, N]` with the same batch
    dimensions. The result is `[B..., M, N]`. Element types match. 1-D ONNX
    operands and broadcast batch dimensions are made explicit by the importer.

    ```mlir
    %2 = dnn.matmul %0, %1 : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins Dnn_NumericTensor:$lhs, Dnn_NumericTensor:$rhs);
  let results = (outs Dnn_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dnn_EinsumOp : Dnn_Op<"einsum", [Pure, InferTypeOpAdaptor]> {
  let summary = "Einstein summation";
  let description = [{
    An explicit-form equation `ab,bc->ac` (the importer adds the `->` part
    of implicit ONNX equations); one lower-case label per dimension, no
    ellipsis, repeated output labels not allowed. Labels shared between
    operands have equal extents.

    ```mlir
    %2 = dnn.einsum %0, %1 equation = "bij,bjk->bik" : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
    ```
  }];
  let arguments = (ins Variadic<Dnn_NumericTensor>:$inputs,
                       StrAttr:$equation);
  let results = (outs Dnn_NumericTensor:$result);
  let assemblyFormat = "$inputs `equation` `=` $equation attr-dict `:` "
                       "functional-type($inputs, $result)";
}

def Dnn_ConvOp : Dnn_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d grouped convolution (NC[spatial] layout)";
  let description = [{
    `input` is `[N, C, D1, ...]`, `weight` is `[M, C / group, K1, ...]`,
    optional `bias` is `[M]`. `pads` holds the begin pads of every spatial
    dimension followed by the end pads (auto_pad is resolved at import).

    ```mlir
    %2 = dnn.conv %0, %1 strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1
        : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, Dnn_FloatTensor:$weight,
                       Optional<Dnn_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Dnn_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? `strides` `=` $strides "
                       "`pads` `=` $pads `dilations` `=` $dilations "
                       "`group` `=` $group attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dnn_MaxPoolOp : Dnn_Op<"max_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d max pooling (NC[spatial] layout)";
  let description = [{
    Padded positions never win. With `ceil_mode` the output extent rounds up
    (a window must still start inside the input or its begin padding).

    ```mlir
    %1 = dnn.max_pool %0 kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false
        : tensor<1x3x32x32xf32> -> tensor<1x3x16x16xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Dnn_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` `=` $kernel `strides` `=` $strides "
                       "`pads` `=` $pads `dilations` `=` $dilations "
                       "`ceil_mode` `=` $ceil_mode attr-dict `:` "
                       "type($input) `->` type($result)";
}

def Dnn_AvgPoolOp : Dnn_Op<"avg_pool", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d average pooling (NC[spatial] layout)";
  let description = [{
    Divides by the number of input elements in the window, or by the window
    size including padding when `count_include_pad` is set.

    ```mlir
    %1 = dnn.avg_pool %0 kernel = [3, 3] strides = [1, 1] pads = [1, 1, 1, 1] ceil_mode = false count_include_pad = false
        : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad);
  let results = (outs Dnn_FloatTensor:$result);
  let assemblyFormat = "$input `kernel` `=` $kernel `strides` `=` $strides "
                       "`pads` `=` $pads `ceil_mode` `=` $ceil_mode "
                       "`count_include_pad` `=` $count_include_pad attr-dict "
                       "`:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Normalisation and softmax
//===----------------------------------------------------------------------===//

def Dnn_SoftmaxOp : Dnn_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (ONNX Softmax-13
    semantics; older opsets are rewritten by the importer).

    ```mlir
    %1 = dnn.softmax %0 axis = 1 : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Dnn_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dnn_LogSoftmaxOp : Dnn_Op<"log_softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "Log of softmax along one axis";
  let description = [{
    ```mlir
    %1 = dnn.log_softmax %0 axis = 1 : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Dnn_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dnn_LayerNormOp : Dnn_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalisation over the trailing dimensions";
  let description = [{
    Normalises over dimensions `[axis, rank)`:
    `y = (x - mean) * inv_std_dev * scale + bias` with
    `inv_std_dev = 1 / sqrt(var + epsilon)`. `scale` and the optional `bias`
    have shape `x.shape[axis:]`. `mean` and `inv_std_dev` have shape
    `x.shape[:axis] + [1, ...]` and are computed in f32 (f64 for f64 input).

    ```mlir
    %y, %mean, %isd = dnn.layer_norm %x, %s, %b axis = 2 epsilon = 1.0e-05
        : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, Dnn_FloatTensor:$scale,
                       Optional<Dnn_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Dnn_FloatTensor:$result, Dnn_FloatTensor:$mean,
                      Dnn_FloatTensor:$inv_std_dev);
  let assemblyFormat = "$input `,` $scale (`,` $bias^)? `axis` `=` $axis "
                       "`epsilon` `=` $epsilon attr-dict `:` "
                       "functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Dnn_ReduceOp<string mnemonic, string what>
    : Dnn_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Reduce by " # what # " over axes";
  let description = "Reduces `input` by " # what # " over `axes` (sorted, " #
    "unique, non-negative; empty means no reduction). With `keep_dims` the " #
    "reduced dimensions stay with extent 1.\n\n```mlir\n%1 = dnn." #
    mnemonic # " %0 axes = [1] keep_dims = false : tensor<2x3xf32> -> " #
    "tensor<2xf32>\n```";
  let arguments = (ins Dnn_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keep_dims);
  let results = (outs Dnn_NumericTensor:$result);
  let assemblyFormat = "$input `axes` `=` $axes `keep_dims` `=` $keep_dims "
                       "attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Dnn_ReduceSumOp : Dnn_ReduceOp<"reduce_sum", "sum">;
def Dnn_ReduceMeanOp : Dnn_ReduceOp<"reduce_mean", "arithmetic mean">;
def Dnn_ReduceMaxOp : Dnn_ReduceOp<"reduce_max", "maximum">;
def Dnn_ReduceMinOp : Dnn_ReduceOp<"reduce_min", "minimum">;
def Dnn_ReduceProdOp : Dnn_ReduceOp<"reduce_prod", "product">;

//===----------------------------------------------------------------------===//
// Training-related ops
//===----------------------------------------------------------------------===//

def Dnn_DropoutOp : Dnn_Op<"dropout", [InferTypeOpAdaptor]> {
  let summary = "Random dropout in training mode";
  let description = [{
    Zeroes each element with probability `ratio` (a scalar tensor) and scales
    the rest by `1 / (1 - ratio)`; `mask` is true where the element was kept.
    Only emitted for training-mode dropout whose ratio is not known to be 0;
    inference-mode dropout imports as the identity. `seed` makes the mask
    reproducible.

    ```mlir
    %y, %mask = dnn.dropout %x, %ratio seed = 0
        : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>)
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$input, Dnn_FloatTensor:$ratio,
                       I64Attr:$seed);
  let results = (outs Dnn_FloatTensor:$result, Dnn_BoolTensor:$mask);
  let assemblyFormat = "$input `,` $ratio `seed` `=` $seed attr-dict `:` "
                       "functional-type(operands, results)";
}

def Dnn_SoftmaxCrossEntropyOp
    : Dnn_Op<"softmax_cross_entropy", [Pure, InferTypeOpAdaptor]> {
  let summary = "Softmax cross-entropy loss (ONNX SoftmaxCrossEntropyLoss)";
  let description = [{
    `scores` is `[N, C, D...]`, `labels` `[N, D...]` of class indices,
    optional `weights` `[C]`. `log_prob` is `log_softmax(scores, axis 1)`;
    the per-element loss is `-log_prob[n, labels[n, d], d] * weights[label]`,
    zero where `labels == ignore_index`; `reduction` `none` keeps the
    `[N, D...]` shape, `sum` sums, `mean` divides by the sum of the applied
    weights.

    ```mlir
    %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <mean>
        : (tensor<3x5xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>)
    ```
  }];
  let arguments = (ins Dnn_FloatTensor:$scores, Dnn_IndexTensor:$labels,
                       Optional<Dnn_FloatTensor>:$weights,
                       Dnn_LossReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Dnn_FloatTensor:$loss, Dnn_FloatTensor:$log_prob);
  let assemblyFormat = "$scores `,` $labels (`,` $weights^)? `reduction` `=` "
                       "$reduction attr-dict `:` functional-type(operands, results)";
}

#endif // DNNC_DIALECT_DNN_IR_DNNOPS_TD
