#include "roles/job_dir.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file.h"

namespace edl::roles {
namespace fs = std::filesystem;

namespace {

bool ValidJobName(const std::string& job) {
  if (job.empty() || job.size() > 128 || job == "." || job == "..") return false;
  for (char c : job) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::string> RandomHex(size_t bytes) {
  // getrandom(2), not /dev/urandom: a minimal root or container may have no
  // /dev.
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return IoError(std::string("cannot read random bytes for the job's secret (getrandom): ") +
                     (n < 0 ? std::strerror(errno) : "no bytes"));
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return hex;
}

Result<JobDirectory> CreateJobDirectory(const std::string& root, const std::string& job) {
  if (!ValidJobName(job)) {
    return InvalidArgument("--job_name \"" + job +
                           "\": use letters, digits, '_', '.' and '-' only");
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return IoError(root + ": cannot create the jobs directory: " + ec.message());
  ::chmod(root.c_str(), 0700);
  JobDirectory dir{root + "/" + job};
  fs::create_directories(dir.path, ec);
  if (ec) return IoError(dir.path + ": cannot create: " + ec.message());
  ::chmod(dir.path.c_str(), 0700);
  fs::remove(dir.MasterAddressPath(), ec);
  EDL_ASSIGN_OR_RETURN(std::string secret, RandomHex(32));
  // Create the secret file 0600 from the start (no window where others can read it).
  const std::string tmp = dir.SecretPath() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return IoError(tmp + ": " + std::strerror(errno));
  bool ok = ::write(fd, secret.data(), secret.size()) == static_cast<ssize_t>(secret.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), dir.SecretPath().c_str()) != 0) {
    return IoError(dir.SecretPath() + ": cannot write the job secret");
  }
  return dir;
}

Result<JobDirectory> FindJobDirectory(const std::string& root, const std::string& job) {
  if (!ValidJobName(job)) return InvalidArgument("job \"" + job + "\": not a valid job name");
  JobDirectory dir{root + "/" + job};
  std::error_code ec;
  if (!fs::exists(dir.SecretPath(), ec)) {
    return NotFound("job \"" + job + "\": no such local job (looked in " + root + ")");
  }
  return dir;
}

Result<std::string> ReadSecretFile(const std::string& path) {
  EDL_ASSIGN_OR_RETURN(std::string secret, ReadFile(path));
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == ' ')) secret.pop_back();
  if (secret.empty()) return InvalidArgument(path + ": empty secret");
  return secret;
}

Result<std::string> ReadSecret(const JobDirectory& dir) { return ReadSecretFile(dir.SecretPath()); }

Status WriteMasterAddress(const JobDirectory& dir, const MasterAddress& a) {
  nlohmann::json j = {{"host", a.host}, {"port", a.port}, {"pid", a.pid}};
  return WriteFileAtomically(dir.MasterAddressPath(), j.dump() + "\n");
}

Result<MasterAddress> ReadMasterAddress(const JobDirectory& dir) {
  auto text = ReadFile(dir.MasterAddressPath());
  if (!text.ok()) {
    return Unavailable(dir.MasterAddressPath() + ": the job's master is not listening (yet)");
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("port") || !j["port"].is_number()) {
    return InvalidArgument(dir.MasterAddressPath() + ": malformed");
  }
  MasterAddress a;
  a.host = j.value("host", "127.0.0.1");
  a.port = j["port"].get<int>();
  a.pid = j.value("pid", int64_t{0});
  return a;
}

}  // namespace edl::roles
