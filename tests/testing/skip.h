// EDL_SKIP_OR_FAIL_IN_CI: how a gtest skips because a tool, package or data
// set is missing. Outside CI the test is skipped, saying what is missing;
// under CI=true (CI runs .ci/run, that is scripts/test.sh) it fails instead:
// scripts/test.sh installs everything the tests need, so a skip there would
// hide a broken setup. Tests that skip for want of a GPU, its driver or the
// CUDA toolkit use plain GTEST_SKIP: CI machines need none of these.
// The shell tests' counterpart is tests/testing/skip.sh.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace edl::testing {

// True when the environment has CI=true.
inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

}  // namespace edl::testing

// Skips (or, under CI=true, fails) the current test with `message`, which
// names what is missing and what provides it. Like GTEST_SKIP and FAIL it
// returns from the calling function, so use it in the test body or SetUp.
#define EDL_SKIP_OR_FAIL_IN_CI(message)                                 \
  do {                                                                  \
    if (::edl::testing::InCi()) {                                       \
      FAIL() << "CI=true, so this test may not be skipped: " << message \
             << " (scripts/test.sh sets up all that the tests need)";   \
    }                                                                   \
    GTEST_SKIP() << message;                                            \
  } while (0)
