// Images for the image tests, written by PIL (tests/data/image/
// write_images.py), never by edl: once per test binary, into a temporary
// folder kept for the binary's life.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/check.h"
#include "tests/data/test_files.h"
#include "tests/testing/paths.h"

namespace edl::data::testing_images {

inline std::string WriteImagesScript() {
  return edl::testing::SourceDir() + "/tests/data/image/write_images.py";
}

// The folder of write_images.py's "cases".
inline const std::string& Cases() {
  static testing_files::TempDir* dir = [] {
    auto* d = new testing_files::TempDir();
    const std::string cmd = "/usr/bin/python3 " + WriteImagesScript() + " cases " + d->File("");
    EDL_CHECK_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d;
  }();
  static const std::string path = dir->File("");
  return path;
}

inline std::string CaseFile(const std::string& name) { return Cases() + name; }
inline std::string CaseBytes(const std::string& name) {
  return testing_files::ReadRaw(CaseFile(name));
}

// What PIL decoded `name` to in `mode` ("L" or "RGB"), and its size.
struct Oracle {
  int64_t width = 0, height = 0;
  std::string pixels;
};
inline Oracle PilPixels(const std::string& name, const std::string& mode) {
  std::ifstream manifest(CaseFile("manifest.txt"));
  std::string n, m;
  Oracle o;
  while (manifest >> n >> m >> o.width >> o.height) {
    if (n == name && m == mode) {
      o.pixels = testing_files::ReadRaw(CaseFile(name + "." + mode + ".raw"));
      return o;
    }
  }
  EDL_CHECK(false) << "no oracle for " << name << " " << mode;
  return o;
}

}  // namespace edl::data::testing_images
