#include "tests/testing/run_edl.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/testing/paths.h"

extern char** environ;

namespace edl::testing {

RunResult RunEdl(const std::vector<std::string>& args) { return EdlProcess(args).Wait(); }

EdlProcess::EdlProcess(const std::vector<std::string>& args) : EdlProcess(EdlBinary(), args) {}

EdlProcess::EdlProcess(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env)
    : EdlProcess(EdlBinary(), args, env) {}

EdlProcess::EdlProcess(const std::string& binary, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env) {
  char tmpl[] = "/tmp/edl_proc_XXXXXX";
  dir_ = ::mkdtemp(tmpl);
  const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
  // Built before fork: the child of a threaded process may not allocate.
  std::string bin = binary;
  std::vector<std::string> arg_copy = args;
  std::vector<char*> argv = {bin.data()};
  for (auto& a : arg_copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    if (env.count(entry.substr(0, entry.find('='))) == 0) env_strings.push_back(entry);
  }
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::execve(bin.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
}

EdlProcess::~EdlProcess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

RunResult EdlProcess::Wait() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadText(dir_ + "/stdout");
  r.err = ReadText(dir_ + "/stderr");
  return r;
}

std::string EdlProcess::Err() const { return ReadText(dir_ + "/stderr"); }
std::string EdlProcess::Out() const { return ReadText(dir_ + "/stdout"); }

bool EdlProcess::Exited(RunResult* result) {
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  reaped_ = true;
  if (result) {
    result->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result->out = ReadText(dir_ + "/stdout");
    result->err = ReadText(dir_ + "/stderr");
  }
  return true;
}

void EdlProcess::Signal(int signo) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, signo);
}

std::vector<int> FindPids(const std::vector<std::string>& parts) {
  std::vector<int> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmdline = ReadText(e.path().string() + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    bool all = !cmdline.empty();
    for (const auto& p : parts) all = all && cmdline.find(p) != std::string::npos;
    if (all) pids.push_back(std::stoi(name));
  }
  return pids;
}

bool WaitFor(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "edl_test_XXXXXX").string();
  char* p = ::mkdtemp(tmpl.data());
  path_ = p ? p : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace edl::testing
