//===- PlanFormat.cpp - plan.bin constants and small helpers ---*- C++ -*-===//
//
// FNV-1a-64, section kind and buffer role names, weight layout.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/PlanFormat.h"
#include "dnnc/Runtime/Plan.h"

namespace dnnc::plan {

uint64_t fnv1a64(const void *data, size_t size, uint64_t hash) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= kFnvPrime;
  }
  return hash;
}

const char *sectionKindName(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
  case SectionKind::Model:
    return "MODEL";
  case SectionKind::RankMeta:
    return "RANK_META";
  case SectionKind::RankCode:
    return "RANK_CODE";
  case SectionKind::RankWeights:
    return "RANK_WEIGHTS";
  }
  return "UNKNOWN";
}

const char *bufferRoleName(BufferRole role) {
  switch (role) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Output:
    return "output";
  case BufferRole::Weight:
    return "weight";
  case BufferRole::Activation:
    return "activation";
  case BufferRole::State:
    return "state";
  case BufferRole::Update:
    return "update";
  case BufferRole::Step:
    return "step";
  case BufferRole::Accumulator:
    return "accumulator";
  }
  return "invalid-role";
}

void setSingleFunction(RankProgram &program, const std::string &symbol) {
  FunctionDesc function;
  function.symbol = symbol;
  for (size_t i = 0; i < program.buffers.size(); ++i)
    function.args.push_back(static_cast<uint32_t>(i));
  program.functions.assign(1, std::move(function));
  program.steps.assign(1, Step());
}

uint64_t appendWeight(std::string &weights, std::string_view bytes) {
  uint64_t offset = alignTo(weights.size(), kAlignment);
  weights.resize(offset, '\0');
  weights.append(bytes.data(), bytes.size());
  return offset;
}

} // namespace dnnc::plan
