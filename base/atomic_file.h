// AtomicFileWriter: writes a file piece by piece into a temporary file in
// the same directory and renames it over the path on Commit, so readers see
// the old file or the whole new one, never a half-written one. Destroyed
// without Commit (an error on the way), the temporary file is removed.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace edl {

class AtomicFileWriter {
 public:
  static Result<std::unique_ptr<AtomicFileWriter>> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // IoError naming the path.
  Status Append(std::string_view data);
  // Flushes to disk and renames into place; the writer is spent afterwards.
  Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  void Abort();

  std::string path_;
  std::string tmp_;
  int fd_;
};

}  // namespace edl
