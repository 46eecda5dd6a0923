// TFRecord framing: each record is its length (uint64, little-endian), the
// masked CRC-32C of those 8 bytes, the payload, and the payload's masked
// CRC-32C. Reading: data/record_index.h. Writing (tests, tools): below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace edl::data {

// The length field and its checksum.
inline constexpr size_t kTfRecordHeader = 12;
// Longer records are refused before any arithmetic on their length.
inline constexpr uint64_t kMaxTfRecordLength = 1ull << 40;

// The payload length of the frame header at `header` (kTfRecordHeader
// bytes), or nullopt-like false when its checksum does not match.
bool ReadTfRecordLength(const char* header, uint64_t* length);
// Whether `payload` (n bytes) matches the masked CRC stored at `crc`.
bool TfRecordPayloadOk(const char* payload, uint64_t n, const char* crc);

// One framed record.
std::string TfRecordFrame(std::string_view payload);

}  // namespace edl::data
