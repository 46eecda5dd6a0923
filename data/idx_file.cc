#include "data/idx_file.h"

#include <algorithm>

#include "base/check.h"
#include "data/file_bytes.h"

namespace edl::data {

int64_t IdxArray::RecordSize() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

Result<IdxArray> ReadIdxFile(const std::string& path) {
  EDL_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  EDL_ASSIGN_OR_RETURN(
      IdxHeader header,
      ParseIdxHeader(path, bytes.substr(0, std::min(bytes.size(), kMaxIdxHeader))));
  EDL_RETURN_IF_ERROR(CheckIdxDataSize(path, header, bytes.size()));
  IdxArray a;
  a.dims = header.dims;
  a.payload = std::move(bytes);
  a.payload.erase(0, header.bytes);
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
