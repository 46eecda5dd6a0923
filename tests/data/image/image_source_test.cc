// Image files as records: Fashion-MNIST written as PNG/JPEG class folders
// by PIL, read back against the IDX files they came from.
#include "data/image_source.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include "data/examples_source.h"
#include "data/idx_source.h"
#include "gtest/gtest.h"
#include "tests/data/image/image_test_files.h"

namespace edl::data {
namespace {

namespace fs = std::filesystem;
using testing_files::TempDir;

const std::string kFashion = EDL_FASHION_MNIST;
const std::string kImages = kFashion + "/t10k-images-idx3-ubyte.gz";
const std::string kLabels = kFashion + "/t10k-labels-idx1-ubyte.gz";

// The first `count` test records as DIR/<label>/<index>.<ext>, by PIL.
void WriteFolders(const std::string& dir, int count, const std::string& ext) {
  const std::string cmd = "/usr/bin/python3 " + testing_images::WriteImagesScript() + " folders " +
                          dir + " " + kImages + " " + kLabels + " " + std::to_string(count) + " " +
                          ext;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

ImageSpec Gray28() {
  ImageSpec spec;
  spec.height = 28;
  spec.width = 28;
  spec.channels = 1;
  return spec;
}

OpenOptions Options(LabelPolicy labels = LabelPolicy::kRequired) {
  OpenOptions o;
  o.labels = labels;
  return o;
}

// The IDX record a file name (<index>.png) stands for.
int64_t RecordOf(const std::string& file) { return std::stoll(fs::path(file).stem().string()); }

TEST(ImageSource, PngClassFoldersReadAsTheIdxRecordsTheyWereWrittenFrom) {
  TempDir dir;
  WriteFolders(dir.File("png"), 300, "png");
  auto source = ImageSource::Open(dir.File("png"), Gray28(), Options());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_EQ((*source)->num_records(), 300);
  EXPECT_EQ((*source)->list().class_names,
            std::vector<std::string>({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  ASSERT_TRUE(idx.ok());
  auto all = (*source)->Read(0, 300);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->inputs[0].shape(), tensor::Shape({300, 28, 28, 1}));
  std::vector<int64_t> records;
  for (int64_t i = 0; i < 300; ++i) records.push_back(RecordOf((*source)->list().files[i]));
  auto want = (*idx)->Gather(records);
  ASSERT_TRUE(want.ok());
  // Same pixels (x / 255) and labels (the folder is the label) as IDX.
  ASSERT_EQ(0, std::memcmp(all->inputs[0].f32(), want->inputs[0].f32(), 300 * 784 * sizeof(float)));
  for (int64_t i = 0; i < 300; ++i) {
    ASSERT_EQ(all->labels.i64()[i], want->labels.i64()[i]) << (*source)->list().files[i];
  }
}

TEST(ImageSource, RecordsMixTheClassesSoThatEveryTaskHoldsMany) {
  TempDir dir;
  WriteFolders(dir.File("png"), 400, "png");
  auto source = ImageSource::Open(dir.File("png"), Gray28(), Options());
  ASSERT_TRUE(source.ok());
  for (int64_t begin = 0; begin < 400; begin += 50) {
    std::set<int64_t> classes((*source)->list().labels.begin() + begin,
                              (*source)->list().labels.begin() + begin + 50);
    EXPECT_GE(classes.size(), 7u) << "records " << begin << "+50";
  }
}

TEST(ImageSource, JpegFoldersReadCloseToThePixelsTheyEncode) {
  TempDir dir;
  WriteFolders(dir.File("jpg"), 100, "jpg");
  auto source = ImageSource::Open(dir.File("jpg"), Gray28(), Options());
  ASSERT_TRUE(source.ok());
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  auto all = (*source)->Read(0, 100);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  double diff = 0;
  for (int64_t i = 0; i < 100; ++i) {
    auto want = (*idx)->Read(RecordOf((*source)->list().files[i]),
                             RecordOf((*source)->list().files[i]) + 1);
    for (int p = 0; p < 784; ++p)
      diff += std::abs(all->inputs[0].f32()[i * 784 + p] - want->inputs[0].f32()[p]);
  }
  EXPECT_LT(diff / (100 * 784), 0.02);  // quality 95: about 1 level in 255 on average
}

TEST(ImageSource, ResizesAndConvertsToTheSpecsShapeAndChannels) {
  TempDir dir;
  WriteFolders(dir.File("png"), 20, "png");
  ImageSpec spec = Gray28();
  spec.height = 14;
  spec.width = 14;
  spec.channels = 3;
  spec.interpolation = Interpolation::kArea;
  auto source = ImageSource::Open(dir.File("png"), spec, Options());
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source.value()->inputs()[0].shape, tensor::Shape({14, 14, 3}));
  auto two = (*source)->Read(0, 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->inputs[0].shape(), tensor::Shape({2, 14, 14, 3}));
  // Gray repeated into R, G and B; each output pixel the mean of a 2 x 2 block.
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  auto want =
      (*idx)->Read(RecordOf((*source)->list().files[0]), RecordOf((*source)->list().files[0]) + 1);
  const float* src = want->inputs[0].f32();
  const float* got = two->inputs[0].f32();
  for (int y = 0; y < 14; ++y) {
    for (int x = 0; x < 14; ++x) {
      const float mean = (src[2 * y * 28 + 2 * x] + src[2 * y * 28 + 2 * x + 1] +
                          src[(2 * y + 1) * 28 + 2 * x] + src[(2 * y + 1) * 28 + 2 * x + 1]) /
                         4;
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(got[(y * 14 + x) * 3 + c], mean, 1e-6);
    }
  }
}

TEST(ImageSource, ClassNamesFromTheSpecFixTheIds) {
  TempDir dir;
  WriteFolders(dir.File("png"), 50, "png");
  ImageSpec spec = Gray28();
  spec.class_names = {"9", "8", "7", "6", "5", "4", "3", "2", "1", "0", "unused"};
  auto source = ImageSource::Open(dir.File("png"), spec, Options());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const auto& list = (*source)->list();
  for (size_t i = 0; i < list.files.size(); ++i) {
    EXPECT_EQ(list.labels[i], 9 - std::stoll(fs::path(list.files[i]).parent_path().string()));
  }
  spec.class_names = {"0", "1"};
  auto refused = ImageSource::Open(dir.File("png"), spec, Options());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("class \"2\" is not one of the model's class_names "
                                            "(0, 1)"),
            std::string::npos)
      << refused.status().ToString();
}

TEST(ImageList, IsCachedInTheFolderAndListedAgainWhenAFolderChanges) {
  TempDir dir;
  WriteFolders(dir.File("png"), 40, "png");
  auto first = ListImages(dir.File("png"), {}, LabelPolicy::kRequired, "");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(fs::exists(dir.File("png/.edl-images.lst")));
  auto again = ListImages(dir.File("png"), {}, LabelPolicy::kRequired, "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->files, first->files);
  EXPECT_EQ(again->labels, first->labels);
  // A file added below a class folder (in a subfolder) changes that folder.
  fs::create_directories(dir.File("png/3/more"));
  fs::copy_file(dir.File("png/" + first->files[0]), dir.File("png/3/more/extra.png"));
  auto grown = ListImages(dir.File("png"), {}, LabelPolicy::kRequired, "");
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(grown->files.size(), 41u);
  EXPECT_NE(std::find(grown->files.begin(), grown->files.end(), "3/more/extra.png"),
            grown->files.end());
  // A damaged cache is not trusted: the folder is listed again.
  std::ofstream(dir.File("png/.edl-images.lst")) << "edl-images 1\nfolders 2\n0\n";
  auto relisted = ListImages(dir.File("png"), {}, LabelPolicy::kRequired, "");
  ASSERT_TRUE(relisted.ok());
  EXPECT_EQ(relisted->files, grown->files);
}

std::string OpenError(const std::string& path, LabelPolicy labels = LabelPolicy::kRequired) {
  auto s = ImageSource::Open(path, Gray28(), Options(labels));
  EXPECT_FALSE(s.ok()) << path;
  return s.ok() ? "" : s.status().message();
}

TEST(ImageList, BadFoldersAndListingsAreRefusedNamingTheFolderOrLine) {
  TempDir dir;
  WriteFolders(dir.File("png"), 30, "png");
  fs::create_directories(dir.File("png/empty"));
  EXPECT_EQ(OpenError(dir.File("png")),
            dir.File("png/empty") +
                ": the class folder holds no images (*.jpg, *.jpeg, *.png); "
                "remove it or add its images");
  fs::create_directories(dir.File("flat"));
  fs::copy_file(testing_images::CaseFile("rgb.png"), dir.File("flat/a.png"));
  EXPECT_NE(OpenError(dir.File("flat")).find("holds images but no class folders"),
            std::string::npos);
  auto unlabeled = ImageSource::Open(dir.File("flat"), Gray28(), Options(LabelPolicy::kIfPresent));
  ASSERT_TRUE(unlabeled.ok());
  EXPECT_FALSE((*unlabeled)->has_labels());
  fs::create_directories(dir.File("nothing"));
  EXPECT_NE(OpenError(dir.File("nothing")).find("holds no images"), std::string::npos);
  EXPECT_NE(OpenError(dir.File("missing")).find("no such folder"), std::string::npos);

  dir.Write("no_path.csv", "file,label\na.png,x\n");
  EXPECT_EQ(
      OpenError(dir.File("no_path.csv")),
      dir.File("no_path.csv") + ":1: the header names no \"path\" column (expected path,label)");
  dir.Write("short.csv", "path,label\nflat/a.png,x\nflat/a.png\n");
  EXPECT_NE(OpenError(dir.File("short.csv")).find("short.csv:3: has 1 fields but the header has 2"),
            std::string::npos)
      << OpenError(dir.File("short.csv"));
  dir.Write("empty.csv", "path,label\n");
  EXPECT_NE(OpenError(dir.File("empty.csv")).find("lists no images"), std::string::npos);
}

TEST(ImageList, ACsvListingNamesFilesRelativeToItselfWithClassNameLabels) {
  TempDir dir;
  WriteFolders(dir.File("png"), 10, "png");
  auto folder = ListImages(dir.File("png"), {}, LabelPolicy::kRequired, "");
  ASSERT_TRUE(folder.ok());
  std::string csv = "path,label\n";
  for (size_t i = 0; i < folder->files.size(); ++i) {
    csv += "png/" + folder->files[i] + ",class" + folder->class_names[folder->labels[i]] + "\n";
  }
  dir.Write("list.csv", csv);
  auto listed = ImageSource::Open(dir.File("list.csv"), Gray28(), Options());
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  auto from_folder = ImageSource::Open(dir.File("png"), Gray28(), Options());
  auto a = (*listed)->Read(0, 10);
  auto b = (*from_folder)->Read(0, 10);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // Class ids by sorted label: "class0" < "class1" < ... as the folders.
  testing_files::ExpectSameExamples(*a, *b);
}

TEST(ImageSource, CorruptAndVanishedFilesFailTheReadNamingTheFileOrAreSkippedAndCounted) {
  TempDir dir;
  WriteFolders(dir.File("png"), 30, "png");
  fs::copy_file(testing_images::CaseFile("truncated.jpg"), dir.File("png/4/truncated.jpg"));
  fs::copy_file(testing_images::CaseFile("notimage.png"), dir.File("png/4/notimage.png"));
  // A file no one can read, whoever runs the test (root reads past modes):
  // a link to itself.
  fs::create_symlink("loop.png", dir.File("png/4/loop.png"));
  auto strict = ImageSource::Open(dir.File("png"), Gray28(), Options());
  ASSERT_TRUE(strict.ok());
  ASSERT_EQ((*strict)->num_records(), 33);
  auto failed = (*strict)->Read(0, 33);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find(dir.File("png/4/")), std::string::npos)
      << failed.status().ToString();

  OpenOptions skipping = Options();
  skipping.skip_corrupt_records = true;
  auto lenient = ImageSource::Open(dir.File("png"), Gray28(), skipping);
  ASSERT_TRUE(lenient.ok());
  // A file removed after the listing (mid-job) is skipped alike.
  const std::string gone = (*lenient)->FilePath(5);
  ASSERT_EQ(gone.find("truncated"), std::string::npos);
  fs::remove(gone);
  auto read = (*lenient)->Read(0, 33);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size(), 29);
  EXPECT_EQ(read->labels.dim(0), 29);
  EXPECT_EQ((*lenient)->corrupt_records_skipped(), 4);
  // The records of the rows are known, without the ones left out.
  ASSERT_EQ(read->records.size(), 29u);
  EXPECT_EQ(std::count(read->records.begin(), read->records.end(), 5), 0);
  int64_t loop = -1;
  for (int64_t r = 0; r < 33; ++r) {
    if ((*lenient)->FilePath(r).ends_with("loop.png")) loop = r;
  }
  ASSERT_GE(loop, 0);
  auto unreadable = (*strict)->Read(loop, loop + 1);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.status().message().find(dir.File("png/4/loop.png")), std::string::npos)
      << unreadable.status().ToString();
  auto strict_again = (*strict)->Read(5, 6);
  ASSERT_FALSE(strict_again.ok());
  EXPECT_NE(strict_again.status().message().find(gone), std::string::npos)
      << strict_again.status().ToString();
}

TEST(ImageSource, ATaskReadIntoMemoryKeepsEachRowsRecordIndexPastSkippedFiles) {
  TempDir dir;
  WriteFolders(dir.File("png"), 20, "png");
  OpenOptions skipping = Options();
  skipping.skip_corrupt_records = true;
  auto source = ImageSource::Open(dir.File("png"), Gray28(), skipping);
  ASSERT_TRUE(source.ok());
  std::filesystem::remove((*source)->FilePath(7));
  auto task = ReadIntoMemory(**source, 5, 12);  // as a worker holds a task
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  ASSERT_EQ((*task)->num_records(), 6);
  auto rows = (*task)->Gather({5, 0, 2});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->records, std::vector<int64_t>({11, 5, 8}));  // 7 left out
  // A source that says nothing of its rows: the range, in order.
  auto idx = IdxSource::Open(kImages, IdxSpec(), LabelPolicy::kRequired);
  auto held = ReadIntoMemory(**idx, 100, 110);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)->Gather({3})->records, std::vector<int64_t>({103}));
}

TEST(OpenSource, AnImageSpecOpensAFolderAsImages) {
  TempDir dir;
  WriteFolders(dir.File("png"), 12, "png");
  InputSpec spec;
  spec.format = DataFormat::kImages;
  spec.image = Gray28();
  auto source = OpenSource(dir.File("png"), spec);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->num_records(), 12);
  EXPECT_TRUE((*source)->streamed());
}

}  // namespace
}  // namespace edl::data
