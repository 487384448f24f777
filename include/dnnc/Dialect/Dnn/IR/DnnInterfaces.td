//===- DnnInterfaces.td - dnn op interfaces ----------------*- tablegen -*-===//
//
// Op interfaces of the `dnn` ops for the later phases: the sharding rule and
// the cost (every op), and the gradient rule.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNNINTERFACES_TD
#define DNNC_DIALECT_DNN_IR_DNNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dnn_ShardingRuleOpInterface : OpInterface<"DnnShardingRuleOpInterface"> {
  let cppNamespace = "::dnnc::dnn";
  let description = [{
    The einsum-like sharding rule of an op (`#dnn.sharding_rule`): which
    dimensions of its operands and results may be split over mesh axes, and
    what a split implies (partial results, replication, halos). The plan
    phase propagates and searches shardings through these rules; the
    partition phase derives the collectives from them.

    Every `dnn` op implements it: `Dnn_Op` declares the method, so an op
    without a rule fails to link. Rules are computed from the op's types and
    attributes (`lib/Dialect/Dnn/IR/DnnShardingRules.cpp`); an op may pin a
    stricter rule with the discardable attribute `dnn.sharding_rule`, which
    must have the same factors and may only turn factors into `replication`.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the sharding rule of this op, computed from its types and
        attributes. The rule matches the operand and result types
        (`ShardingRuleAttr::verifyForTypes`).
      }],
      "::dnnc::dnn::ShardingRuleAttr", "getShardingRule">,
  ];
  let verify = [{
    return ::dnnc::dnn::verifyPinnedShardingRule($_op);
  }];
  // Run after the op's own verifier, so that rules are only computed for
  // valid ops.
  let verifyWithRegions = 1;
}

def Dnn_CostOpInterface : OpInterface<"DnnCostOpInterface"> {
  let cppNamespace = "::dnnc::dnn";
  let description = [{
    The work of an op on its whole (global) tensors: FLOPs, bytes read and
    written, and whether the FLOPs run on matrix units
    (`::dnnc::dnn::OpCost`, `DnnCost.h`). The planner's cost model prices an
    op from it with a roofline on the device's peaks, dividing by the number
    of blocks the op is sharded into.

    Every `dnn` op implements it: `Dnn_Op` declares the method, so an op
    without a cost fails to link. Costs are computed from the op's types and
    attributes (`lib/Dialect/Dnn/IR/DnnCosts.cpp`); the counts are listed in
    docs/Dialects/Dnn.md ("Costs").
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the FLOPs and bytes of this op on its whole operands and
        results, computed from its types and attributes (for verified ops).
      }],
      "::dnnc::dnn::OpCost", "getCost">,
  ];
}

def Dnn_GradientOpInterface : OpInterface<"DnnGradientOpInterface"> {
  let cppNamespace = "::dnnc::dnn";
  let description = [{
    The reverse-mode derivative of an op (its vector-Jacobian product):
    given the cotangents of its results, the ops that compute the
    cotangents of its operands. `dnn-autodiff` builds the gradient of a
    scalar loss from these rules, one per op, so no model needs code of its
    own. Rules are attached to the ops as external models
    (`lib/Dialect/Dnn/IR/DnnGradients.cpp`, registered with the dialect);
    an op without one cannot be on a path from a differentiated value to
    the loss.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point (after the op), the
        cotangents of the operands from `resultGrads` (one per result, of
        the result's type; null: the result has no cotangent, i.e. zero).
        Fills `operandGrads` with one value per operand, of the operand's
        type, or null where the operand gets no gradient (integer or bool
        operands, operands the op is locally constant in). Fails, with a
        diagnostic on the op, for a case the rule does not handle.
      }],
      "::mlir::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // DNNC_DIALECT_DNN_IR_DNNINTERFACES_TD
