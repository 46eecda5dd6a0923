// TFRecord framing: each record is its length (uint64, little-endian), the
// masked CRC-32C of those 8 bytes, the payload, and the payload's masked
// CRC-32C. Reading: data/record_index.h. Writing (tests, tools): below.
#pragma once

#include <string>
#include <string_view>

namespace edl::data {

// One framed record.
std::string TfRecordFrame(std::string_view payload);

}  // namespace edl::data
