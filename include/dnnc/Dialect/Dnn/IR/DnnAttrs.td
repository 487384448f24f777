//===- DnnAttrs.td - dnn dialect attributes ----------------*- tablegen -*-===//
//
// Attributes of the `dnn` dialect: the einsum-like sharding rule of an op
// (`#dnn.sharding_rule`) and the per-tensor factor mapping it is built from.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNNATTRS_TD
#define DNNC_DIALECT_DNN_IR_DNNATTRS_TD

include "dnnc/Dialect/Dnn/IR/DnnBase.td"

//===----------------------------------------------------------------------===//
// FactorKind
//===----------------------------------------------------------------------===//

def Dnn_FactorKind : I32EnumAttr<"FactorKind",
    "what splitting a factor of a sharding rule means", [
  I32EnumAttrCase<"Parallel", 0, "parallel">,
  I32EnumAttrCase<"NeedReplication", 1, "replication">,
  I32EnumAttrCase<"Halo", 2, "halo">,
  I32EnumAttrCase<"Sum", 3, "sum">,
  I32EnumAttrCase<"Max", 4, "max">,
  I32EnumAttrCase<"Min", 5, "min">,
  I32EnumAttrCase<"Prod", 6, "prod">,
  I32EnumAttrCase<"Mean", 7, "mean">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dnn";
}

//===----------------------------------------------------------------------===//
// TensorMappingAttr
//===----------------------------------------------------------------------===//

class Dnn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dnn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dnn_TensorMappingAttr : Dnn_Attr<"TensorMapping", "tensor_mapping"> {
  let summary = "The factors of each dimension of one tensor";
  let description = [{
    One operand or result of a `#dnn.sharding_rule`: for every dimension, the
    indices of the rule's factors whose product is the dimension, major to
    minor. An empty list is a dimension of extent 1 that no factor maps to.
    Inside a sharding rule it is printed with factor names (`[ij, k, 1]`); on
    its own it is written with indices:

    ```mlir
    #dnn.tensor_mapping<[[0, 1], [2], []]>
    ```

    The mapping is a plain container; `#dnn.sharding_rule` checks the
    indices.
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"::mlir::DenseI64ArrayAttr",
                              "factor indices of each dimension">:$dims
  );
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins
      "::llvm::ArrayRef<::llvm::SmallVector<int64_t>>":$dimFactors)>
  ];
  let extraClassDeclaration = [{
    /// Returns the rank of the tensor.
    int64_t getRank() const { return getDims().size(); }

    /// Returns the factors of dimension `dim`, major to minor.
    ::llvm::ArrayRef<int64_t> getDimFactors(int64_t dim) const {
      return getDims()[dim].asArrayRef();
    }

    /// Returns the dimension `factor` maps to, if any.
    std::optional<int64_t> getDimOfFactor(int64_t factor) const;

    /// Returns true if some dimension maps to `factor`.
    bool hasFactor(int64_t factor) const {
      return getDimOfFactor(factor).has_value();
    }
  }];
}

//===----------------------------------------------------------------------===//
// ShardingRuleAttr
//===----------------------------------------------------------------------===//

