// Source: a data file as an array of records that can be read by any range
// [begin, end) or any list of indices cheaply. Sources load their file into
// memory once when opened (IDX fully, CSV parsed and normalized), so reads
// are copies out of memory. All methods are const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/examples.h"
#include "data/input_spec.h"

namespace edl::data {

class Source {
 public:
  virtual ~Source() = default;

  // The path it was opened from.
  virtual const std::string& name() const = 0;
  virtual int64_t num_records() const = 0;
  virtual bool has_labels() const = 0;
  // The inputs every Examples from this source holds, in order.
  virtual const std::vector<InputInfo>& inputs() const = 0;

  // Records [begin, end). InvalidArgument naming the source unless
  // 0 <= begin <= end <= num_records().
  virtual Result<Examples> Read(int64_t begin, int64_t end) const;
  // Records at `indices`, in that order (repeats allowed). InvalidArgument
  // naming the source and index when one is out of range.
  virtual Result<Examples> Gather(
      const std::vector<int64_t>& indices) const = 0;

 protected:
  Status CheckIndices(const std::vector<int64_t>& indices) const;
};

enum class LabelPolicy {
  kRequired,   // a missing labels file/column is an error (training data)
  kIfPresent,  // unlabeled data is fine (prediction data)
};

// Opens `path` as the format the spec names (or, for kAuto, the file name
// suggests: *.csv, *.csv.gz, *.tsv -> CSV; *-ubyte, *-ubyte.gz, *.idx -> IDX).
// `path` may also name several files (a directory, a glob, a comma-separated
// list: data/data_paths.h), read one after another as one source whose
// name() is `path`. Errors name the file and what is wrong.
Result<std::unique_ptr<Source>> OpenSource(
    const std::string& path, const InputSpec& spec,
    LabelPolicy labels = LabelPolicy::kRequired);

}  // namespace edl::data
