//===- TensorProto.cpp - ONNX TensorProto wire-format codec ----*- C++ -*-===//
//
// Protobuf wire format (https://protobuf.dev/programming-guides/encoding/)
// for the TensorProto fields the runtime needs. The decoder checks every
// length against the bytes left, so malformed input is an error, never an
// out-of-bounds read or an allocation larger than a small multiple of the
// input.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/TensorProto.h"
#include "dnnc/Runtime/DataType.h"

#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime stores tensors in host byte order, which must be "
              "little-endian");

namespace dnnc::rt {

using plan::DataType;

namespace {
/// TensorProto field numbers (onnx.proto).
enum Field : uint32_t {
  kDims = 1,
  kDataType = 2,
  kSegment = 3,
  kFloatData = 4,
  kInt32Data = 5,
  kStringData = 6,
  kInt64Data = 7,
  kName = 8,
  kRawData = 9,
  kDoubleData = 10,
  kUInt64Data = 11,
  kDataLocation = 14,
};

/// Protobuf wire types.
enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

/// `TensorProto.DataLocation.EXTERNAL`.
constexpr uint64_t kExternalLocation = 1;

/// A bounds-checked cursor over protobuf bytes.
class ProtoReader {
public:
  explicit ProtoReader(std::string_view data) : data(data) {}
  bool atEnd() const { return pos == data.size(); }
  size_t position() const { return pos; }

  /// Reads a base-128 varint (at most 10 bytes).
  bool varint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos == data.size())
        return false;
      uint8_t byte = static_cast<uint8_t>(data[pos++]);
      if (shift == 63 && byte > 1)
        return false; // More than 64 bits.
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  /// Reads `n` bytes.
  bool bytes(uint64_t n, std::string_view &out) {
    if (n > data.size() - pos)
      return false;
    out = data.substr(pos, n);
    pos += n;
    return true;
  }

private:
  std::string_view data;
  size_t pos = 0;
};

/// Values of the typed data fields, accumulated over (possibly repeated,
/// packed or unpacked) occurrences.
struct TypedData {
  std::string floatBytes;  ///< float_data, as little-endian bytes.
  std::string doubleBytes; ///< double_data, as little-endian bytes.
  std::vector<int64_t> int32Values;
  std::vector<int64_t> int64Values;
  std::vector<uint64_t> uint64Values;
};
} // namespace

static const char *fieldName(uint32_t field) {
  switch (field) {
  case kDims:
    return "dims";
  case kDataType:
    return "data_type";
  case kFloatData:
    return "float_data";
  case kInt32Data:
    return "int32_data";
  case kInt64Data:
    return "int64_data";
  case kName:
    return "name";
  case kRawData:
    return "raw_data";
  case kDoubleData:
    return "double_data";
  case kUInt64Data:
    return "uint64_data";
  case kDataLocation:
    return "data_location";
  }
  return "field";
}

/// Decodes the varints of a packed field (or the one varint of an unpacked
/// occurrence, already read) into `out` through `convert`.
template <typename T>
static bool readVarints(std::string_view packed, std::vector<T> &out) {
  ProtoReader r(packed);
  while (!r.atEnd()) {
    uint64_t v = 0;
    if (!r.varint(v))
      return false;
    out.push_back(static_cast<T>(v));
  }
  return true;
}

/// The TensorProto field that holds typed values of `dtype`.
static uint32_t typedFieldFor(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
  case DataType::Float:
  case DataType::Complex64:
    return kFloatData;
  case DataType::Double:
  case DataType::Complex128:
    return kDoubleData;
  case DataType::Int64:
    return kInt64Data;
  case DataType::UInt32:
  case DataType::UInt64:
    return kUInt64Data;
  default:
    return kInt32Data;
  }
}

/// Inclusive value range of an int32_data entry for `dtype` (the varint as a
/// signed 64-bit value; 16-bit float types accept their bits sign-extended
/// too).
static void int32Range(int32_t dtype, int64_t &lo, int64_t &hi) {
  switch (static_cast<DataType>(dtype)) {
  case DataType::Int8:
    lo = -128, hi = 127;
    return;
  case DataType::UInt8:
  case DataType::Float8E4M3FN:
  case DataType::Float8E4M3FNUZ:
  case DataType::Float8E5M2:
  case DataType::Float8E5M2FNUZ:
    lo = 0, hi = 255;
    return;
  case DataType::Int16:
    lo = -32768, hi = 32767;
    return;
  case DataType::UInt16:
    lo = 0, hi = 65535;
    return;
  case DataType::Float16:
  case DataType::BFloat16:
    lo = -32768, hi = 65535;
    return;
  case DataType::Bool:
    lo = INT64_MIN, hi = INT64_MAX; // Any non-zero value is true.
    return;
  default: // Int32 (also accept the unsigned spelling of negative values).
    lo = INT32_MIN, hi = UINT32_MAX;
    return;
  }
}

