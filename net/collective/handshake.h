// The handshake that opens a ring connection (net/collective/collective.h), and the
// acceptor's answer. Little-endian on the wire:
//
//   hello:  "EDLR" u32 wire_version u64 ring_version u32 from_rank
//           u32 to_rank u32 world_size u32 secret_len u32 host_len
//           u32 segment_len, then secret, host identity and segment bytes
//   answer: "EDLA" u32 status_code u32 flags u32 message_len, then message
//
// host identity (net/collective/shm.h HostIdentity) and segment (the name of
// a shared-memory ring the connector made, net/collective/shm.h) are empty
// when the connector offers no shared memory; answer flag bit 0 says the
// acceptor mapped that segment, so the data of this connection moves
// through it.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace edl::net {

inline constexpr uint32_t kRingWireVersion = 2;
inline constexpr size_t kRingHelloHeaderBytes = 40;
inline constexpr size_t kRingAnswerHeaderBytes = 16;
inline constexpr size_t kRingMaxSecretBytes = 4096;
inline constexpr size_t kRingMaxHostBytes = 1024;
inline constexpr size_t kRingMaxSegmentBytes = 255;
inline constexpr size_t kRingMaxMessageBytes = 4096;
inline constexpr uint32_t kRingAnswerSharedMemory = 1;

struct RingHello {
  uint64_t ring_version = 0;
  uint32_t from_rank = 0;
  uint32_t to_rank = 0;
  uint32_t world_size = 0;
  std::string secret;
  std::string host;     // HostIdentity() of the connector, or empty
  std::string segment;  // shared-memory ring offered, or empty
};

std::string EncodeRingHello(const RingHello& hello);
// Checks the first kRingHelloPrefixBytes of a hello (magic and wire
// version), so that a foreign or old peer is refused before the rest of
// the header arrives. InvalidArgument when they are wrong.
inline constexpr size_t kRingHelloPrefixBytes = 8;
Status CheckRingHelloPrefix(std::string_view prefix);
// Parses the fixed header and sizes hello's secret, host and segment;
// returns the bytes still to read (their total), for DecodeRingHelloTail.
// InvalidArgument on a bad magic, wire version or oversized field.
Result<size_t> DecodeRingHelloHeader(std::string_view header, RingHello& hello);
// Fills the fields sized by DecodeRingHelloHeader from the bytes after the
// header. InvalidArgument when `tail` has another length.
Status DecodeRingHelloTail(std::string_view tail, RingHello& hello);
// Parses a whole hello (header + secret); InvalidArgument when malformed,
// truncated or followed by extra bytes.
Result<RingHello> DecodeRingHello(std::string_view bytes);

// The acceptor's verdict: OK, or the refusal's code and message; and
// whether it took the offered shared-memory ring.
std::string EncodeRingAnswer(const Status& verdict, bool shared_memory = false);
struct RingAnswer {
  StatusCode code = StatusCode::kOk;
  bool shared_memory = false;
  std::string message;
  Status ToStatus() const { return Status(code, message); }
};
// Parses code and flags into `answer`; returns the message length still to
// read. InvalidArgument when malformed.
Result<size_t> DecodeRingAnswerHeader(std::string_view header, RingAnswer& answer);
// Parses a whole answer; InvalidArgument when malformed or truncated.
Result<RingAnswer> DecodeRingAnswer(std::string_view bytes);

}  // namespace edl::net
