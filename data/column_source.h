// ColumnSource: records decoded once into memory as columns (data/column_
// buffer.h), read by copying. What CSV files become when loaded whole, and
// what a streamed file's records become when a process asks for all of them
// at once. Immutable after construction, so thread-safe.
#pragma once

#include <string>
#include <vector>

#include "data/column_buffer.h"
#include "data/source.h"

namespace edl::data {

class ColumnSource : public Source {
 public:
  ColumnSource(std::string name, ColumnLayout layout, ColumnBuffer records,
               std::vector<std::string> column_names = {})
      : name_(std::move(name)),
        layout_(std::move(layout)),
        records_(std::move(records)),
        column_names_(std::move(column_names)) {}

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return records_.size; }
  bool has_labels() const override { return layout_.has_labels; }
  const std::vector<InputInfo>& inputs() const override { return layout_.inputs; }
  Result<Examples> Read(int64_t begin, int64_t end) const override;
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

  // CSV: the column names, from the header, column_names or "0", "1", ...
  const std::vector<std::string>& column_names() const { return column_names_; }

 private:
  std::string name_;
  ColumnLayout layout_;
  ColumnBuffer records_;
  std::vector<std::string> column_names_;
};

}  // namespace edl::data
