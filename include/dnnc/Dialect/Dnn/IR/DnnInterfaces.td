//===- DnnInterfaces.td - dnn op interfaces ----------------*- tablegen -*-===//
//
// Op interfaces every `dnn` op implements for the later phases: the sharding
// rule and the cost.
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

#endif // DNNC_DIALECT_DNN_IR_DNNINTERFACES_TD
