#include "data/file_bytes.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace edl::data {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Result<std::string> ReadPlain(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": cannot open: " + std::strerror(errno));
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) out.append(buf, n);
  if (std::ferror(f.get())) {
    return IoError(path + ": read failed: " + std::strerror(errno));
  }
  return out;
}

// Inflates a gzip stream (possibly several concatenated members).
Result<std::string> Gunzip(const std::string& path, const std::string& in) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    return Internal(path + ": inflateInit2 failed");
  }
  std::string out;
  out.reserve(in.size() * 4);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char buf[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return IoError(path + ": truncated gzip stream (after " + std::to_string(out.size()) +
                     " decompressed bytes)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
      inflateEnd(&zs);
      return IoError(path + ": corrupt gzip data: " + msg);
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

Result<std::string> ReadFileBytes(const std::string& path) {
  Result<std::string> raw = ReadPlain(path);
  if (!raw.ok()) return raw.status();
  if (raw->rfind("\x1f\x8b", 0) == 0) return Gunzip(path, *raw);
  return raw;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace edl::data
