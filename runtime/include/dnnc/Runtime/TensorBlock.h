//===- TensorBlock.h - Blocks of dense row-major tensors -------*- C++ -*-===//
//
// Copies a rectangular block between a dense row-major tensor and a dense
// buffer of the block's own shape: how dnnc-run cuts each rank's part out of
// a model input and assembles the model outputs from the ranks' parts
// (BufferDesc::sliceOffsets, docs/plan-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TENSORBLOCK_H
#define DNNC_RUNTIME_TENSORBLOCK_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnc::rt {

/// Copies the block at `offsets` with shape `blockShape` out of the tensor
/// `tensor` of shape `shape` into the dense buffer `block`. Elements are
/// `elementSize` bytes. The block must lie inside the tensor (the caller
/// checks; plan::verifyPlan does for plan buffers).
void extractBlock(const void *tensor, const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &offsets,
                  const std::vector<int64_t> &blockShape, size_t elementSize,
                  void *block);

/// The inverse: copies the dense `block` into `tensor` at `offsets`.
void insertBlock(void *tensor, const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &offsets,
                 const std::vector<int64_t> &blockShape, size_t elementSize,
                 const void *block);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_TENSORBLOCK_H
