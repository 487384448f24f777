//===- TensorProto.h - ONNX TensorProto wire-format codec ------*- C++ -*-===//
//
// A small, bounds-checked decoder and encoder for the protobuf wire format of
// ONNX `TensorProto` (onnx.proto), without protobuf or ONNX libraries.
// Decoded fields: dims (1, packed or not), data_type (2), float_data (4),
// int32_data (5), int64_data (7), name (8), raw_data (9), double_data (10),
// uint64_data (11), data_location (14: EXTERNAL is an error). Other fields
// are skipped; segments (3) and string data (6) are errors.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TENSORPROTO_H
#define DNNC_RUNTIME_TENSORPROTO_H

#include "dnnc/Runtime/HostTensor.h"

#include <string>
#include <string_view>

namespace dnnc::rt {

/// How encodeTensorProto stores the elements.
enum class TensorProtoEncoding {
  /// In `raw_data` (what dnnc-run writes; always possible).
  RawData,
  /// In the typed field ONNX prescribes for the dtype (float_data,
  /// int32_data, int64_data, double_data or uint64_data), as `onnx.helper.
  /// make_tensor` does.
  TypedFields,
};

/// Decodes a serialized TensorProto into `tensor` (elements as raw
/// little-endian bytes whichever field held them). Checks that the element
/// count matches the dims and that integer values fit their dtype.
bool decodeTensorProto(std::string_view bytes, HostTensor &tensor,
                       std::string &error);

/// Serializes `tensor` as a TensorProto (dims, data_type, name and the data
/// field `encoding` selects). Fails for unsupported dtypes or a data size
/// that does not match the shape.
bool encodeTensorProto(
    const HostTensor &tensor, std::string &bytes, std::string &error,
    TensorProtoEncoding encoding = TensorProtoEncoding::RawData);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_TENSORPROTO_H
