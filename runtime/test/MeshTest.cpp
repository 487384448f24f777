//===- MeshTest.cpp - Device mesh coordinates -------------------*- C++ -*-===//
//
// The mesh coordinate math of the DNNCPlan library (Mesh.h) that the
// compiler's `dist.mesh` and the runtime's collective groups share: device
// ids, coordinates and groups on 2x2 and 2x4 meshes, with the identity and
// with permuted device orders.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Mesh.h"

#include <gtest/gtest.h>

using namespace dnnc;

namespace {

using Ids = std::vector<int64_t>;

/// The coordinates of `device`, expected to be in the mesh.
Ids coordsOf(const Ids &shape, const Ids &order, int64_t device) {
  Ids multiIndex;
  EXPECT_TRUE(plan::meshMultiIndex(shape, order, device, multiIndex))
      << "device " << device;
  return multiIndex;
}

TEST(Mesh, SizesAndMasks) {
  EXPECT_EQ(plan::meshSize({}), 1);
  EXPECT_EQ(plan::meshSize({2, 4}), 8);
  EXPECT_EQ(plan::meshSize({2, 3, 4}), 24);
  EXPECT_EQ(plan::meshGroupSize({2, 4}, {}), 1);
  EXPECT_EQ(plan::meshGroupSize({2, 4}, {0}), 2);
  EXPECT_EQ(plan::meshGroupSize({2, 4}, {1}), 4);
  EXPECT_EQ(plan::meshGroupSize({2, 4}, {1, 0}), 8);
  EXPECT_EQ(plan::meshMaskAxes(0, 3), Ids{});
  EXPECT_EQ(plan::meshMaskAxes(0b101, 3), (Ids{0, 2}));
  EXPECT_EQ(plan::meshMaskAxes(0b110, 3), (Ids{1, 2}));
  // Bits beyond the mesh's axes are not axes.
  EXPECT_EQ(plan::meshMaskAxes(0b101, 2), (Ids{0}));
}

TEST(Mesh, IdentityTwoByTwo) {
  Ids shape = {2, 2};
  EXPECT_EQ(plan::meshDeviceOrder(shape, {}), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(plan::meshPosition(shape, {1, 0}), 2);
  EXPECT_EQ(plan::meshDeviceId(shape, {}, {0, 1}), 1);
  EXPECT_EQ(plan::meshDeviceId(shape, {}, {1, 0}), 2);
  EXPECT_EQ(coordsOf(shape, {}, 1), (Ids{0, 1}));
  EXPECT_EQ(coordsOf(shape, {}, 2), (Ids{1, 0}));
  EXPECT_EQ(coordsOf(shape, {}, 3), (Ids{1, 1}));
  // Device 1 = (0, 1): its column, its row, everybody.
  Ids at = {0, 1};
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {0}), (Ids{1, 3}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0}), 0);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {1}), (Ids{0, 1}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {1}), 1);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {0, 1}), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0, 1}), 1);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {}), (Ids{1}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {}), 0);
}

TEST(Mesh, IdentityTwoByFour) {
  Ids shape = {2, 4};
  EXPECT_EQ(plan::meshDeviceId(shape, {}, {1, 2}), 6);
  EXPECT_EQ(coordsOf(shape, {}, 5), (Ids{1, 1}));
  EXPECT_EQ(coordsOf(shape, {}, 3), (Ids{0, 3}));
  Ids at = coordsOf(shape, {}, 5);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {1}), (Ids{4, 5, 6, 7}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {1}), 1);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {0}), (Ids{1, 5}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0}), 1);
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {0, 1}),
            (Ids{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0, 1}), 5);
  // The first listed axis is the most significant.
  EXPECT_EQ(plan::meshGroupDevices(shape, {}, at, {1, 0}),
            (Ids{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {1, 0}), 3);
}

