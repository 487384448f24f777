//===- TensorBlock.cpp - Blocks of dense row-major tensors -----*- C++ -*-===//
//
// Block copies as runs of contiguous bytes: the innermost dimensions the
// block spans completely, and the first one it does not, form one run.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/TensorBlock.h"

#include <cstring>

namespace dnnc::rt {

/// Calls `copy(tensorByte, blockByte, bytes)` for every contiguous run of
/// the block, in row-major order.
template <typename Copy>
static void forEachRun(const std::vector<int64_t> &shape,
                       const std::vector<int64_t> &offsets,
                       const std::vector<int64_t> &blockShape,
                       size_t elementSize, Copy copy) {
  const size_t rank = shape.size();
  if (rank == 0) {
    copy(0, 0, elementSize);
    return;
  }
  for (int64_t d : blockShape)
    if (d == 0)
      return;
  // Dimensions [split, rank) form one run: those after `split` are whole.
  size_t split = rank - 1;
  while (split > 0 && blockShape[split] == shape[split])
    --split;
  std::vector<uint64_t> strides(rank); // In elements, of the tensor.
  uint64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= uint64_t(shape[d]);
  }
  uint64_t run = 1;
  for (size_t d = split; d < rank; ++d)
    run *= uint64_t(blockShape[d]);
  const uint64_t runBytes = run * elementSize;

  std::vector<int64_t> index(split, 0); // Over dimensions [0, split).
  uint64_t blockByte = 0;
  for (;;) {
    uint64_t element = uint64_t(offsets[split]) * strides[split];
    for (size_t d = 0; d < split; ++d)
      element += uint64_t(offsets[d] + index[d]) * strides[d];
    copy(element * elementSize, blockByte, runBytes);
    blockByte += runBytes;
    // Next index, last dimension fastest; done after the last one.
    size_t d = split;
    for (;;) {
      if (d == 0)
        return;
      --d;
      if (++index[d] < blockShape[d])
        break;
      index[d] = 0;
    }
  }
}

void extractBlock(const void *tensor, const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &offsets,
                  const std::vector<int64_t> &blockShape, size_t elementSize,
                  void *block) {
  const char *src = static_cast<const char *>(tensor);
  char *dst = static_cast<char *>(block);
  forEachRun(shape, offsets, blockShape, elementSize,
             [&](uint64_t at, uint64_t blockAt, uint64_t bytes) {
               std::memcpy(dst + blockAt, src + at, bytes);
             });
}

void insertBlock(void *tensor, const std::vector<int64_t> &shape,
                 const std::vector<int64_t> &offsets,
                 const std::vector<int64_t> &blockShape, size_t elementSize,
                 const void *block) {
  char *dst = static_cast<char *>(tensor);
  const char *src = static_cast<const char *>(block);
  forEachRun(shape, offsets, blockShape, elementSize,
             [&](uint64_t at, uint64_t blockAt, uint64_t bytes) {
               std::memcpy(dst + at, src + blockAt, bytes);
             });
}

} // namespace dnnc::rt