/// Moves the typed values into `tensor.data` as little-endian bytes.
static bool assembleTypedData(const TypedData &typed, uint64_t numElements,
                              HostTensor &tensor, std::string &error) {
  int32_t dtype = tensor.dtype;
  uint32_t expected = typedFieldFor(dtype);
  std::string typeText = plan::formatTensorType(dtype, tensor.shape);
  struct Present {
    uint32_t field;
    size_t count;
  } present[] = {
      {kFloatData, typed.floatBytes.size() / 4},
      {kDoubleData, typed.doubleBytes.size() / 8},
      {kInt32Data, typed.int32Values.size()},
      {kInt64Data, typed.int64Values.size()},
      {kUInt64Data, typed.uint64Values.size()},
  };
  size_t count = 0;
  for (const Present &p : present) {
    if (p.count == 0)
      continue;
    if (p.field != expected) {
      error = typeText + " tensor has values in " + fieldName(p.field) +
              "; its dtype keeps them in " + fieldName(expected);
      return false;
    }
    count = p.count;
  }
  bool complex = dtype == int32_t(DataType::Complex64) ||
                 dtype == int32_t(DataType::Complex128);
  uint64_t wanted = complex ? 2 * numElements : numElements;
  if (count != wanted) {
    if (count == 0)
      error = typeText + " tensor has no data (no raw_data and no " +
              fieldName(expected) + ")";
    else
      error = typeText + " tensor has " + std::to_string(count) +
              " values in " + fieldName(expected) + ", expected " +
              std::to_string(wanted);
    return false;
  }

  int64_t elementSize = plan::dtypeByteSize(dtype);
  switch (expected) {
  case kFloatData:
    tensor.data = typed.floatBytes;
    return true;
  case kDoubleData:
    tensor.data = typed.doubleBytes;
    return true;
  case kInt64Data:
    tensor.data.resize(count * 8);
    std::memcpy(&tensor.data[0], typed.int64Values.data(), count * 8);
    return true;
  case kUInt64Data:
    tensor.data.resize(count * elementSize);
    for (size_t i = 0; i < count; ++i) {
      uint64_t v = typed.uint64Values[i];
      if (elementSize == 4 && v > UINT32_MAX) {
        error = typeText + " tensor: uint64_data value " + std::to_string(v) +
                " does not fit uint32";
        return false;
      }
      std::memcpy(&tensor.data[i * elementSize], &v, elementSize);
    }
    return true;
  default: {
    int64_t lo = 0, hi = 0;
    int32Range(dtype, lo, hi);
    bool isBool = dtype == int32_t(DataType::Bool);
    tensor.data.resize(count * elementSize);
    for (size_t i = 0; i < count; ++i) {
      int64_t v = typed.int32Values[i];
      if (v < lo || v > hi) {
        error = typeText + " tensor: int32_data value " + std::to_string(v) +
                " is out of range for " + plan::dtypeName(dtype);
        return false;
      }
      uint64_t bits = isBool ? uint64_t(v != 0) : static_cast<uint64_t>(v);
      std::memcpy(&tensor.data[i * elementSize], &bits, elementSize);
    }
    return true;
  }
  }
}

