#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <vector>

extern char** environ;

namespace edl::kube {
namespace {

using Json = nlohmann::json;

Status PluginError(const ExecPlugin& plugin, const std::string& what) {
  std::string m = "exec credential plugin \"" + plugin.command + "\": " + what;
  if (!plugin.install_hint.empty()) {
    std::string hint = plugin.install_hint;
    for (char& c : hint) {
      if (c == '\n') c = ' ';
    }
    m += " (" + hint + ")";
  }
  return Unauthenticated(m);
}

std::string Tail(const std::string& s) {
  constexpr size_t kMax = 400;
  std::string t = s.size() > kMax ? s.substr(s.size() - kMax) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  for (char& c : t) {
    if (c == '\n') c = ' ';
  }
  return t;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.') {
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  long offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    int sign = *rest == '-' ? -1 : 1;
    int h = 0, m = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &h, &m) != 2) return std::nullopt;
    offset = sign * (h * 3600L + m * 60L);
    rest += 6;
  } else {
    return std::nullopt;
  }
  if (*rest != '\0') return std::nullopt;
  time_t t = timegm(&tm);
  return std::chrono::system_clock::from_time_t(t - offset);
}

Result<ExecCredential> ParseExecCredential(const ExecPlugin& plugin, std::string_view json) {
  Json j = Json::parse(json.begin(), json.end(), nullptr, false);
  if (!j.is_object()) {
    return PluginError(plugin,
                       "stdout is not an ExecCredential JSON object: " + Tail(std::string(json)));
  }
  if (auto kind = j.find("kind");
      kind != j.end() && (!kind->is_string() || *kind != "ExecCredential")) {
    return PluginError(plugin, "kind must be ExecCredential");
  }
  auto status = j.find("status");
  if (status == j.end() || !status->is_object()) {
    return PluginError(plugin, "ExecCredential has no status");
  }
  ExecCredential c;
  auto get = [&](const char* field, std::string* out) -> Status {
    auto it = status->find(field);
    if (it == status->end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) {
      return PluginError(plugin, std::string("status.") + field + " must be a string");
    }
    *out = it->get<std::string>();
    return Status::Ok();
  };
  EDL_RETURN_IF_ERROR(get("token", &c.token));
  EDL_RETURN_IF_ERROR(get("clientCertificateData", &c.client_cert_pem));
  EDL_RETURN_IF_ERROR(get("clientKeyData", &c.client_key_pem));
  std::string expiry;
  EDL_RETURN_IF_ERROR(get("expirationTimestamp", &expiry));
  if (!expiry.empty()) {
    c.expiry = ParseRfc3339(expiry);
    if (!c.expiry) {
      return PluginError(plugin,
                         "status.expirationTimestamp \"" + expiry + "\" is not an RFC 3339 time");
    }
  }
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return PluginError(plugin,
                       "ExecCredential has neither status.token nor "
                       "status.clientCertificateData");
  }
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return PluginError(plugin,
                       "status.clientCertificateData and status.clientKeyData "
                       "go together");
  }
  return c;
}

Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin, std::chrono::milliseconds timeout) {
  std::vector<std::string> env_strings;
  auto overridden = [&](const char* entry) {
    for (const auto& [name, value] : plugin.env) {
      if (std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=') {
        return true;
      }
    }
    return std::strncmp(entry, "KUBERNETES_EXEC_INFO=", 21) == 0;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) env_strings.emplace_back(*e);
  }
  for (const auto& [name, value] : plugin.env) env_strings.push_back(name + "=" + value);
  Json info = {{"apiVersion", plugin.api_version.empty() ? "client.authentication.k8s.io/v1"
                                                         : plugin.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + info.dump());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{plugin.command};
  argv_strings.insert(argv_strings.end(), plugin.args.begin(), plugin.args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  // Stdin: an empty pipe (end of file at once), not /dev/null, which a
  // minimal container may lack.
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return PluginError(plugin, "pipe failed");
  ::close(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    return PluginError(plugin, "pipe failed");
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(out[0]);
    ::close(out[1]);
    return PluginError(plugin, "pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, plugin.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return PluginError(plugin, std::string("cannot run: ") + std::strerror(rc));
  }
  std::string stdout_text, stderr_text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  bool timed_out = false;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got > 0) {
        (i == 0 ? stdout_text : stderr_text).append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return PluginError(plugin, "no answer within " + std::to_string(timeout.count()) + " ms");
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string how = WIFEXITED(wstatus)
                          ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
                          : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    return PluginError(plugin, how + (stderr_text.empty() ? "" : ": " + Tail(stderr_text)));
  }
  return ParseExecCredential(plugin, stdout_text);
}

}  // namespace edl::kube
