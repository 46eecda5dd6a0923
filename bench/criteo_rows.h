// Criteo-shaped click rows with planted labels, for the benchmarks
// (scripts/bench/criteo_bench.sh, data_index_bench): a label, 13 numeric
// columns I1..I13 (standard normal, 4 significant digits) and 26
// categorical columns C1..C26 (8 hex digits naming one of kCardinality[k]
// values, drawn log-uniformly: a few values common, most rare). The label
// is drawn from a planted logistic model,
//   logit = kBias + sum_j w_j I_j + sum_k e_k(C_k),
// w_j ~ N(0, 0.3^2) and e_k(v) ~ N(0, 0.3^2) derived from (k, v) by hashing,
// so the model needs no tables. The planted probabilities' AUC is the
// ceiling a trained model can approach. The zoo model criteo_deepfm hashes
// each C_k into 2 x kCardinality[k] buckets.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "data/rng.h"
#include "data/tf_example.h"

namespace edl::bench {

inline constexpr int kNumeric = 13;
inline constexpr int kCategorical = 26;
inline constexpr int64_t kCardinality[kCategorical] = {
    500, 250,  25000, 10000, 150,  15,   5000, 300,   5,  15000, 2500,  25000, 1500,
    15,  5000, 25000, 5,     2000, 1000, 5,    25000, 10, 10,    15000, 50,    10000};
inline constexpr double kBias = -1.3;
inline constexpr uint64_t kModelSeed = 0x63726974656fULL;

struct CriteoRow {
  float numeric[kNumeric];
  char category[kCategorical][9];  // 8 hex digits
  int label = 0;
  double probability = 0;
};

class CriteoRows {
 public:
  explicit CriteoRows(uint64_t row_seed) : rng_(data::MixSeed(row_seed, 0x726f7773ULL)) {
    data::Rng w(kModelSeed);
    for (double& v : weights_) v = 0.3 * w.Normal();
  }

  void Next(CriteoRow* row) {
    double logit = kBias;
    for (int j = 0; j < kNumeric; ++j) {
      // Rounded as written, so the file holds the values the label saw.
      char text[16];
      std::snprintf(text, sizeof text, "%.4g", rng_.Normal());
      row->numeric[j] = std::strtof(text, nullptr);
      logit += weights_[j] * row->numeric[j];
    }
    for (int k = 0; k < kCategorical; ++k) {
      const double card = static_cast<double>(kCardinality[k]);
      int64_t v = static_cast<int64_t>(std::pow(card, rng_.Uniform())) - 1;
      if (v >= kCardinality[k]) v = kCardinality[k] - 1;
      const uint64_t key =
          data::MixSeed(kModelSeed ^ static_cast<uint64_t>(k + 1), static_cast<uint64_t>(v));
      std::snprintf(row->category[k], sizeof row->category[k], "%08x",
                    static_cast<unsigned>(key & 0xffffffffu));
      logit += 0.3 * data::Rng(key).Normal();
    }
    row->probability = 1.0 / (1.0 + std::exp(-logit));
    row->label = rng_.Uniform() < row->probability ? 1 : 0;
  }

 private:
  data::Rng rng_;
  double weights_[kNumeric];
};

inline std::string CriteoCsvHeader() {
  std::string h = "label";
  for (int j = 1; j <= kNumeric; ++j) h += ",I" + std::to_string(j);
  for (int k = 1; k <= kCategorical; ++k) h += ",C" + std::to_string(k);
  return h + "\n";
}

inline void AppendCriteoCsv(const CriteoRow& row, std::string* out) {
  char text[16];
  *out += row.label ? '1' : '0';
  for (float v : row.numeric) {
    std::snprintf(text, sizeof text, ",%.4g", v);
    *out += text;
  }
  for (const auto& c : row.category) {
    *out += ',';
    *out += c;
  }
  *out += '\n';
}

// The row as a tf.train.Example: I1..I13 float_list of 1, C1..C26
// bytes_list of 1, label int64_list of 1.
inline std::string CriteoExample(const CriteoRow& row) {
  std::map<std::string, data::ExampleFeature> f;
  for (int j = 0; j < kNumeric; ++j) {
    auto& e = f["I" + std::to_string(j + 1)];
    e.kind = data::ExampleFeature::Kind::kFloat;
    e.floats = {row.numeric[j]};
  }
  for (int k = 0; k < kCategorical; ++k) {
    auto& e = f["C" + std::to_string(k + 1)];
    e.kind = data::ExampleFeature::Kind::kBytes;
    e.bytes = {row.category[k]};
  }
  f["label"].kind = data::ExampleFeature::Kind::kInt64;
  f["label"].ints = {row.label};
  return data::SerializeExample(f);
}

}  // namespace edl::bench
