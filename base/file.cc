#include "base/file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"

namespace edl {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return s.str();
}

bool IsPathBelow(const std::string& path) {
  if (!path.empty() && path[0] == '/') return false;
  for (const auto& part : std::filesystem::path(path)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  auto w = AtomicFileWriter::Open(path);
  if (!w.ok()) return w.status();
  EDL_RETURN_IF_ERROR((*w)->Append(contents));
  return (*w)->Commit();
}

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

}  // namespace edl
