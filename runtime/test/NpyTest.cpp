//===- NpyTest.cpp - NumPy .npy codec tests --------------------*- C++ -*-===//
//
// Headers as NumPy 2.x writes them (np.save, format versions 1.0 and 2.0),
// round trips, and rejected files.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Npy.h"
#include "TestUtil.h"
#include "dnnc/Runtime/TensorFile.h"

#include <gtest/gtest.h>

using namespace dnnc;
using namespace dnnc::test;
using plan::DataType;
using rt::HostTensor;

namespace {

/// A .npy file as NumPy lays it out: magic, version, little-endian header
/// length, `header` padded with spaces and '\n' to a multiple of 64, data.
std::string npyFile(int major, const std::string &header,
                    const std::string &data) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string padded = header;
  while ((prefix + padded.size() + 1) % 64 != 0)
    padded += ' ';
  padded += '\n';
  std::string file("\x93NUMPY", 6);
  file += char(major);
  file += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    file += char((padded.size() >> (8 * i)) & 0xff);
  return file + padded + data;
}

HostTensor decode(const std::string &bytes) {
  HostTensor t;
  std::string error;
  EXPECT_TRUE(rt::decodeNpy(bytes, t, error)) << error;
  return t;
}

TEST(Npy, ReadsNumPyFiles) {
  HostTensor t = decode(
      npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              bytesOf(std::vector<float>{-2, -1, 0, 1, 2, 3})));
  EXPECT_EQ(t.dtype, int32_t(DataType::Float));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floatValues(t), (std::vector<float>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(t.name, "");

  t = decode(npyFile(1,
                     "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                     bytesOf(std::vector<int64_t>{-5})));
  EXPECT_EQ(t.dtype, int32_t(DataType::Int64));
  EXPECT_TRUE(t.shape.empty());

  t = decode(
      npyFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
              std::string("\x01\x00\x01", 3)));
  EXPECT_EQ(t.dtype, int32_t(DataType::Bool));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));

  t = decode(
      npyFile(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
              bytesOf(std::vector<double>{1.5, -2.5})));
  EXPECT_EQ(t.dtype, int32_t(DataType::Double));

  t = decode(
      npyFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
              bytesOf(std::vector<float>{1, 2, 3, -4})));
  EXPECT_EQ(t.dtype, int32_t(DataType::Complex64));

  t = decode(
      npyFile(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 1), }",
              std::string("\x01\x00\xff\xff", 4)));
  EXPECT_EQ(t.dtype, int32_t(DataType::UInt16));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));

  // Key order and quoting are free; Python 2 longs are accepted.
  t = decode(npyFile(
      1, "{\"shape\": (4L,), \"fortran_order\": False, \"descr\": \"<i4\"}",
      bytesOf(std::vector<int32_t>{1, 2, 3, 4})));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{4}));
}

TEST(Npy, RoundTrip) {
  int32_t codes[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15};
  for (int32_t dtype : codes) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{5},
          std::vector<int64_t>{2, 3}, std::vector<int64_t>{1, 0, 2}}) {
      uint64_t bytes = 0;
      ASSERT_TRUE(plan::checkedByteSize(dtype, shape, bytes));
      HostTensor t{"", dtype, shape, std::string(bytes, '\x01')};
      std::string file, error;
      ASSERT_TRUE(rt::encodeNpy(t, file, error)) << error;
      EXPECT_EQ((file.size() - bytes) % 64, 0u);
      HostTensor u = decode(file);
      EXPECT_EQ(u.dtype, dtype);
      EXPECT_EQ(u.shape, shape);
      EXPECT_EQ(u.data, t.data);
    }
  }
  HostTensor bf16{"", int32_t(DataType::BFloat16), {1}, "ab"};
  std::string file, error;
  EXPECT_FALSE(rt::encodeNpy(bf16, file, error));
}

void expectError(const std::string &bytes, const std::string &needle) {
  HostTensor t;
  std::string error;
  EXPECT_FALSE(rt::decodeNpy(bytes, t, error)) << needle;
  EXPECT_NE(error.find(needle), std::string::npos)
      << "error: " << error << "\nexpected: " << needle;
}

TEST(Npy, Errors) {
  std::string four = bytesOf(std::vector<float>{1, 2, 3, 4});
  auto h = [](const std::string &descr, const std::string &order,
              const std::string &shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + order +
           ", 'shape': " + shape + ", }";
  };
  expectError("\x93NUMPX", "missing the NumPy magic");
  expectError(npyFile(1, h(">f4", "False", "(4,)"), four), "big-endian");
  expectError(npyFile(1, h("<f4", "True", "(2, 2)"), four), "Fortran-order");
  expectError(npyFile(1, h("|O", "False", "(4,)"), four),
              "unsupported dtype descr '|O'");
  expectError(npyFile(1, h("<U3", "False", "(4,)"), four),
              "unsupported dtype descr");
  expectError(npyFile(1, h("<f4", "False", "(5,)"), four),
              "float32[5] needs 20 data bytes, the file has 16");
  expectError(npyFile(1, h("<f4", "False", "(3,)"), four),
              "needs 12 data bytes, the file has 16");
  expectError(npyFile(1, h("<f4", "False", "(-4,)"), four), "'shape'");
  expectError(npyFile(1, h("<f4", "False", "(99999999999999999999,)"), four),
              "'shape'");
  expectError(npyFile(1, "{'descr': '<f4', 'shape': (4,)}", four),
              "lacks descr");
  expectError(npyFile(1, "{'descr': '<f4', 'extra': 1}", four),
              "unexpected header key 'extra'");
  expectError(npyFile(1, "[1, 2]", four), "not a dict");
  expectError(npyFile(4, h("<f4", "False", "(4,)"), four),
              "unsupported format version 4");
  std::string cut = npyFile(1, h("<f4", "False", "(4,)"), four);
  expectError(cut.substr(0, 40), "extends past the end");
  // Every truncation fails.
  for (size_t length = 0; length < cut.size(); ++length) {
    HostTensor t;
    std::string error;
    EXPECT_FALSE(rt::decodeNpy(cut.substr(0, length), t, error)) << length;
  }
}

TEST(TensorFile, TellsNpyFromTensorProto) {
  TempDir dir;
  HostTensor t = floatTensor("", {2}, {1, 2});
  std::string npy, error;
  ASSERT_TRUE(rt::encodeNpy(t, npy, error));
  writeBytes(dir.file("a.bin"), npy);
  HostTensor u;
  ASSERT_TRUE(rt::readTensorFile(dir.file("a.bin"), u, error)) << error;
  EXPECT_EQ(u.data, t.data);
  writeBytes(dir.file("b.npy"), "\x08\x02\x10\x01\x42\x01"
                                "b");
  EXPECT_FALSE(rt::readTensorFile(dir.file("b.npy"), u, error));
  EXPECT_NE(error.find("invalid TensorProto"), std::string::npos) << error;
  EXPECT_FALSE(rt::readTensorFile(dir.file("none.pb"), u, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

} // namespace
