// PredictionParts: where a distributed prediction job's outputs go as the
// master accepts them, one CSV part per task, so no process ever holds the
// whole output (docs/distributed.md, "Prediction output").
//
// --prediction_output names a file or a directory:
//  * a file (out.csv): parts go to `out.csv.parts/`; Finish joins them in
//    record order into out.csv (atomically, streaming part by part) and
//    removes the parts;
//  * a directory (named with a trailing '/' or existing): the parts are the
//    output, `part-<begin>-<end>.csv` with 12-digit record numbers, each a
//    CSV with its header; Finish writes `_SUCCESS` once all are there.
// Each part is written atomically. Stale parts of an earlier run (files
// with exactly those names) are removed when the output is opened, unless
// the job is being continued by a new master (its parts are the old one's).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::roles::job {

class PredictionParts {
 public:
  // A part's CSV text, header line first, for the outputs of its records.
  using Formatter = std::function<std::string(const tensor::Tensor& rows)>;

  // Creates the parts directory. IoError naming it. `resume`: keep the
  // parts there (a master continuing the job).
  static Result<std::unique_ptr<PredictionParts>> Open(const std::string& output, Formatter format,
                                                       bool resume = false);

  // Writes the outputs of records [begin, end) as a part. IoError naming
  // the part's file.
  Status Put(int64_t begin, int64_t end, const tensor::Tensor& rows);

  // Every record of [0, records) written: the output completed as above.
  // FailedPrecondition naming the first missing range when the parts do not cover
  // it; IoError naming the file.
  Status Finish(int64_t records);

  const std::string& parts_dir() const { return dir_; }
  bool joins_into_file() const { return !file_.empty(); }

 private:
  PredictionParts(std::string dir, std::string file, Formatter format)
      : dir_(std::move(dir)), file_(std::move(file)), format_(std::move(format)) {}

  std::string dir_;   // the parts
  std::string file_;  // the joined output; empty: the directory is the output
  Formatter format_;
};

// A part's file name, "part-000000000000-000000001000.csv".
std::string PredictionPartName(int64_t begin, int64_t end);

}  // namespace edl::roles::job
