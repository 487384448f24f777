//===- TensorProtoTest.cpp - ONNX TensorProto codec tests ------*- C++ -*-===//
//
// Decoding bytes produced by the `onnx` Python package (typed fields and
// raw_data), encode/decode round trips for every dtype, and malformed input.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/TensorProto.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace dnnc;
using namespace dnnc::test;
using plan::DataType;
using rt::HostTensor;

namespace {

std::string S(const char *bytes, size_t size) {
  return std::string(bytes, size);
}
#define BYTES(literal) S(literal, sizeof(literal) - 1)

/// A serialized TensorProto from onnx 1.23 and what it must decode to.
struct Golden {
  const char *label;
  std::string proto;
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::string data;
  /// True when produced by onnx.numpy_helper.from_array (raw_data), false
  /// for onnx.helper.make_tensor (typed fields).
  bool raw;
};

std::vector<Golden> goldens() {
  return {
      {"from_array float32[2x3]",
       BYTES("\x08\x02\x08\x03\x10\x01\x42\x01\x78\x4a\x18\x00\x00\x80\xbf\x00"
             "\x00\x00\xbf\x00\x00\x00\x00\x00\x00\x00\x3f\x00\x00\x80\x3f\x00"
             "\x00\xc0\x3f"),
       "x",
       DataType::Float,
       {2, 3},
       BYTES("\x00\x00\x80\xbf\x00\x00\x00\xbf\x00\x00\x00\x00\x00\x00\x00\x3f"
             "\x00\x00\x80\x3f\x00\x00\xc0\x3f"),
       true},
      {"make_tensor FLOAT",
       BYTES("\x08\x03\x10\x01\x22\x0c\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00"
             "\x50\x40\x42\x01\x66"),
       "f",
       DataType::Float,
       {3},
       BYTES("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x50\x40"),
       false},
      {"make_tensor INT32",
       BYTES("\x08\x02\x08\x02\x10\x06\x2a\x1a\x01\xfe\xff\xff\xff\xff\xff\xff"
             "\xff\xff\x01\xff\xff\xff\xff\x07\x80\x80\x80\x80\xf8\xff\xff\xff"
             "\xff\x01\x42\x01\x69"),
       "i",
       DataType::Int32,
       {2, 2},
       BYTES(
           "\x01\x00\x00\x00\xfe\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00\x80"),
       false},
      {"make_tensor INT8",
       BYTES("\x08\x03\x10\x03\x2a\x0c\x80\xff\xff\xff\xff\xff\xff\xff\xff\x01"
             "\x00\x7f\x42\x02\x69\x38"),
       "i8",
       DataType::Int8,
       {3},
       BYTES("\x80\x00\x7f"),
       false},
      {"make_tensor INT64",
       BYTES("\x08\x02\x10\x07\x3a\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
             "\x80\x80\x80\x80\x80\x20\x42\x01\x6c"),
       "l",
       DataType::Int64,
       {2},
       BYTES(
           "\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x01\x00\x00"),
       false},
      {"make_tensor DOUBLE",
       BYTES("\x08\x02\x10\x0b\x42\x01\x64\x52\x10\x9a\x99\x99\x99\x99\x99\xb9"
             "\x3f\x00\x00\x00\x00\x00\x00\x1c\xc0"),
       "d",
       DataType::Double,
       {2},
       BYTES(
           "\x9a\x99\x99\x99\x99\x99\xb9\x3f\x00\x00\x00\x00\x00\x00\x1c\xc0"),
       false},
      {"make_tensor UINT64",
       BYTES("\x08\x02\x10\x0d\x42\x01\x75\x5a\x0b\x01\xff\xff\xff\xff\xff\xff"
             "\xff\xff\xff\x01"),
       "u",
       DataType::UInt64,
       {2},
       BYTES(
           "\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff"),
       false},
      {"make_tensor UINT32",
       BYTES("\x08\x02\x10\x0c\x42\x03\x75\x33\x32\x5a\x06\x07\xff\xff\xff\xff"
             "\x0f"),
       "u32",
       DataType::UInt32,
       {2},
       BYTES("\x07\x00\x00\x00\xff\xff\xff\xff"),
       false},
      {"make_tensor BOOL",
       BYTES("\x08\x03\x10\x09\x2a\x03\x01\x00\x01\x42\x01\x62"),
       "b",
       DataType::Bool,
       {3},
       BYTES("\x01\x00\x01"),
       false},
      {"make_tensor FLOAT16",
       BYTES("\x08\x02\x10\x0a\x2a\x05\x80\x78\x80\x80\x03\x42\x01\x68"),
       "h",
       DataType::Float16,
       {2},
       BYTES("\x00\x3c\x00\xc0"),
       false},
      {"from_array int64 scalar",
       BYTES("\x10\x07\x42\x01\x73\x4a\x08\x2a\x00\x00\x00\x00\x00\x00\x00"),
       "s",
       DataType::Int64,
       {},
       BYTES("\x2a\x00\x00\x00\x00\x00\x00\x00"),
       true},
      {"from_array float32[0x3]",
       BYTES("\x08\x00\x08\x03\x10\x01\x42\x01\x65\x4a\x00"),
       "e",
       DataType::Float,
       {0, 3},
       "",
       true},
  };
}

TEST(TensorProto, DecodesOnnxOutput) {
  for (const Golden &g : goldens()) {
    HostTensor t;
    std::string error;
    ASSERT_TRUE(rt::decodeTensorProto(g.proto, t, error))
        << g.label << ": " << error;
    EXPECT_EQ(t.name, g.name) << g.label;
    EXPECT_EQ(t.dtype, int32_t(g.dtype)) << g.label;
    EXPECT_EQ(t.shape, g.shape) << g.label;
    EXPECT_EQ(t.data, g.data) << g.label;
  }
}

TEST(TensorProto, EncodesLikeOnnx) {
  // Same bytes as onnx for both encodings (field order, unpacked dims,
  // sign-extended narrow integers, packed typed fields).
  for (const Golden &g : goldens()) {
    HostTensor t{g.name, int32_t(g.dtype), g.shape, g.data};
    std::string bytes, error;
    ASSERT_TRUE(
        rt::encodeTensorProto(t, bytes, error,
                              g.raw ? rt::TensorProtoEncoding::RawData
                                    : rt::TensorProtoEncoding::TypedFields))
        << error;
    EXPECT_EQ(bytes, g.proto) << g.label;
  }
}

/// Element bytes valid for `dtype` (bools are 0/1).
std::string sampleData(int32_t dtype, size_t count) {
  size_t size = size_t(plan::dtypeByteSize(dtype));
  std::string data(count * size, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = char(i * 37 + 11 + dtype);
  if (dtype == int32_t(DataType::Bool))
    for (size_t i = 0; i < count; ++i)
      data[i] = char(i % 2);
  return data;
}

TEST(TensorProto, RoundTripEveryDType) {
  int32_t codes[] = {1,  2,  3,  4,  5,  6,  7,  9,  10, 11,
                     12, 13, 14, 15, 16, 17, 18, 19, 20};
  for (int32_t dtype : codes) {
    for (auto encoding : {rt::TensorProtoEncoding::RawData,
                          rt::TensorProtoEncoding::TypedFields}) {
      for (std::vector<int64_t> shape :
           {std::vector<int64_t>{2, 3}, std::vector<int64_t>{},
            std::vector<int64_t>{4, 0}}) {
        uint64_t count = 0;
        plan::checkedNumElements(shape, count);
        HostTensor t{"t", dtype, shape, sampleData(dtype, count)};
        std::string bytes, error;
        ASSERT_TRUE(rt::encodeTensorProto(t, bytes, error, encoding)) << error;
        bool hasRawField = bytes.find("\x4a") != std::string::npos;
        if (encoding == rt::TensorProtoEncoding::RawData) {
          EXPECT_TRUE(hasRawField);
        }
        HostTensor u;
        ASSERT_TRUE(rt::decodeTensorProto(bytes, u, error))
            << plan::dtypeName(dtype) << ": " << error;
        EXPECT_EQ(u.name, "t");
        EXPECT_EQ(u.dtype, dtype);
        EXPECT_EQ(u.shape, shape);
        EXPECT_EQ(u.data, t.data) << plan::dtypeName(dtype);
      }
    }
  }
}

TEST(TensorProto, AcceptsPackedDimsUnpackedValuesAndUnknownFields) {
  // dims packed (0a 02 02 03), data_type 1, float_data unpacked (25 = field
  // 4 fixed32) x6, doc_string (62 = field 12) skipped, name.
  std::string proto = BYTES("\x0a\x02\x02\x03\x10\x01");
  for (int i = 0; i < 6; ++i) {
    float v = float(i);
    proto += '\x25';
    proto.append(reinterpret_cast<const char *>(&v), 4);
  }
  proto += BYTES("\x62\x03"
                 "doc"
                 "\x42\x01"
                 "z");
  HostTensor t;
  std::string error;
  ASSERT_TRUE(rt::decodeTensorProto(proto, t, error)) << error;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.name, "z");
  EXPECT_EQ(floatValues(t), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

void expectError(const std::string &proto, const std::string &needle) {
  HostTensor t;
  std::string error;
  EXPECT_FALSE(rt::decodeTensorProto(proto, t, error)) << needle;
  EXPECT_NE(error.find(needle), std::string::npos)
      << "error: " << error << "\nexpected: " << needle;
}

TEST(TensorProto, Errors) {
  // dims 2, FLOAT, raw_data of 4 bytes (needs 8).
  expectError(BYTES("\x08\x02\x10\x01\x4a\x04\x00\x00\x00\x00"),
              "raw_data has 4 bytes, float32[2] needs 8");
  expectError(BYTES("\x08\x02\x10\x01\x4a\x09\x00"), "declares 9 bytes");
  expectError(BYTES("\x08\xff"), "truncated varint");
  expectError(BYTES("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
              "truncated varint");
  expectError(BYTES("\x08\x02"), "has no data_type");
  expectError(BYTES("\x08\x02\x10\x01"), "has no data (no raw_data");
  expectError(BYTES("\x10\x08\x32\x01"
                    "a"),
              "string");
  expectError(BYTES("\x10\x2a\x4a\x00"), "unsupported data_type 42");
  expectError(BYTES("\x10\x01\x4a\x04\x00\x00\x00\x00\x70\x01"),
              "data_location = EXTERNAL");
  expectError(BYTES("\x10\x01\x4a\x04\x00\x00\x00\x00\x25\x00\x00\x00\x00"),
              "both raw_data and typed");
  expectError(BYTES("\x08\x02\x10\x01\x22\x04\x00\x00\x00\x00"),
              "1 values in float_data, expected 2");
  expectError(BYTES("\x10\x01\x3a\x01\x05"),
              "has values in int64_data; its dtype keeps them in float_data");
  expectError(BYTES("\x10\x03\x2a\x02\x80\x02"),
              "int32_data value 256 is out of range for int8");
  expectError(BYTES("\x10\x0c\x5a\x05\xff\xff\xff\xff\x1f"),
              "does not fit uint32");
  expectError(BYTES("\x10\x01\x22\x03\x00\x00\x00"), "unexpected wire type");
  expectError(BYTES("\x10\x01\x1b"), "unsupported wire type 3");
  expectError(BYTES("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x10\x01"),
              "negative dimension");
  expectError(BYTES("\x08\x80\x80\x80\x80\x80\x80\x01\x08\x80\x80\x80\x80\x80"
                    "\x80\x01\x10\x01"),
              "too large");
  expectError(BYTES("\x1a\x00\x10\x01"), "segmented");
  expectError(BYTES("\x00\x01"), "invalid field number");
}

TEST(TensorProto, EveryTruncationOfRawDataFails) {
  // Cutting the message inside raw_data must fail; only a cut right before
  // the raw_data key leaves a (data-less) message.
  std::string proto = goldens()[0].proto;
  size_t rawKey = proto.find('\x4a');
  for (size_t length = rawKey + 1; length < proto.size(); ++length) {
    HostTensor t;
    std::string error;
    EXPECT_FALSE(rt::decodeTensorProto(proto.substr(0, length), t, error))
        << length;
  }
}

TEST(TensorProto, EncoderChecksItsInput) {
  std::string bytes, error;
  HostTensor t{"t", int32_t(DataType::Float), {2}, "abc"};
  EXPECT_FALSE(rt::encodeTensorProto(t, bytes, error));
  EXPECT_NE(error.find("3 data bytes, expected 8"), std::string::npos);
  t = HostTensor{"t", int32_t(DataType::String), {}, ""};
  EXPECT_FALSE(rt::encodeTensorProto(t, bytes, error));
}

} // namespace
