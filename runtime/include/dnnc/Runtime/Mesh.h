//===- Mesh.h - Device mesh coordinates -------------------------*- C++ -*-===//
//
// The coordinate math of a device mesh, shared by the compiler (the
// `dist.mesh` op) and the runtime (the mesh groups of the collective
// kernels). A mesh has axis sizes (its shape, outermost first) and a device
// order: mesh positions are numbered row-major over the axes (the first axis
// the most significant) and `order[p]` is the device (rank) at position `p`;
// an empty order is the identity. A group along some axes is the set of
// devices whose coordinates agree on every other axis, indexed by their
// coordinates on the group's axes (the first listed axis the most
// significant). Dependency-free: part of the DNNCPlan library that the
// compiler links.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_MESH_H
#define DNNC_RUNTIME_MESH_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

namespace dnnc::plan {

/// A read-only view of consecutive `int64_t` values (C++17 has no
/// std::span): a mesh shape, a device order, coordinates or a list of axes,
/// taken from a std::vector, an llvm::ArrayRef or an llvm::SmallVector alike.
/// It does not own the values.
class Int64Span {
public:
  /// An empty view.
  constexpr Int64Span() = default;
  /// The `size` values at `data`.
  constexpr Int64Span(const int64_t *data, size_t size)
      : values(data), count(size) {}
  /// The values of a contiguous container of `int64_t` (anything with
  /// `data()` and `size()`).
  template <typename Container,
            typename = std::enable_if_t<std::is_convertible_v<
                decltype(std::declval<const Container &>().data()),
                const int64_t *>>>
  constexpr Int64Span(const Container &container)
      : values(container.data()), count(container.size()) {}
  /// The values of a braced list; valid until the end of the full
  /// expression (for arguments). Without it, `{0, 2}` would be the pointer
  /// constructor's null pointer and size.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr Int64Span(std::initializer_list<int64_t> list)
      : values(list.begin()), count(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#pragma GCC diagnostic pop
#endif

  /// The first value.
  constexpr const int64_t *begin() const { return values; }
  /// One past the last value.
  constexpr const int64_t *end() const { return values + count; }
  /// The number of values.
  constexpr size_t size() const { return count; }
  /// True when there are no values.
  constexpr bool empty() const { return count == 0; }
  /// The value at `index` (< size()).
  constexpr int64_t operator[](size_t index) const { return values[index]; }

private:
  const int64_t *values = nullptr;
  size_t count = 0;
};

/// The number of devices of a mesh of `shape`: the product of the axis
/// sizes (1 for no axes).
int64_t meshSize(Int64Span shape);

/// The number of devices in a group spanning the mesh axes `axes` (indices
/// into `shape`): the product of their sizes.
int64_t meshGroupSize(Int64Span shape, Int64Span axes);

/// The mesh position of the coordinates `multiIndex` (one per axis, each
/// within its axis size): row-major over `shape`.
int64_t meshPosition(Int64Span shape, Int64Span multiIndex);

/// The device at every mesh position: `order`, or the identity
/// 0 .. meshSize(shape)-1 when `order` is empty.
std::vector<int64_t> meshDeviceOrder(Int64Span shape, Int64Span order);

/// The device at the mesh coordinates `multiIndex` (one per axis, each
/// within its axis size) of a mesh of `shape` and device order `order`.
int64_t meshDeviceId(Int64Span shape, Int64Span order, Int64Span multiIndex);

/// Sets `multiIndex` to the mesh coordinates of device `deviceId` (its
/// position in `order`, or `deviceId` itself for an empty order,
/// delinearized over `shape`) and returns true, or returns false when the
/// device is not in the mesh (not in `order`; outside 0 .. meshSize-1 for an
/// empty order).
bool meshMultiIndex(Int64Span shape, Int64Span order, int64_t deviceId,
                    std::vector<int64_t> &multiIndex);

/// The index, in its group along `axes` (indices into `shape`, the first
/// listed the most significant), of the device at coordinates `multiIndex`:
/// its coordinates on `axes`, linearized.
int64_t meshGroupIndex(Int64Span shape, Int64Span multiIndex, Int64Span axes);

/// The devices of the group along `axes` (indices into `shape`, the first
/// listed the most significant) of the device at coordinates `multiIndex`:
/// the devices whose coordinates equal `multiIndex` on every other axis, by
/// group index (meshGroupIndex).
std::vector<int64_t> meshGroupDevices(Int64Span shape, Int64Span order,
                                      Int64Span multiIndex, Int64Span axes);

/// The axes of the bit mask `axesMask` (bit i = mesh axis i) among the
/// first `numAxes` axes, in ascending order (mesh order).
std::vector<int64_t> meshMaskAxes(int64_t axesMask, size_t numAxes);

/// The first position of `order` that makes it no permutation of
/// 0 .. numDevices-1 (a device out of range, or one seen at an earlier
/// position), or -1 when it is one. Its size is checked by the caller.
int64_t invalidDeviceOrderPosition(Int64Span order, int64_t numDevices);

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_MESH_H
