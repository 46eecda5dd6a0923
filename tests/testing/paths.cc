#include "tests/testing/paths.h"

namespace edl::testing {

std::string SourceDir() { return EDL_SOURCE_DIR; }
std::string EdlBinary() { return EDL_BINARY_PATH; }
std::string FakeKubeBinary() { return EDL_FAKE_KUBE_PATH; }

}  // namespace edl::testing
