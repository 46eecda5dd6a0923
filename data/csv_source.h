// CsvSource: a CSV file (raw or gzip) parsed once at Open into normalized
// in-memory columns: a float32 [N, numeric] input, int64 categorical ids
// (one [N] input per column, or one [N, k] input with per-column id offsets)
// and int64 or float32 labels. See InputSpec for how columns are chosen.
// Immutable after Open, so thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/source.h"

namespace edl::data {

class CsvSource : public Source {
 public:
  // Parses the whole file. Errors name the file, the line and the column:
  // "iris.csv:17: expected 5 fields, got 4", "x.csv:9: column 'age': cannot
  // parse 'abc' as a number", unknown columns in the spec, etc.
  static Result<std::unique_ptr<CsvSource>> Open(const std::string& path,
                                                 const CsvSpec& spec,
                                                 LabelPolicy labels);

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return num_records_; }
  bool has_labels() const override { return has_labels_; }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

  // The column names, from the header, column_names or "0", "1", ...
  const std::vector<std::string>& column_names() const { return columns_; }

 private:
  CsvSource() = default;
  class Builder;

  std::string name_;
  std::vector<std::string> columns_;
  int64_t num_records_ = 0;
  int64_t num_numeric_ = 0;
  int64_t num_categorical_ = 0;
  bool concat_ids_ = false;
  bool has_labels_ = false;
  bool float_labels_ = false;
  std::vector<float> numeric_;  // [N, num_numeric_], normalized
  std::vector<int64_t>
      ids_;  // [N, num_categorical_], offsets applied if concat_ids_
  std::vector<int64_t> int_labels_;    // [N]
  std::vector<float> float_labels_v_;  // [N]
  std::vector<InputInfo> inputs_;
};

}  // namespace edl::data
