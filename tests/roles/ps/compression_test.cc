// --gradient_compression's conversions, and a push and pull through a PS
// with them: what travels is 16-bit, what is applied and computed float32.
#include "roles/ps/compression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ps_test_util.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_client.h"

namespace edl::roles::ps {
namespace {

using tensor::DType;
using tensor::Tensor;

std::vector<float> RoundTrip(const std::vector<float>& v, Compression c) {
  const Tensor packed = Compress(Tensor::FromVector({static_cast<int64_t>(v.size())}, v), c);
  EXPECT_TRUE(IsCompressed(packed));
  EXPECT_EQ(packed.bytes(), v.size() * 2);
  const Tensor back = Decompress(packed);
  EXPECT_EQ(back.dtype(), DType::kFloat32);
  return back.ToVector();
}

TEST(Compression, ParsesTheFlagsValuesAndNamesTheFlagOtherwise) {
  EXPECT_EQ(*ParseCompression("none", "--gradient_compression"), Compression::kNone);
  EXPECT_EQ(*ParseCompression("bf16", "--gradient_compression"), Compression::kBFloat16);
  EXPECT_EQ(*ParseCompression("fp16", "--gradient_compression"), Compression::kFloat16);
  auto bad = ParseCompression("int8", "--gradient_compression");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--gradient_compression: unknown gradient compression \"int8\" (none, bf16 or fp16)");
}

TEST(Compression, BFloat16KeepsFloat32sRangeAndRoundsToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> out =
      RoundTrip({1.f, -2.5f, 1e30f, 1e-30f, inf, -inf, 0.f}, Compression::kBFloat16);
  EXPECT_EQ(out[0], 1.f);
  EXPECT_EQ(out[1], -2.5f);
  EXPECT_NEAR(out[2], 1e30f, 1e30f / 128);
  EXPECT_NEAR(out[3], 1e-30f, 1e-30f / 128);
  EXPECT_EQ(out[4], inf);
  EXPECT_EQ(out[5], -inf);
  EXPECT_EQ(out[6], 0.f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even one, 1. And
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6.
  out =
      RoundTrip({1.f + std::ldexp(1.f, -8), 1.f + 3 * std::ldexp(1.f, -8)}, Compression::kBFloat16);
  EXPECT_EQ(out[0], 1.f);
  EXPECT_EQ(out[1], 1.f + std::ldexp(1.f, -6));
  EXPECT_TRUE(std::isnan(RoundTrip({std::nanf("")}, Compression::kBFloat16)[0]));
}

TEST(Compression, Float16KeepsElevenBitsAndOverflowsPast65504) {
  std::vector<float> out =
      RoundTrip({1.f + std::ldexp(1.f, -10), 65504.f, 70000.f, 1e-8f, 0.1f}, Compression::kFloat16);
  EXPECT_EQ(out[0], 1.f + std::ldexp(1.f, -10));
  EXPECT_EQ(out[1], 65504.f);
  EXPECT_EQ(out[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[3], 0.f);
  EXPECT_NEAR(out[4], 0.1f, 0.1f / 2048);
}

TEST(Compression, NoneAndNonFloatTensorsAreLeftAsTheyAre) {
  const Tensor x = Tensor::Full({3}, 2.f);
  EXPECT_TRUE(Compress(x, Compression::kNone).SharesStorageWith(x));
  const Tensor ids = Tensor::FromInts({2}, {4, 5});
  EXPECT_TRUE(Compress(ids, Compression::kBFloat16).SharesStorageWith(ids));
  EXPECT_TRUE(Decompress(x).SharesStorageWith(x));
}

TEST(Compression, APsAppliesSixteenBitGradientsInFloat32AndSendsSixteenBitParameters) {
  for (Compression c : {Compression::kBFloat16, Compression::kFloat16}) {
    SCOPED_TRACE(CompressionName(c));
    auto ps = testing::MakePs(testing::Shard(0, 1), testing::kSgd1);
    PsClient client({ps.get()}, c);
    CompiledModel worker = testing::MakeModel(testing::kSgd1);
    auto params = worker.model->parameters();
    ASSERT_TRUE(client.PullDense(params).ok());
    nn::Parameter* kernel = testing::Find(*worker.model, "dense/kernel");
    // What the PS holds, in float32.
    auto exact = ps->PullDense({});
    ASSERT_TRUE(exact.ok());
    Tensor before;
    for (const NamedTensor& t : exact->params) {
      if (t.name == "dense/kernel") before = t.value;
    }
    ASSERT_TRUE(before.defined());
    // The worker got the PS's values rounded to 16 bits.
    const Tensor rounded = Decompress(Compress(before, c));
    for (int64_t i = 0; i < before.numel(); ++i) {
      ASSERT_EQ(kernel->value.f32()[i], rounded.f32()[i]) << i;
    }
    // A gradient of 1/3 arrives rounded and is applied in float32.
    for (nn::Parameter* p : params) p->ZeroGrad();
    kernel->grad = Tensor::Full(kernel->value.shape(), 1.f / 3);
    ASSERT_TRUE(client.PushGradients(params).ok());
    auto after = ps->PullDense({});
    ASSERT_TRUE(after.ok());
    const float sent = Decompress(Compress(Tensor::Full({1}, 1.f / 3), c)).f32()[0];
    EXPECT_NE(sent, 1.f / 3);
    for (const NamedTensor& t : after->params) {
      if (t.name != "dense/kernel") continue;
      for (int64_t i = 0; i < t.value.numel(); ++i) {
        ASSERT_EQ(t.value.f32()[i], before.f32()[i] - sent) << i;
      }
    }
  }
}

}  // namespace
}  // namespace edl::roles::ps
