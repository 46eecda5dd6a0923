// Writes a Criteo-shaped click data set with planted labels (criteo_rows.h)
// for scripts/bench/criteo_bench.sh: SHARDS training shards holding at
// least GB gigabytes of CSV rows, as gzip CSV (DIR/csv/part-NNNNN.csv.gz)
// and gzip TFRecord of tf.train.Examples (DIR/tfrecord/...), the same rows
// in both, plus one validation shard of each (DIR/csv-valid/,
// DIR/tfrecord-valid/). Two threads; prints the sizes and the planted
// model's AUC on the validation rows.
// Usage: edl_criteo_data DIR GB SHARDS [VALID_ROWS=200000]
#include <zlib.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/check.h"
#include "bench/criteo_rows.h"
#include "data/planted_model.h"
#include "data/tfrecord.h"

namespace {

using namespace edl::bench;

struct Sizes {
  std::atomic<int64_t> csv{0}, tfrecord{0}, rows{0};
};

// Writes `rows` rows from seed `seed` to both files; the planted
// probabilities and labels when asked for.
void WriteShard(const std::string& csv_path, const std::string& tf_path, uint64_t seed,
                int64_t rows, Sizes* sizes, std::vector<double>* p = nullptr,
                std::vector<int>* y = nullptr) {
  gzFile csv = gzopen(csv_path.c_str(), "wb1");
  gzFile tf = gzopen(tf_path.c_str(), "wb1");
  EDL_CHECK(csv != nullptr && tf != nullptr) << csv_path;
  CriteoRows gen(seed);
  CriteoRow row;
  std::string csv_chunk = CriteoCsvHeader(), tf_chunk;
  int64_t csv_bytes = 0, tf_bytes = 0;
  auto flush = [&] {
    EDL_CHECK_EQ(gzwrite(csv, csv_chunk.data(), static_cast<unsigned>(csv_chunk.size())),
                 static_cast<int>(csv_chunk.size()));
    EDL_CHECK_EQ(gzwrite(tf, tf_chunk.data(), static_cast<unsigned>(tf_chunk.size())),
                 static_cast<int>(tf_chunk.size()));
    csv_bytes += static_cast<int64_t>(csv_chunk.size());
    tf_bytes += static_cast<int64_t>(tf_chunk.size());
    csv_chunk.clear();
    tf_chunk.clear();
  };
  for (int64_t r = 0; r < rows; ++r) {
    gen.Next(&row);
    AppendCriteoCsv(row, &csv_chunk);
    tf_chunk += edl::data::TfRecordFrame(CriteoExample(row));
    if (p) {
      p->push_back(row.probability);
      y->push_back(row.label);
    }
    if (csv_chunk.size() > (1 << 20)) flush();
  }
  flush();
  EDL_CHECK_EQ(gzclose(csv), Z_OK);
  EDL_CHECK_EQ(gzclose(tf), Z_OK);
  sizes->csv += csv_bytes;
  sizes->tfrecord += tf_bytes;
  sizes->rows += rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DIR GB SHARDS [VALID_ROWS=200000]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const double gb = std::atof(argv[2]);
  const int shards = std::atoi(argv[3]);
  const int64_t valid_rows = argc > 4 ? std::atoll(argv[4]) : 200000;
  EDL_CHECK(gb > 0 && shards > 0 && valid_rows > 0);
  for (const char* sub : {"csv", "tfrecord", "csv-valid", "tfrecord-valid"}) {
    std::filesystem::create_directories(dir + "/" + sub);
  }
  // Rows per shard from the CSV size of a sample.
  CriteoRows sample(12345);
  CriteoRow row;
  std::string text;
  for (int i = 0; i < 10000; ++i) {
    sample.Next(&row);
    AppendCriteoCsv(row, &text);
  }
  const double row_bytes = static_cast<double>(text.size()) / 10000;
  const int64_t per_shard = static_cast<int64_t>(gb * 1e9 / row_bytes / shards) + 1;

  Sizes train, valid;
  std::atomic<int> next{0};
  auto work = [&] {
    for (int s = next++; s < shards; s = next++) {
      char name[32];
      std::snprintf(name, sizeof name, "part-%05d", s);
      WriteShard(dir + "/csv/" + name + ".csv.gz", dir + "/tfrecord/" + name + ".tfrecord.gz",
                 static_cast<uint64_t>(s) + 1, per_shard, &train);
      std::fprintf(stderr, "shard %d/%d written\n", s + 1, shards);
    }
  };
  std::thread other(work);
  work();
  other.join();
  std::vector<double> p;
  std::vector<int> y;
  WriteShard(dir + "/csv-valid/part-00000.csv.gz", dir + "/tfrecord-valid/part-00000.tfrecord.gz",
             1u << 30, valid_rows, &valid, &p, &y);
  std::printf("training:   %" PRId64
              " rows in %d shards: CSV %.2f GB, TFRecord %.2f GB (uncompressed)\n",
              train.rows.load(), shards, train.csv.load() / 1e9, train.tfrecord.load() / 1e9);
  std::printf("validation: %" PRId64 " rows: CSV %.3f GB, TFRecord %.3f GB\n", valid.rows.load(),
              valid.csv.load() / 1e9, valid.tfrecord.load() / 1e9);
  double positives = 0;
  for (int v : y) positives += v;
  std::printf("planted model on the validation rows: AUC %.4f, positive rate %.3f\n",
              edl::data::RocAuc(p, y), positives / static_cast<double>(y.size()));
  return 0;
}
