// libFuzzer target: raw bytes -> HTTP request parsing -> routing/auth ->
// response serialization, exactly as an RpcServer connection would handle
// them (net/http_handling.h). Built and run by scripts/fuzz.sh.
// fuzz-sources: net/http_handling.cc net/status_mapping.cc base/status.cc
// fuzz-sources: base/check.cc net/payload.cc base/block_cache.cc
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "net/http_handling.h"

namespace {

const edl::net::HttpRouter& Router() {
  static const edl::net::HttpRouter* router = [] {
    auto* r = new edl::net::HttpRouter("fuzz-secret");
    r->AddRpc("/test.Echo/Echo",
              [](std::string_view body) { return edl::Result<std::string>(std::string(body)); });
    r->AddRpc("/test.Fail/Fail", [](std::string_view body) {
      return edl::Result<std::string>(
          edl::FailedPrecondition("refused " + std::to_string(body.size())));
    });
    r->AddGet(
        "/status",
        [] {
          return edl::net::HttpResponse{200, "text/plain", "up"};
        },
        false);
    r->AddGet(
        "/metrics",
        [] {
          return edl::net::HttpResponse{200, "text/plain", "m 1\n"};
        },
        true);
    return r;
  }();
  return *router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string out = edl::net::ServeHttpBytes(Router(), bytes, 1 << 16);
  if (!out.empty() && out.rfind("HTTP/1.", 0) != 0) __builtin_trap();
  return 0;
}
