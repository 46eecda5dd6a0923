// StagedRecordIndex: a freshly built record index (data/record_index.h)
// written to a temporary file beside its cache file and loaded from there
// (its gzip windows left in the file, as LoadOrBuildRecordIndex leaves
// them), so that it can be used, its data verified, before it is put in
// place: Commit renames it over the cache file atomically; without Commit
// the destructor removes it and the cache file stays as it was. Nothing
// half-written is ever at the cache file's path. Not thread-safe; index()
// may be read from many threads.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "data/record_index.h"

namespace edl::data {

class StagedRecordIndex {
 public:
  // Writes `built` (windows in memory) next to IndexCachePath(built.path,
  // index_dir). Errors name the file that could not be written.
  static Result<std::unique_ptr<StagedRecordIndex>> Write(const RecordIndex& built,
                                                          const std::string& index_dir);
  ~StagedRecordIndex();
  StagedRecordIndex(const StagedRecordIndex&) = delete;
  StagedRecordIndex& operator=(const StagedRecordIndex&) = delete;

  const RecordIndex& index() const { return index_; }
  // The cache file it becomes.
  const std::string& cache_path() const { return cache_; }

  // Renames the staged file over the cache file. Once only.
  Status Commit();

 private:
  StagedRecordIndex(std::string cache, std::string staged)
      : cache_(std::move(cache)), staged_(std::move(staged)) {}

  std::string cache_;
  std::string staged_;
  bool committed_ = false;
  RecordIndex index_;
};

}  // namespace edl::data
