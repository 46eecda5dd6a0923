// TokenBucket: a burst passes at once, then requests are paced.
#include "kube/token_bucket.h"

#include <gtest/gtest.h>

namespace edl::kube {
namespace {

TEST(TokenBucket, LetsABurstThroughThenAsksTheNextToWait) {
  TokenBucket bucket(/*qps=*/0.5, /*burst=*/3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bucket.Delay().count(), 0) << i;
    bucket.Acquire();
  }
  // The fourth token is ~2 s away (0.5 per second); anything positive
  // shows the bucket is empty.
  EXPECT_GT(bucket.Delay().count(), 0);
}

TEST(TokenBucket, ANonPositiveRateMeansNoLimit) {
  TokenBucket bucket(0, 1);
  for (int i = 0; i < 100; ++i) bucket.Acquire();
  EXPECT_EQ(bucket.Delay().count(), 0);
}

}  // namespace
}  // namespace edl::kube
