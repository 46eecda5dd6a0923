// libFuzzer target for the protocol codec (roles/protocol/codec.h): decodes
// arbitrary bytes as every message type, both copied out of the bytes and
// as views of a received block; whatever decodes must decode the same both
// ways, re-encode to exactly the input (the encoding is canonical) and
// decode again.
// Seeds: fuzz/corpus/protocol_codec/ (one valid encoding per message).
//
// fuzz-sources: roles/protocol/codec.cc roles/protocol/wire.cc tensor/tensor.cc base/block_cache.cc
// base/check.cc base/status.cc fuzz-sources: net/payload.cc tensor/device_runtime.cc
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "roles/protocol/codec.h"

namespace {

using namespace edl::roles::protocol;  // NOLINT

template <typename T>
void Check(std::string_view bytes) {
  edl::Result<T> decoded = Decode<T>(bytes);
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) {
      std::fprintf(stderr, "empty error message\n");
      std::abort();
    }
    return;
  }
  edl::Result<T> viewed = Decode<T>(edl::net::Bytes::Copy(bytes));
  if (!viewed.ok() || Encode(*viewed) != bytes) {
    std::fprintf(stderr, "decoding a received block differs from decoding a copy\n");
    std::abort();
  }
  const std::string again = Encode(*decoded);
  if (again != bytes) {
    std::fprintf(stderr, "re-encoding differs: %zu bytes in, %zu out\n", bytes.size(),
                 again.size());
    std::abort();
  }
  if (!Decode<T>(again).ok()) {
    std::fprintf(stderr, "re-encoding does not decode\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check<Task>(bytes);
  Check<RegisterWorkerRequest>(bytes);
  Check<RegisterWorkerResponse>(bytes);
  Check<HeartbeatRequest>(bytes);
  Check<HeartbeatResponse>(bytes);
  Check<GetTaskRequest>(bytes);
  Check<ReportTaskRequest>(bytes);
  Check<ReportTaskResponse>(bytes);
  Check<PullDenseRequest>(bytes);
  Check<PullDenseResponse>(bytes);
  Check<PullRowsRequest>(bytes);
  Check<PullRowsResponse>(bytes);
  Check<PushGradientsRequest>(bytes);
  Check<PushGradientsResponse>(bytes);
  Check<JoinRingRequest>(bytes);
  Check<RingViewRequest>(bytes);
  Check<RingView>(bytes);
  Check<RingSyncedRequest>(bytes);
  Check<RingSyncedResponse>(bytes);
  return 0;
}
