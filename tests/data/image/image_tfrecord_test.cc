// Encoded images inside TFRecords (the TF-Slim/ImageNet layout), written by
// Python (PIL's PNG/JPEG bytes, Examples and framing encoded by
// tests/data/write_tfrecords.py), read back against the IDX records.
#include <cstdlib>

#include "data/idx_source.h"
#include "data/source.h"
#include "data/tf_example.h"
#include "data/tfrecord.h"
#include "gtest/gtest.h"
#include "tests/data/image/image_test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

const std::string kFashion = EDL_FASHION_MNIST;
const std::string kImages = kFashion + "/t10k-images-idx3-ubyte.gz";
const std::string kLabels = kFashion + "/t10k-labels-idx1-ubyte.gz";

std::string WriteRecords(const TempDir& dir, int count, const std::string& ext) {
  const std::string path = dir.File("images-" + ext + ".tfrecord");
  const std::string cmd = "/usr/bin/python3 " + testing_images::WriteImagesScript() + " tfrecord " +
                          path + " " + kImages + " " + kLabels + " " + std::to_string(count) + " " +
                          ext;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return path;
}

InputSpec ImageRecords() {
  auto spec = InputSpecFromJson(
      R"({"format": "tfrecord", "label": "image/class/label",
          "image": {"size": [28, 28], "channels": 1}})",
      "test");
  EDL_CHECK(spec.ok()) << spec.status().ToString();
  return *spec;
}

TEST(ImageTfRecords, PngBytesInExamplesReadAsTheIdxRecordsStreamedOrLoaded) {
  TempDir dir;
  const std::string path = WriteRecords(dir, 200, "png");
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  ASSERT_TRUE(idx.ok());
  auto want = (*idx)->Read(0, 200);
  ASSERT_TRUE(want.ok());
  for (bool stream : {true, false}) {
    OpenOptions o;
    o.stream = stream;
    auto source = OpenSource(path, ImageRecords(), o);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ((*source)->inputs()[0].shape, tensor::Shape({28, 28, 1}));
    auto got = (*source)->Read(0, 200);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->inputs.size(), 1u);
    ASSERT_EQ(got->inputs[0].shape(), tensor::Shape({200, 28, 28, 1}));
    EXPECT_EQ(0, std::memcmp(got->inputs[0].f32(), want->inputs[0].f32(), 200 * 784 * 4))
        << (stream ? "streamed" : "loaded");
    EXPECT_EQ(0, std::memcmp(got->labels.i64(), want->labels.i64(), 200 * 8));
  }
}

TEST(ImageTfRecords, JpegBytesDecodeToo) {
  TempDir dir;
  const std::string path = WriteRecords(dir, 50, "jpg");
  OpenOptions o;
  o.stream = true;
  auto source = OpenSource(path, ImageRecords(), o);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto got = (*source)->Read(0, 50);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  auto want = (*idx)->Read(0, 50);
  double diff = 0;
  for (int i = 0; i < 50 * 784; ++i)
    diff += std::abs(got->inputs[0].f32()[i] - want->inputs[0].f32()[i]);
  EXPECT_LT(diff / (50 * 784), 0.02);
}

// One Example holding `image` as its encoded bytes, label 3.
std::string Record(const std::string& image) {
  std::map<std::string, ExampleFeature> f;
  f["image/encoded"].kind = ExampleFeature::Kind::kBytes;
  f["image/encoded"].bytes = {image};
  f["image/class/label"].kind = ExampleFeature::Kind::kInt64;
  f["image/class/label"].ints = {3};
  return TfRecordFrame(SerializeExample(f));
}

TEST(ImageTfRecords, ACorruptImageFailsNamingTheRecordOrIsSkippedAndCounted) {
  TempDir dir;
  const std::string good = testing_images::CaseBytes("gray.png");
  dir.Write("mixed.tfrecord",
            Record(good) + Record(testing_images::CaseBytes("truncated.jpg")) + Record(good));
  OpenOptions o;
  o.stream = true;
  auto source = OpenSource(dir.File("mixed.tfrecord"), ImageRecords(), o);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto failed = (*source)->Read(0, 3);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("record 1"), std::string::npos)
      << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("the image feature 'image/encoded': is a corrupt or "
                                           "truncated JPEG"),
            std::string::npos)
      << failed.status().ToString();
  o.skip_corrupt_records = true;
  auto lenient = OpenSource(dir.File("mixed.tfrecord"), ImageRecords(), o);
  ASSERT_TRUE(lenient.ok());
  auto read = (*lenient)->Read(0, 3);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size(), 2);
  EXPECT_EQ((*lenient)->corrupt_records_skipped(), 1);
}

TEST(ImageTfRecords, AMissingImageFeatureIsNamed) {
  TempDir dir;
  const std::string path = WriteRecords(dir, 3, "png");
  InputSpec spec = ImageRecords();
  spec.image.feature = "image/jpeg";
  auto source = OpenSource(path, spec);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("the image feature 'image/jpeg' is not in the first "
                                           "record"),
            std::string::npos)
      << source.status().ToString();
}

}  // namespace
}  // namespace edl::data
