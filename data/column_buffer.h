// ColumnBuffer: decoded records held as columns, the common form of CSV
// rows and tf.train.Examples once their fields are turned into model inputs
// (data/csv_row_decoder.h, data/example_decoder.h): per record `num_numeric`
// float32 values, `num_categorical` int64 ids and one label. Gather copies
// any records out as Examples in the layout's input order.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "data/examples.h"

namespace edl::data {

// The shape of decoded records, fixed when a data set is opened.
struct ColumnLayout {
  int64_t num_numeric = 0;
  int64_t num_categorical = 0;
  bool concat_ids = false;  // one [N, k] ids input instead of k [N] inputs
  bool has_labels = false;
  bool float_labels = false;
  std::vector<InputInfo> inputs;  // model input order: numeric, then ids
};

struct ColumnBuffer {
  std::vector<float> numeric;       // [N, num_numeric]
  std::vector<int64_t> ids;         // [N, num_categorical]
  std::vector<int64_t> int_labels;  // [N] unless float_labels
  std::vector<float> float_labels;  // [N] if float_labels
  int64_t size = 0;

  void Clear();
  // Runs decode(this), which appends one record's values; counts the
  // record if it succeeds, else removes what it appended.
  template <typename F>
  Status Append(F decode) {
    const size_t n = numeric.size(), k = ids.size();
    const size_t ints = int_labels.size(), floats = float_labels.size();
    Status s = decode(this);
    if (s.ok()) {
      ++size;
      return s;
    }
    numeric.resize(n);
    ids.resize(k);
    int_labels.resize(ints);
    float_labels.resize(floats);
    return s;
  }
  // Records `indices` (each in [0, size)) as Examples of `layout`.
  Examples Gather(const ColumnLayout& layout, const int64_t* indices, int64_t n) const;
  // Records [begin, end).
  Examples Slice(const ColumnLayout& layout, int64_t begin, int64_t end) const;
};

}  // namespace edl::data
