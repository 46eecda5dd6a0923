// Encoding and decoding of the ring handshake (net/collective/handshake.h).
#include "net/collective/handshake.h"

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
    value |= static_cast<T>(static_cast<unsigned char>(in[offset + i])) << (8 * i);
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
  Put<uint32_t>(out, static_cast<uint32_t>(hello.host.size()));
  Put<uint32_t>(out, static_cast<uint32_t>(hello.segment.size()));
  out += hello.secret;
  out += hello.host;
  out += hello.segment;
  return out;
}

Status CheckRingHelloPrefix(std::string_view prefix) {
  if (prefix.size() != kRingHelloPrefixBytes) {
    return InvalidArgument("ring hello: prefix has " + std::to_string(prefix.size()) +
                           " bytes, want " + std::to_string(kRingHelloPrefixBytes));
  }
  if (std::memcmp(prefix.data(), kHelloMagic, 4) != 0) {
    return InvalidArgument("ring hello: bad magic (not an edl ring peer)");
  }
  uint32_t wire = Get<uint32_t>(prefix, 4);
  if (wire != kRingWireVersion) {
    return InvalidArgument("ring hello: wire version " + std::to_string(wire) + ", want " +
                           std::to_string(kRingWireVersion));
  }
  return Status::Ok();
}

Result<size_t> DecodeRingHelloHeader(std::string_view header, RingHello& hello) {
  if (header.size() != kRingHelloHeaderBytes) {
    return InvalidArgument("ring hello: header has " + std::to_string(header.size()) +
                           " bytes, want " + std::to_string(kRingHelloHeaderBytes));
  }
  EDL_RETURN_IF_ERROR(CheckRingHelloPrefix(header.substr(0, kRingHelloPrefixBytes)));
  hello.ring_version = Get<uint64_t>(header, 8);
  hello.from_rank = Get<uint32_t>(header, 16);
  hello.to_rank = Get<uint32_t>(header, 20);
  hello.world_size = Get<uint32_t>(header, 24);
  struct Field {
    const char* name;
    std::string* value;
    size_t max;
  };
  const Field fields[] = {{"secret", &hello.secret, kRingMaxSecretBytes},
                          {"host identity", &hello.host, kRingMaxHostBytes},
                          {"segment name", &hello.segment, kRingMaxSegmentBytes}};
  size_t tail = 0;
  for (size_t i = 0; i < 3; ++i) {
    uint32_t len = Get<uint32_t>(header, 28 + 4 * i);
    if (len > fields[i].max) {
      return InvalidArgument("ring hello: " + std::string(fields[i].name) + " of " +
                             std::to_string(len) + " bytes, at most " +
                             std::to_string(fields[i].max));
    }
    fields[i].value->assign(len, '\0');
    tail += len;
  }
  return tail;
}

Status DecodeRingHelloTail(std::string_view tail, RingHello& hello) {
  const size_t want = hello.secret.size() + hello.host.size() + hello.segment.size();
  if (tail.size() != want) {
    return InvalidArgument("ring hello: " + std::to_string(tail.size()) +
                           " bytes after the header, header says " + std::to_string(want));
  }
  for (std::string* field : {&hello.secret, &hello.host, &hello.segment}) {
    field->assign(tail.substr(0, field->size()));
    tail.remove_prefix(field->size());
  }
  return Status::Ok();
}

Result<RingHello> DecodeRingHello(std::string_view bytes) {
  if (bytes.size() < kRingHelloHeaderBytes) {
    return InvalidArgument("ring hello: truncated (" + std::to_string(bytes.size()) + " bytes)");
  }
  RingHello hello;
  EDL_ASSIGN_OR_RETURN(size_t tail,
                       DecodeRingHelloHeader(bytes.substr(0, kRingHelloHeaderBytes), hello));
  if (bytes.size() != kRingHelloHeaderBytes + tail) {
    return InvalidArgument("ring hello: " + std::to_string(bytes.size()) + " bytes, header says " +
                           std::to_string(kRingHelloHeaderBytes + tail));
  }
  EDL_RETURN_IF_ERROR(DecodeRingHelloTail(bytes.substr(kRingHelloHeaderBytes), hello));
  return hello;
}

std::string EncodeRingAnswer(const Status& verdict, bool shared_memory) {
  std::string out(kAnswerMagic, 4);
  std::string message = verdict.message().substr(0, kRingMaxMessageBytes);
  Put<uint32_t>(out, static_cast<uint32_t>(verdict.code()));
  Put<uint32_t>(out, shared_memory ? kRingAnswerSharedMemory : 0);
  Put<uint32_t>(out, static_cast<uint32_t>(message.size()));
  out += message;
  return out;
}

Result<size_t> DecodeRingAnswerHeader(std::string_view header, RingAnswer& answer) {
  if (header.size() != kRingAnswerHeaderBytes || std::memcmp(header.data(), kAnswerMagic, 4) != 0) {
    return InvalidArgument("ring answer: bad header (not an edl ring peer)");
  }
  uint32_t raw_code = Get<uint32_t>(header, 4);
  if (raw_code > static_cast<uint32_t>(StatusCode::kAborted)) {
    return InvalidArgument("ring answer: unknown status code " + std::to_string(raw_code));
  }
  answer.code = static_cast<StatusCode>(raw_code);
  uint32_t flags = Get<uint32_t>(header, 8);
  if ((flags & ~kRingAnswerSharedMemory) != 0) {
    return InvalidArgument("ring answer: unknown flags " + std::to_string(flags));
  }
  answer.shared_memory = (flags & kRingAnswerSharedMemory) != 0;
  uint32_t len = Get<uint32_t>(header, 12);
  if (len > kRingMaxMessageBytes) {
    return InvalidArgument("ring answer: message of " + std::to_string(len) + " bytes, at most " +
                           std::to_string(kRingMaxMessageBytes));
  }
  return static_cast<size_t>(len);
}

Result<RingAnswer> DecodeRingAnswer(std::string_view bytes) {
  if (bytes.size() < kRingAnswerHeaderBytes) {
    return InvalidArgument("ring answer: truncated (" + std::to_string(bytes.size()) + " bytes)");
  }
  RingAnswer answer;
  EDL_ASSIGN_OR_RETURN(size_t len,
                       DecodeRingAnswerHeader(bytes.substr(0, kRingAnswerHeaderBytes), answer));
  if (bytes.size() != kRingAnswerHeaderBytes + len) {
    return InvalidArgument("ring answer: " + std::to_string(bytes.size()) + " bytes, header says " +
                           std::to_string(kRingAnswerHeaderBytes + len));
  }
  answer.message = std::string(bytes.substr(kRingAnswerHeaderBytes));
  return answer;
}

}  // namespace edl::net