TEST(Mesh, PermutedTwoByTwo) {
  // Position p runs device order[p]: device 0 sits at (0, 1), device 3 at
  // (1, 0).
  Ids shape = {2, 2}, order = {2, 0, 3, 1};
  EXPECT_EQ(plan::meshDeviceOrder(shape, order), order);
  EXPECT_EQ(plan::meshDeviceId(shape, order, {0, 0}), 2);
  EXPECT_EQ(plan::meshDeviceId(shape, order, {1, 1}), 1);
  EXPECT_EQ(coordsOf(shape, order, 0), (Ids{0, 1}));
  EXPECT_EQ(coordsOf(shape, order, 3), (Ids{1, 0}));
  EXPECT_EQ(coordsOf(shape, order, 1), (Ids{1, 1}));
  Ids at = coordsOf(shape, order, 0);
  EXPECT_EQ(plan::meshGroupDevices(shape, order, at, {0}), (Ids{0, 1}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0}), 0);
  EXPECT_EQ(plan::meshGroupDevices(shape, order, at, {1}), (Ids{2, 0}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {1}), 1);
  EXPECT_EQ(plan::meshGroupDevices(shape, order, at, {0, 1}), order);
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0, 1}), 1);
}

TEST(Mesh, PermutedTwoByFour) {
  Ids shape = {2, 4}, order = {4, 0, 5, 1, 6, 2, 7, 3};
  EXPECT_EQ(plan::meshDeviceId(shape, order, {0, 3}), 1);
  EXPECT_EQ(plan::meshDeviceId(shape, order, {1, 2}), 7);
  Ids at = coordsOf(shape, order, 6);
  EXPECT_EQ(at, (Ids{1, 0}));
  EXPECT_EQ(plan::meshGroupDevices(shape, order, at, {1}), (Ids{6, 2, 7, 3}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {1}), 0);
  EXPECT_EQ(plan::meshGroupDevices(shape, order, at, {0}), (Ids{4, 6}));
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0}), 1);
  EXPECT_EQ(plan::meshGroupIndex(shape, at, {0, 1}), 4);
}

/// Every device of every group along every set of axes finds itself at its
/// group index, and the devices of a group share it.
TEST(Mesh, GroupsAreConsistent) {
  Ids shape = {2, 4};
  for (const Ids &order : {Ids{}, Ids{4, 0, 5, 1, 6, 2, 7, 3},
                           Ids{7, 6, 5, 4, 3, 2, 1, 0}}) {
    for (const Ids &axes : {Ids{}, Ids{0}, Ids{1}, Ids{0, 1}, Ids{1, 0}}) {
      for (int64_t device = 0; device < 8; ++device) {
        Ids at = coordsOf(shape, order, device);
        EXPECT_EQ(plan::meshDeviceId(shape, order, at), device);
        Ids group = plan::meshGroupDevices(shape, order, at, axes);
        ASSERT_EQ(int64_t(group.size()), plan::meshGroupSize(shape, axes));
        int64_t index = plan::meshGroupIndex(shape, at, axes);
        ASSERT_LT(size_t(index), group.size());
        EXPECT_EQ(group[size_t(index)], device);
        for (int64_t member : group)
          EXPECT_EQ(plan::meshGroupDevices(shape, order,
                                           coordsOf(shape, order, member),
                                           axes),
                    group);
      }
    }
  }
}

TEST(Mesh, DevicesOutsideTheMesh) {
  Ids multiIndex = {7};
  EXPECT_FALSE(plan::meshMultiIndex({2, 2}, {}, 4, multiIndex));
  EXPECT_FALSE(plan::meshMultiIndex({2, 2}, {}, -1, multiIndex));
  EXPECT_FALSE(plan::meshMultiIndex({2, 2}, {2, 0, 3, 1}, 4, multiIndex));
  EXPECT_TRUE(plan::meshMultiIndex({2, 2}, {2, 0, 3, 1}, 2, multiIndex));
  EXPECT_EQ(multiIndex, (Ids{0, 0}));
}

TEST(Mesh, InvalidDeviceOrders) {
  EXPECT_EQ(plan::invalidDeviceOrderPosition({}, 0), -1);
  EXPECT_EQ(plan::invalidDeviceOrderPosition({2, 0, 1}, 3), -1);
  EXPECT_EQ(plan::invalidDeviceOrderPosition({0, 3, 1}, 3), 1);
  EXPECT_EQ(plan::invalidDeviceOrderPosition({1, 0, 1}, 3), 2);
  EXPECT_EQ(plan::invalidDeviceOrderPosition({0, -1}, 2), 1);
}

} // namespace
