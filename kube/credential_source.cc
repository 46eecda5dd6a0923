#include "kube/credential_source.h"

#include "base/file.h"

namespace edl::kube {

CredentialSource::CredentialSource(const ClusterConfig& config) : config_(config) {}

Result<Credential> CredentialSource::Get() {
  std::lock_guard<std::mutex> lock(mu_);
  Credential c;
  c.client_cert_pem = config_.client_cert_pem;
  c.client_key_pem = config_.client_key_pem;
  if (!config_.token_file.empty()) {
    auto now = std::chrono::steady_clock::now();
    if (!file_read_at_ || now - *file_read_at_ >= kTokenFilePeriod) {
      Result<std::string> text = ReadFile(config_.token_file);
      if (!text.ok()) {
        if (!file_read_at_ && config_.token.empty()) {
          return Unauthenticated("token file: " + text.status().message());
        }
        // Keep the last good token (client-go does too) and try again soon.
      } else {
        std::string t = std::move(*text);
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) {
          t.pop_back();
        }
        file_token_ = std::move(t);
        file_read_at_ = now;
      }
    }
    c.token = file_token_.empty() ? config_.token : file_token_;
    return c;
  }
  if (!config_.token.empty()) {
    c.token = config_.token;
    return c;
  }
  if (config_.exec) {
    if (exec_ && exec_->expiry && std::chrono::system_clock::now() >= *exec_->expiry) {
      exec_.reset();
    }
    if (!exec_) {
      EDL_ASSIGN_OR_RETURN(ExecCredential fresh, RunExecPlugin(*config_.exec));
      exec_ = std::move(fresh);
    }
    c.token = exec_->token;
    if (!exec_->client_cert_pem.empty()) {
      c.client_cert_pem = exec_->client_cert_pem;
      c.client_key_pem = exec_->client_key_pem;
    }
  }
  return c;
}

bool CredentialSource::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!config_.token_file.empty()) {
    file_read_at_.reset();
    return true;
  }
  if (config_.token.empty() && config_.exec) {
    exec_.reset();
    return true;
  }
  return false;
}

}  // namespace edl::kube
