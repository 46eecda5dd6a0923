// Where the tests find the source tree and the binaries they run. Kept out
// of the tests' compile flags (only tests/testing/paths.cc sees them) so
// that a checkout at another path compiles every other test file to the
// same object, and ccache hits for it (docs/architecture.md, Testing).
#pragma once

#include <string>

namespace edl::testing {

// The repository's root, e.g. for test data under tests/ and fuzz/.
std::string SourceDir();
// The edl binary under test.
std::string EdlBinary();
// The fake Kubernetes API server's binary; "" where it is not built.
std::string FakeKubeBinary();

}  // namespace edl::testing
