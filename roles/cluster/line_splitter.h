// LineSplitter: turns a byte stream (a child's stdout+stderr) into whole
// lines, each handed on with a prefix ("[worker-1] ") and without its '\n'.
// A line longer than kMaxLine bytes is cut into kMaxLine pieces so that a
// child printing without newlines cannot grow memory without bound.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace edl::roles::cluster {

class LineSplitter {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;
  using Emit = std::function<void(const std::string& line)>;

  LineSplitter(std::string prefix, Emit emit)
      : prefix_(std::move(prefix)), emit_(std::move(emit)) {}

  // Emits every line completed by `data`.
  void Append(std::string_view data);
  // Emits the unterminated rest, if any (at end of stream).
  void Flush();

 private:
  std::string prefix_;
  Emit emit_;
  std::string partial_;
};

}  // namespace edl::roles::cluster
