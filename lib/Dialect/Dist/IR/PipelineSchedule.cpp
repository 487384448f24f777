//===- PipelineSchedule.cpp - The step order of a pipeline rank -----------===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/PipelineSchedule.h"

#include <algorithm>

using namespace mlir;
using namespace dnnc::dist;

llvm::SmallVector<WorkBlock>
dnnc::dist::getRankOrder(int64_t stages, int64_t chunks, int64_t microbatches,
                         Schedule schedule, int64_t rank, bool train) {
  int64_t p = stages, v = chunks, m = microbatches;
  // The forward and the backward sequences of (stage, micro-batch): for
  // interleaving, micro-batches go in groups of p through each chunk.
  llvm::SmallVector<WorkBlock> forwards, backwards;
  if (schedule == Schedule::Interleaved && v > 1) {
    for (int64_t group = 0; group * p < m; ++group)
      for (int64_t chunk = 0; chunk < v; ++chunk)
        for (int64_t mb = group * p; mb < std::min(m, (group + 1) * p); ++mb) {
          forwards.push_back({chunk * p + rank, mb, false});
          backwards.push_back({(v - 1 - chunk) * p + rank, mb, true});
        }
  } else {
    for (int64_t chunk = 0; chunk < v; ++chunk)
      for (int64_t mb = 0; mb < m; ++mb) {
        forwards.push_back({chunk * p + rank, mb, false});
        backwards.push_back({(v - 1 - chunk) * p + rank, mb, true});
      }
  }
  if (!train)
    return forwards;
  int64_t total = forwards.size();
  int64_t warmup = total;
  if (schedule == Schedule::OneFOneB)
    warmup = std::min(total, p - rank - 1);
  else if (schedule == Schedule::Interleaved)
    warmup = std::min(total, (p - rank - 1) * 2 + (v - 1) * p);
  llvm::SmallVector<WorkBlock> order(forwards.begin(),
                                     forwards.begin() + warmup);
  int64_t nextForward = warmup, nextBackward = 0;
  while (nextForward < total) {
    order.push_back(forwards[nextForward++]);
    order.push_back(backwards[nextBackward++]);
  }
  order.append(backwards.begin() + nextBackward, backwards.end());
  return order;
}
