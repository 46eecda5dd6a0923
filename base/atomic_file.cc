#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

namespace edl {

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(const std::string& path) {
  // Unique per call, so threads writing the same path never share a file;
  // random per process, so neither do processes of one pid on a shared
  // volume (pods are often all pid 1).
  static std::atomic<uint64_t> serial{0};
  static const uint64_t tag = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  char unique[40];
  std::snprintf(unique, sizeof unique, "%016llx.%llu", static_cast<unsigned long long>(tag),
                static_cast<unsigned long long>(serial++));
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + unique;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path + ": cannot create: " + std::strerror(errno));
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(tmp), fd));
}

AtomicFileWriter::~AtomicFileWriter() { Abort(); }

void AtomicFileWriter::Abort() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(tmp_.c_str());
  fd_ = -1;
}

Status AtomicFileWriter::Append(std::string_view data) {
  if (fd_ < 0) return FailedPrecondition(path_ + ": written already");
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      Abort();
      return IoError(path_ + ": write failed: " + std::strerror(e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return FailedPrecondition(path_ + ": written already");
  if (::fsync(fd_) != 0) {
    const int e = errno;
    Abort();
    return IoError(path_ + ": cannot flush: " + std::strerror(e));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp_.c_str());
    return IoError(path_ + ": cannot flush: " + std::strerror(e));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp_.c_str());
    return IoError(path_ + ": cannot rename into place: " + std::strerror(e));
  }
  return Status::Ok();
}

}  // namespace edl
