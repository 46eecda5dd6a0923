// IdxSource: an IDX images file (MNIST format, raw or gzip) and its labels
// file loaded whole (data/idx_images.h says what the records are). The files
// are held in memory as bytes and converted on read: for local training,
// which gathers records from all over the data set, and --data_in_memory.
// Distributed jobs stream IDX files instead (data/streamed_idx_source.h).
// Immutable after Open, so thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/idx_file.h"
#include "data/source.h"

namespace edl::data {

class IdxSource : public Source {
 public:
  // Opens the images file and the labels file (FindIdxLabels). Errors name
  // the file: unreadable/corrupt files, counts that disagree, a shape that
  // does not fit the records, a missing labels file under
  // LabelPolicy::kRequired.
  static Result<std::unique_ptr<IdxSource>> Open(const std::string& path, const IdxSpec& spec,
                                                 LabelPolicy labels);

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return images_.NumRecords(); }
  bool has_labels() const override { return has_labels_; }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

 private:
  IdxSource() = default;

  std::string name_;
  IdxArray images_;
  IdxArray labels_;
  bool has_labels_ = false;
  float scale_ = 1.0f;
  float offset_ = 0.0f;
  std::vector<InputInfo> inputs_;
};

}  // namespace edl::data
