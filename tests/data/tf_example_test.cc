#include "data/tf_example.h"

#include <gtest/gtest.h>

namespace edl::data {
namespace {

TEST(TfExample, ParsesBytesWrittenFromTheWireFormatByHand) {
  // Example{features{feature{key: "a", value{int64_list{value: [7]}}}}},
  // encoded here from the protobuf wire format, not by the library.
  const std::string bytes = {0x0A, 0x0C,                  // Example.features
                             0x0A, 0x0A,                  // Features.feature (map entry)
                             0x0A, 0x01, 'a',             // key
                             0x12, 0x05,                  // value: Feature
                             0x1A, 0x03,                  // Feature.int64_list
                             0x0A, 0x01, 0x07};           // packed [7]
  auto e = ParseExample(bytes, "f: record 0");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->size(), 1u);
  const ExampleFeature& a = e->at("a");
  EXPECT_EQ(a.kind, ExampleFeature::Kind::kInt64);
  EXPECT_EQ(a.ints, std::vector<int64_t>{7});
}

TEST(TfExample, EveryKindSurvivesARoundTrip) {
  std::map<std::string, ExampleFeature> in;
  in["label"].kind = ExampleFeature::Kind::kInt64;
  in["label"].ints = {1};
  in["dense"].kind = ExampleFeature::Kind::kFloat;
  in["dense"].floats = {0.5f, -2.25f, 3e8f};
  in["tags"].kind = ExampleFeature::Kind::kBytes;
  in["tags"].bytes = {"x", std::string("\0\xff", 2), ""};
  in["none"].kind = ExampleFeature::Kind::kEmpty;
  auto out = ParseExample(SerializeExample(in), "f");
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ(out->at("label").ints, in["label"].ints);
  EXPECT_EQ(out->at("dense").floats, in["dense"].floats);
  EXPECT_EQ(out->at("tags").bytes, in["tags"].bytes);
  EXPECT_EQ(out->at("none").kind, ExampleFeature::Kind::kEmpty);
  EXPECT_STREQ(ExampleKindName(out->at("dense").kind), "float_list");
}

TEST(TfExample, APayloadThatIsNotAnExampleIsNamed) {
  for (const std::string& bad : std::vector<std::string>{std::string("\x0A\x7F", 2), std::string("\xFF\xFF\xFF", 3),
                                std::string("id,name,label")}) {
    auto e = ParseExample(bad, "data.tfrecord: record 3 at byte 120");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().message().rfind("data.tfrecord: record 3 at byte 120: not a serialized "
                                         "tf.train.Example",
                                         0),
              0u)
        << e.status().message();
  }
}

}  // namespace
}  // namespace edl::data
