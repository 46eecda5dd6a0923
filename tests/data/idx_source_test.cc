#include "data/idx_source.h"

#include <algorithm>
#include <cstdlib>

#include "data/idx_file.h"
#include "data/source.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

const std::string kFashion = EDL_FASHION_MNIST;

// Three 2x3 images with pixel values 10*r + k and labels 7, 8, 9.
std::vector<uint8_t> TinyImages() {
  std::vector<uint8_t> p;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 6; ++k) p.push_back(static_cast<uint8_t>(10 * r + k));
  }
  return p;
}

void WriteTiny(const TempDir& dir, bool gzip, const std::string& suffix) {
  dir.Write("tiny-images-idx3-ubyte" + suffix, EncodeIdx({3, 2, 3}, TinyImages()), gzip);
  dir.Write("tiny-labels-idx1-ubyte" + suffix, EncodeIdx({3}, {7, 8, 9}), gzip);
}

TEST(IdxSource, ReadsFashionMnistTrainingSetWithItsLabels) {
  auto source = OpenSource(kFashion + "/train-images-idx3-ubyte.gz", InputSpec());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const Source& s = **source;
  EXPECT_EQ(s.num_records(), 60000);
  EXPECT_TRUE(s.has_labels());
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].shape, (tensor::Shape{28, 28}));

  auto first = s.Read(0, 2);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->inputs[0].shape(), (tensor::Shape{2, 28, 28}));
  EXPECT_EQ(first->labels.i64()[0], 9);  // an ankle boot
  EXPECT_EQ(first->labels.i64()[1], 0);  // a T-shirt

  auto all = s.Read(0, 60000);
  ASSERT_TRUE(all.ok());
  const float* x = all->inputs[0].f32();
  auto [lo, hi] = std::minmax_element(x, x + all->inputs[0].numel());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_FLOAT_EQ(*hi, 1.0f);
  std::vector<int> counts(10);
  for (int64_t i = 0; i < 60000; ++i) counts.at(all->labels.i64()[i])++;
  for (int c : counts) EXPECT_EQ(c, 6000);  // Fashion-MNIST is balanced
}

TEST(IdxSource, ReadsFashionMnistTestSetWithScaleOffsetAndShape) {
  auto spec = InputSpecFromJson(
      R"({"format": "idx", "scale": 2, "offset": -1, "shape": [28, 28, 1]})", "t");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto source = OpenSource(kFashion + "/t10k-images-idx3-ubyte.gz", *spec);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->num_records(), 10000);
  auto last = (*source)->Read(9990, 10000);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->inputs[0].shape(), (tensor::Shape{10, 28, 28, 1}));
  const float* x = last->inputs[0].f32();
  for (int64_t i = 0; i < last->inputs[0].numel(); ++i) {
    ASSERT_GE(x[i], -1.0f);
    ASSERT_LE(x[i], 509.0f);
    ASSERT_EQ(std::abs(static_cast<int>(x[i])) % 2, 1);  // 2 * byte - 1 is odd
  }
}

