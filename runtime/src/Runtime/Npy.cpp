//===- Npy.cpp - NumPy .npy codec ------------------------------*- C++ -*-===//
//
// The .npy format: magic, version, header length, a Python dict literal
// {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with spaces
// and a newline, then the raw array bytes
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Npy.h"
#include "dnnc/Runtime/DataType.h"
#include "dnnc/Runtime/PlanFormat.h"

#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime stores tensors in host byte order, which must be "
              "little-endian");

namespace dnnc::rt {

using plan::DataType;

namespace {
/// Parses the header's Python dict literal.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }
  /// A '...' or "..." literal without escapes.
  bool string(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return false;
    out.assign(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  /// True or False.
  bool boolean(bool &value) {
    skipSpace();
    for (auto [word, v] :
         {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text.substr(pos, word.size()) == word) {
        pos += word.size();
        value = v;
        return true;
      }
    }
    return false;
  }
  /// A tuple of non-negative integers: (), (3,), (2, 3).
  bool tuple(std::vector<int64_t> &values) {
    if (!consume('('))
      return false;
    while (!consume(')')) {
      skipSpace();
      if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
        return false;
      uint64_t v = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        v = v * 10 + uint64_t(text[pos++] - '0');
        if (v > plan::kMaxTensorBytes)
          return false;
      }
      if (pos < text.size() && text[pos] == 'L') // Python 2 long.
        ++pos;
      values.push_back(static_cast<int64_t>(v));
      if (values.size() > plan::kMaxTensorRank)
        return false;
      if (!consume(',') && !peek(')'))
        return false;
    }
    return true;
  }

private:
  std::string_view text;
  size_t pos = 0;
};
} // namespace

/// Maps a descr such as "<f4" to an ONNX dtype; 0 when unsupported.
static int32_t dtypeFromDescr(const std::string &descr, std::string &error) {
  if (descr.size() < 3) {
    error = "unsupported dtype descr '" + descr + "'";
    return 0;
  }
  char order = descr[0];
  std::string kind = descr.substr(1);
  static const struct {
    const char *kind;
    DataType dtype;
  } table[] = {
      {"b1", DataType::Bool},      {"i1", DataType::Int8},
      {"u1", DataType::UInt8},     {"i2", DataType::Int16},
      {"u2", DataType::UInt16},    {"i4", DataType::Int32},
      {"u4", DataType::UInt32},    {"i8", DataType::Int64},
      {"u8", DataType::UInt64},    {"f2", DataType::Float16},
      {"f4", DataType::Float},     {"f8", DataType::Double},
      {"c8", DataType::Complex64}, {"c16", DataType::Complex128},
  };
  for (const auto &entry : table) {
    if (kind != entry.kind)
      continue;
    int32_t dtype = int32_t(entry.dtype);
    if (order == '>' && plan::dtypeByteSize(dtype) > 1) {
      error = "big-endian data (descr '" + descr + "') is not supported";
      return 0;
    }
    if (order != '<' && order != '|' && order != '=' && order != '>')
      break;
    return dtype;
  }
  error = "unsupported dtype descr '" + descr + "'";
  return 0;
}

/// The descr NumPy writes for `dtype`, or "" when there is none.
static std::string descrFor(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
  case DataType::Bool:
    return "|b1";
  case DataType::Int8:
    return "|i1";
  case DataType::UInt8:
    return "|u1";
  case DataType::Int16:
    return "<i2";
  case DataType::UInt16:
    return "<u2";
  case DataType::Int32:
    return "<i4";
  case DataType::UInt32:
    return "<u4";
  case DataType::Int64:
    return "<i8";
  case DataType::UInt64:
    return "<u8";
  case DataType::Float16:
    return "<f2";
  case DataType::Float:
    return "<f4";
  case DataType::Double:
    return "<f8";
  case DataType::Complex64:
    return "<c8";
  case DataType::Complex128:
    return "<c16";
  default:
    return "";
  }
}

