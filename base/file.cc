#include "base/file.h"

#include <atomic>
#include <cstdint>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace edl {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return s.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  // Unique per call, so threads writing the same path never share a file.
  static std::atomic<uint64_t> serial{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return IoError(path + ": cannot create: " + std::strerror(errno));
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return IoError(path + ": write failed: " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return IoError(path + ": cannot flush: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": cannot rename into place: " + std::strerror(e));
  }
  return Status::Ok();
}

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

}  // namespace edl
