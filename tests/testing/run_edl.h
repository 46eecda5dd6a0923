// Runs the edl binary under test as a child process and captures its exit
// code, stdout and stderr, for tests of the command line as users see it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace edl::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the edl binary under test (EdlBinary(), tests/testing/paths.h) with `args` (no shell),
// waiting for it to exit.
RunResult RunEdl(const std::vector<std::string>& args);

// An edl process running in the background; the destructor kills it (and
// its process group) if it is still running.
class EdlProcess {
 public:
  explicit EdlProcess(const std::vector<std::string>& args);
  // With `env` added to (or replacing in) the inherited environment.
  EdlProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);
  // Another binary (the fake API server), same handling.
  EdlProcess(const std::string& binary, const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env = {});
  ~EdlProcess();
  int pid() const { return pid_; }
  // Waits for the exit and returns code and output.
  RunResult Wait();
  // Output so far.
  std::string Err() const;
  std::string Out() const;
  // Whether it has exited (reaping it; `result` gets code and output).
  bool Exited(RunResult* result);
  // Sends `signo` to the process (not its group).
  void Signal(int signo);

 private:
  int pid_ = -1;
  bool reaped_ = false;
  std::string dir_;
};

// Pids of processes whose command line contains every one of `parts`.
std::vector<int> FindPids(const std::vector<std::string>& parts);

// Polls `condition` every 100 ms until it is true or `seconds` pass.
bool WaitFor(const std::function<bool()>& condition, double seconds);

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