bool decodeTensorProto(std::string_view bytes, HostTensor &tensor,
                       std::string &error) {
  tensor = HostTensor();
  ProtoReader r(bytes);
  TypedData typed;
  std::string_view raw;
  bool hasRaw = false, hasDataType = false;
  auto fail = [&](const std::string &message) {
    error = "invalid TensorProto: " + message;
    return false;
  };

  while (!r.atEnd()) {
    size_t at = r.position();
    uint64_t key = 0;
    if (!r.varint(key))
      return fail("truncated field key at byte " + std::to_string(at));
    uint64_t field64 = key >> 3;
    uint32_t wire = static_cast<uint32_t>(key & 7);
    if (field64 == 0 || field64 > 0x1fffffff)
      return fail("invalid field number at byte " + std::to_string(at));
    uint32_t field = static_cast<uint32_t>(field64);

    // Read the field's value by wire type.
    uint64_t scalar = 0;
    std::string_view payload;
    switch (wire) {
    case kVarint:
      if (!r.varint(scalar))
        return fail("truncated varint in field " + std::to_string(field));
      break;
    case kFixed64:
      if (!r.bytes(8, payload))
        return fail("truncated fixed64 in field " + std::to_string(field));
      break;
    case kFixed32:
      if (!r.bytes(4, payload))
        return fail("truncated fixed32 in field " + std::to_string(field));
      break;
    case kLengthDelimited: {
      uint64_t length = 0;
      if (!r.varint(length))
        return fail("truncated length of field " + std::to_string(field));
      if (!r.bytes(length, payload))
        return fail("field " + std::to_string(field) + " (" + fieldName(field) +
                    ") declares " + std::to_string(length) +
                    " bytes, more than the message has left");
      break;
    }
    default:
      return fail("unsupported wire type " + std::to_string(wire) +
                  " in field " + std::to_string(field));
    }

    auto wrongWire = [&]() {
      return fail(std::string("field ") + fieldName(field) +
                  " has unexpected wire type " + std::to_string(wire));
    };
    switch (field) {
    case kDims:
      if (wire == kVarint) {
        tensor.shape.push_back(static_cast<int64_t>(scalar));
      } else if (wire == kLengthDelimited) {
        if (!readVarints(payload, tensor.shape))
          return fail("malformed packed dims");
      } else {
        return wrongWire();
      }
      if (tensor.shape.size() > plan::kMaxTensorRank)
        return fail("more than " + std::to_string(plan::kMaxTensorRank) +
                    " dims");
      break;
    case kDataType:
      if (wire != kVarint)
        return wrongWire();
      tensor.dtype = static_cast<int32_t>(scalar);
      hasDataType = true;
      break;
    case kSegment:
      return fail("segmented tensors (field segment) are not supported");
    case kFloatData:
      if (wire == kFixed32)
        typed.floatBytes.append(payload.data(), 4);
      else if (wire == kLengthDelimited && payload.size() % 4 == 0)
        typed.floatBytes.append(payload.data(), payload.size());
      else
        return wrongWire();
      break;
    case kDoubleData:
      if (wire == kFixed64)
        typed.doubleBytes.append(payload.data(), 8);
      else if (wire == kLengthDelimited && payload.size() % 8 == 0)
        typed.doubleBytes.append(payload.data(), payload.size());
      else
        return wrongWire();
      break;
    case kInt32Data:
    case kInt64Data:
    case kUInt64Data: {
      std::vector<int64_t> *signedOut = field == kInt32Data ? &typed.int32Values
                                        : field == kInt64Data
                                            ? &typed.int64Values
                                            : nullptr;
      if (wire == kVarint) {
        if (signedOut)
          signedOut->push_back(static_cast<int64_t>(scalar));
        else
          typed.uint64Values.push_back(scalar);
      } else if (wire == kLengthDelimited) {
        bool ok = signedOut ? readVarints(payload, *signedOut)
                            : readVarints(payload, typed.uint64Values);
        if (!ok)
          return fail(std::string("malformed packed ") + fieldName(field));
      } else {
        return wrongWire();
      }
      break;
    }
    case kStringData:
      return fail("string tensors (string_data) are not supported");
    case kName:
      if (wire != kLengthDelimited)
        return wrongWire();
      tensor.name.assign(payload.data(), payload.size());
      break;
    case kRawData:
      if (wire != kLengthDelimited)
        return wrongWire();
      raw = payload;
      hasRaw = true;
      break;
    case kDataLocation:
      if (wire != kVarint)
        return wrongWire();
      if (scalar == kExternalLocation)
        return fail("the tensor keeps its data in an external file "
                    "(data_location = EXTERNAL), which is not supported");
      break;
    default:
      break; // doc_string, external_data, metadata_props, unknown fields.
    }
  }

  std::string name = tensor.name.empty() ? std::string("tensor")
                                         : "tensor '" + tensor.name + "'";
  if (!hasDataType)
    return fail(name + " has no data_type");
  if (tensor.dtype == int32_t(DataType::String))
    return fail(name + " is a string tensor, which is not supported");
  if (!plan::isSupportedDType(tensor.dtype))
    return fail(name + " has unsupported data_type " +
                std::to_string(tensor.dtype));
  uint64_t numElements = 0, byteSize = 0;
  for (int64_t d : tensor.shape)
    if (d < 0)
      return fail(name + " has a negative dimension");
  if (!plan::checkedByteSize(tensor.dtype, tensor.shape, byteSize) ||
      !plan::checkedNumElements(tensor.shape, numElements))
    return fail(name + " is too large");

  bool hasTyped = !typed.floatBytes.empty() || !typed.doubleBytes.empty() ||
                  !typed.int32Values.empty() || !typed.int64Values.empty() ||
                  !typed.uint64Values.empty();
  if (hasRaw) {
    if (hasTyped)
      return fail(name + " has both raw_data and typed data fields");
    if (raw.size() != byteSize)
      return fail(name + ": raw_data has " + std::to_string(raw.size()) +
                  " bytes, " +
                  plan::formatTensorType(tensor.dtype, tensor.shape) +
                  " needs " + std::to_string(byteSize));
    tensor.data.assign(raw.data(), raw.size());
    return true;
  }
  if (!hasTyped && numElements == 0)
    return true;
  std::string detail;
  if (!assembleTypedData(typed, numElements, tensor, detail))
    return fail(name + ": " + detail);
  return true;
}

