#include "data/batcher.h"

#include <algorithm>
#include <numeric>
#include <thread>

#include "data/idx_file.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

// A source of 100 one-pixel images whose pixel and label are both r % 256.
class BatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<uint8_t> pixels(100), labels(100);
    std::iota(pixels.begin(), pixels.end(), 0);
    std::iota(labels.begin(), labels.end(), 0);
    dir_.Write("n-images-idx3-ubyte", EncodeIdx({100, 1, 1}, pixels));
    dir_.Write("n-labels-idx1-ubyte", EncodeIdx({100}, labels));
    InputSpec spec;
    spec.idx.scale = 1.0;
    auto s = OpenSource(dir_.File("n-images-idx3-ubyte"), spec);
    EDL_CHECK(s.ok()) << s.status().ToString();
    source_ = std::move(s).value();
  }

  // All record ids of one epoch, batch by batch, checking that the images
  // and labels agree.
  std::vector<int64_t> Epoch(Batcher& b, std::vector<int64_t>* sizes = nullptr) {
    std::vector<int64_t> seen;
    while (true) {
      auto batch = b.Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || !batch->has_value()) break;
      const Examples& e = **batch;
      if (sizes) sizes->push_back(e.size());
      for (int64_t i = 0; i < e.size(); ++i) {
        EXPECT_EQ(e.inputs[0].f32()[i], static_cast<float>(e.labels.i64()[i]));
        seen.push_back(e.labels.i64()[i]);
      }
    }
    return seen;
  }

  static std::vector<int64_t> Range(int64_t begin, int64_t end) {
    std::vector<int64_t> r(end - begin);
    std::iota(r.begin(), r.end(), begin);
    return r;
  }

  TempDir dir_;
  std::unique_ptr<Source> source_;
};

TEST_F(BatcherTest, VisitsTheRangeInOrderWithoutShuffle) {
  Batcher b(*source_, 10, 35, {.batch_size = 10});
  EXPECT_EQ(b.num_batches(), 3);
  std::vector<int64_t> sizes;
  EXPECT_EQ(Epoch(b, &sizes), Range(10, 35));
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 5}));
}

TEST_F(BatcherTest, DropsTheShortLastBatchWhenAsked) {
  Batcher b(*source_, 10, 35, {.batch_size = 10, .drop_remainder = true});
  EXPECT_EQ(b.num_batches(), 2);
  EXPECT_EQ(Epoch(b), Range(10, 30));
}

TEST_F(BatcherTest, ShuffledEpochsVisitEveryRecordExactlyOnce) {
  Batcher b(*source_, 5, 95, {.batch_size = 7, .shuffle = true, .seed = 3});
  for (int epoch = 0; epoch < 3; ++epoch) {
    b.StartEpoch(epoch);
    std::vector<int64_t> seen = Epoch(b);
    EXPECT_NE(seen, Range(5, 95));
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, Range(5, 95));
  }
}

TEST_F(BatcherTest, TheSameSeedAndEpochGiveTheSameOrder) {
  Batcher a(*source_, 0, 100, {.batch_size = 8, .shuffle = true, .seed = 42});
  Batcher b(*source_, 0, 100, {.batch_size = 8, .shuffle = true, .seed = 42});
  EXPECT_EQ(Epoch(a), Epoch(b));
  a.StartEpoch(1);
  b.StartEpoch(1);
  EXPECT_EQ(a.order(), b.order());
}

TEST_F(BatcherTest, DifferentSeedsOrEpochsGiveDifferentOrders) {
  Batcher a(*source_, 0, 100, {.batch_size = 8, .shuffle = true, .seed = 1});
  Batcher b(*source_, 0, 100, {.batch_size = 8, .shuffle = true, .seed = 2});
  EXPECT_NE(a.order(), b.order());
  std::vector<int64_t> epoch0 = a.order();
  a.StartEpoch(1);
  EXPECT_NE(a.order(), epoch0);
}

TEST_F(BatcherTest, TheShuffleIsPinnedAcrossPlatforms) {
  // Rng is SplitMix64 with edl's own Fisher-Yates, so this order must never
  // change: workers on different machines have to agree on it.
  Batcher b(*source_, 0, 10, {.batch_size = 10, .shuffle = true, .seed = 7});
  EXPECT_EQ(b.order(), (std::vector<int64_t>{8, 5, 2, 0, 1, 3, 6, 7, 4, 9}));
  Batcher shifted(*source_, 20, 30, {.batch_size = 4, .shuffle = true, .seed = 7});
  EXPECT_EQ(shifted.order(), (std::vector<int64_t>{28, 25, 22, 20, 21, 23, 26, 27, 24, 29}));
}

TEST_F(BatcherTest, RandomAccessBatchesMatchSequentialOnes) {
  Batcher b(*source_, 0, 100, {.batch_size = 16, .shuffle = true, .seed = 9});
  auto third = b.Batch(2);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->labels.ToVector()[0], static_cast<float>(b.order()[32]));
}

TEST_F(BatcherTest, ARangeBeyondTheSourceIsAnError) {
  Batcher b(*source_, 90, 110, {.batch_size = 8});
  auto first = b.Next();
  ASSERT_TRUE(first.ok());
  auto second = b.Next();
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("is not within [0, 100)"), std::string::npos);
}

TEST_F(BatcherTest, ThreadsCanReadBatchesOfOneSourceAtOnce) {
  Batcher b(*source_, 0, 100, {.batch_size = 5, .shuffle = true, .seed = 4});
  std::vector<std::vector<float>> labels(b.num_batches());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = t; i < b.num_batches(); i += 4) {
        auto batch = b.Batch(i);
        EDL_CHECK(batch.ok());
        labels[i] = batch->labels.ToVector();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<float> all;
  for (const auto& l : labels) all.insert(all.end(), l.begin(), l.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], b.order()[i]);
}

TEST_F(BatcherTest, AnEmptyRangeHasNoBatches) {
  Batcher b(*source_, 50, 50, {.batch_size = 8});
  EXPECT_EQ(b.num_batches(), 0);
  EXPECT_TRUE(Epoch(b).empty());
}

}  // namespace
}  // namespace edl::data
