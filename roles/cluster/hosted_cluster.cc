#include "roles/cluster/hosted_cluster.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "roles/cluster/spawn.h"

namespace edl::roles::cluster {
namespace {

using nlohmann::json;

Result<sockaddr_un> AddressOf(const std::string& name, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.empty() || name.size() >= sizeof(addr.sun_path)) {
    return InvalidArgument("host socket name \"" + name + "\" is empty or too long");
  }
  std::memcpy(addr.sun_path, name.data(), name.size());
  if (name[0] == '@') addr.sun_path[0] = '\0';  // abstract: no file
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  return addr;
}

// Reads one line (without its newline) from a blocking fd; false at the end.
bool ReadLine(int fd, std::string& buffer, std::string* line) {
  while (true) {
    const size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      *line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char chunk[4096];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

Result<int> ListenUnix(const std::string& name) {
  socklen_t len = 0;
  EDL_ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(name, &len));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("host socket: " + ErrnoMessage(errno));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 4) != 0) {
    const int err = errno;
    ::close(fd);
    return Unavailable("host socket " + name + ": " + ErrnoMessage(err));
  }
  return fd;
}

Result<int> ConnectUnix(const std::string& name) {
  socklen_t len = 0;
  EDL_ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(name, &len));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError("host socket: " + ErrnoMessage(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    ::close(fd);
    return Unavailable("no job host at " + name + ": " + ErrnoMessage(err));
  }
  return fd;
}

bool WriteLine(int fd, const std::string& line) {
  std::string bytes = line + "\n";
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Result<std::unique_ptr<HostedCluster>> HostedCluster::Connect(const std::string& socket_name,
                                                              const std::string& secret) {
  EDL_ASSIGN_OR_RETURN(int fd, ConnectUnix(socket_name));
  auto cluster = std::make_unique<HostedCluster>(fd);
  if (!WriteLine(fd, json{{"secret", secret}}.dump())) {
    return Unavailable("the job host at " + socket_name + " hung up");
  }
  std::string buffer, line;
  if (!ReadLine(fd, buffer, &line)) {
    return Unavailable("the job host at " + socket_name + " refused this master (wrong secret?)");
  }
  json hello = json::parse(line, nullptr, false);
  if (!hello.is_object() || !hello.contains("running") || !hello["running"].is_array()) {
    return Internal("the job host at " + socket_name + " sent \"" + line +
                    "\" instead of the processes running");
  }
  for (const auto& name : hello["running"]) {
    if (name.is_string()) cluster->running_.insert(name.get<std::string>());
  }
  cluster->reader_ = std::thread(&HostedCluster::ReadLoop, cluster.get(), std::move(buffer));
  return cluster;
}

HostedCluster::~HostedCluster() {
  ::shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  ::close(fd_);
}

void HostedCluster::ReadLoop(std::string buffer) {
  std::string line;
  while (ReadLine(fd_, buffer, &line)) {
    json m = json::parse(line, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    if (m.is_object() && m.contains("id") && m["id"].is_number_integer()) {
      answers_[m["id"].get<int64_t>()] = m.value("error", std::string());
    } else if (m.is_object() && m.contains("exit") && m["exit"].is_object()) {
      const json& e = m["exit"];
      ProcessExit exit;
      exit.name = e.value("name", std::string());
      exit.incarnation = e.value("incarnation", int64_t{0});
      exit.signaled = e.value("signaled", false);
      exit.code = e.value("code", 0);
      // An exit of a process this master never knew running ended before
      // it connected: the running list already said so.
      if (running_.erase(exit.name) == 0) continue;
      exits_.push_back(std::move(exit));
    } else {
      EDL_LOG(WARNING) << "job host: ignoring \"" << line << "\"";
      continue;
    }
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

Status HostedCluster::Call(const std::string& op, const std::string& body_json) {
  int64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Unavailable("the job host hung up");
    id = next_id_++;
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (!WriteLine(fd_, "{\"id\":" + std::to_string(id) + ",\"" + op + "\":" + body_json + "}")) {
      return Unavailable("the job host hung up");
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return closed_ || answers_.count(id) > 0; });
  auto it = answers_.find(id);
  if (it == answers_.end()) return Unavailable("the job host hung up");
  const std::string error = it->second;
  answers_.erase(it);
  if (error.empty()) return Status::Ok();
  if (error.rfind("AlreadyExists:", 0) == 0) return Status(StatusCode::kAlreadyExists, error);
  if (error.rfind("NotFound:", 0) == 0) return NotFound(error);
  return Unavailable(error);
}

Status HostedCluster::Launch(const ProcessSpec& spec) {
  json body{{"name", spec.name}, {"args", spec.args}, {"env", spec.env}};
  // Counted as running before asking: its exit may follow the answer at once.
  bool was_running = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_running = !running_.insert(spec.name).second;
  }
  Status s = Call("launch", body.dump());
  if (!s.ok() && !was_running) {
    std::lock_guard<std::mutex> lock(mu_);
    running_.erase(spec.name);
  }
  return s;
}

Status HostedCluster::Signal(const std::string& name, int signal) {
  return Call("signal", json{{"name", name}, {"signal", signal}}.dump());
}

std::optional<ProcessExit> HostedCluster::WaitExit(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !exits_.empty() || closed_; });
  if (exits_.empty()) return std::nullopt;
  ProcessExit e = std::move(exits_.front());
  exits_.pop_front();
  return e;
}

std::vector<std::string> HostedCluster::Running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {running_.begin(), running_.end()};
}

}  // namespace edl::roles::cluster
