// The edl executable: every role of a job in one binary; docs/distributed.md describes the roles.
#include "cmd/cli.h"

int main(int argc, char** argv) { return edl::cmd::Main(argc, argv); }
