//===- Mesh.cpp - Device mesh coordinates -----------------------*- C++ -*-===//
//
// Positions, coordinates and groups of a device mesh (see Mesh.h).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Mesh.h"

#include <cassert>

namespace dnnc::plan {

int64_t meshSize(Int64Span shape) {
  int64_t size = 1;
  for (int64_t axisSize : shape)
    size *= axisSize;
  return size;
}

int64_t meshGroupSize(Int64Span shape, Int64Span axes) {
  int64_t size = 1;
  for (int64_t axis : axes) {
    assert(axis >= 0 && size_t(axis) < shape.size() && "no such mesh axis");
    size *= shape[size_t(axis)];
  }
  return size;
}

int64_t meshPosition(Int64Span shape, Int64Span multiIndex) {
  assert(multiIndex.size() == shape.size() && "one index per mesh axis");
  int64_t position = 0;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    assert(multiIndex[axis] >= 0 && multiIndex[axis] < shape[axis] &&
           "mesh index out of range");
    position = position * shape[axis] + multiIndex[axis];
  }
  return position;
}

std::vector<int64_t> meshDeviceOrder(Int64Span shape, Int64Span order) {
  if (!order.empty())
    return std::vector<int64_t>(order.begin(), order.end());
  std::vector<int64_t> identity(size_t(meshSize(shape)));
  for (size_t position = 0; position < identity.size(); ++position)
    identity[position] = int64_t(position);
  return identity;
}

int64_t meshDeviceId(Int64Span shape, Int64Span order, Int64Span multiIndex) {
  int64_t position = meshPosition(shape, multiIndex);
  if (order.empty())
    return position;
  assert(size_t(position) < order.size() && "device order too short");
  return order[size_t(position)];
}

bool meshMultiIndex(Int64Span shape, Int64Span order, int64_t deviceId,
                    std::vector<int64_t> &multiIndex) {
  int64_t position = deviceId;
  if (!order.empty()) {
    position = 0;
    while (size_t(position) < order.size() &&
           order[size_t(position)] != deviceId)
      ++position;
    if (size_t(position) == order.size())
      return false;
  } else if (deviceId < 0 || deviceId >= meshSize(shape)) {
    return false;
  }
  multiIndex.assign(shape.size(), 0);
  for (size_t axis = shape.size(); axis-- > 0;) {
    multiIndex[axis] = position % shape[axis];
    position /= shape[axis];
  }
  return true;
}

int64_t meshGroupIndex(Int64Span shape, Int64Span multiIndex, Int64Span axes) {
  assert(multiIndex.size() == shape.size() && "one index per mesh axis");
  int64_t index = 0;
  for (int64_t axis : axes) {
    assert(axis >= 0 && size_t(axis) < shape.size() && "no such mesh axis");
    index = index * shape[size_t(axis)] + multiIndex[size_t(axis)];
  }
  return index;
}

std::vector<int64_t> meshGroupDevices(Int64Span shape, Int64Span order,
                                      Int64Span multiIndex, Int64Span axes) {
  std::vector<int64_t> coords(multiIndex.begin(), multiIndex.end());
  int64_t groupSize = meshGroupSize(shape, axes);
  std::vector<int64_t> group;
  group.reserve(size_t(groupSize));
  for (int64_t member = 0; member < groupSize; ++member) {
    // Delinearize `member` over `axes`, the first listed axis the most
    // significant.
    int64_t rest = member;
    for (size_t i = axes.size(); i-- > 0;) {
      size_t axis = size_t(axes[i]);
      coords[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
    group.push_back(meshDeviceId(shape, order, coords));
  }
  return group;
}

std::vector<int64_t> meshMaskAxes(int64_t axesMask, size_t numAxes) {
  std::vector<int64_t> axes;
  for (size_t axis = 0; axis < numAxes; ++axis)
    if ((axesMask >> axis) & 1)
      axes.push_back(int64_t(axis));
  return axes;
}

int64_t invalidDeviceOrderPosition(Int64Span order, int64_t numDevices) {
  std::vector<bool> seen(size_t(numDevices > 0 ? numDevices : 0), false);
  for (size_t position = 0; position < order.size(); ++position) {
    int64_t device = order[position];
    if (device < 0 || device >= numDevices || seen[size_t(device)])
      return int64_t(position);
    seen[size_t(device)] = true;
  }
  return -1;
}

} // namespace dnnc::plan
