// Record index building and decoding rates on one core (data/record_index.h):
// writes a Criteo-shaped CSV (13 numeric + 26 categorical columns and a
// label) and a TFRecord file of the same rows (each row's text as the
// payload), plain and gzip, of about SIZE_MB of data each, then times
// BuildRecordIndex and a RecordReader over every record.
// Usage: edl_data_index_bench [SIZE_MB=512] [DIR=/tmp]
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "base/check.h"
#include "data/tfrecord.h"
#include "data/record_index.h"
#include "data/record_reader.h"

namespace {

using edl::data::RecordFormat;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Row(std::mt19937_64& rng) {
  std::string row = std::to_string(rng() % 2);
  char buf[32];
  for (int i = 0; i < 13; ++i) {
    std::snprintf(buf, sizeof buf, ",%llu", static_cast<unsigned long long>(rng() % 5000));
    row += buf;
  }
  for (int i = 0; i < 26; ++i) {
    std::snprintf(buf, sizeof buf, ",%08llx", static_cast<unsigned long long>(rng() % 100000));
    row += buf;
  }
  return row;
}

// Writes the CSV and TFRecord files, plain and gzip.
void Write(const std::string& dir, uint64_t bytes) {
  std::mt19937_64 rng(1);
  std::FILE* csv = std::fopen((dir + "/bench.csv").c_str(), "wb");
  std::FILE* tf = std::fopen((dir + "/bench.tfrecord").c_str(), "wb");
  gzFile csv_gz = gzopen((dir + "/bench.csv.gz").c_str(), "wb6");
  gzFile tf_gz = gzopen((dir + "/bench.tfrecord.gz").c_str(), "wb6");
  EDL_CHECK(csv && tf && csv_gz && tf_gz);
  uint64_t written = 0;
  std::string csv_chunk, tf_chunk;
  while (written < bytes) {
    csv_chunk.clear();
    tf_chunk.clear();
    for (int i = 0; i < 4096; ++i) {
      const std::string row = Row(rng);
      csv_chunk += row + "\n";
      tf_chunk += edl::data::TfRecordFrame(row);
    }
    std::fwrite(csv_chunk.data(), 1, csv_chunk.size(), csv);
    std::fwrite(tf_chunk.data(), 1, tf_chunk.size(), tf);
    gzwrite(csv_gz, csv_chunk.data(), static_cast<unsigned>(csv_chunk.size()));
    gzwrite(tf_gz, tf_chunk.data(), static_cast<unsigned>(tf_chunk.size()));
    written += csv_chunk.size();
  }
  std::fclose(csv);
  std::fclose(tf);
  gzclose(csv_gz);
  gzclose(tf_gz);
}

void Measure(const std::string& path, RecordFormat format) {
  // Warm the page cache so the figures are the parser's, not the disk's.
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    static char buf[1 << 20];
    while (std::fread(buf, 1, sizeof buf, f) > 0) {
    }
    std::fclose(f);
  }
  double t0 = Now();
  auto index = edl::data::BuildRecordIndex(path, format);
  EDL_CHECK(index.ok()) << index.status().message();
  const double index_s = Now() - t0;
  t0 = Now();
  auto reader = edl::data::RecordReader::Open(*index, 0);
  EDL_CHECK(reader.ok()) << reader.status().message();
  std::string record;
  uint64_t n = 0;
  while (true) {
    auto got = (*reader)->Next(&record);
    EDL_CHECK(got.ok()) << got.status().message();
    if (!*got) break;
    ++n;
  }
  const double read_s = Now() - t0;
  EDL_CHECK_EQ(n, index->num_records);
  const double gb = static_cast<double>(index->data_size) / 1e9;
  std::printf("%-22s %8.0f MB %7.0f MB  %6.2f GB/s %7.2f M rec/s   %6.2f GB/s %7.2f M rec/s\n",
              std::filesystem::path(path).filename().c_str(),
              static_cast<double>(index->file_size) / 1e6, gb * 1e3, gb / index_s,
              static_cast<double>(n) / index_s / 1e6, gb / read_s,
              static_cast<double>(n) / read_s / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  const std::string dir = (argc > 2 ? std::string(argv[2]) : std::string("/tmp")) + "/edl-index-bench";
  std::filesystem::create_directories(dir);
  Write(dir, mb << 20);
  std::printf("one core; page cache warm; data = uncompressed bytes\n");
  std::printf("%-22s %11s %10s  %-23s %-23s\n", "file", "on disk", "data", "index build",
              "decode (framing+CRC)");
  for (const char* name : {"bench.csv", "bench.csv.gz"}) Measure(dir + "/" + name, RecordFormat::kCsvRows);
  for (const char* name : {"bench.tfrecord", "bench.tfrecord.gz"}) {
    Measure(dir + "/" + name, RecordFormat::kTfRecord);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
