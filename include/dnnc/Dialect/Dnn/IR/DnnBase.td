//===- DnnBase.td - dnn dialect definition -----------------*- tablegen -*-===//
//
// The `dnn` dialect: DNN compute ops with ONNX semantics, normalised.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNNBASE_TD
#define DNNC_DIALECT_DNN_IR_DNNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"
include "dnnc/Dialect/Dnn/IR/DnnInterfaces.td"

def Dnn_Dialect : Dialect {
  let name = "dnn";
  let cppNamespace = "::dnnc::dnn";
  let summary = "Tensor compute ops of DNN graphs with normalised ONNX semantics";
  let description = [{
    The `dnn` dialect holds the compute graph that dnnc imports from ONNX.
    Every value is a statically shaped ranked tensor. The ops keep ONNX
    semantics but are normalised so that later phases (sharding, cost model,
    lowering, autodiff) see one form per computation:

    * broadcasting is explicit (`dnn.broadcast_in_dim`); elementwise ops take
      operands of identical shape;
    * axes are non-negative and sorted, pads explicit, no attribute is left
      to a default;
    * ONNX ops that are pure reshapes (Flatten, Squeeze, Unsqueeze, Reshape)
      become `dnn.reshape`; ops that only compute shapes (Shape, Size,
      ConstantOfShape) are folded to `dnn.constant` at import; composite ops
      with no scheduling value of their own (Gemm, BatchNormalization, Clip,
      Split) are decomposed into the ops below.

    ONNX node names are kept as `NameLoc` locations.
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes (DnnAttrs.cpp).
    void registerAttributes();

    /// Attaches the gradient rules (DnnGradientOpInterface) to the ops
    /// (defined in DnnGradients.cpp).
    void registerGradientModels();

    /// Name of the discardable attribute that pins a stricter sharding rule
    /// on an op (`#dnn.sharding_rule`).
    static constexpr ::llvm::StringLiteral kShardingRuleAttrName =
        "dnn.sharding_rule";

    /// Name of the module attribute recording `dnnc --precision` (a
    /// `#dnn.precision`), set by dnn-convert-precision.
    static constexpr ::llvm::StringLiteral kPrecisionAttrName =
        "dnn.precision";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Element types a `dnn` tensor may hold (ONNX's numeric and boolean types).
def Dnn_ElementType : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64,
                                 UI8, UI16, UI32, UI64]>;
def Dnn_Tensor : StaticShapeTensorOf<[Dnn_ElementType]>;
def Dnn_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Dnn_NumericTensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I8, I16, I32,
                                             I64, UI8, UI16, UI32, UI64]>;
def Dnn_IntegerTensor : StaticShapeTensorOf<[I8, I16, I32, I64, UI8, UI16,
                                             UI32, UI64]>;
def Dnn_BoolTensor : StaticShapeTensorOf<[I1]>;
def Dnn_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dnn_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation used by dnn.gelu", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Tanh", 1, "tanh">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dnn";
}
def Dnn_GeluApproximationAttr
    : EnumAttr<Dnn_Dialect, Dnn_GeluApproximation, "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Dnn_Precision : I32EnumAttr<"Precision",
    "the numeric precision a program is compiled in", [
  I32EnumAttrCase<"FP32", 0, "fp32">,
  I32EnumAttrCase<"TF32", 1, "tf32">,
  I32EnumAttrCase<"BF16", 2, "bf16">,
  I32EnumAttrCase<"FP16", 3, "fp16">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dnn";
  let description = [{
    `dnnc --precision`: `fp32`; `tf32` (fp32 data, GEMMs may use TF32
    tensor-core math); `bf16` and `fp16` (f32 weights and activations stored
    in that type, accumulations in f32). See `dnn-convert-precision`.
  }];
}
def Dnn_PrecisionAttr : EnumAttr<Dnn_Dialect, Dnn_Precision, "precision"> {
  let summary = "The precision a module was converted to (`dnn.precision`)";
  let assemblyFormat = "`<` $value `>`";
}

def Dnn_LossReduction : I32EnumAttr<"LossReduction",
    "reduction applied to a per-sample loss", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Sum", 1, "sum">,
  I32EnumAttrCase<"Mean", 2, "mean">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dnn";
}
def Dnn_LossReductionAttr
    : EnumAttr<Dnn_Dialect, Dnn_LossReduction, "loss_reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Base op class
//===----------------------------------------------------------------------===//

/// Base class of every `dnn` op. It declares the sharding rule
/// (`DnnShardingRuleOpInterface::getShardingRule`) and the cost
/// (`DnnCostOpInterface::getCost`) on every op, so an op added without a
/// rule in `DnnShardingRules.cpp` or a cost in `DnnCosts.cpp` fails to link.
class Dnn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dnn_Dialect, mnemonic,
         traits # [DeclareOpInterfaceMethods<Dnn_ShardingRuleOpInterface>,
                   DeclareOpInterfaceMethods<Dnn_CostOpInterface>]>;

#endif // DNNC_DIALECT_DNN_IR_DNNBASE_TD