TEST(IdxSource, GzipAndRawFilesReadTheSame) {
  TempDir raw_dir, gz_dir;
  WriteTiny(raw_dir, false, "");
  WriteTiny(gz_dir, true, ".gz");
  auto raw = OpenSource(raw_dir.File("tiny-images-idx3-ubyte"), InputSpec());
  auto gz = OpenSource(gz_dir.File("tiny-images-idx3-ubyte.gz"), InputSpec());
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE(gz.ok()) << gz.status().ToString();
  auto a = (*raw)->Read(0, 3);
  auto b = (*gz)->Read(0, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->inputs[0].ToVector(), b->inputs[0].ToVector());
  EXPECT_EQ(a->labels.ToVector(), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(b->labels.ToVector(), (std::vector<float>{7, 8, 9}));
  EXPECT_FLOAT_EQ(a->inputs[0].f32()[6 + 5], 15 / 255.0f);
}

TEST(IdxSource, FindsAGzipLabelsFileNextToRawImages) {
  TempDir dir;
  dir.Write("tiny-images-idx3-ubyte", EncodeIdx({3, 2, 3}, TinyImages()));
  dir.Write("tiny-labels-idx1-ubyte.gz", EncodeIdx({3}, {7, 8, 9}), true);
  auto s = OpenSource(dir.File("tiny-images-idx3-ubyte"), InputSpec());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE((*s)->has_labels());
}

TEST(IdxSource, ReadsAnyRangeAndGathersScatteredRecords) {
  TempDir dir;
  WriteTiny(dir, false, "");
  auto s = OpenSource(dir.File("tiny-images-idx3-ubyte"), InputSpec());
  ASSERT_TRUE(s.ok());
  auto middle = (*s)->Read(1, 2);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(middle->inputs[0].shape(), (tensor::Shape{1, 2, 3}));
  EXPECT_FLOAT_EQ(middle->inputs[0].f32()[0], 10 / 255.0f);
  auto empty = (*s)->Read(3, 3);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0);
  auto gathered = (*s)->Gather({2, 0, 2});
  ASSERT_TRUE(gathered.ok());
  EXPECT_EQ(gathered->labels.ToVector(), (std::vector<float>{9, 7, 9}));

  auto past_end = (*s)->Read(2, 4);
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.status().message().find("[2, 4) is not within [0, 3)"), std::string::npos)
      << past_end.status().message();
  auto bad_index = (*s)->Gather({0, -1});
  ASSERT_FALSE(bad_index.ok());
  EXPECT_NE(bad_index.status().message().find("record -1 is out of range"), std::string::npos);
}

TEST(IdxSource, OpensImagesWithoutLabelsForPrediction) {
  TempDir dir;
  std::string images = dir.Write("x-images-idx3-ubyte", EncodeIdx({3, 2, 3}, TinyImages()));
  auto required = OpenSource(images, InputSpec());
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().code(), StatusCode::kNotFound);
  EXPECT_NE(required.status().message().find("no labels file found (tried "
                                             "x-labels-idx1-ubyte and x-labels-idx1-ubyte.gz)"),
            std::string::npos)
      << required.status().message();

  auto optional = OpenSource(images, InputSpec(), LabelPolicy::kIfPresent);
  ASSERT_TRUE(optional.ok()) << optional.status().ToString();
  EXPECT_FALSE((*optional)->has_labels());
  auto batch = (*optional)->Read(0, 3);
  ASSERT_TRUE(batch.ok());
  EXPECT_FALSE(batch->labels.defined());
  EXPECT_EQ(batch->size(), 3);
}

TEST(IdxSource, UsesAnExplicitLabelsPath) {
  TempDir dir;
  std::string images = dir.Write("pics.idx", EncodeIdx({3, 2, 3}, TinyImages()));
  std::string labels = dir.Write("answers.idx", EncodeIdx({3}, {1, 2, 3}));
  InputSpec spec;
  spec.idx.labels_path = labels;
  auto s = OpenSource(images, spec);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->Read(0, 3)->labels.ToVector(), (std::vector<float>{1, 2, 3}));
}

// Expects opening `images` to fail with a message containing `expected`.
void ExpectOpenFails(const std::string& images, const std::string& expected,
                     const InputSpec& spec = InputSpec()) {
  auto s = OpenSource(images, spec);
  ASSERT_FALSE(s.ok()) << "opened " << images;
  EXPECT_NE(s.status().message().find(expected), std::string::npos) << s.status().message();
}

TEST(IdxSource, RejectsABadMagicNumber) {
  TempDir dir;
  std::string bytes = EncodeIdx({3, 2, 3}, TinyImages());
  bytes[0] = 'P';
  std::string p = dir.Write("a-images-idx3-ubyte", bytes);
  ExpectOpenFails(p, p + ": not an IDX file: bad magic number 0x50000803");
  ExpectOpenFails(dir.Write("b-images-idx3-ubyte", "ab"), "shorter than the 4-byte magic");
}

