// IdxSource: an IDX images file (MNIST format, raw or gzip) and its labels
// file as a Source of one float32 input image * scale + offset, shaped per
// record as the spec says (default: the file's record dims), and int64
// labels. The whole file is held in memory as bytes and converted on read.
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
  // Opens the images file and the labels file (spec.labels_path, or the
  // images name with "images-idx3" replaced by "labels-idx1", with or without
  // ".gz"). Errors name the file: unreadable/corrupt files, counts that
  // disagree, a shape that does not fit the records, a missing labels file
  // under LabelPolicy::kRequired.
  static Result<std::unique_ptr<IdxSource>> Open(const std::string& path, const IdxSpec& spec,
                                                 LabelPolicy labels);

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return images_.NumRecords(); }
  bool has_labels() const override { return has_labels_; }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

  // The labels files tried for an images file, in order.
  static std::vector<std::string> LabelsPathCandidates(const std::string& path);

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
