// ConcatSource: the records of several sources of the same inputs, one
// after another (a data set of many files: data/data_paths.h). Record i of
// the whole is record i - start of the part holding it. Thread-safe, as its
// parts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/source.h"

namespace edl::data {

class ConcatSource : public Source {
 public:
  // InvalidArgument naming the first part that differs from the first in
  // its inputs (name, type, shape, id count) or in having labels.
  static Result<std::unique_ptr<ConcatSource>> Create(std::string name,
                                                      std::vector<std::unique_ptr<Source>> parts);

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return starts_.back(); }
  bool has_labels() const override { return parts_[0]->has_labels(); }
  const std::vector<InputInfo>& inputs() const override { return parts_[0]->inputs(); }
  Result<Examples> Read(int64_t begin, int64_t end) const override;
  // Within one part, the part's own cursor.
  Result<std::unique_ptr<RecordCursor>> OpenCursor(int64_t begin, int64_t end) const override;
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;
  std::vector<int64_t> file_records() const override;
  int64_t corrupt_records_skipped() const override;
  bool streamed() const override;  // any part is

 private:
  ConcatSource(std::string name, std::vector<std::unique_ptr<Source>> parts);

  std::string name_;
  std::vector<std::unique_ptr<Source>> parts_;
  std::vector<int64_t> starts_;  // starts_[i]: first record of part i; back(): the total
};

}  // namespace edl::data
