#include "data/idx_file.h"

#include <cstdio>

#include "data/file_bytes.h"

namespace edl::data {
namespace {

uint32_t ReadBigEndian32(const std::string& b, size_t at) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
}

std::string DimsString(const std::vector<int64_t>& dims, size_t from) {
  std::string s;
  for (size_t i = from; i < dims.size(); ++i) {
    if (i > from) s += "x";
    s += std::to_string(dims[i]);
  }
  return s;
}

const char* TypeName(int type) {
  switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
  }
  return nullptr;
}

}  // namespace

int64_t IdxArray::RecordSize() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

Result<IdxArray> ReadIdxFile(const std::string& path) {
  EDL_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  if (bytes.size() < 4) {
    return InvalidArgument(path + ": not an IDX file: only " + std::to_string(bytes.size()) +
                           " bytes, shorter than the 4-byte magic number");
  }
  char magic[16];
  std::snprintf(magic, sizeof(magic), "0x%02x%02x%02x%02x", static_cast<uint8_t>(bytes[0]),
                static_cast<uint8_t>(bytes[1]), static_cast<uint8_t>(bytes[2]),
                static_cast<uint8_t>(bytes[3]));
  int type = static_cast<uint8_t>(bytes[2]);
  int rank = static_cast<uint8_t>(bytes[3]);
  if (bytes[0] != 0 || bytes[1] != 0 || TypeName(type) == nullptr || rank < 1 || rank > 8) {
    return InvalidArgument(path + ": not an IDX file: bad magic number " + magic +
                           " (expected 0x0000TTRR with a type TT and "
                           "a rank RR from 1 to 8)");
  }
  if (type != 0x08) {
    return InvalidArgument(path + ": IDX element type " + TypeName(type) +
                           " is not supported (only unsigned byte, 0x08)");
  }
  size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header) {
    return InvalidArgument(path + ": truncated IDX header: rank " + std::to_string(rank) +
                           " needs " + std::to_string(header) + " bytes, file holds " +
                           std::to_string(bytes.size()));
  }
  IdxArray a;
  for (int i = 0; i < rank; ++i) {
    a.dims.push_back(ReadBigEndian32(bytes, 4 + 4 * i));
    if (i > 0 && a.dims.back() == 0) {
      return InvalidArgument(path + ": IDX dimension " + std::to_string(i) + " is 0");
    }
  }
  int64_t record = a.RecordSize();
  int64_t want = a.dims[0] * record;
  int64_t have = static_cast<int64_t>(bytes.size() - header);
  if (have != want) {
    std::string what = rank == 1
                           ? std::to_string(a.dims[0]) + " records"
                           : std::to_string(a.dims[0]) + " records of " + DimsString(a.dims, 1);
    std::string held =
        have < want ? std::to_string(have / record) + " records" +
                          (have % record ? " and " + std::to_string(have % record) + " bytes" : "")
                    : std::to_string(have - want) + " bytes more";
    return InvalidArgument(path + ": header says " + what + " (" + std::to_string(want) +
                           " bytes) but the file holds " + held +
                           (have < want ? " (truncated?)" : ""));
  }
  a.payload = std::move(bytes);
  a.payload.erase(0, header);
  return a;
}

std::string EncodeIdx(const std::vector<int64_t>& dims, const std::vector<uint8_t>& payload) {
  EDL_CHECK(!dims.empty() && dims.size() <= 8);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  EDL_CHECK_EQ(n, static_cast<int64_t>(payload.size()));
  std::string out = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (int64_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<char>((d >> shift) & 0xff));
    }
  }
  out.append(payload.begin(), payload.end());
  return out;
}

}  // namespace edl::data
