#include "cmd/cli.h"

#include <CLI/CLI.hpp>

namespace edl::cmd {
int Main(int argc, char** argv) {
  CLI::App app{"edl: elastic deep-learning trainer"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
}  // namespace edl::cmd
