// The client.authentication.k8s.io exec credential protocol (a kubeconfig
// user's `exec` plugin, as kubectl runs it): run the plugin with
// KUBERNETES_EXEC_INFO in its environment and parse the ExecCredential it
// prints on stdout.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kube/config.h"

namespace edl::kube {

struct ExecCredential {
  std::string token;
  std::string client_cert_pem, client_key_pem;
  // status.expirationTimestamp; nullopt = valid until the server says 401.
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Parses the plugin's stdout. Errors name the plugin and the field.
Result<ExecCredential> ParseExecCredential(const ExecPlugin& plugin, std::string_view json);

// Runs the plugin (PATH lookup, its env added to this process's, stdin
// closed) and waits at most `timeout` for it. Errors name the plugin, show
// its stderr and the install hint.
Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

// "2026-11-21T06:00:00Z" (RFC 3339, optional fraction and offset).
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(const std::string& text);

}  // namespace edl::kube
