// A streamed IDX data set larger than the memory the test lets the process
// grow by: opening it (indexing it, for gzip) and reading every record, a
// minibatch at a time as a worker does, must raise the process's peak RSS
// (VmHWM) by far less than the file's size, and every record must decode to
// what was written.
#include <malloc.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "data/source.h"
#include "gtest/gtest.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using testing_files::TempDir;

constexpr int64_t kRecords = 1 << 18;  // of 28x28 bytes: 196 MiB
constexpr int64_t kRecordBytes = 28 * 28;
constexpr int64_t kGrowthLimit = 40 << 20;

uint8_t Pixel(int64_t r, int64_t k) { return static_cast<uint8_t>((r * 7 + k) % 256); }

// An IDX header (unsigned bytes) of `dims`.
std::string Header(const std::vector<int64_t>& dims) {
  std::string out = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (int64_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(d >> shift));
  }
  return out;
}

// Writes the images and labels files chunk by chunk (never holding them),
// plain or gzip (level 1, for speed).
void WriteDataSet(const std::string& images, const std::string& labels, bool gzip) {
  auto write = [&](const std::string& path, const std::string& header, int64_t record, auto fill) {
    gzFile gz = gzip ? gzopen(path.c_str(), "wb1") : nullptr;
    std::ofstream plain;
    if (!gzip) plain.open(path, std::ios::binary);
    auto put = [&](const std::string& bytes) {
      if (gzip) {
        ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())),
                  static_cast<int>(bytes.size()));
      } else {
        plain << bytes;
      }
    };
    put(header);
    std::string chunk;
    for (int64_t r = 0; r < kRecords; r += 4096) {
      chunk.resize(4096 * record);
      for (int64_t i = 0; i < 4096; ++i) fill(r + i, &chunk[i * record]);
      put(chunk);
    }
    if (gz) gzclose(gz);
  };
  write(images, Header({kRecords, 28, 28}), kRecordBytes, [](int64_t r, char* out) {
    for (int64_t k = 0; k < kRecordBytes; ++k) out[k] = static_cast<char>(Pixel(r, k));
  });
  write(labels, Header({kRecords}), 1,
        [](int64_t r, char* out) { *out = static_cast<char>(r % 10); });
}

int64_t StatusField(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) << 10;
  }
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false where it cannot.
bool ResetPeakRss() {
  malloc_trim(0);
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.close();
  return out.good() && StatusField("VmHWM") <= StatusField("VmRSS") + (1 << 20);
}

void ReadAllWithBoundedMemory(bool gzip) {
  TempDir dir;
  const std::string images = dir.File(gzip ? "big-images-idx3-ubyte.gz" : "big-images-idx3-ubyte");
  const std::string labels = dir.File(gzip ? "big-labels-idx1-ubyte.gz" : "big-labels-idx1-ubyte");
  WriteDataSet(images, labels, gzip);
  if (!ResetPeakRss()) GTEST_SKIP() << "cannot reset VmHWM through /proc/self/clear_refs";
  const int64_t base = StatusField("VmHWM");
  OpenOptions o;
  o.stream = true;
  auto s = OpenSource(images, InputSpec(), o);  // indexes the gzip files
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ((*s)->num_records(), kRecords);
  auto cursor = (*s)->OpenCursor(0, kRecords);
  ASSERT_TRUE(cursor.ok()) << cursor.status().message();
  const float scale = 1.0f / 255.0f;
  int64_t wrong = 0;
  for (int64_t r = 0; r < kRecords; r += 512) {
    auto batch = (*cursor)->Next(512);
    ASSERT_TRUE(batch.ok()) << batch.status().message();
    ASSERT_EQ(batch->size(), 512);
    const float* x = batch->inputs[0].f32();
    const int64_t* y = batch->labels.i64();
    for (int64_t i = 0; i < 512; ++i) {
      wrong += y[i] != (r + i) % 10;
      for (int64_t k = 0; k < kRecordBytes; ++k) {
        wrong += x[i * kRecordBytes + k] != Pixel(r + i, k) * scale + 0.0f;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  const int64_t growth = StatusField("VmHWM") - base;
  std::printf("read %lld records (%.0f MiB of data) with a peak RSS growth of %.1f MiB\n",
              static_cast<long long>(kRecords), kRecords * kRecordBytes / 1048576.0,
              growth / 1048576.0);
  EXPECT_LT(growth, kGrowthLimit) << "the data is " << kRecords * kRecordBytes << " bytes";
}

TEST(IdxBoundedMemory, ReadsAPlainFileFarLargerThanThePeakRssGrowthAllowed) {
  ReadAllWithBoundedMemory(false);
}

TEST(IdxBoundedMemory, ReadsAGzipFileFarLargerThanThePeakRssGrowthAllowed) {
  ReadAllWithBoundedMemory(true);
}

}  // namespace
}  // namespace edl::data
