#include "data/pg_binary_copy.h"

#include <charconv>
#include <cstring>
#include <string>

namespace edl::data {
namespace {

constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // with its 0 byte: 11 bytes
constexpr size_t kHeader = 19;                     // signature, flags, extension length

uint16_t Big16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] << 8 | u[1]);
}

uint32_t Big32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}

uint64_t Big64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

Status Bad(const std::string& what) { return InvalidArgument(what); }

}  // namespace

PgBinaryCopyParser::PgBinaryCopyParser(std::vector<SqlType> types)
    : types_(std::move(types)), integers_(types_.size()) {}

Result<bool> PgBinaryCopyParser::Parse(const char** at, const char* end, SqlCells* out) {
  const char* p = *at;
  if (!header_read_) {
    if (static_cast<size_t>(end - p) < kHeader || std::memcmp(p, kSignature, 11) != 0) {
      return Bad("no binary COPY signature");
    }
    const uint32_t extension = Big32(p + 15);
    if (static_cast<uint64_t>(end - p) < kHeader + uint64_t{extension}) {
      return Bad("a header extension of " + std::to_string(extension) + " bytes past the data");
    }
    p += kHeader + extension;
    header_read_ = true;
    *at = p;
    if (p == end) return false;
  }
  if (end - p < 2) return Bad("a row without its field count");
  const int16_t count = static_cast<int16_t>(Big16(p));
  p += 2;
  if (count == -1) {
    if (p != end) return Bad("data after the trailer");
    *at = p;
    return false;
  }
  const size_t n = types_.size();
  if (count < 0 || static_cast<size_t>(count) != n) {
    return Bad("a row of " + std::to_string(count) + " fields where the query has " +
               std::to_string(n));
  }
  out->fields.resize(n);
  out->nulls.resize(n);
  out->is_number.resize(n);
  out->numbers.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (end - p < 4) return Bad("field " + std::to_string(i + 1) + " without its length");
    const int32_t length = static_cast<int32_t>(Big32(p));
    p += 4;
    out->fields[i] = std::string_view();
    out->is_number[i] = 0;
    out->nulls[i] = length == -1;
    if (length == -1) continue;
    if (length < 0 || end - p < length) {
      return Bad("field " + std::to_string(i + 1) + " of " + std::to_string(length) +
                 " bytes where the data holds " + std::to_string(end - p));
    }
    EDL_RETURN_IF_ERROR(Field(i, p, static_cast<size_t>(length), out));
    p += length;
  }
  *at = p;
  return true;
}

Status PgBinaryCopyParser::Field(size_t i, const char* p, size_t n, SqlCells* out) {
  switch (types_[i]) {
    case SqlType::kReal:
      if (n == 8) {
        const uint64_t bits = Big64(p);
        std::memcpy(&out->numbers[i], &bits, 8);
      } else if (n == 4) {
        const uint32_t bits = Big32(p);
        float f;
        std::memcpy(&f, &bits, 4);
        out->numbers[i] = f;
      } else {
        return Bad("field " + std::to_string(i + 1) + ": a float of " + std::to_string(n) +
                   " bytes");
      }
      out->is_number[i] = 1;
      return Status::Ok();
    case SqlType::kInteger: {
      int64_t v;
      if (n == 8) {
        v = static_cast<int64_t>(Big64(p));
      } else if (n == 4) {
        v = static_cast<int32_t>(Big32(p));
      } else if (n == 2) {
        v = static_cast<int16_t>(Big16(p));
      } else {
        return Bad("field " + std::to_string(i + 1) + ": an integer of " + std::to_string(n) +
                   " bytes");
      }
      out->numbers[i] = static_cast<double>(v);
      out->is_number[i] = 1;
      char* text = integers_[i].data();
      const auto r = std::to_chars(text, text + integers_[i].size(), v);
      out->fields[i] = std::string_view(text, static_cast<size_t>(r.ptr - text));
      return Status::Ok();
    }
    case SqlType::kBool:
      if (n != 1)
        return Bad("field " + std::to_string(i + 1) + ": a boolean of " + std::to_string(n) +
                   " bytes");
      out->numbers[i] = p[0] ? 1 : 0;
      out->is_number[i] = 1;
      out->fields[i] = p[0] ? "t" : "f";
      return Status::Ok();
    default: out->fields[i] = std::string_view(p, n); return Status::Ok();
  }
}

}  // namespace edl::data
