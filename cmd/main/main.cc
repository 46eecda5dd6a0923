// The edl executable: every role of a job in one binary (DESIGN §2).
#include "cmd/cli.h"

int main(int argc, char** argv) { return edl::cmd::Main(argc, argv); }
