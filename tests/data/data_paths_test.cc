// Data sets of many files: which files a data flag names, and reading them
// as one source.
#include "data/data_paths.h"

#include <gtest/gtest.h>

#include "data/concat_source.h"
#include "data/source.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

std::string Csv(int from, int to) {
  std::string s = "x,y,label\n";
  for (int i = from; i < to; ++i) {
    s += std::to_string(i) + "," + std::to_string(i * 2) + "," + std::to_string(i % 3) + "\n";
  }
  return s;
}

std::vector<std::string> Resolve(const std::string& value) {
  auto r = ResolveDataPaths(value);
  EDL_CHECK(r.ok()) << r.status().message();
  return *r;
}

std::string Error(const std::string& value) {
  auto r = ResolveDataPaths(value);
  return r.ok() ? "(no error)" : r.status().message();
}

TEST(DataPaths, AFileADirectoryAGlobAndAListInTheOrderGiven) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("d"));
  dir.Write("d/part-2.csv", Csv(0, 1));
  dir.Write("d/part-10.csv", Csv(0, 1));
  dir.Write("d/part-1.csv.gz", Csv(0, 1), true);
  dir.Write("d/.part-1.csv.edlidx", "index");
  dir.Write("d/_SUCCESS", "");
  dir.Write("one.csv", Csv(0, 1));
  EXPECT_EQ(Resolve(dir.File("one.csv")), std::vector<std::string>{dir.File("one.csv")});
  // A directory: its data files in name order, hidden files and markers left out.
  EXPECT_EQ(Resolve(dir.File("d")),
            (std::vector<std::string>{dir.File("d/part-1.csv.gz"), dir.File("d/part-10.csv"),
                                      dir.File("d/part-2.csv")}));
  EXPECT_EQ(Resolve(dir.File("d/part-?.csv")),
            (std::vector<std::string>{dir.File("d/part-2.csv")}));
  EXPECT_EQ(Resolve(dir.File("one.csv") + "," + dir.File("d/part-1*")),
            (std::vector<std::string>{dir.File("one.csv"), dir.File("d/part-1.csv.gz"),
                                      dir.File("d/part-10.csv")}));
}

TEST(DataPaths, NamesWhatIsWrong) {
  TempDir dir;
  dir.Write("a.csv", Csv(0, 1));
  EXPECT_EQ(Error(dir.File("*.tfrecord")),
            dir.File("*.tfrecord") + ": the pattern matches no data file");
  EXPECT_EQ(Error(dir.File("nope.csv")), dir.File("nope.csv") + ": no such file or directory");
  EXPECT_NE(Error(dir.File("a.csv") + ",," + dir.File("a.csv")).find("an empty path in the list"),
            std::string::npos);
  EXPECT_NE(Error(dir.File("a.csv") + "," + dir.File("*.csv")).find("a.csv twice"),
            std::string::npos);
  std::filesystem::create_directories(dir.File("empty"));
  EXPECT_EQ(Error(dir.File("empty")), dir.File("empty") + ": the directory holds no data files");
  std::filesystem::create_directories(dir.File("mixed"));
  dir.Write("mixed/a.csv", Csv(0, 1));
  dir.Write("mixed/b.tfrecord", "x");
  EXPECT_NE(Error(dir.File("mixed")).find("the directory mixes data formats (csv, tfrecord)"),
            std::string::npos)
      << Error(dir.File("mixed"));
}

TEST(DataPaths, SeveralFilesReadAsTheOneFileTheyWereCutFrom) {
  TempDir dir;
  dir.Write("all.csv", Csv(0, 100));
  std::filesystem::create_directories(dir.File("parts"));
  dir.Write("parts/p0.csv", Csv(0, 30));
  dir.Write("parts/p1.csv.gz", Csv(30, 31), true);
  dir.Write("parts/p2.csv", Csv(31, 100));
  auto whole = OpenSource(dir.File("all.csv"), InputSpec());
  auto parts = OpenSource(dir.File("parts"), InputSpec());
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  EXPECT_EQ((*parts)->num_records(), 100);
  EXPECT_EQ((*parts)->name(), dir.File("parts"));
  // Any order of indices, across the files' boundaries.
  const std::vector<int64_t> indices = {99, 0, 29, 30, 31, 5, 30, 64};
  auto a = (*whole)->Gather(indices);
  auto b = (*parts)->Gather(indices);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->inputs.size(), b->inputs.size());
  for (size_t k = 0; k < a->inputs.size(); ++k) {
    EXPECT_EQ(a->inputs[k].ToVector(), b->inputs[k].ToVector());
  }
  EXPECT_EQ(a->labels.ToVector(), b->labels.ToVector());
  auto range = (*parts)->Read(25, 35);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->size(), 10);
  EXPECT_FALSE((*parts)->Gather({100}).ok());
}

TEST(DataPaths, FilesWithDifferentColumnsAreRefusedNamingTheOddOne) {
  TempDir dir;
  dir.Write("a.csv", Csv(0, 5));
  dir.Write("b.csv", "x,label\n1,0\n");
  auto s = OpenSource(dir.File("a.csv") + "," + dir.File("b.csv"), InputSpec());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(dir.File("b.csv") + ": its records do not have the inputs"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace edl::data
