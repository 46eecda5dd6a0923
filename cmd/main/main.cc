// The edl executable: every role of a job in one binary; docs/distributed.md describes the roles.
#include "cmd/cli.h"
#include "cmd/openmp_spin.h"

int main(int argc, char** argv) {
  edl::cmd::ExecWithShortOpenMpSpins(argv);
  return edl::cmd::Main(argc, argv);
}