bool decodeNpy(std::string_view bytes, HostTensor &tensor, std::string &error) {
  tensor = HostTensor();
  auto fail = [&](const std::string &message) {
    error = "invalid .npy file: " + message;
    return false;
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kNpyMagic, 6) != 0)
    return fail("missing the NumPy magic");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  uint64_t headerLength = 0, headerStart = 0;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | uint64_t(uint8_t(bytes[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= uint64_t(uint8_t(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return fail("unsupported format version " + std::to_string(major) + "." +
                std::to_string(uint8_t(bytes[7])));
  }
  if (headerLength > bytes.size() - headerStart)
    return fail("the header (" + std::to_string(headerLength) +
                " bytes) extends past the end of the file");

  HeaderParser p(bytes.substr(headerStart, headerLength));
  std::string descr;
  bool fortranOrder = false, hasDescr = false, hasOrder = false,
       hasShape = false;
  if (!p.consume('{'))
    return fail("the header is not a dict");
  while (!p.consume('}')) {
    std::string key;
    if (!p.string(key) || !p.consume(':'))
      return fail("malformed header dict");
    bool ok = true;
    if (key == "descr") {
      ok = p.string(descr);
      hasDescr = true;
    } else if (key == "fortran_order") {
      ok = p.boolean(fortranOrder);
      hasOrder = true;
    } else if (key == "shape") {
      ok = p.tuple(tensor.shape);
      hasShape = true;
    } else {
      return fail("unexpected header key '" + key + "'");
    }
    if (!ok)
      return fail("malformed value of '" + key + "' in the header");
    if (!p.consume(',') && !p.peek('}'))
      return fail("malformed header dict");
  }
  if (!p.atEnd())
    return fail("unexpected text after the header dict");
  if (!hasDescr || !hasOrder || !hasShape)
    return fail("the header lacks descr, fortran_order or shape");
  if (fortranOrder)
    return fail("Fortran-order arrays are not supported (save a C-order "
                "array, e.g. with np.ascontiguousarray)");
  std::string detail;
  tensor.dtype = dtypeFromDescr(descr, detail);
  if (!tensor.dtype)
    return fail(detail);
  uint64_t byteSize = 0;
  if (!plan::checkedByteSize(tensor.dtype, tensor.shape, byteSize))
    return fail("the array is too large");
  uint64_t dataStart = headerStart + headerLength;
  uint64_t available = bytes.size() - dataStart;
  if (available != byteSize)
    return fail(plan::formatTensorType(tensor.dtype, tensor.shape) + " needs " +
                std::to_string(byteSize) + " data bytes, the file has " +
                std::to_string(available));
  tensor.data.assign(bytes.data() + dataStart, byteSize);
  return true;
}

bool encodeNpy(const HostTensor &tensor, std::string &bytes,
               std::string &error) {
  std::string descr = descrFor(tensor.dtype);
  uint64_t byteSize = 0;
  if (descr.empty() ||
      !plan::checkedByteSize(tensor.dtype, tensor.shape, byteSize)) {
    error = "cannot encode " +
            plan::formatTensorType(tensor.dtype, tensor.shape) + " as .npy";
    return false;
  }
  if (tensor.data.size() != byteSize) {
    error = "cannot encode " +
            plan::formatTensorType(tensor.dtype, tensor.shape) + ": " +
            std::to_string(tensor.data.size()) + " data bytes, expected " +
            std::to_string(byteSize);
    return false;
  }
  // Python's tuple syntax: (), (3,), (2, 3).
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  shape += tensor.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64.
  size_t total = plan::alignTo(10 + header.size() + 1, 64);
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 0xffff) {
    error = "the .npy header is too long";
    return false;
  }
  bytes.assign(kNpyMagic, 6);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes += tensor.data;
  return true;
}

} // namespace dnnc::rt
