// The protocol codec (docs/rpc.md): every message of roles/protocol/messages.h
// to bytes and back, shared by both ends of every RPC.
//
// An encoded message is a 1-byte message tag, a 1-byte wire version, then
// the fields in declaration order in the wire format of
// roles/protocol/wire.h. Decoding refuses, with one InvalidArgument naming
// the message and field, a wrong tag or version, anything truncated or
// malformed, and trailing bytes; it never reads past its input and never
// aborts. Encoding is canonical: Encode(Decode(b)) == b whenever Decode
// succeeds.
//
// Stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "net/payload.h"
#include "roles/protocol/messages.h"

namespace edl::roles::protocol {

// 2: tensor elements aligned to 64 bytes from the message start.
inline constexpr uint8_t kWireVersion = 2;

// The first byte of every encoded message.
enum class MessageTag : uint8_t {
  kTask = 1,
  kRegisterWorkerRequest = 2,
  kRegisterWorkerResponse = 3,
  kHeartbeatRequest = 4,
  kHeartbeatResponse = 5,
  kGetTaskRequest = 6,
  kReportTaskRequest = 7,
  kReportTaskResponse = 8,
  kPullDenseRequest = 9,
  kPullDenseResponse = 10,
  kPullRowsRequest = 11,
  kPullRowsResponse = 12,
  kPushGradientsRequest = 13,
  kPushGradientsResponse = 14,
  kJoinRingRequest = 15,
  kRingViewRequest = 16,
  kRingView = 17,
  kRingSyncedRequest = 18,
  kRingSyncedResponse = 19,
};
inline constexpr uint8_t kMaxMessageTag = 19;

// "PullRowsRequest"; "unknown" for a tag that names no message.
const char* MessageName(uint8_t tag);

// REQUIRES (checked): tensors are undefined or on the CPU; strings and
// vectors within the wire caps (wire.h).
std::string Encode(const Task& m);
std::string Encode(const RegisterWorkerRequest& m);
std::string Encode(const RegisterWorkerResponse& m);
std::string Encode(const HeartbeatRequest& m);
std::string Encode(const HeartbeatResponse& m);
std::string Encode(const GetTaskRequest& m);
std::string Encode(const ReportTaskRequest& m);
std::string Encode(const ReportTaskResponse& m);
std::string Encode(const PullDenseRequest& m);
std::string Encode(const PullDenseResponse& m);
std::string Encode(const PullRowsRequest& m);
std::string Encode(const PullRowsResponse& m);
std::string Encode(const PushGradientsRequest& m);
std::string Encode(const PushGradientsResponse& m);
std::string Encode(const JoinRingRequest& m);
std::string Encode(const RingViewRequest& m);
std::string Encode(const RingView& m);
std::string Encode(const RingSyncedRequest& m);
std::string Encode(const RingSyncedResponse& m);

// The same as a gather payload whose large tensors are borrowed from their
// storage (kept alive by the payload): what RPCs send.
net::Payload EncodePayload(const Task& m);
net::Payload EncodePayload(const RegisterWorkerRequest& m);
net::Payload EncodePayload(const RegisterWorkerResponse& m);
net::Payload EncodePayload(const HeartbeatRequest& m);
net::Payload EncodePayload(const HeartbeatResponse& m);
net::Payload EncodePayload(const GetTaskRequest& m);
net::Payload EncodePayload(const ReportTaskRequest& m);
net::Payload EncodePayload(const ReportTaskResponse& m);
net::Payload EncodePayload(const PullDenseRequest& m);
net::Payload EncodePayload(const PullDenseResponse& m);
net::Payload EncodePayload(const PullRowsRequest& m);
net::Payload EncodePayload(const PullRowsResponse& m);
net::Payload EncodePayload(const PushGradientsRequest& m);
net::Payload EncodePayload(const PushGradientsResponse& m);
net::Payload EncodePayload(const JoinRingRequest& m);
net::Payload EncodePayload(const RingViewRequest& m);
net::Payload EncodePayload(const RingView& m);
net::Payload EncodePayload(const RingSyncedRequest& m);
net::Payload EncodePayload(const RingSyncedResponse& m);

// Decode<PullRowsRequest>(bytes). Defined (codec.cc) for exactly the
// messages Encode takes. Decoded tensors own their storage (copied out of
// `bytes`).
template <typename T>
Result<T> Decode(std::string_view bytes);
// The same, with tensors viewing `bytes` (no copy; they keep it alive).
template <typename T>
Result<T> Decode(const net::Bytes& bytes);

}  // namespace edl::roles::protocol
