// Test helpers: a temporary directory removed at scope exit, writing plain
// or gzip files into it, and comparing Examples byte for byte.
#pragma once

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/examples.h"
#include "gtest/gtest.h"

namespace edl::data::testing_files {

class TempDir {
 public:
  TempDir() {
    std::string pattern = std::filesystem::temp_directory_path() / "edl-data-XXXXXX";
    EDL_CHECK(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes `bytes` to `name` (gzip-compressed when gzip) and returns the path.
  std::string Write(const std::string& name, const std::string& bytes, bool gzip = false) const {
    std::string p = File(name);
    if (gzip) {
      gzFile f = gzopen(p.c_str(), "wb");
      EDL_CHECK(f != nullptr);
      EDL_CHECK_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
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

inline void ExpectSameExamples(const Examples& a, const Examples& b) {
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t k = 0; k < a.inputs.size(); ++k) {
    ASSERT_EQ(a.inputs[k].shape(), b.inputs[k].shape());
    ASSERT_EQ(a.inputs[k].dtype(), b.inputs[k].dtype());
    ASSERT_EQ(0, std::memcmp(a.inputs[k].raw_data(), b.inputs[k].raw_data(), a.inputs[k].bytes()))
        << "input " << k;
  }
  ASSERT_EQ(a.labels.defined(), b.labels.defined());
  if (a.labels.defined()) {
    ASSERT_EQ(a.labels.shape(), b.labels.shape());
    ASSERT_EQ(0, std::memcmp(a.labels.raw_data(), b.labels.raw_data(), a.labels.bytes()));
  }
}

}  // namespace edl::data::testing_files
