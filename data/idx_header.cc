#include "data/idx_header.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "data/byte_stream.h"

namespace edl::data {
namespace {

uint32_t ReadBigEndian32(const std::string& b, size_t at) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])); };
  return (u(0) << 24) | (u(1) << 16) | (u(2) << 8) | u(3);
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

int64_t IdxHeader::RecordBytes() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

std::string IdxHeader::RecordsString() const {
  std::string s = std::to_string(NumRecords()) + " records";
  for (size_t i = 1; i < dims.size(); ++i) s += (i == 1 ? " of " : "x") + std::to_string(dims[i]);
  return s;
}

Result<IdxHeader> ParseIdxHeader(const std::string& path, const std::string& prefix) {
  if (prefix.size() < 4) {
    return InvalidArgument(path + ": not an IDX file: only " + std::to_string(prefix.size()) +
                           " bytes, shorter than the 4-byte magic number");
  }
  char magic[16];
  std::snprintf(magic, sizeof(magic), "0x%02x%02x%02x%02x", static_cast<uint8_t>(prefix[0]),
                static_cast<uint8_t>(prefix[1]), static_cast<uint8_t>(prefix[2]),
                static_cast<uint8_t>(prefix[3]));
  const int type = static_cast<uint8_t>(prefix[2]);
  const int rank = static_cast<uint8_t>(prefix[3]);
  if (prefix[0] != 0 || prefix[1] != 0 || TypeName(type) == nullptr || rank < 1 || rank > 8) {
    return InvalidArgument(path + ": not an IDX file: bad magic number " + magic +
                           " (expected 0x0000TTRR with a type TT and "
                           "a rank RR from 1 to 8)");
  }
  if (type != 0x08) {
    return InvalidArgument(path + ": IDX element type " + TypeName(type) +
                           " is not supported (only unsigned byte, 0x08)");
  }
  IdxHeader h;
  h.bytes = 4 + 4 * static_cast<uint64_t>(rank);
  if (prefix.size() < h.bytes) {
    return InvalidArgument(path + ": truncated IDX header: rank " + std::to_string(rank) +
                           " needs " + std::to_string(h.bytes) + " bytes, file holds " +
                           std::to_string(prefix.size()));
  }
  for (int i = 0; i < rank; ++i) {
    h.dims.push_back(ReadBigEndian32(prefix, 4 + 4 * i));
    if (i > 0 && h.dims.back() == 0) {
      return InvalidArgument(path + ": IDX dimension " + std::to_string(i) + " is 0");
    }
  }
  // Up to 8 dimensions of up to 2^32 - 1 each: a product past 2^62 is no
  // file this machine can hold.
  double elements = 1;
  for (size_t i = 1; i < h.dims.size(); ++i) elements *= static_cast<double>(h.dims[i]);
  if (elements * static_cast<double>(std::max<int64_t>(h.NumRecords(), 1)) > 0x1p62) {
    return InvalidArgument(path + ": IDX dimensions " + h.RecordsString() +
                           " are too large for any file");
  }
  return h;
}

Status CheckIdxDataSize(const std::string& path, const IdxHeader& header, uint64_t data_size) {
  const int64_t record = header.RecordBytes();
  const int64_t want = header.NumRecords() * record;
  const int64_t have = static_cast<int64_t>(data_size - std::min(data_size, header.bytes));
  if (have == want) return Status::Ok();
  std::string held =
      have < want ? std::to_string(have / record) + " records" +
                        (have % record ? " and " + std::to_string(have % record) + " bytes" : "")
                  : std::to_string(have - want) + " bytes more";
  return InvalidArgument(path + ": header says " + header.RecordsString() + " (" +
                         std::to_string(want) + " bytes) but the file holds " + held +
                         (have < want ? " (truncated?)" : ""));
}

Result<IdxHeader> ReadIdxHeader(const std::string& path) {
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> stream, ByteStream::Open(path));
  std::string prefix(kMaxIdxHeader, '\0');
  size_t got = 0;
  while (got < prefix.size()) {
    EDL_ASSIGN_OR_RETURN(size_t n, stream->Read(prefix.data() + got, prefix.size() - got));
    if (n == 0) break;
    got += n;
  }
  prefix.resize(got);
  return ParseIdxHeader(path, prefix);
}

}  // namespace edl::data
