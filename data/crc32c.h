// CRC-32C (Castagnoli), the checksum of TFRecord framing, and TFRecord's
// "masked" form of it. Uses the SSE4.2 crc32 instruction (every
// x86-64-v3 CPU has it). Thread-safe, no state.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edl::data {

// CRC-32C of `n` bytes, continuing from `crc` (0 to start).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8.
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace edl::data
