#include "base/cpus.h"

#include <gtest/gtest.h>

namespace edl {
namespace {

TEST(Cpus, ReadsACgroupV2QuotaAndTreatsMaxAsNoLimit) {
  EXPECT_EQ(CpuQuotaFromCpuMax("max 100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCpuMax("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCpuMax("400000 100000"), 4.0);
  EXPECT_EQ(CpuQuotaFromCpuMax(""), std::nullopt);  // no such file
  EXPECT_EQ(CpuQuotaFromCpuMax("garbage"), std::nullopt);
}

TEST(Cpus, ReadsACgroupV1QuotaAndTreatsMinusOneAsNoLimit) {
  EXPECT_EQ(CpuQuotaFromCfs("-1\n", "100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*CpuQuotaFromCfs("50000\n", "100000\n"), 0.5);
  EXPECT_EQ(CpuQuotaFromCfs("", ""), std::nullopt);
}

TEST(Cpus, AllowsTheAffinityMaskCappedByTheQuotaRoundedUpAndAtLeastOne) {
  EXPECT_EQ(CpusAllowed(16, std::nullopt), 16);
  EXPECT_EQ(CpusAllowed(16, 4.0), 4);
  EXPECT_EQ(CpusAllowed(16, 1.5), 2);
  EXPECT_EQ(CpusAllowed(16, 0.1), 1);
  EXPECT_EQ(CpusAllowed(2, 8.0), 2);
  EXPECT_EQ(CpusAllowed(0, std::nullopt), 1);
}

TEST(Cpus, ThisProcessMayUseAtLeastOneCpu) { EXPECT_GE(UsableCpus(), 1); }

}  // namespace
}  // namespace edl
