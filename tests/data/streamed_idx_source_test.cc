// StreamedIdxSource (data/streamed_idx_source.h): IDX files read on demand
// decode exactly what the loaded IdxSource decodes, plain and gzip, for any
// range, cursor step and gather; malformed files fail to open naming the
// file and what is wrong; a file changed after opening fails the read.
#include "data/streamed_idx_source.h"

#include <filesystem>
#include <random>

#include "data/idx_file.h"
#include "data/idx_source.h"
#include "data/source.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::ExpectSameExamples;
using testing_files::ReadRaw;
using testing_files::TempDir;

const std::string kFashion = EDL_FASHION_MNIST;

OpenOptions Streamed(LabelPolicy labels = LabelPolicy::kRequired) {
  OpenOptions o;
  o.labels = labels;
  o.stream = true;
  return o;
}

std::string Gunzipped(const std::string& gz_path) {
  gzFile f = gzopen(gz_path.c_str(), "rb");
  EDL_CHECK(f != nullptr);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

// Reads `streamed` every way a job does and compares with `loaded`.
void ExpectSameRecords(const Source& streamed, const Source& loaded) {
  ASSERT_EQ(streamed.num_records(), loaded.num_records());
  ASSERT_EQ(streamed.has_labels(), loaded.has_labels());
  ASSERT_EQ(streamed.inputs().size(), 1u);
  EXPECT_EQ(streamed.inputs()[0].shape, loaded.inputs()[0].shape);
  const int64_t n = streamed.num_records();
  auto all = streamed.Read(0, n);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ExpectSameExamples(*all, *loaded.Read(0, n));
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t b = rng() % n, e = std::min<int64_t>(n, b + rng() % 1500);
    auto got = streamed.Read(b, e);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectSameExamples(*got, *loaded.Read(b, e));
  }
  // A task read by a cursor, a minibatch at a time.
  const int64_t b = n / 3, e = std::min<int64_t>(n, b + 1000);
  auto cursor = streamed.OpenCursor(b, e);
  ASSERT_TRUE(cursor.ok()) << cursor.status().message();
  for (int64_t at = b; at < e; at += 64) {
    auto step = (*cursor)->Next(64);
    ASSERT_TRUE(step.ok()) << step.status().message();
    ExpectSameExamples(*step, *loaded.Read(at, std::min(e, at + 64)));
  }
  EXPECT_EQ((*cursor)->Next(64)->size(), 0);
  std::vector<int64_t> some = {n - 1, 17 % n, 0, n / 2, 17 % n};
  ExpectSameExamples(*streamed.Gather(some), *loaded.Gather(some));
}

TEST(StreamedIdxSource, DecodesFashionMnistAsTheWholeFileDecodePlainAndGzip) {
  TempDir dir;  // copies: the index of a gzip file goes beside it
  const std::string images_gz =
      dir.Write("t10k-images-idx3-ubyte.gz", ReadRaw(kFashion + "/t10k-images-idx3-ubyte.gz"));
  dir.Write("t10k-labels-idx1-ubyte.gz", ReadRaw(kFashion + "/t10k-labels-idx1-ubyte.gz"));
  const std::string images = dir.Write("plain-images-idx3-ubyte", Gunzipped(images_gz));
  dir.Write("plain-labels-idx1-ubyte", Gunzipped(dir.File("t10k-labels-idx1-ubyte.gz")));
  auto spec = InputSpecFromJson(R"({"scale": 2, "offset": -1, "shape": [28, 28, 1]})", "t");
  ASSERT_TRUE(spec.ok());
  for (const std::string& path : {images_gz, images}) {
    SCOPED_TRACE(path);
    auto streamed = OpenSource(path, *spec, Streamed());
    auto loaded = OpenSource(path, *spec);
    ASSERT_TRUE(streamed.ok()) << streamed.status().message();
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    ASSERT_NE(dynamic_cast<const StreamedIdxSource*>(streamed->get()), nullptr);
    EXPECT_TRUE((*streamed)->streamed());
    EXPECT_EQ((*streamed)->num_records(), 10000);
    ExpectSameRecords(**streamed, **loaded);
  }
  // The gzip files were indexed once, for their access points; the plain
  // ones need no index.
  EXPECT_TRUE(std::filesystem::exists(dir.File(".t10k-images-idx3-ubyte.gz.edlidx")));
  EXPECT_TRUE(std::filesystem::exists(dir.File(".t10k-labels-idx1-ubyte.gz.edlidx")));
  EXPECT_FALSE(std::filesystem::exists(dir.File(".plain-images-idx3-ubyte.edlidx")));
}

TEST(StreamedIdxSource, ReadsUnlabeledImagesAndAnExplicitLabelsPath) {
  TempDir dir;
  std::vector<uint8_t> pixels(7 * 6), labels = {1, 2, 3, 4, 5, 6, 7};
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(3 * i);
  const std::string images = dir.Write("pics.idx", EncodeIdx({7, 2, 3}, pixels), true);
  auto unlabeled = OpenSource(images, InputSpec(), Streamed(LabelPolicy::kIfPresent));
  ASSERT_TRUE(unlabeled.ok()) << unlabeled.status().message();
  EXPECT_FALSE((*unlabeled)->has_labels());
  ExpectSameRecords(**unlabeled, **OpenSource(images, InputSpec(), LabelPolicy::kIfPresent));
  InputSpec spec;
  spec.idx.labels_path = dir.Write("answers.idx", EncodeIdx({7}, labels));
  auto labeled = OpenSource(images, spec, Streamed());
  ASSERT_TRUE(labeled.ok()) << labeled.status().message();
  ExpectSameRecords(**labeled, **OpenSource(images, spec));
  EXPECT_EQ((*labeled)->Read(6, 7)->labels.i64()[0], 7);
}

