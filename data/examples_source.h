// ExamplesSource: records already read into memory as Examples (one task's
// records, read from a streamed source in one pass) served as a Source, so
// a Batcher can cut and shuffle them. Immutable, so thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/source.h"

namespace edl::data {

class ExamplesSource : public Source {
 public:
  // `inputs` and `has_labels` describe `records` (the source it came from).
  ExamplesSource(std::string name, Examples records, std::vector<InputInfo> inputs, bool has_labels)
      : name_(std::move(name)),
        records_(std::move(records)),
        inputs_(std::move(inputs)),
        has_labels_(has_labels) {}

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return records_.size(); }
  bool has_labels() const override { return has_labels_; }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;

 private:
  std::string name_;
  Examples records_;
  std::vector<InputInfo> inputs_;
  bool has_labels_;
};

// The records of `pieces` (of the same inputs), in order, as one Examples.
// REQUIRES: !pieces.empty().
Examples JoinExamples(std::vector<Examples> pieces);

// Records [begin, end) of `source` read in one pass (one reader for a
// streamed source) and held in memory: a task's records, which a Batcher
// then cuts into minibatches. Errors are the source's.
Result<std::unique_ptr<ExamplesSource>> ReadIntoMemory(const Source& source, int64_t begin,
                                                       int64_t end);

}  // namespace edl::data
