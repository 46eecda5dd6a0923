// The command line: parses argv with CLI11 into option structs, runs the
// chosen command, prints a failure as one line on stderr and turns it into
// the process exit code (0 success, 1 failure, 2 usage error).
#pragma once

namespace edl::cmd {
int Main(int argc, char** argv);
}  // namespace edl::cmd