// n 2x3 images.
std::string Images(int n = 3) {
  std::vector<uint8_t> p(n * 6);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>(i);
  return EncodeIdx({n, 2, 3}, p);
}

void ExpectStreamedOpenFails(const std::string& images, const std::string& expected,
                             const InputSpec& spec = InputSpec()) {
  auto s = OpenSource(images, spec, Streamed());
  ASSERT_FALSE(s.ok()) << "opened " << images;
  EXPECT_NE(s.status().message().find(expected), std::string::npos) << s.status().message();
}

TEST(StreamedIdxSource, RejectsMalformedFilesNamingThemAndWhatIsWrong) {
  TempDir dir;
  dir.Write("ok-labels-idx1-ubyte", EncodeIdx({3}, {1, 2, 3}));
  for (bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    auto write = [&](const std::string& bytes) {
      return dir.Write(std::string(gzip ? "gz" : "raw") + "-images-idx3-ubyte", bytes, gzip);
    };
    std::string bad = Images();
    bad[0] = 'P';
    std::string p = write(bad);
    ExpectStreamedOpenFails(p, p + ": not an IDX file: bad magic number 0x50000803");
    ExpectStreamedOpenFails(write("ab"), "shorter than the 4-byte magic");
    bad = Images();
    bad[2] = 0x0D;
    ExpectStreamedOpenFails(write(bad), "IDX element type float32 is not supported");
    ExpectStreamedOpenFails(write(Images().substr(0, 10)),
                            "truncated IDX header: rank 3 needs 16 bytes, file holds 10");
    p = write(Images().substr(0, Images().size() - 6));
    ExpectStreamedOpenFails(p, p + ": header says 3 records of 2x3 (18 bytes) but the file "
                                   "holds 2 records (truncated?)");
    ExpectStreamedOpenFails(write(Images().substr(0, Images().size() - 7)),
                            "holds 1 records and 5 bytes (truncated?)");
    ExpectStreamedOpenFails(write(Images() + "xy"), "holds 2 bytes more");
    bad = Images();
    bad[11] = 0;  // dims[1] = 0
    ExpectStreamedOpenFails(write(bad), "IDX dimension 1 is 0");
  }
  // The labels file: its count, rank and a truncated payload.
  const std::string images = dir.Write("a-images-idx3-ubyte", Images());
  dir.Write("a-labels-idx1-ubyte.gz", EncodeIdx({2}, {1, 2}), true);
  ExpectStreamedOpenFails(images,
                          "a-labels-idx1-ubyte.gz: holds 2 labels but a-images-idx3-ubyte "
                          "holds 3 images");
  dir.Write("a-labels-idx1-ubyte.gz", EncodeIdx({3, 1}, {1, 2, 3}), true);
  ExpectStreamedOpenFails(images, "a labels file must have rank 1, got 2 dimensions");
  dir.Write("a-labels-idx1-ubyte.gz", EncodeIdx({3}, {1, 2, 3}).substr(0, 10), true);
  ExpectStreamedOpenFails(images,
                          "a-labels-idx1-ubyte.gz: header says 3 records (3 bytes) but "
                          "the file holds 2 records (truncated?)");
  std::filesystem::remove(dir.File("a-labels-idx1-ubyte.gz"));
  ExpectStreamedOpenFails(images,
                          "a-images-idx3-ubyte: no labels file found (tried "
                          "a-labels-idx1-ubyte and a-labels-idx1-ubyte.gz)");
  InputSpec spec;
  spec.idx.shape = {2, 2};
  spec.idx.labels_path = dir.File("ok-labels-idx1-ubyte");
  ExpectStreamedOpenFails(images,
                          "input.shape [2, 2] has 4 elements but each record of the file "
                          "holds 6 ([2, 3])",
                          spec);
  auto missing = OpenSource("/nonexistent/train-images-idx3-ubyte.gz", InputSpec(), Streamed());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/train-images-idx3-ubyte.gz"),
            std::string::npos);
}

TEST(StreamedIdxSource, RejectsATruncatedOrCorruptGzipStream) {
  TempDir dir;
  dir.Write("ok-labels-idx1-ubyte", EncodeIdx({300}, std::vector<uint8_t>(300, 1)));
  InputSpec spec;
  spec.idx.labels_path = dir.File("ok-labels-idx1-ubyte");
  const std::string gz =
      ReadRaw(dir.Write("whole-images-idx3-ubyte.gz", Images(300), /*gzip=*/true));
  std::string p = dir.Write("b-images-idx3-ubyte.gz", gz.substr(0, gz.size() - 12));
  ExpectStreamedOpenFails(p, p + ": truncated gzip", spec);
  std::string corrupt = gz;
  for (size_t i = 30; i < corrupt.size() - 8; ++i) corrupt[i] = static_cast<char>(0xff);
  p = dir.Write("c-images-idx3-ubyte.gz", corrupt);
  ExpectStreamedOpenFails(p, p + ": corrupt gzip data", spec);
}

TEST(StreamedIdxSource, AFileChangedAfterOpeningFailsTheReadNamingIt) {
  TempDir dir;
  const std::string images = dir.Write("a-images-idx3-ubyte", Images(100));
  dir.Write("a-labels-idx1-ubyte", EncodeIdx({100}, std::vector<uint8_t>(100, 4)));
  auto s = OpenSource(images, InputSpec(), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE((*s)->Read(90, 100).ok());
  std::filesystem::resize_file(images, 16 + 6 * 50);
  auto read = (*s)->Read(90, 100);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(images + ": changed since it was opened"),
            std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace edl::data