def Dnn_ShardingRuleAttr : Dnn_Attr<"ShardingRule", "sharding_rule"> {
  let summary = "How the dimensions of an op may be split (einsum-like)";
  let description = [{
    A sharding rule describes an op's iteration space as a list of
    **factors**, each with a size and a kind, and maps every dimension of
    every operand and result to a (possibly empty) product of factors, major
    to minor. Splitting a factor over mesh axes splits every tensor
    dimension that contains it the same way; a tensor without the factor is
    replicated along those axes (operands) or becomes partial (results, for
    reduction factors).

    ```mlir
    // matmul: i, j parallel; k contracted: splitting it leaves partial sums.
    #dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum}>
    // softmax over axis 1: the axis may not be split.
    #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={j}>
    // reshape 6x4 -> 2x3x4: dimension 0 of the operand is the product i*j.
    #dnn.sharding_rule<([ij, k]) -> ([i, j, k]) {i=2, j=3, k=4}>
    // A dimension of extent 1 with no factor is written `1`.
    #dnn.sharding_rule<([i]) -> ([1, i]) {i=6}>
    ```

    Factor names are single letters, optionally with a numeric suffix
    (`i`, `z_1`); the brace list gives the sizes and fixes the factor order
    (names are printed canonically as `i, j, k, ..., z, a, ..., h, i_1, ...`).
    Kinds (a factor not listed in a kind group is `parallel`):

    * `parallel`: appears in every result; splitting it splits the results
      the same way and the op runs unchanged on the local blocks.
    * `reduction={k:sum}` (`sum`, `max`, `min`, `prod`, `mean`): missing from
      at least one result; results without it hold partial values after a
      split, to be combined with that reduction (all-reduce or
      reduce-scatter). Results that contain it are split along it.
    * `replication={j}`: the factor may not be split; every tensor holding it
      must be whole along that dimension.
    * `halo={h}`: a sliding-window dimension; splitting it needs halo
      exchanges with neighbouring devices and per-device padding. Until the
      partitioner implements halos it is treated like `replication`.

    Checks: factor sizes are positive; every factor is used by some tensor
    and at most once per tensor; factor indices are in range; a `parallel`
    factor appears in every result and a reduction factor misses at least one.
    `verifyForTypes` checks a rule against an op's operand and result types
    (counts, ranks, and each dimension's extent is its factor product).
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"int64_t", "size of each factor">:$factor_sizes,
    OptionalArrayRefParameter<"::dnnc::dnn::FactorKind",
                              "kind of each factor">:$factor_kinds,
    OptionalArrayRefParameter<"TensorMappingAttr",
                              "factors of each operand">:$operands,
    OptionalArrayRefParameter<"TensorMappingAttr",
                              "factors of each result">:$results
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Returns the number of factors.
    int64_t getNumFactors() const { return getFactorSizes().size(); }
    /// Returns the number of operand mappings.
    int64_t getNumOperands() const { return getOperands().size(); }
    /// Returns the number of result mappings.
    int64_t getNumResults() const { return getResults().size(); }

    /// Returns the size of `factor`.
    int64_t getFactorSize(int64_t factor) const {
      return getFactorSizes()[factor];
    }
    /// Returns the kind of `factor`.
    FactorKind getFactorKind(int64_t factor) const {
      return getFactorKinds()[factor];
    }
    /// Returns true if `factor` is `parallel`.
    bool isParallel(int64_t factor) const {
      return getFactorKind(factor) == FactorKind::Parallel;
    }
    /// Returns true if `factor` is a reduction factor (of any kind).
    bool isReduction(int64_t factor) const {
      return isReductionKind(getFactorKind(factor));
    }
    /// Returns true if `factor` may not be split.
    bool needsReplication(int64_t factor) const {
      return getFactorKind(factor) == FactorKind::NeedReplication;
    }
    /// Returns true if splitting `factor` needs halo exchanges.
    bool needsHalo(int64_t factor) const {
      return getFactorKind(factor) == FactorKind::Halo;
    }
    /// Returns true if `factor` may be split without halos: it is parallel
    /// or a reduction, and larger than 1.
    bool canSplit(int64_t factor) const {
      return getFactorSize(factor) > 1 &&
             (isParallel(factor) || isReduction(factor));
    }

    /// Returns the mapping of operand `index`.
    TensorMappingAttr getOperandMapping(int64_t index) const {
      return getOperands()[index];
    }
    /// Returns the mapping of result `index`.
    TensorMappingAttr getResultMapping(int64_t index) const {
      return getResults()[index];
    }
    /// Returns the factors of dimension `dim` of operand `index`, major to
    /// minor.
    ::llvm::ArrayRef<int64_t> getOperandDimFactors(int64_t index,
                                                   int64_t dim) const {
      return getOperandMapping(index).getDimFactors(dim);
    }
    /// Returns the factors of dimension `dim` of result `index`, major to
    /// minor.
    ::llvm::ArrayRef<int64_t> getResultDimFactors(int64_t index,
                                                  int64_t dim) const {
      return getResultMapping(index).getDimFactors(dim);
    }

    /// Returns the product of the sizes of `factors`.
    int64_t getProduct(::llvm::ArrayRef<int64_t> factors) const;

    /// Returns the extents a tensor with `mapping` must have.
    ::llvm::SmallVector<int64_t> getShape(TensorMappingAttr mapping) const;

    /// Returns every factor of `kind`, in factor order.
    ::llvm::SmallVector<int64_t> getFactorsOfKind(FactorKind kind) const;

    /// Returns every reduction factor, in factor order.
    ::llvm::SmallVector<int64_t> getReductionFactors() const;

    /// Returns the canonical printed name of factor `factor` (`i`, `j`, ...).
    static std::string getFactorName(int64_t factor);

    /// Checks the rule against the operand and result types of an op:
    /// counts, ranks and that every dimension's extent is the product of
    /// its factors. Reports through `emitError`.
    ::mlir::LogicalResult
    verifyForTypes(::mlir::TypeRange operandTypes,
                   ::mlir::TypeRange resultTypes,
                   ::llvm::function_ref<::mlir::InFlightDiagnostic()>
                       emitError) const;
  }];
}

#endif // DNNC_DIALECT_DNN_IR_DNNATTRS_TD