TEST(IdxSource, RejectsUnsupportedElementTypes) {
  TempDir dir;
  std::string bytes = EncodeIdx({3, 2, 3}, TinyImages());
  bytes[2] = 0x0D;
  ExpectOpenFails(dir.Write("a-images-idx3-ubyte", bytes),
                  "IDX element type float32 is not supported");
}

TEST(IdxSource, RejectsATruncatedHeader) {
  TempDir dir;
  std::string bytes = EncodeIdx({3, 2, 3}, TinyImages()).substr(0, 10);
  ExpectOpenFails(dir.Write("a-images-idx3-ubyte", bytes),
                  "truncated IDX header: rank 3 needs 16 bytes, file holds 10");
}

TEST(IdxSource, RejectsATruncatedPayloadSayingHowManyRecordsItHolds) {
  TempDir dir;
  std::string bytes = EncodeIdx({3, 2, 3}, TinyImages());
  bytes.resize(bytes.size() - 6);
  std::string p = dir.Write("a-images-idx3-ubyte.gz", bytes, true);
  ExpectOpenFails(p, p + ": header says 3 records of 2x3 (18 bytes) but the file "
                         "holds 2 records (truncated?)");
  bytes.resize(bytes.size() - 1);
  ExpectOpenFails(dir.Write("b-images-idx3-ubyte", bytes), "holds 1 records and 5 bytes");
}

TEST(IdxSource, RejectsTrailingBytes) {
  TempDir dir;
  std::string bytes = EncodeIdx({3, 2, 3}, TinyImages()) + "xy";
  ExpectOpenFails(dir.Write("a-images-idx3-ubyte", bytes), "holds 2 bytes more");
}

TEST(IdxSource, RejectsATruncatedGzipStream) {
  TempDir dir;
  std::string p = dir.Write("a-images-idx3-ubyte.gz", EncodeIdx({3, 2, 3}, TinyImages()), true);
  std::string gz = testing_files::ReadRaw(p);
  p = dir.Write("b-images-idx3-ubyte.gz", gz.substr(0, gz.size() - 12));
  ExpectOpenFails(p, p + ": truncated gzip stream");
  std::string corrupt = gz;
  for (size_t i = 12; i < corrupt.size() - 8; ++i) corrupt[i] = static_cast<char>(0xff);
  ExpectOpenFails(dir.Write("c-images-idx3-ubyte.gz", corrupt), "corrupt gzip data");
}

TEST(IdxSource, RejectsMismatchedImageAndLabelCounts) {
  TempDir dir;
  std::string images = dir.Write("a-images-idx3-ubyte", EncodeIdx({3, 2, 3}, TinyImages()));
  dir.Write("a-labels-idx1-ubyte", EncodeIdx({2}, {1, 2}));
  ExpectOpenFails(images,
                  "a-labels-idx1-ubyte: holds 2 labels but a-images-idx3-ubyte "
                  "holds 3 images");
}

TEST(IdxSource, RejectsALabelsFileOfTheWrongRank) {
  TempDir dir;
  std::string images = dir.Write("a-images-idx3-ubyte", EncodeIdx({3, 2, 3}, TinyImages()));
  dir.Write("a-labels-idx1-ubyte", EncodeIdx({3, 1}, {1, 2, 3}));
  ExpectOpenFails(images, "a labels file must have rank 1, got 2 dimensions");
}

TEST(IdxSource, RejectsAShapeThatDoesNotFitTheRecords) {
  TempDir dir;
  WriteTiny(dir, false, "");
  InputSpec spec;
  spec.idx.shape = {2, 2};
  ExpectOpenFails(dir.File("tiny-images-idx3-ubyte"),
                  "input.shape [2, 2] has 4 elements but each record of the file "
                  "holds 6 ([2, 3])",
                  spec);
}

TEST(IdxSource, ReportsAMissingFile) {
  auto s = OpenSource("/nonexistent/train-images-idx3-ubyte.gz", InputSpec());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("/nonexistent/train-images-idx3-ubyte.gz"),
            std::string::npos);
}

}  // namespace
}  // namespace edl::data
