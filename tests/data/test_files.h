// Test helpers: a temporary directory removed at scope exit, and writing
// plain or gzip files into it.
#pragma once

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace edl::data::testing_files {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        std::filesystem::temp_directory_path() / "edl-data-XXXXXX";
    EDL_CHECK(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes `bytes` to `name` (gzip-compressed when gzip) and returns the path.
  std::string Write(const std::string& name, const std::string& bytes,
                    bool gzip = false) const {
    std::string p = File(name);
    if (gzip) {
      gzFile f = gzopen(p.c_str(), "wb");
      EDL_CHECK(f != nullptr);
      EDL_CHECK_EQ(
          gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
          static_cast<int>(bytes.size()));
      gzclose(f);
    } else {
      std::ofstream(p, std::ios::binary) << bytes;
    }
    return p;
  }

 private:
  std::string path_;
};

inline std::string ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace edl::data::testing_files
