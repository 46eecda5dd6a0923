#include "data/tf_example.h"

#include <google/protobuf/stubs/logging.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace edl::data {
namespace {

TEST(TfExample, ParsesBytesWrittenFromTheWireFormatByHand) {
  // Example{features{feature{key: "a", value{int64_list{value: [7]}}}}},
  // encoded here from the protobuf wire format, not by the library.
  const std::string bytes = {0x0A, 0x0C,         // Example.features
                             0x0A, 0x0A,         // Features.feature (map entry)
                             0x0A, 0x01, 'a',    // key
                             0x12, 0x05,         // value: Feature
                             0x1A, 0x03,         // Feature.int64_list
                             0x0A, 0x01, 0x07};  // packed [7]
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
  for (const std::string& bad :
       std::vector<std::string>{std::string("\x0A\x7F", 2), std::string("\xFF\xFF\xFF", 3),
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

// The scanner's view of `name` as an ExampleFeature, to compare with the
// generated parser's.
ExampleFeature Scanned(const ExampleParser& p, const std::string& name) {
  const FeatureView v = p.Find(name, ExampleParser::Hash(name));
  ExampleFeature f;
  f.kind = v.kind;
  for (size_t i = 0; i < v.size; ++i) {
    if (v.kind == ExampleFeature::Kind::kFloat) f.floats.push_back(v.floats[i]);
    if (v.kind == ExampleFeature::Kind::kInt64) f.ints.push_back(v.ints[i]);
    if (v.kind == ExampleFeature::Kind::kBytes) f.bytes.emplace_back(v.bytes(i));
  }
  return f;
}

void ExpectSameFeatures(const ExampleParser& p, const std::map<std::string, ExampleFeature>& want) {
  for (const auto& [name, f] : want) {
    const ExampleFeature got = Scanned(p, name);
    EXPECT_EQ(got.kind, f.kind) << name;
    EXPECT_EQ(got.floats, f.floats) << name;
    EXPECT_EQ(got.ints, f.ints) << name;
    EXPECT_EQ(got.bytes, f.bytes) << name;
  }
}

TEST(ExampleParser, ReadsWhatTheGeneratedParserReads) {
  std::map<std::string, ExampleFeature> in;
  in["label"].kind = ExampleFeature::Kind::kInt64;
  in["label"].ints = {1, -5, INT64_MAX};
  in["dense"].kind = ExampleFeature::Kind::kFloat;
  in["dense"].floats = {0.5f, -2.25f, 3e8f};
  in["tags"].kind = ExampleFeature::Kind::kBytes;
  in["tags"].bytes = {"x", std::string("\0\xff", 2), ""};
  in["none"].kind = ExampleFeature::Kind::kEmpty;
  for (int i = 0; i < 40; ++i) {  // enough names to collide in the hash table
    auto& f = in["C" + std::to_string(i)];
    f.kind = ExampleFeature::Kind::kBytes;
    f.bytes = {std::to_string(i * 7919)};
  }
  const std::string bytes = SerializeExample(in);
  ExampleParser p;
  ASSERT_TRUE(p.Parse(bytes, "f").ok());
  ExpectSameFeatures(p, *ParseExample(bytes, "f"));
  EXPECT_EQ(Scanned(p, "absent").kind, ExampleFeature::Kind::kEmpty);
  EXPECT_EQ(Scanned(p, "").kind, ExampleFeature::Kind::kEmpty);
}

TEST(ExampleParser, ReadsUnpackedListsRepeatedKeysAndUnknownFieldsAsTheGeneratedParser) {
  // features{feature{key "a" value{float_list{value: 1.0 (unpacked)}}}
  //          feature{key "b" value{int64_list{value: 3 (unpacked), 4}}}
  //          feature{key "a" value{int64_list{packed [9]}}}}, and field 9
  // (a varint) unknown to the schema.
  const std::string bytes = {
      0x0A, 0x2D,                                      // Example.features, 45 bytes
      0x0A, 0x0E, 0x0A, 0x01, 'a',  0x12,       0x09,  // entry "a": Feature
      0x12, 0x07, 0x0D, 0x00, 0x00, (char)0x80, 0x3F,  //   float_list: 1.0f unpacked
      0x48, 0x01,                                      //   field 9: unknown
      0x0A, 0x0D, 0x0A, 0x01, 'b',  0x12,       0x08,  // entry "b": Feature
      0x1A, 0x06, 0x08, 0x03, 0x08, 0x04,              //   int64_list: 3, 4 unpacked
      0x48, 0x02,                                      //   field 9: unknown
      0x0A, 0x0C, 0x0A, 0x01, 'a',  0x12,       0x07,  // entry "a" again: Feature
      0x1A, 0x03, 0x0A, 0x01, 0x09,                    //   int64_list: packed [9]
      0x48, 0x00};                                     //   field 9 in Feature: unknown
  auto want = ParseExample(bytes, "f");
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_EQ(want->at("a").ints, std::vector<int64_t>{9});
  ExampleParser p;
  ASSERT_TRUE(p.Parse(bytes, "f").ok());
  ExpectSameFeatures(p, *want);
}

TEST(ExampleParser, NeverCrashesOnDamagedPayloadsAndAgreesWhenBothRead) {
  std::map<std::string, ExampleFeature> in;
  in["x"].kind = ExampleFeature::Kind::kFloat;
  in["x"].floats = {1, 2, 3};
  in["id"].kind = ExampleFeature::Kind::kInt64;
  in["id"].ints = {-1};
  in["w"].kind = ExampleFeature::Kind::kBytes;
  in["w"].bytes = {"abc", "de"};
  const std::string good = SerializeExample(in);
  ExampleParser p;
  google::protobuf::LogSilencer quiet;  // the library logs keys that are not UTF-8
  std::mt19937 rng(7);
  int both = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bad = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) bad[rng() % bad.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    auto library = ParseExample(bad, "f");
    Status scanned = p.Parse(bad, "f");
    if (!scanned.ok()) {
      ++refused;
      EXPECT_EQ(scanned.message().rfind("f: not a serialized tf.train.Example", 0), 0u);
    }
    if (library.ok() && scanned.ok()) {
      ++both;
      ExpectSameFeatures(p, *library);
    }
  }
  EXPECT_GT(both, 1000);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace edl::data
