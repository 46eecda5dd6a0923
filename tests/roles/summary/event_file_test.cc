// TensorBoard event files (roles/summary/event_file.h), read back by the tests' own
// reader (tests/tensorboard: bitwise CRC-32C, protoc's Event parser).
#include "roles/summary/event_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tensorboard/tfevents_reader.h"

namespace edl::roles::summary {
namespace {

namespace fs = std::filesystem;
using testing::PointsOf;
using testing::ReadEventFiles;

class EventFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("edl_event_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0700);
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(EventFileTest, ScalarsReadBackWithTheirTagsStepsAndTimes) {
  auto w = EventFileWriter::Open("--tensorboard_log_dir", (dir_ / "run").string(), 1.7e9);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->Write(0, 1.7e9 + 1, {{"train/loss", 2.5}}).ok());
  ASSERT_TRUE(
      (*w)->Write(938, 1.7e9 + 2.25, {{"train/loss", 0.4125}, {"validation/accuracy", 0.875}})
          .ok());
  ASSERT_TRUE((*w)->Write(int64_t{1} << 40, 1.7e9 + 3, {{"train/loss", 0.25}}).ok());

  auto files = ReadEventFiles((dir_ / "run").string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  EXPECT_EQ(files[0].file_version, "brain.Event:2");
  EXPECT_EQ(files[0].path, (*w)->path());
  EXPECT_NE(fs::path(files[0].path).filename().string().find("events.out.tfevents.1700000000."),
            std::string::npos);
  auto loss = PointsOf(files, "train/loss");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[0].step, 0);
  EXPECT_FLOAT_EQ(loss[0].value, 2.5f);
  EXPECT_DOUBLE_EQ(loss[0].wall_time, 1.7e9 + 1);
  EXPECT_EQ(loss[1].step, 938);
  EXPECT_FLOAT_EQ(loss[1].value, 0.4125f);
  EXPECT_DOUBLE_EQ(loss[1].wall_time, 1.7e9 + 2.25);
  EXPECT_EQ(loss[2].step, int64_t{1} << 40);  // a multi-byte varint
  auto acc = PointsOf(files, "validation/accuracy");
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].step, 938);
  EXPECT_FLOAT_EQ(acc[0].value, 0.875f);
}

TEST_F(EventFileTest, EveryWriterStartsItsOwnFileAndNeverOverwrites) {
  const std::string run = (dir_ / "run").string();
  {
    auto a = EventFileWriter::Open("--tensorboard_log_dir", run, 1.7e9);
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE((*a)->Write(1, 1.7e9, {{"x", 1}}).ok());
  }
  auto b = EventFileWriter::Open("--tensorboard_log_dir", run, 1.7e9);  // same second
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->Write(2, 1.7e9, {{"x", 2}}).ok());
  auto files = ReadEventFiles(run);
  ASSERT_EQ(files.size(), 2u);
  auto x = PointsOf(files, "x");
  ASSERT_EQ(x.size(), 2u);
  EXPECT_NE(files[0].path, files[1].path);
}

TEST_F(EventFileTest, ALongTagAndANaNSurviveTheRoundTrip) {
  const std::string tag(300, 't');  // a two-byte length
  auto w = EventFileWriter::Open("--tensorboard_log_dir", dir_.string(), 1.7e9);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(5, 1.7e9, {{tag, std::nan("")}}).ok());
  auto files = ReadEventFiles(dir_.string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].error, "");
  auto points = PointsOf(files, tag);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_TRUE(std::isnan(points[0].value));
}

TEST_F(EventFileTest, AnUnwritableDirectoryIsRefusedNamingTheFlagAndPath) {
  if (::geteuid() == 0) {
    // root writes anywhere: use a path under a regular file instead.
    fs::create_directories(dir_);
    std::ofstream(dir_ / "file") << "x";
    auto w = EventFileWriter::Open("--tensorboard_log_dir", (dir_ / "file" / "run").string(), 1);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(
        w.status().message().find("--tensorboard_log_dir " + (dir_ / "file" / "run").string()),
        std::string::npos)
        << w.status().message();
    return;
  }
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 0500);
  auto w = EventFileWriter::Open("--tensorboard_log_dir", dir_.string(), 1);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("--tensorboard_log_dir " + dir_.string()), std::string::npos);
  EXPECT_NE(w.status().message().find("Permission denied"), std::string::npos)
      << w.status().message();
}

TEST_F(EventFileTest, TheReaderRejectsACorruptedFrame) {
  // The test reader must be able to fail: flip one byte of a payload.
  auto w = EventFileWriter::Open("--tensorboard_log_dir", dir_.string(), 1.7e9);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(1, 1.7e9, {{"train/loss", 1}}).ok());
  const std::string path = (*w)->path();
  w->reset();
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-8, std::ios::end);
  f.put('\x7f');
  f.close();
  auto files = ReadEventFiles(dir_.string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].error.find("checksum"), std::string::npos) << files[0].error;
}

}  // namespace
}  // namespace edl::roles::summary
