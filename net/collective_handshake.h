// The handshake that opens a ring connection (net/collective.h), and the
// acceptor's answer. Little-endian on the wire:
//
//   hello:  "EDLR" u32 wire_version u64 ring_version u32 from_rank
//           u32 to_rank u32 world_size u32 secret_len, then secret bytes
//   answer: "EDLA" u32 status_code u32 message_len, then message bytes
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace edl::net {

inline constexpr uint32_t kRingWireVersion = 1;
inline constexpr size_t kRingHelloHeaderBytes = 32;
inline constexpr size_t kRingAnswerHeaderBytes = 12;
inline constexpr size_t kRingMaxSecretBytes = 4096;
inline constexpr size_t kRingMaxMessageBytes = 4096;

struct RingHello {
  uint64_t ring_version = 0;
  uint32_t from_rank = 0;
  uint32_t to_rank = 0;
  uint32_t world_size = 0;
  std::string secret;
};

std::string EncodeRingHello(const RingHello& hello);
// Parses the fixed header; returns the secret length still to read.
// InvalidArgument on a bad magic, wire version or oversized secret.
Result<size_t> DecodeRingHelloHeader(std::string_view header, RingHello& hello);
// Parses a whole hello (header + secret); InvalidArgument when malformed,
// truncated or followed by extra bytes.
Result<RingHello> DecodeRingHello(std::string_view bytes);

// The acceptor's verdict: OK, or the refusal's code and message.
std::string EncodeRingAnswer(const Status& verdict);
// Returns the message length still to read; InvalidArgument when malformed.
Result<size_t> DecodeRingAnswerHeader(std::string_view header,
                                      StatusCode& code);
struct RingAnswer {
  StatusCode code = StatusCode::kOk;
  std::string message;
  Status ToStatus() const { return Status(code, message); }
};
// Parses a whole answer; InvalidArgument when malformed or truncated.
Result<RingAnswer> DecodeRingAnswer(std::string_view bytes);

}  // namespace edl::net