//===----------------------------------------------------------------------===//
// Encoder
//===----------------------------------------------------------------------===//

static void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

static void putKey(std::string &out, uint32_t field, uint32_t wire) {
  putVarint(out, (uint64_t(field) << 3) | wire);
}

static void putBytes(std::string &out, uint32_t field, std::string_view b) {
  putKey(out, field, kLengthDelimited);
  putVarint(out, b.size());
  out.append(b.data(), b.size());
}

/// Encodes the elements of `t` in its typed field, packed.
static void putTypedData(std::string &out, const HostTensor &t) {
  uint32_t field = typedFieldFor(t.dtype);
  if (t.data.empty())
    return;
  if (field == kFloatData || field == kDoubleData) {
    putBytes(out, field, t.data);
    return;
  }
  int64_t size = plan::dtypeByteSize(t.dtype);
  bool isSigned = t.dtype == int32_t(DataType::Int8) ||
                  t.dtype == int32_t(DataType::Int16) ||
                  t.dtype == int32_t(DataType::Int32) ||
                  t.dtype == int32_t(DataType::Int64);
  std::string packed;
  for (size_t i = 0; i < t.data.size(); i += size) {
    uint64_t bits = 0;
    std::memcpy(&bits, &t.data[i], size);
    if (isSigned && size < 8) {
      // Sign-extend, as protobuf encodes a negative int32.
      uint64_t signBit = uint64_t(1) << (8 * size - 1);
      if (bits & signBit)
        bits |= ~((signBit << 1) - 1);
    }
    putVarint(packed, bits);
  }
  putBytes(out, field, packed);
}

bool encodeTensorProto(const HostTensor &tensor, std::string &bytes,
                       std::string &error, TensorProtoEncoding encoding) {
  uint64_t byteSize = 0;
  if (!plan::checkedByteSize(tensor.dtype, tensor.shape, byteSize)) {
    error = "cannot encode " +
            plan::formatTensorType(tensor.dtype, tensor.shape) +
            " as a TensorProto: unsupported dtype or shape";
    return false;
  }
  if (tensor.data.size() != byteSize) {
    error = "cannot encode " +
            plan::formatTensorType(tensor.dtype, tensor.shape) + ": " +
            std::to_string(tensor.data.size()) + " data bytes, expected " +
            std::to_string(byteSize);
    return false;
  }
  bytes.clear();
  // Fields in number order, as protobuf serializes them (so the bytes match
  // the onnx package's): dims (unpacked: onnx.proto is proto2), data_type,
  // float/int32/int64_data, name, raw_data, double/uint64_data.
  for (int64_t d : tensor.shape) {
    putKey(bytes, kDims, kVarint);
    putVarint(bytes, static_cast<uint64_t>(d));
  }
  putKey(bytes, kDataType, kVarint);
  putVarint(bytes, static_cast<uint64_t>(tensor.dtype));
  bool typed = encoding == TensorProtoEncoding::TypedFields;
  bool typedAfterName = typedFieldFor(tensor.dtype) > kName;
  if (typed && !typedAfterName)
    putTypedData(bytes, tensor);
  if (!tensor.name.empty())
    putBytes(bytes, kName, tensor.name);
  if (!typed)
    putBytes(bytes, kRawData, tensor.data);
  if (typed && typedAfterName)
    putTypedData(bytes, tensor);
  return true;
}

} // namespace dnnc::rt
