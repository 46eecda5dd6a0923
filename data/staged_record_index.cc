#include "data/staged_record_index.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/check.h"
#include "base/file.h"

namespace edl::data {

Result<std::unique_ptr<StagedRecordIndex>> StagedRecordIndex::Write(const RecordIndex& built,
                                                                    const std::string& index_dir) {
  const std::string cache = IndexCachePath(built.path, index_dir);
  const std::string staged = cache + ".staged-" + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
  const std::string bytes = SerializeRecordIndex(built);
  EDL_RETURN_IF_ERROR(WriteFileAtomically(staged, bytes));
  // From here the destructor removes the staged file.
  std::unique_ptr<StagedRecordIndex> s(new StagedRecordIndex(cache, staged));
  EDL_ASSIGN_OR_RETURN(s->index_, ParseRecordIndex(bytes, staged, /*lazy_windows=*/true));
  s->index_.path = built.path;
  return s;
}

StagedRecordIndex::~StagedRecordIndex() {
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove(staged_, ec);
}

Status StagedRecordIndex::Commit() {
  EDL_CHECK(!committed_) << cache_ << " committed twice";
  if (std::rename(staged_.c_str(), cache_.c_str()) != 0) {
    return IoError(cache_ + ": cannot put the record index in place: " + std::strerror(errno));
  }
  committed_ = true;
  if (!index_.window_file.empty()) index_.window_file = cache_;
  return Status::Ok();
}

}  // namespace edl::data
