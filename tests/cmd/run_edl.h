// Runs the edl binary under test as a child process and captures its exit
// code, stdout and stderr, for tests of the command line as users see it.
#pragma once

#include <string>
#include <vector>

namespace edl::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs EDL_BINARY_PATH with `args` (no shell), waiting for it to exit.
RunResult RunEdl(const std::vector<std::string>& args);

// A fresh temporary directory removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteText(const std::string& path, const std::string& text);
std::string ReadText(const std::string& path);

}  // namespace edl::testing
