#include "data/planted_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "data/input_spec.h"
#include "data/rng.h"

namespace edl::data {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

struct PlantedModel {
  std::vector<double> means, stds, weights;
  std::vector<std::vector<double>> effects;  // [column][value]
  std::vector<std::vector<double>> cdfs;     // Zipf CDF per column
};

PlantedModel MakeModel(const PlantedOptions& o) {
  Rng rng(MixSeed(o.model_seed, 0x706c616e746564ull));
  PlantedModel m;
  for (int j = 0; j < o.num_numeric; ++j) {
    m.means.push_back(std::round((rng.Uniform() * 20 - 10) * 100) / 100);
    m.stds.push_back(std::round(std::exp(rng.Uniform() * 4 - 1) * 100) / 100);
    m.weights.push_back(o.numeric_weight_std * rng.Normal());
  }
  for (int64_t card : o.cardinalities) {
    std::vector<double> e(card), cdf(card);
    double total = 0;
    for (int64_t v = 0; v < card; ++v) {
      e[v] = o.category_effect_std * rng.Normal();
      total += std::pow(static_cast<double>(v + 1), -o.zipf_exponent);
      cdf[v] = total;
    }
    for (double& c : cdf) c /= total;
    m.effects.push_back(std::move(e));
    m.cdfs.push_back(std::move(cdf));
  }
  return m;
}

double Interaction(const PlantedOptions& o, int64_t a, int64_t b) {
  Rng rng(MixSeed(o.model_seed ^ 0x696e746572ull,
                  static_cast<uint64_t>(a) * 1000003ull + static_cast<uint64_t>(b)));
  return o.interaction_std * rng.Normal();
}

std::string SpecJson(const PlantedOptions& o, const PlantedModel& m) {
  InputSpec spec;
  spec.format = DataFormat::kCsv;
  CsvSpec& c = spec.csv;
  c.label = ColumnRef::Named("label");
  c.numeric_all = false;
  for (int j = 0; j < o.num_numeric; ++j) {
    std::string name = "x" + std::to_string(j);
    c.numeric.push_back(ColumnRef::Named(name));
    c.normalize[name] = {m.means[j], m.stds[j]};
  }
  for (size_t k = 0; k < o.cardinalities.size(); ++k) {
    CategoricalColumn cat;
    cat.column = ColumnRef::Named("c" + std::to_string(k));
    if (o.cardinalities[k] > 1000) {
      cat.hash_buckets = 2 * o.cardinalities[k];
    } else {
      for (int64_t v = 0; v < o.cardinalities[k]; ++v) {
        cat.vocabulary.push_back("c" + std::to_string(k) + "_" + std::to_string(v));
      }
    }
    c.categorical.push_back(std::move(cat));
  }
  c.categorical_layout = CategoricalLayout::kConcatWithOffsets;
  return InputSpecToJson(spec);
}

}  // namespace

Result<PlantedStats> WritePlantedCsv(const std::string& path, const PlantedOptions& o) {
  if (o.num_rows <= 0) return InvalidArgument("planted model: num_rows must be > 0");
  if (o.num_numeric < 0) return InvalidArgument("planted model: num_numeric must be >= 0");
  for (int64_t card : o.cardinalities) {
    if (card <= 0) return InvalidArgument("planted model: cardinalities must be > 0");
  }
  if (o.num_numeric == 0 && o.cardinalities.empty()) {
    return InvalidArgument("planted model: needs a numeric or categorical column");
  }
  const PlantedModel m = MakeModel(o);
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "w"));
  if (!f) return IoError(path + ": cannot open for writing");

  std::string line;
  for (int j = 0; j < o.num_numeric; ++j) line += "x" + std::to_string(j) + ",";
  for (size_t k = 0; k < o.cardinalities.size(); ++k) line += "c" + std::to_string(k) + ",";
  line += "label\n";
  std::fputs(line.c_str(), f.get());

  Rng rng(MixSeed(o.row_seed, 0x726f7773ull));
  std::vector<double> probabilities;
  std::vector<int> labels;
  probabilities.reserve(o.num_rows);
  labels.reserve(o.num_rows);
  std::vector<int64_t> values(o.cardinalities.size());
  char buf[64];
  for (int64_t r = 0; r < o.num_rows; ++r) {
    line.clear();
    double logit = o.bias;
    for (int j = 0; j < o.num_numeric; ++j) {
      double z = rng.Normal();
      logit += m.weights[j] * z;
      std::snprintf(buf, sizeof(buf), "%.6g,", m.means[j] + m.stds[j] * z);
      line += buf;
    }
    for (size_t k = 0; k < o.cardinalities.size(); ++k) {
      const std::vector<double>& cdf = m.cdfs[k];
      double u = rng.Uniform();
      int64_t v = std::min<int64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin(),
                                    o.cardinalities[k] - 1);
      values[k] = v;
      logit += m.effects[k][v];
      line += "c" + std::to_string(k) + "_" + std::to_string(v) + ",";
    }
    if (o.interaction_std > 0 && values.size() >= 2) {
      logit += Interaction(o, values[0], values[1]);
    }
    double p = 1.0 / (1.0 + std::exp(-logit));
    int y = rng.Uniform() < p ? 1 : 0;
    line += y ? "1\n" : "0\n";
    std::fputs(line.c_str(), f.get());
    probabilities.push_back(p);
    labels.push_back(y);
  }
  if (std::ferror(f.get()) || std::fclose(f.release()) != 0) {
    return IoError(path + ": write failed");
  }

  PlantedStats stats;
  stats.num_rows = o.num_rows;
  double positives = 0, loss = 0;
  for (int64_t r = 0; r < o.num_rows; ++r) {
    positives += labels[r];
    double p = std::clamp(probabilities[r], 1e-12, 1 - 1e-12);
    loss -= labels[r] ? std::log(p) : std::log1p(-p);
  }
  stats.positive_rate = positives / o.num_rows;
  stats.planted_log_loss = loss / o.num_rows;
  stats.planted_auc = RocAuc(probabilities, labels);
  stats.input_spec_json = SpecJson(o, m);
  return stats;
}

double RocAuc(const std::vector<double>& scores, const std::vector<int>& labels) {
  EDL_CHECK_EQ(scores.size(), labels.size());
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positive_rank_sum = 0, positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    double mid_rank = (i + 1 + j) / 2.0;  // average 1-based rank of the tie group
    for (size_t t = i; t < j; ++t) {
      if (labels[order[t]]) {
        positive_rank_sum += mid_rank;
        positives += 1;
      }
    }
    i = j;
  }
  double negatives = n - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace edl::data
