// CredentialSource: what a request authenticates with right now. A static
// token; or a token file, re-read when the copy is older than a minute and
// after a 401 (bound service-account tokens rotate); or an
// exec plugin's credential, cached until its expirationTimestamp or a 401;
// plus a static client certificate. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "kube/config.h"
#include "kube/exec_credential.h"

namespace edl::kube {

struct Credential {
  std::string token;  // "" = no Authorization header
  std::string client_cert_pem, client_key_pem;
};

class CredentialSource {
 public:
  static constexpr std::chrono::seconds kTokenFilePeriod{60};

  explicit CredentialSource(const ClusterConfig& config);

  // Reads the token file or runs the exec plugin when the cached value is
  // stale. Errors name the file or the plugin.
  Result<Credential> Get();
  // After a 401: drops the cached file token / exec credential. True when the
  // next Get() may return something different (a file or a plugin is used).
  bool Invalidate();

 private:
  const ClusterConfig config_;
  std::mutex mu_;  // guards the caches below
  std::string file_token_;
  std::optional<std::chrono::steady_clock::time_point> file_read_at_;
  std::optional<ExecCredential> exec_;
};

}  // namespace edl::kube
