#include "data/tfrecord.h"

#include <cstdint>
#include <cstring>

#include "data/crc32c.h"

namespace edl::data {

namespace {
uint32_t Le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
}  // namespace

bool ReadTfRecordLength(const char* header, uint64_t* length) {
  std::memcpy(length, header, 8);
  return MaskCrc(Crc32c(header, 8)) == Le32(header + 8);
}

bool TfRecordPayloadOk(const char* payload, uint64_t n, const char* crc) {
  return MaskCrc(Crc32c(payload, n)) == Le32(crc);
}

std::string TfRecordFrame(std::string_view payload) {
  std::string out(8 + 4 + payload.size() + 4, '\0');
  const uint64_t length = payload.size();
  std::memcpy(out.data(), &length, 8);
  const uint32_t length_crc = MaskCrc(Crc32c(out.data(), 8));
  std::memcpy(out.data() + 8, &length_crc, 4);
  std::memcpy(out.data() + 12, payload.data(), payload.size());
  const uint32_t data_crc = MaskCrc(Crc32c(payload.data(), payload.size()));
  std::memcpy(out.data() + 12 + payload.size(), &data_crc, 4);
  return out;
}

}  // namespace edl::data
