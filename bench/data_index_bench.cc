// Record index building and decoding rates on one core (data/record_index.h,
// data/streamed_source.h): writes Criteo-shaped rows (bench/criteo_rows.h: a
// label, 13 numeric and 26 categorical columns) as a CSV and as a TFRecord
// file of tf.train.Examples, plain and gzip, of about SIZE_MB of CSV each,
// then times BuildRecordIndex, a RecordReader over every record (framing and
// checksums), and decoding every record into model inputs through a streamed
// source's cursor (the criteo_deepfm zoo model's input spec: 13 numbers, 26
// hashed categories, the label).
// Usage: edl_data_index_bench [SIZE_MB=512] [DIR=/tmp]
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/check.h"
#include "bench/criteo_rows.h"
#include "data/record_index.h"
#include "data/record_reader.h"
#include "data/source.h"
#include "data/tfrecord.h"

namespace {

using edl::data::RecordFormat;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Writes the CSV and TFRecord files, plain and gzip.
void Write(const std::string& dir, uint64_t bytes) {
  edl::bench::CriteoRows rows(1);
  edl::bench::CriteoRow row;
  std::FILE* csv = std::fopen((dir + "/bench.csv").c_str(), "wb");
  std::FILE* tf = std::fopen((dir + "/bench.tfrecord").c_str(), "wb");
  gzFile csv_gz = gzopen((dir + "/bench.csv.gz").c_str(), "wb6");
  gzFile tf_gz = gzopen((dir + "/bench.tfrecord.gz").c_str(), "wb6");
  EDL_CHECK(csv && tf && csv_gz && tf_gz);
  uint64_t written = 0;
  std::string csv_chunk = edl::bench::CriteoCsvHeader(), tf_chunk;
  while (written < bytes) {
    for (int i = 0; i < 4096; ++i) {
      rows.Next(&row);
      edl::bench::AppendCriteoCsv(row, &csv_chunk);
      tf_chunk += edl::data::TfRecordFrame(edl::bench::CriteoExample(row));
    }
    std::fwrite(csv_chunk.data(), 1, csv_chunk.size(), csv);
    std::fwrite(tf_chunk.data(), 1, tf_chunk.size(), tf);
    gzwrite(csv_gz, csv_chunk.data(), static_cast<unsigned>(csv_chunk.size()));
    gzwrite(tf_gz, tf_chunk.data(), static_cast<unsigned>(tf_chunk.size()));
    written += csv_chunk.size();
    csv_chunk.clear();
    tf_chunk.clear();
  }
  std::fclose(csv);
  std::fclose(tf);
  gzclose(csv_gz);
  gzclose(tf_gz);
}

// The criteo_deepfm zoo model's input spec, for CSV or TFRecord.
edl::data::InputSpec CriteoSpec(bool tfrecord) {
  std::string json = std::string("{\"format\": \"") + (tfrecord ? "tfrecord" : "csv") +
                     "\", \"label\": \"label\", \"numeric\": [";
  for (int j = 1; j <= edl::bench::kNumeric; ++j) {
    json += (j > 1 ? ", \"I" : "\"I") + std::to_string(j) + "\"";
  }
  json += "], \"categorical\": [";
  for (int k = 0; k < edl::bench::kCategorical; ++k) {
    json += (k ? ", " : "") + std::string("{\"column\": \"C") + std::to_string(k + 1) +
            "\", \"hash_buckets\": " + std::to_string(2 * edl::bench::kCardinality[k]) + "}";
  }
  json += "], \"categorical_layout\": \"concat_with_offsets\"}";
  auto spec = edl::data::InputSpecFromJson(json, "input");
  EDL_CHECK(spec.ok()) << spec.status().message();
  return *spec;
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
  // Every record into model inputs, 4096 at a time, as a worker streams.
  edl::data::OpenOptions streamed;
  streamed.stream = true;
  auto source =
      edl::data::OpenSource(path, CriteoSpec(format == RecordFormat::kTfRecord), streamed);
  EDL_CHECK(source.ok()) << source.status().message();
  t0 = Now();
  const int64_t records = (*source)->num_records();
  auto cursor = (*source)->OpenCursor(0, records);
  EDL_CHECK(cursor.ok());
  for (int64_t done = 0; done < records;) {
    auto batch = (*cursor)->Next(4096);
    EDL_CHECK(batch.ok()) << batch.status().message();
    done += batch->size();
  }
  const double decode_s = Now() - t0;
  const double gb = static_cast<double>(index->data_size) / 1e9;
  std::printf(
      "%-18s %6.0f MB %6.0f MB  %5.2f GB/s %6.2f M/s   %5.2f GB/s %6.2f M/s   %5.2f GB/s %6.2f "
      "M/s\n",
      std::filesystem::path(path).filename().c_str(), static_cast<double>(index->file_size) / 1e6,
      gb * 1e3, gb / index_s, static_cast<double>(n) / index_s / 1e6, gb / read_s,
      static_cast<double>(n) / read_s / 1e6, gb / decode_s,
      static_cast<double>(records) / decode_s / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  const std::string dir =
      (argc > 2 ? std::string(argv[2]) : std::string("/tmp")) + "/edl-index-bench";
  std::filesystem::create_directories(dir);
  Write(dir, mb << 20);
  std::printf("one core; page cache warm; data = uncompressed bytes; M/s = million records/s\n");
  std::printf("%-18s %9s %9s  %-20s %-20s %-20s\n", "file", "on disk", "data", "index build",
              "read (framing+CRC)", "decode to inputs");
  for (const char* name : {"bench.csv", "bench.csv.gz"})
    Measure(dir + "/" + name, RecordFormat::kCsvRows);
  for (const char* name : {"bench.tfrecord", "bench.tfrecord.gz"}) {
    Measure(dir + "/" + name, RecordFormat::kTfRecord);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
