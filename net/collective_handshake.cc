// Encoding and decoding of the ring handshake (net/collective_handshake.h).
#include "net/collective_handshake.h"

#include <cstring>

namespace edl::net {
namespace {

constexpr char kHelloMagic[4] = {'E', 'D', 'L', 'R'};
constexpr char kAnswerMagic[4] = {'E', 'D', 'L', 'A'};

template <typename T>
void Put(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

template <typename T>
T Get(std::string_view in, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<unsigned char>(in[offset + i]))
             << (8 * i);
  }
  return value;
}

}  // namespace

std::string EncodeRingHello(const RingHello& hello) {
  std::string out(kHelloMagic, 4);
  Put<uint32_t>(out, kRingWireVersion);
  Put<uint64_t>(out, hello.ring_version);
  Put<uint32_t>(out, hello.from_rank);
  Put<uint32_t>(out, hello.to_rank);
  Put<uint32_t>(out, hello.world_size);
  Put<uint32_t>(out, static_cast<uint32_t>(hello.secret.size()));
  out += hello.secret;
  return out;
}

Result<size_t> DecodeRingHelloHeader(std::string_view header,
                                     RingHello& hello) {
  if (header.size() != kRingHelloHeaderBytes) {
    return InvalidArgument("ring hello: header has " +
                           std::to_string(header.size()) + " bytes, want " +
                           std::to_string(kRingHelloHeaderBytes));
  }
  if (std::memcmp(header.data(), kHelloMagic, 4) != 0) {
    return InvalidArgument("ring hello: bad magic (not an edl ring peer)");
  }
  uint32_t wire = Get<uint32_t>(header, 4);
  if (wire != kRingWireVersion) {
    return InvalidArgument("ring hello: wire version " + std::to_string(wire) +
                           ", want " + std::to_string(kRingWireVersion));
  }
  hello.ring_version = Get<uint64_t>(header, 8);
  hello.from_rank = Get<uint32_t>(header, 16);
  hello.to_rank = Get<uint32_t>(header, 20);
  hello.world_size = Get<uint32_t>(header, 24);
  uint32_t secret_len = Get<uint32_t>(header, 28);
  if (secret_len > kRingMaxSecretBytes) {
    return InvalidArgument("ring hello: secret of " +
                           std::to_string(secret_len) + " bytes, at most " +
                           std::to_string(kRingMaxSecretBytes));
  }
  return static_cast<size_t>(secret_len);
}

Result<RingHello> DecodeRingHello(std::string_view bytes) {
  if (bytes.size() < kRingHelloHeaderBytes) {
    return InvalidArgument("ring hello: truncated (" +
                           std::to_string(bytes.size()) + " bytes)");
  }
  RingHello hello;
  EDL_ASSIGN_OR_RETURN(
      size_t secret_len,
      DecodeRingHelloHeader(bytes.substr(0, kRingHelloHeaderBytes), hello));
  if (bytes.size() != kRingHelloHeaderBytes + secret_len) {
    return InvalidArgument("ring hello: " + std::to_string(bytes.size()) +
                           " bytes, header says " +
                           std::to_string(kRingHelloHeaderBytes + secret_len));
  }
  hello.secret = std::string(bytes.substr(kRingHelloHeaderBytes));
  return hello;
}

std::string EncodeRingAnswer(const Status& verdict) {
  std::string out(kAnswerMagic, 4);
  std::string message = verdict.message().substr(0, kRingMaxMessageBytes);
  Put<uint32_t>(out, static_cast<uint32_t>(verdict.code()));
  Put<uint32_t>(out, static_cast<uint32_t>(message.size()));
  out += message;
  return out;
}

Result<size_t> DecodeRingAnswerHeader(std::string_view header,
                                      StatusCode& code) {
  if (header.size() != kRingAnswerHeaderBytes ||
      std::memcmp(header.data(), kAnswerMagic, 4) != 0) {
    return InvalidArgument("ring answer: bad header (not an edl ring peer)");
  }
  uint32_t raw_code = Get<uint32_t>(header, 4);
  if (raw_code > static_cast<uint32_t>(StatusCode::kAborted)) {
    return InvalidArgument("ring answer: unknown status code " +
                           std::to_string(raw_code));
  }
  code = static_cast<StatusCode>(raw_code);
  uint32_t len = Get<uint32_t>(header, 8);
  if (len > kRingMaxMessageBytes) {
    return InvalidArgument("ring answer: message of " + std::to_string(len) +
                           " bytes, at most " +
                           std::to_string(kRingMaxMessageBytes));
  }
  return static_cast<size_t>(len);
}

Result<RingAnswer> DecodeRingAnswer(std::string_view bytes) {
  if (bytes.size() < kRingAnswerHeaderBytes) {
    return InvalidArgument("ring answer: truncated (" +
                           std::to_string(bytes.size()) + " bytes)");
  }
  StatusCode code;
  EDL_ASSIGN_OR_RETURN(
      size_t len,
      DecodeRingAnswerHeader(bytes.substr(0, kRingAnswerHeaderBytes), code));
  if (bytes.size() != kRingAnswerHeaderBytes + len) {
    return InvalidArgument("ring answer: " + std::to_string(bytes.size()) +
                           " bytes, header says " +
                           std::to_string(kRingAnswerHeaderBytes + len));
  }
  RingAnswer answer;
  answer.code = code;
  answer.message = std::string(bytes.substr(kRingAnswerHeaderBytes));
  return answer;
}

}  // namespace edl::net
